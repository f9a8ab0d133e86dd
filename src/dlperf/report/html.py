"""The report: one self-contained HTML file (figures embedded), figures also saved beside it."""

from __future__ import annotations

import base64
import html
import math
from pathlib import Path

import pandas as pd

import dlperf
from dlperf.io import atomic_write_text
from dlperf.models.artifact import load_model

from . import figures

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1200px;color:#222;padding:0 1rem}
h1{font-size:1.6rem}h2{border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:right}th{background:#f3f3f3}
td.l,th.l{text-align:left}tr.best td{background:#e3f6e3;font-weight:600}
figure{margin:1rem 0}figcaption{font-size:.85rem;color:#555;max-width:900px}
img{max-width:100%;height:auto}.muted{color:#777}code{background:#f5f5f5;padding:0 .2rem}
"""


def _esc(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return html.escape(str(value))


def _figure_html(fig: figures.Figure) -> str:
    data = base64.b64encode(fig.png).decode("ascii")
    return (
        f'<figure id="fig-{fig.name}"><img src="data:image/png;base64,{data}" alt="{_esc(fig.title)}">'
        f"<figcaption><b>{_esc(fig.title)}.</b> {_esc(fig.caption)} "
        f'(<a href="{fig.name}.svg">SVG</a>, <a href="{fig.name}.png">PNG</a>)</figcaption></figure>'
    )


def _table(frame: pd.DataFrame, left: set[str] = frozenset(), row_class=None, table_id: str = "") -> str:
    head = "".join(f'<th class="{"l" if c in left else ""}">{_esc(c)}</th>' for c in frame.columns)
    body = []
    for i, (_, row) in enumerate(frame.iterrows()):
        cls = row_class(i, row) if row_class else ""
        cells = "".join(
            f'<td class="{"l" if c in left else ""}">'
            f"{_esc(figures.nice_number(v) if isinstance(v, float) else v)}</td>"
            for c, v in row.items()
        )
        body.append(f'<tr class="{cls}">{cells}</tr>')
    ident = f' id="{table_id}"' if table_id else ""
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _ci(row: pd.Series, key: str) -> str:
    value, lo, hi = row.get(key), row.get(f"{key}_lo"), row.get(f"{key}_hi")
    if value is None or pd.isna(value):
        return "–"
    if lo is None or pd.isna(lo):
        return f"{value:.3g}"
    return f"{value:.3g} [{lo:.3g}, {hi:.3g}]"


def validation_table(summary: pd.DataFrame) -> str:
    """Model x protocol errors with 95% CIs; the best model of each group highlighted."""
    if summary.empty:
        return '<p class="muted">No validation results.</p>'
    rows = []
    best = set()
    ok = summary[summary["status"] == "ok"]
    for _, group in ok.groupby(["framework", "network", "protocol"], sort=True):
        best.add(group["mape"].idxmin())
    for idx, row in summary.sort_values(["framework", "network", "protocol", "model"]).iterrows():
        rows.append(
            {
                "framework": row["framework"],
                "network": row["network"],
                "protocol": row["protocol"],
                "model": row["model"],
                "status": row["status"] if row["status"] == "ok" else f"{row['status']}: {row['reason']}",
                "points": "–" if pd.isna(row["n_points"]) else int(row["n_points"]),
                "MAPE % [95% CI]": _ci(row, "mape"),
                "median APE %": _ci(row, "median_ape"),
                "max APE %": _ci(row, "max_ape"),
                "RMSE s": _ci(row, "rmse"),
                "R²": _ci(row, "r2"),
                "_best": idx in best,
            }
        )
    frame = pd.DataFrame(rows)
    flags = frame.pop("_best").tolist()
    return _table(
        frame,
        left={"framework", "network", "protocol", "model", "status"},
        row_class=lambda i, _row: "best" if flags[i] else "",
        table_id="validation-table",
    )


def _constants_table(entry: dict) -> str:
    rows = [
        {
            "term": t["name"],
            "constant": t["constant"],
            "formula": t["formula"],
            "value": t["value"],
            "state": t["state"],
            "meaning": t["description"],
        }
        for t in entry["terms"]
    ]
    rows.append(
        {
            "term": "exponent",
            "constant": "a",
            "formula": "b^a",
            "value": entry["exponent"]["value"],
            "state": "on",
            "meaning": "how computation grows with the per-worker batch",
        }
    )
    return _table(pd.DataFrame(rows), left={"term", "constant", "formula", "state", "meaning"})


def environment_section(timings: pd.DataFrame, config: dict) -> str:
    columns = ["framework", "framework_version", "hostname", "cpu_model", "gpu_names", "threads_per_worker"]
    env = (
        timings[columns].drop_duplicates().sort_values(columns).reset_index(drop=True)
        if not timings.empty
        else pd.DataFrame(columns=columns)
    )
    commits = sorted({str(c) for c in timings.get("git_commit", pd.Series(dtype=str)).dropna()})
    jobs = sorted({str(j) for j in timings.get("slurm_job_id", pd.Series(dtype=str)).dropna()})
    settings = pd.DataFrame(
        [{"setting": k, "value": str(v)} for k, v in sorted(config.items()) if not isinstance(v, dict)]
    )
    return (
        "<h2>Run configuration and environment</h2>"
        + _table(settings, left={"setting", "value"})
        + _table(env, left=set(columns))
        + f"<p>Workflow git commit(s): {_esc(', '.join(commits) or 'unknown')}. "
        + f"Slurm job ids: {_esc(', '.join(jobs) or 'none (local run)')}. dlperf {_esc(dlperf.__version__)}.</p>"
    )


def build_report(
    out_html: Path,
    timings: pd.DataFrame,
    failures: pd.DataFrame,
    points: pd.DataFrame,
    artifacts: dict[str, dict],
    summary: pd.DataFrame,
    predictions: pd.DataFrame,
    config: dict,
) -> list[Path]:
    """Write index.html and every figure (PNG + SVG) into its directory; return the figure paths."""
    out_dir = out_html.parent
    out_dir.mkdir(parents=True, exist_ok=True)
    sections = [
        "<h1>dlperf report</h1>",
        f"<p>{len(timings)} successful runs, {len(failures)} failed; "
        f"{len(points)} measured configurations across {len(artifacts)} framework(s).</p>",
        '<h2>Model accuracy</h2><p>Prediction error of each performance model under each validation '
        "protocol (95% bootstrap confidence intervals in brackets). The lowest MAPE of each "
        "framework/network/protocol is highlighted.</p>",
        validation_table(summary),
    ]
    written: list[Path] = []
    all_figures: list[figures.Figure] = []
    for framework in sorted(artifacts):
        artifact = artifacts[framework]
        sections.append(f"<h2>{_esc(framework)}</h2>")
        for network, info in sorted(artifact["networks"].items()):
            net_points = points[(points["framework"] == framework) & (points["network"] == network)]
            fitted = {}
            for name, entry in sorted(info["models"].items()):
                if entry.get("status") == "ok":
                    fitted[name] = load_model(artifact, network, name)
                else:
                    sections.append(
                        f"<p class='muted'>Model {_esc(name)} for {_esc(network)} not fitted: "
                        f"{_esc(entry.get('reason'))}</p>"
                    )
            fig = figures.scaling_figure(framework, network, net_points, fitted)
            all_figures.append(fig)
            sections.append(_figure_html(fig))
            generic = info["models"].get("generic", {})
            if generic.get("status") == "ok":
                sections.append(
                    f"<h3>Generic model for {_esc(network)}</h3><p><code>{_esc(generic['formula'])}</code>; "
                    f"L1 weight λ = {generic['lambda']:.3g} (chosen by inner cross-validation), "
                    f"training MAPE {generic['train_mape']:.3g}%.</p>"
                    + _constants_table(generic)
                )
                fig = figures.breakdown_figure(framework, network, generic["breakdown"])
                all_figures.append(fig)
                sections.append(_figure_html(fig))
        for protocol in ("kfold",):
            if ((predictions["framework"] == framework) & (predictions["protocol"] == protocol)).any():
                fig = figures.measured_vs_predicted_figure(framework, predictions, protocol)
                all_figures.append(fig)
                sections.append(_figure_html(fig))
    sections.append("<h2>Failed runs</h2>")
    if failures.empty:
        sections.append('<p id="failures">None: every benchmark run succeeded.</p>')
    else:
        cols = ["framework", "network", "nodes", "procs", "batch_size", "data_size", "rep", "status", "error"]
        shown = failures[cols].copy()
        shown["error"] = shown["error"].astype(str).str.slice(0, 300)
        sections.append(_table(shown, left={"framework", "network", "status", "error"}, table_id="failures"))
    sections.append(environment_section(timings, config))
    for fig in all_figures:
        figures.save(fig, out_dir)
        written += [out_dir / f"{fig.name}.png", out_dir / f"{fig.name}.svg"]
    page = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>dlperf report</title><style>{CSS}</style></head><body>"
        + "\n".join(sections)
        + "</body></html>\n"
    )
    atomic_write_text(out_html, page)
    return written
