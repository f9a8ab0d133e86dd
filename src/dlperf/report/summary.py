"""The report's first section: per framework and network, a few lines and two figures that
answer how it scales, what the answer at the target is (report/answer_summary.py), where the
time goes, what to run, and what to distrust."""

from __future__ import annotations

import pandas as pd
from markupsafe import Markup

from dlperf.durations import readable as _hours
from dlperf.errors import DlperfError
from dlperf.models.answer import ANSWER

from . import findings, scaling
from .answer_summary import answer_at, answer_figure, answer_line, target_row
from .failure_reasons import reasons
from .markup import Section, esc, introduced, paragraph
from .scaling_figures import summary_figure
from .sections import fitted_curves
from .study import Study

#: Batch sizes whose speed-up the Summary's scaling line lists each (more: the best and worst).
SCALING_BATCHES_LISTED = 6


def faster_or_slower(speedup: float) -> str:
    """'2.67× faster' or, below a speed-up of 1, '1.43× slower' (never '0.70× faster')."""
    return f"{speedup:.2f}× faster" if speedup >= 1 else f"{1 / speedup:.2f}× slower"


def scaling_line(scales: list[findings.Scaling]) -> str:
    if not scales:
        return "only one worker count was measured: no speed-up to report."
    first = scales[0]
    text = (
        f"at {first.procs} workers (d={first.data_size} samples/epoch) an epoch is "
        f"{faster_or_slower(first.speedup)} than with {first.base_procs} (speed-up "
        f"{first.speedup:.2f}×, efficiency {first.efficiency:.0%}) with batch "
        f"{first.batch_size} per worker"
    )
    # Every other batch size while they are few, else the worst: the one a reader looks for
    # (often the largest) is then stated, not only the best.
    others = scales[1:] if len(scales) <= SCALING_BATCHES_LISTED else scales[-1:]
    for other in others:
        text += (
            f"; speed-up {other.speedup:.2f}× (efficiency {other.efficiency:.0%}) with batch "
            f"{other.batch_size}"
        )
    return text + "."


def breakdown_line(breakdown: findings.Breakdown | None) -> str:
    if breakdown is None:
        return ""
    where = f"At {breakdown.procs} workers (b={breakdown.batch_size}, d={breakdown.data_size}), "
    shaky = breakdown.not_identified
    if breakdown.term in shaky:
        text = (
            f"{where}the largest term is {breakdown.description}, but its constant is not "
            "identified (its bootstrap interval includes zero), so no share is given"
        )
    else:
        text = (
            f"{where}{breakdown.share:.0%} of an iteration is {breakdown.description} (the "
            "largest term)"
        )
        if not any(t in findings.COMMUNICATION_TERMS for t in shaky):
            text += (
                "; all-reduce and inter-node communication together: "
                f"{breakdown.communication_share:.0%}"
            )
    if shaky:
        text += f". Not identified by the data: {', '.join(shaky)}"
    return text + "."


def plan_line(answer: findings.PlanAnswer | None) -> str:
    if answer is None:
        return (
            "no target set: add report: {target: {data_size, epochs, deadline}} to the config "
            "to get the fewest workers that meet a deadline here."
        )
    goal = (
        f"{answer.data_size} samples × {answer.epochs:g} epochs within "
        f"{_hours(answer.deadline_s)} (batch {answer.batch_size} per worker, {answer.model} model)"
    )
    if answer.choice is None:
        row = answer.fastest
        return (
            f"{goal}: no layout up to {answer.max_procs} workers meets it; the fastest, "
            f"{_layout(row)}, takes "
            f"{_hours(row['total_time_s'])}."
        )
    row = answer.choice
    text = f"{goal}: {_layout(row)}, {_hours(row['total_time_s'])} predicted"
    hi = row.get("epoch_time_hi_s")
    if hi is not None and hi == hi:  # not NaN
        text += f" (up to {_hours(hi * answer.epochs)} at the interval's upper end)"
    return text + "."


def resources_line(found: findings.Resources | None) -> str:
    if found is None:
        return ""
    said = [
        (found.peak_host_memory_mb, "peak host memory of a worker up to {:.0f} MiB"),
        (found.device_memory_mb, "device memory up to {:.0f} MiB"),
        (
            found.energy_per_sample_j,
            f"GPU energy {{:.3g}} J per sample at {found.at_procs} workers",
        ),
    ]
    parts = [text.format(value) for value, text in said if value is not None]
    return "; ".join(parts) + "." if parts else ""


def _headline(scales: list[findings.Scaling], timings: pd.DataFrame) -> str:
    """The measured speed-up, marked first where its runs cannot carry it."""
    caveat = scaling.headline_caveat(scales[0], timings) if scales else ""
    return caveat + scaling_line(scales)


def _layout(row: dict) -> str:
    procs, nodes = int(row["procs"]), int(row["nodes"])
    return f"{procs} worker{'s' if procs > 1 else ''} on {nodes} node{'s' if nodes > 1 else ''}"


def _facts(items: list[tuple[str, str, str]]) -> Markup:
    """One plain sentence per item; its statistics, where there are any, folded beneath."""
    rows = []
    for key, plain, detail in items:
        if not plain:
            continue
        more = f"<details><summary>how</summary>{esc(detail)}</details>" if detail else ""
        rows.append(f"<li><b>{esc(key)}:</b> {esc(plain)}{more}</li>")
    return Markup(f'<ul class="facts">{"".join(rows)}</ul>')


