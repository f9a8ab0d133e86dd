"""The report: one self-contained HTML file (figures embedded as data URIs); the figures are
also written as PNG and SVG into a directory beside it."""

from __future__ import annotations

import base64
import html
import math
import os
from pathlib import Path

import pandas as pd

from dlperf.io import atomic_write_text
from dlperf.models import InsufficientData
from dlperf.models.artifact import load_model

from . import figures
from . import tables as report_tables
from .curves import model_curve

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1250px;
 color:#222;padding:0 1rem}
h1{font-size:1.6rem}h3{margin-top:1.5rem}
h2{border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;font-size:.8rem;margin:.5rem 0}
th,td{border:1px solid #ccc;padding:.2rem .45rem;text-align:right;vertical-align:top}
th{background:#f3f3f3}td.l,th.l{text-align:left}tr.best td{background:#e3f6e3;font-weight:600}
figure{margin:1rem 0}figcaption{font-size:.85rem;color:#555;max-width:950px}
img{max-width:100%;height:auto}.muted{color:#777}code{background:#f5f5f5;padding:0 .2rem}
nav ul{columns:2;font-size:.9rem}
"""


def _esc(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return html.escape(str(value))


def _cell(value) -> str:
    return _esc(figures.nice_number(value) if isinstance(value, float) else value)


def _table(
    frame: pd.DataFrame, left=frozenset(), row_classes: list[str] | None = None, ident: str = ""
) -> str:
    head = "".join(f'<th class="{"l" if c in left else ""}">{_esc(c)}</th>' for c in frame.columns)
    body = []
    for i, row in enumerate(frame.itertuples(index=False)):
        cls = row_classes[i] if row_classes else ""
        cells = "".join(
            f'<td class="{"l" if c in left else ""}">{_cell(v)}</td>'
            for c, v in zip(frame.columns, row, strict=False)
        )
        body.append(f'<tr class="{cls}">{cells}</tr>')
    ident = f' id="{ident}"' if ident else ""
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _figure_html(fig: figures.Figure, link_dir: str) -> str:
    data = base64.b64encode(fig.png).decode("ascii")
    link = f"{link_dir}/{fig.path}" if link_dir else fig.path
    return (
        f'<figure id="{_esc(fig.ident)}">'
        f'<img src="data:image/png;base64,{data}" alt="{_esc(fig.title)}">'
        f"<figcaption><b>{_esc(fig.title)}.</b> {_esc(fig.caption)} "
        f'(<a href="{_esc(link)}.svg">SVG</a>, <a href="{_esc(link)}.png">PNG</a>)'
        "</figcaption></figure>"
    )


def accuracy_section(summary: pd.DataFrame) -> str:
    parts = [
        '<h2 id="accuracy">Model accuracy</h2>',
        "<p>Held-out prediction error of each performance model under each validation protocol, "
        "with 95% bootstrap confidence intervals in brackets (resampling the held-out points). "
        "The lowest MAPE of each framework / network / protocol is highlighted. A protocol or "
        "model that could not run says why in the status column.</p>",
    ]
    if summary.empty:
        parts.append('<p id="validation-table" class="muted">No validation results.</p>')
    else:
        frame, best = report_tables.error_table(summary)
        parts.append(
            _table(
                frame,
                left={"framework", "network", "protocol", "model", "status"},
                row_classes=["best" if b else "" for b in best],
                ident="validation-table",
            )
        )
    ranking = report_tables.ranking_table(summary) if not summary.empty else pd.DataFrame()
    parts.append(
        '<h3 id="ranking">Ranking</h3><p>Rank of each model by MAPE within every protocol '
        "(1 = best), the mean over the protocols it was validated on, and its place by that "
        "mean.</p>"
    )
    if ranking.empty:
        parts.append('<p id="ranking-table" class="muted">No model was validated successfully.</p>')
    else:
        first = ranking["place"].eq(1).tolist()
        parts.append(
            _table(
                ranking,
                left={"framework", "network", "model"},
                row_classes=["best" if b else "" for b in first],
                ident="ranking-table",
            )
        )
    return "\n".join(parts)


def _generic_section(
    framework: str, network: str, entry: dict, out: list, figs: list, link_dir: str
) -> None:
    terms = pd.DataFrame(
        [
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
        + [
            {
                "term": "exponent",
                "constant": "a",
                "formula": "b^a",
                "value": entry["exponent"]["value"],
                "state": "on",
                "meaning": "how computation grows with the per-worker batch",
            }
        ]
    )
    out.append(
        f"<h4>Generic model</h4><p><code>{_esc(entry['formula'])}</code>; L1 weight λ = "
        f"{entry['lambda']:.3g} (chosen by inner cross-validation), training MAPE "
        f"{figures.nice_number(entry.get('train_mape'))}%.</p>"
    )
    out.append(_table(terms, left={"term", "constant", "formula", "state", "meaning"}))
    if entry.get("breakdown"):
        fig = figures.breakdown_figure(framework, network, entry["breakdown"])
        figs.append(fig)
        out.append(_figure_html(fig, link_dir))


def network_section(
    framework: str,
    network: str,
    info: dict,
    artifact: dict,
    points: pd.DataFrame,
    summary: pd.DataFrame,
    predictions: pd.DataFrame,
    colours: dict,
    link_dir: str,
) -> tuple[str, list[figures.Figure]]:
    out = [f'<h3 id="{_esc(f"{framework}-{network}")}">{_esc(framework)} / {_esc(network)}</h3>']
    figs: list[figures.Figure] = []
    curves, not_fitted = {}, []
    for name, entry in sorted(info["models"].items()):
        if entry.get("status") != "ok":
            not_fitted.append(f"{name}: {entry.get('status')} ({entry.get('reason')})")
            continue
        try:
            load_model(artifact, network, name)  # names the problem if the entry is unreadable
            curves[name] = model_curve(name, artifact, network)
        except (InsufficientData, KeyError, ValueError) as exc:
            not_fitted.append(f"{name}: cannot be loaded ({exc})")
    if not_fitted:
        out.append(
            "<p class='muted'>Not fitted on all points: "
            + "; ".join(_esc(x) for x in not_fitted)
            + "</p>"
        )
    if points.empty:
        out.append("<p class='muted'>No successful measurement.</p>")
        return "\n".join(out), figs
    net_predictions = (
        predictions[(predictions["framework"] == framework) & (predictions["network"] == network)]
        if not predictions.empty
        else predictions
    )
    made = [
        figures.scaling_figure(framework, network, points, curves, "time"),
        figures.scaling_figure(framework, network, points, curves, "throughput"),
        figures.speedup_figure(framework, network, points),
    ]
    if not net_predictions.empty:
        made += [
            figures.accuracy_figure(framework, network, net_predictions, colours),
            figures.residuals_figure(framework, network, net_predictions, colours),
        ]
    for fig in made:
        figs.append(fig)
        out.append(_figure_html(fig, link_dir))
    generic = info["models"].get("generic", {})
    if generic.get("status") == "ok":
        _generic_section(framework, network, generic, out, figs, link_dir)
    return "\n".join(out), figs


def failures_section(failures: pd.DataFrame, frameworks_without_runs: list[str]) -> str:
    parts = ['<h2 id="failed-runs">Failed runs</h2>']
    if frameworks_without_runs:
        parts.append(
            '<p id="frameworks-without-runs"><b>No successful run at all:</b> '
            + ", ".join(_esc(f) for f in frameworks_without_runs)
            + ". Their failures are listed below; they have no models or figures.</p>"
        )
    if failures.empty:
        parts.append('<p id="failures">None: every benchmark run succeeded.</p>')
        return "\n".join(parts)
    columns = [
        "framework",
        "network",
        "nodes",
        "procs",
        "batch_size",
        "data_size",
        "rep",
        "status",
        "error",
    ]
    shown = failures.reindex(columns=columns).sort_values(columns[:7], kind="stable")
    shown["error"] = shown["error"].fillna("").astype(str).str.slice(0, 400)
    parts.append(_table(shown, left={"framework", "network", "status", "error"}, ident="failures"))
    return "\n".join(parts)


def environment_section(timings: pd.DataFrame, config: dict) -> str:
    env = report_tables.environment_table(timings)
    facts = report_tables.provenance(timings)
    return (
        '<h2 id="configuration">Run configuration and environment</h2>'
        + "<p>"
        + "; ".join(f"{_esc(k)}: <code>{_esc(v)}</code>" for k, v in facts.items())
        + ".</p>"
        + _table(env, left=set(env.columns) - {"runs"}, ident="environment-table")
        + "<h3>Configuration</h3>"
        + _table(
            report_tables.config_table(config), left={"setting", "value"}, ident="config-table"
        )
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
    figures_dir: Path | None = None,
) -> list[Path]:
    """Write index.html and every figure (PNG + SVG, under ``figures_dir``, default figures/
    beside the page); return the figure paths."""
    out_html = Path(out_html)
    figures_dir = Path(figures_dir) if figures_dir else out_html.parent / "figures"
    link_dir = Path(os.path.relpath(figures_dir, out_html.parent)).as_posix()
    model_names = sorted(
        {m for a in artifacts.values() for n in a["networks"].values() for m in n["models"]}
        | set(summary.get("model", pd.Series(dtype=str)).dropna())
    )
    colours = figures.model_colours(model_names)
    failed_frameworks = sorted(set(failures.get("framework", pd.Series(dtype=str)).dropna()))
    without_runs = [f for f in failed_frameworks if f not in set(timings["framework"])]
    body, all_figures, toc = [], [], []
    for framework in sorted(artifacts):
        artifact = artifacts[framework]
        toc.append(f'<li><a href="#fw-{_esc(framework)}">{_esc(framework)}</a></li>')
        body.append(f'<h2 id="fw-{_esc(framework)}">{_esc(framework)}</h2>')
        for network, info in sorted(artifact["networks"].items()):
            net_points = points[(points["framework"] == framework) & (points["network"] == network)]
            section, figs = network_section(
                framework,
                network,
                info,
                artifact,
                net_points.reset_index(drop=True),
                summary,
                predictions,
                colours,
                link_dir,
            )
            body.append(section)
            all_figures += figs
    n_frameworks = len(artifacts)
    head = [
        "<h1>dlperf report</h1>",
        f"<p>{len(timings)} successful runs and {len(failures)} failed ones; "
        f"{len(points)} measured configurations of {n_frameworks} framework(s) modelled.</p>",
        '<nav><ul><li><a href="#accuracy">Model accuracy</a></li>'
        '<li><a href="#ranking">Ranking</a></li>'
        + "".join(toc)
        + '<li><a href="#failed-runs">Failed runs</a></li>'
        '<li><a href="#configuration">Run configuration and environment</a></li></ul></nav>',
        accuracy_section(summary),
    ]
    tail = [failures_section(failures, without_runs), environment_section(timings, config)]
    written: list[Path] = []
    for fig in all_figures:
        written += figures.save(fig, figures_dir)
    page = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>dlperf report</title><style>{CSS}</style></head><body>\n"
        + "\n".join(head + body + tail)
        + "\n</body></html>\n"
    )
    atomic_write_text(out_html, page)
    return written
