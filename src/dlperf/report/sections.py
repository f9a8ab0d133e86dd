"""The report's detailed sections, after the Summary. Each takes the study and returns its
sections of the page."""

from __future__ import annotations

import pandas as pd
from markupsafe import Markup

from dlperf.errors import DlperfError
from dlperf.figures import model_colours
from dlperf.models.answer import ANSWER
from dlperf.models.artifact import load_model

from . import table_frames
from .curves import Curve, model_curve
from .markup import Section, esc, introduced, nice_number, paragraph, table
from .model_figures import accuracy_figure, breakdown_figure, residuals_figure
from .scaling_figures import scaling_figure, speedup_figure
from .study import Study


def accuracy(study: Study) -> list[Section]:
    summary = study.summary
    errors = introduced(
        "accuracy",
        "Model accuracy",
        (
            "Held-out prediction error of each performance model under each validation "
            "protocol, with 95% bootstrap confidence intervals in brackets (resampling the "
            "held-out points); within each framework / network / protocol the models are "
            "listed best first and the lowest MAPE is highlighted. A protocol or model that "
            "could not run says why in the status column."
        ),
        folded=True,
        teaser="the model-by-protocol error table",
    )
    if summary.empty:
        errors.blocks.append(paragraph("No validation results.", "muted", "validation-table"))
    else:
        frame, best = table_frames.error_table(summary)
        errors.blocks.append(
            table(
                frame,
                left={"framework", "network", "protocol", "model", "status"},
                row_classes=["best" if b else "" for b in best],
                ident="validation-table",
            )
        )
    ranking = introduced(
        "ranking",
        "Ranking",
        (
            "Rank of each model by MAPE within every protocol (1 = best), the mean over the "
            "protocols it was validated on, and its place by that mean."
        ),
        level=3,
        folded=True,
        teaser="every model's rank under every protocol",
    )
    ranks = table_frames.ranking_table(summary) if not summary.empty else pd.DataFrame()
    if ranks.empty:
        ranking.blocks.append(
            paragraph("No model was validated successfully.", "muted", "ranking-table")
        )
    else:
        ranking.blocks.append(
            table(
                ranks,
                left={"framework", "network", "model"},
                row_classes=["best" if p == 1 else "" for p in ranks["place"]],
                ident="ranking-table",
            )
        )
    return [errors, ranking]


def adaptive(study: Study) -> list[Section]:
    """The rounds of an adaptive sweep: what each measured, why, and how sure the models were."""
    if not study.adaptive_rounds:
        return []
    rounds = pd.DataFrame(
        [
            {
                "round": r["round"],
                "runs before": r["runs_before"],
                "runs chosen": len(r["chosen"]),
                "widest interval before": r["widest_interval"],
                "k-fold MAPE before (%)": r["kfold_mape"],
                "stop": r["stop"] or "",
            }
            for r in study.adaptive_rounds
        ]
    )
    chosen = pd.DataFrame(
        [{"round": r["round"], **run} for r in study.adaptive_rounds for run in r["chosen"]],
        columns=[
            "round",
            "framework",
            "network",
            "nodes",
            "procs",
            "batch_size",
            "data_size",
            "rep",
            "reason",
        ],
    )
    return [
        Section(
            "adaptive",
            "Adaptive rounds",
            [
                paragraph(
                    "The sweep was measured in rounds (docs/adaptive.md): round 0 is a "
                    "space-filling design, each later round the runs where the model's "
                    "prediction interval was widest, the models disagreed most or a level was "
                    "never measured. Per round: the runs measured before it, the widest "
                    "prediction interval over the unmeasured grid (relative to the prediction) "
                    "and the model's grouped k-fold error on what was measured before it; the "
                    "last round says why the sweep stopped."
                ),
                table(rounds, left={"stop"}, ident="adaptive-rounds"),
                Markup("<h3>Runs chosen, and why</h3>"),
                table(
                    chosen,
                    left={"framework", "network", "reason"},
                    ident="adaptive-chosen",
                ),
            ],
            teaser=f"{len(rounds)} rounds, {len(chosen)} runs chosen",
        )
    ]