def _where_time_goes(generic: dict, at: pd.Series) -> tuple[str, str]:
    """Where an iteration's time goes in a sentence; the fitted expression beneath."""
    if generic.get("status") != "ok":
        return "no generic model was fitted, so there is no breakdown.", ""
    breakdown = findings.dominant_term(
        generic, int(at["procs"]), int(at["batch_size"]), int(at["data_size"])
    )
    expression = findings.expression_in_words(generic) + "."
    plain = breakdown_line(breakdown)
    return (plain, expression) if plain else (expression, "")


def _warnings_block(framework: str, network: str, warnings: list[str]) -> Markup:
    """The one place where a network's warnings are listed."""
    items = Markup("").join(Markup(f"<li>{esc(w)}</li>") for w in warnings)
    return Markup(
        f'<div class="warnings" id="warnings-{esc(framework)}-{esc(network)}">'
        f"<b>Warnings:</b> {f'<ul>{items}</ul>' if warnings else 'none.'}</div>"
    )


def network_summary(study: Study, framework: str, network: str) -> Section:
    section = Section(f"summary-{framework}-{network}", f"{framework} / {network}", level=3)
    points = study.points_of(framework, network)
    if points.empty:
        section.blocks.append(paragraph("No successful measurement.", "muted"))
        return section
    models = study.artifacts[framework]["networks"][network]["models"]
    fitted = {name for name, entry in models.items() if entry.get("status") == "ok"}
    scales = findings.largest_scale(points)
    at = findings.reference_point(points, scales)
    belief = findings.model_to_believe(study.summary_of(framework, network))
    # The answer (the models combined by how they extrapolated) answers, as `dlperf predict`.
    planner = ANSWER if fitted else None
    warnings = []
    answer = None
    if planner:
        try:
            answer = findings.planning_answer(study, framework, network, planner)
        except DlperfError as exc:  # not enough data, an unusable prediction; a bug propagates
            warnings.append(f"The planning answer could not be computed: {exc}")
    warnings += scaling.implausible(scales, study.timings_of(framework, network))
    found, target, error = _answer(study, framework, network, points, at, answer)
    if found is not None:
        warnings += found.warnings
    lines = [
        ("Scaling", _headline(scales, study.timings_of(framework, network)), ""),
        (
            "Answer",
            *answer_line(
                found, belief, error, scaling.disturbed_caveat(study.timings_of(framework, network))
            ),
        ),
        ("Where the time goes", *_where_time_goes(models.get("generic", {}), at)),
        ("Plan", plan_line(answer) if planner else "no fitted model to plan with.", ""),
        (
            "Resources",
            resources_line(findings.resources(study.timings_of(framework, network))),
            "",
        ),
    ]
    curves, _ = fitted_curves(study, framework, network)
    section.blocks += [
        _facts(lines),
        summary_figure(framework, network, points, curves.get(ANSWER) or curves.get("generic")),
    ]
    if found is not None:
        section.blocks.append(
            answer_figure(framework, network, points, study.artifacts[framework], target)
        )
    section.blocks.append(
        _warnings_block(
            framework,
            network,
            findings.network_warnings(study, framework, network, answer) + warnings,
        )
    )
    return section


def _answer(study: Study, framework: str, network: str, points, at, plan_answer):
    """The answer at the Summary's target (the planned layout, else a multiple of the largest
    measured worker count): (AnswerAt or None, the target row, why there is none)."""
    plan_row = None
    if plan_answer is not None:
        plan_row = {
            **(plan_answer.choice or plan_answer.fastest),
            "batch_size": plan_answer.batch_size,
            "data_size": plan_answer.data_size,
        }
    target = target_row(points, at, plan_row)
    try:
        return answer_at(study.artifacts[framework], network, target), target, ""
    except DlperfError as exc:
        return None, target, str(exc)


SUMMARY_INTRO = (
    "Per framework and network: the measured speed-up at the largest scale; the "
    "answer at the target (the fitted models combined by how well each predicted "
    "beyond its training range, the one `dlperf predict` and `dlperf plan` give) with "
    "its interval, how far beyond the measurements it is and which models make it, "
    "and whether any model comes near the measurements' own noise; the fitted "
    "generic model in words and where an iteration's time goes; the plan for the "
    "target set in the config; and the warnings that matter. The figures show the "
    "measured speed-up with the answer's, and the answer's band widening beyond "
    "the measured workers. The detailed tables follow, folded."
)


def summary(study: Study) -> list[Section]:
    head = introduced("summary", "Summary", SUMMARY_INTRO)
    if study.timings.empty and not study.failures.empty:
        head.blocks.append(_all_failed(study.failures))
    elif study.frameworks_without_runs:
        head.blocks.append(
            paragraph(
                "No successful run at all: "
                + ", ".join(study.frameworks_without_runs)
                + " (see Failed runs).",
                "warn",
            )
        )
    return [head] + [network_summary(study, f, n) for f, n in study.networks()]


def _all_failed(failures: pd.DataFrame) -> Markup:
    """Every run failed: say so first, with each reason and how many runs it stopped."""
    items = Markup("").join(
        Markup(f"<li>{count} run{'s' if count > 1 else ''}: <code>{esc(text)}</code></li>")
        for text, count in reasons(failures.to_dict("records"))
    )
    n = len(failures)
    said = (
        f"Every one of the {n} benchmark runs failed" if n > 1 else "The one benchmark run failed"
    )
    return Markup(
        f'<div class="warnings" id="all-failed"><b>{said}</b>, so nothing was measured or '
        f"modelled. The reasons (the full errors are under Failed runs):<ul>{items}</ul></div>"
    )
