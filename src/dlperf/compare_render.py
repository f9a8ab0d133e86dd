"""`dlperf compare`'s answer for people: markdown (for a CI log or a pull request) or HTML."""

from __future__ import annotations

import jinja2
import pandas as pd

from dlperf.compare import Comparison

TABLE_COLUMNS = {
    "configuration": "configuration",
    "ratio": "candidate / baseline (median iteration)",
    "interval": "CI",
    "run_spread": "run-to-run spread",
    "disturbed_runs": "disturbed runs",
    "baseline_median_s": "baseline median s",
    "candidate_median_s": "candidate median s",
    "p_adjusted": "p (BH-corrected)",
    "runs": "runs (base / cand)",
}
MODEL_TABLE_COLUMNS = {
    "configuration": "configuration",
    "candidate_epoch_s": "candidate epoch s",
    "predicted": "baseline model [interval] s",
    "baseline_epoch_s": "baseline epoch s",
}


def _g(value: float) -> str:
    return "–" if pd.isna(value) else f"{value:.4g}"


def _table_rows(frame: pd.DataFrame) -> list[dict]:
    return [
        {
            "configuration": row.configuration,
            "ratio": f"{row.ratio:.3f}",
            "interval": f"[{_g(row.ratio_lo)}, {_g(row.ratio_hi)}]",
            "run_spread": f"{row.run_spread:.1%}",
            "disturbed_runs": str(row.disturbed_runs),
            "baseline_median_s": _g(row.baseline_median_s),
            "candidate_median_s": _g(row.candidate_median_s),
            "p_adjusted": f"{row.p_adjusted:.2g}",
            "runs": f"{row.baseline_reps} / {row.candidate_reps}",
        }
        for row in frame.itertuples(index=False)
    ]


def _model_rows(frame: pd.DataFrame) -> list[dict]:
    return [
        {
            "configuration": row.configuration,
            "candidate_epoch_s": _g(row.candidate_epoch_s),
            "predicted": f"{_g(row.predicted_s)} [{_g(row.predicted_lo_s)}, "
            f"{_g(row.predicted_hi_s)}]",
            "baseline_epoch_s": _g(row.baseline_epoch_s),
        }
        for row in frame.itertuples(index=False)
    ]


def _context(result: Comparison) -> dict:
    s = result.settings
    by_change = result.rows.sort_values("ratio", ascending=False, kind="stable")
    return {
        "r": result,
        "s": s,
        "verdict": (
            f"REGRESSION: {len(result.regressions)} configuration(s) slower by more than "
            f"{s.threshold:.0%}"
            if not result.regressions.empty
            else f"no regression beyond {s.threshold:.0%}"
        ),
        "columns": TABLE_COLUMNS,
        "model_columns": MODEL_TABLE_COLUMNS,
        "slower": _table_rows(by_change[by_change["verdict"] == "slower"]),
        "faster": _table_rows(by_change[by_change["verdict"] == "faster"].iloc[::-1]),
        "flags": _model_rows(result.model_flags),
        "compared": len(result.rows),
        "unchanged": int((result.rows["verdict"] == "same").sum()),
    }


def render(result: Comparison, fmt: str) -> str:
    """The comparison as 'markdown' or 'html'."""
    if fmt not in ("markdown", "html"):
        raise ValueError(f"--format must be markdown or html, got {fmt!r}")
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("dlperf", "templates"),
        autoescape=fmt == "html",
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    name = "compare.md.j2" if fmt == "markdown" else "compare.html.j2"
    return env.get_template(name).render(**_context(result))