def fitted_curves(study: Study, framework: str, network: str) -> tuple[dict[str, Curve], list]:
    """Every fitted model's curve, and why the others have none."""
    info = study.artifacts[framework]["networks"][network]
    curves, not_fitted = {}, []
    for name, entry in sorted(info["models"].items()):
        if entry.get("status") != "ok":
            not_fitted.append(f"{name}: {entry.get('status')} ({entry.get('reason')})")
            continue
        try:
            load_model(study.artifacts[framework], network, name)  # names an unreadable entry
            curves[name] = model_curve(name, study.artifacts[framework], network)
        except DlperfError as exc:  # InsufficientData, ArtifactError, ...; a KeyError is a bug
            not_fitted.append(f"{name}: cannot be loaded ({exc})")
    if curves:
        curves[ANSWER] = model_curve(ANSWER, study.artifacts[framework], network)
    return curves, not_fitted


def _generic_blocks(framework: str, network: str, entry: dict) -> list:
    known = (entry.get("identifiability") or {}).get("terms") or {}

    def identified(name: str) -> str:
        flag = known.get(name, {}).get("identified")
        return "" if flag is None else ("yes" if flag else "no")

    rows = [
        {
            "term": t["name"],
            "constant": t["constant"],
            "formula": t["formula"],
            "value": t["value"],
            "95% interval": _interval_text(known.get(t["name"], {})),
            "in refits": known.get(t["name"], {}).get("inclusion"),
            "identified": identified(t["name"]),
            "state": t["state"],
            "meaning": t["description"],
        }
        for t in entry["terms"]
    ]
    exponent = (entry.get("identifiability") or {}).get("exponent") or {}
    rows.append(
        {
            "95% interval": _interval_text(exponent),
            "term": "exponent",
            "constant": "a",
            "formula": "b^a",
            "value": entry["exponent"]["value"],
            "state": "on",
            "meaning": "how computation grows with the per-worker batch",
        }
    )
    blocks = [
        Markup(
            f"<h4>Generic model</h4><p><code>{esc(entry['formula'])}</code>; L1 weight λ = "
            f"{entry['lambda']:.3g} (chosen by inner cross-validation), training MAPE "
            f"{nice_number(entry.get('train_mape'))}%.</p>"
        ),
        Markup("<details><summary>Fitted constants</summary>")
        + table(
            pd.DataFrame(rows),
            left={"term", "constant", "formula", "95% interval", "identified", "state", "meaning"},
        )
        + Markup("</details>"),
    ]
    if entry.get("breakdown"):
        blocks.append(breakdown_figure(framework, network, entry["breakdown"]))
    return blocks


def _interval_text(bounds: dict) -> str:
    """A constant's bootstrap interval, or nothing when the artifact has none."""
    lo, hi = bounds.get("lo"), bounds.get("hi")
    if lo is None or hi is None:
        return ""
    return f"{nice_number(lo)} .. {nice_number(hi)}"


def network(study: Study, framework: str, network: str) -> Section:
    section = Section(f"{framework}-{network}", f"{framework} / {network}", level=3)
    curves, not_fitted = fitted_curves(study, framework, network)
    if not_fitted:
        section.blocks.append(
            paragraph("Not fitted on all points: " + "; ".join(not_fitted), "muted")
        )
    points = study.points_of(framework, network)
    if points.empty:
        section.blocks.append(paragraph("No successful measurement.", "muted"))
        return section
    section.blocks += [
        scaling_figure(framework, network, points, curves, "time"),
        scaling_figure(framework, network, points, curves, "throughput"),
        speedup_figure(framework, network, points),
    ]
    held_out = study.predictions_of(framework, network)
    if not held_out.empty:
        colours = model_colours(study.model_names)
        section.blocks += [
            accuracy_figure(framework, network, held_out, colours),
            residuals_figure(framework, network, held_out, colours),
        ]
    generic = study.artifacts[framework]["networks"][network]["models"].get("generic", {})
    if generic.get("status") == "ok":
        section.blocks += _generic_blocks(framework, network, generic)
    return section


def frameworks(study: Study) -> list[Section]:
    """Per framework, one section per network with every figure."""
    out = []
    for framework in sorted(study.artifacts):
        out.append(Section(f"fw-{framework}", f"Details: {framework}"))
        out += [
            network(study, framework, n) for n in sorted(study.artifacts[framework]["networks"])
        ]
    return out


RESOURCES_INTRO = (
    "Per configuration, the median over repetitions of: the largest peak resident "
    "memory of any worker; CPU seconds per epoch second per thread; on GPUs the "
    "peak device memory the framework reports, NVML's utilisation and power of all "
    "the run's GPUs, and GPU energy per trained sample; and the share of the host's "
    "CPU other programs used during the epoch (noise). Largest memory first."
)

RESOURCE_COLUMNS = {
    "peak_host_memory_mb": "peak host memory MiB",
    "cpu_utilisation": "CPU utilisation",
    "device_memory_mb": "device memory MiB",
    "gpu_utilisation_pct": "GPU utilisation %",
    "gpu_power_w": "GPU power W",
    "energy_per_sample_j": "energy per sample J",
    "foreign_cpu_fraction": "others' CPU share",
}


def resources(study: Study) -> list[Section]:
    """Median over repetitions of what the hardware did, per configuration."""
    section = introduced(
        "resources",
        "Resources",
        RESOURCES_INTRO,
        folded=True,
        teaser="memory, CPU, GPU power and energy per configuration",
    )
    present = [c for c in RESOURCE_COLUMNS if c in study.timings and study.timings[c].notna().any()]
    if not present:
        section.blocks.append(paragraph(_no_resources(study), "muted", "resources-table"))
        return [section]
    keys = ["framework", "network", "nodes", "procs", "batch_size", "data_size"]
    frame = study.timings.groupby(keys, sort=True)[present].median().reset_index()
    frame = frame.sort_values(present[0], ascending=False, kind="stable")
    frame = frame.rename(columns=RESOURCE_COLUMNS)
    section.blocks.append(table(frame, left={"framework", "network"}, ident="resources-table"))
    return [section]


def _no_resources(study: Study) -> str:
    """Why the Resources section has no table."""
    if study.timings.empty and not study.failures.empty:
        return "No run succeeded, so no resources were measured (see Failed runs)."
    if study.timings.empty:
        return "No benchmark run of this study's own (brought-in timings only): no resources."
    return (
        "No run record of this study carries resource measurements (they were written by a "
        "dlperf before resource capture)."
    )


def failures(study: Study) -> list[Section]:
    section = Section("failed-runs", "Failed runs")
    if study.frameworks_without_runs:
        section.blocks.append(
            Markup('<p id="frameworks-without-runs"><b>No successful run at all:</b> ')
            + esc(", ".join(study.frameworks_without_runs))
            + Markup(". Their failures are listed below; they have no models or figures.</p>")
        )
    if study.failures.empty:
        section.blocks.append(paragraph("None: every benchmark run succeeded.", "", "failures"))
        return [section]
    columns = ["framework", "network", "status", "nodes", "procs", "batch_size", "data_size"]
    shown = study.failures.reindex(columns=columns + ["rep", "error"]).sort_values(
        columns + ["rep"], kind="stable"
    )
    shown["error"] = shown["error"].fillna("").astype(str).str.slice(0, 400)
    section.folded = True
    section.teaser = f"{len(shown)} run(s), by framework, network and status"
    section.blocks.append(
        table(shown, left={"framework", "network", "status", "error"}, ident="failures")
    )
    return [section]


def environment(study: Study) -> list[Section]:
    env = table_frames.environment_table(study.timings)
    facts = table_frames.provenance(study.timings)
    if study.superseded_records is not None:
        facts["superseded run records kept in results/history"] = str(study.superseded_records)
    return [
        Section(
            "configuration",
            "Run configuration and environment",
            [
                Markup("<p>")
                + Markup("; ").join(
                    Markup(f"{esc(k)}: <code>{esc(v)}</code>") for k, v in facts.items()
                )
                + Markup(".</p>"),
                table(env, left=set(env.columns) - {"runs"}, ident="environment-table"),
                Markup("<h3>Configuration</h3>"),
                table(
                    table_frames.config_table(study.config),
                    left={"setting", "value"},
                    ident="config-table",
                ),
            ],
            folded=True,
            teaser="versions, hardware, hosts and the full configuration",
        )
    ]
