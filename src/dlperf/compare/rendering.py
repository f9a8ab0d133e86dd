"""`dlperf compare`'s answer for people: markdown (for a CI log or a pull request) or HTML."""

from __future__ import annotations

import jinja2
import pandas as pd

from dlperf.compare.pair import Comparison
from dlperf.compare.statistics import MAX_REPETITIONS
from dlperf.compare.trend import History
from dlperf.compare.trend_figure import trend_figure
from dlperf.measurements.tables import NOISY_FOREIGN_CPU

TABLE_COLUMNS = {
    "configuration": "configuration",
    "ratio": "candidate / baseline (median iteration)",
    "interval": "CI",
    "p_adjusted": "p (one-sided, BH)",
    "rep_sd": "sd of a repetition",
    "run_spread": "run-to-run spread",
    "disturbed_runs": "disturbed runs (left out)",
    "runs": "runs tested (base / cand)",
    "baseline_median_s": "baseline median s",
    "candidate_median_s": "candidate median s",
}
INCONCLUSIVE_COLUMNS = {
    "configuration": "configuration",
    "ratio": "candidate / baseline",
    "interval": "CI",
    "p_adjusted": "p (one-sided, BH)",
    "rep_sd": "sd of a repetition",
    "runs": "runs tested (base / cand)",
    "reps_needed": "repetitions per study to settle it",
}
GROUP_TABLE_COLUMNS = {
    "group": "framework (network)",
    "configurations": "configurations",
    "ratio": "geometric mean ratio",
    "interval": "CI",
    "p_adjusted": "p (one-sided, BH)",
    "verdict": "verdict",
}
MODEL_TABLE_COLUMNS = {
    "configuration": "configuration",
    "candidate_epoch_s": "candidate epoch s",
    "predicted": "baseline model [interval] s",
    "baseline_epoch_s": "baseline epoch s",
}


def _g(value: float, digits: int = 4) -> str:
    """``value`` to ``digits`` significant digits; a dash where there is none."""
    return "–" if pd.isna(value) else f"{value:.{digits}g}"


def _needed(value, rep_sd: float) -> str:
    if pd.isna(rep_sd):  # one repetition per study and no other configuration to learn from
        return "unknown: no spread of repetitions to judge by"
    return f"more than {MAX_REPETITIONS}" if pd.isna(value) else str(int(value))


def _table_rows(frame: pd.DataFrame, disturbed_left_out: bool) -> list[dict]:
    return [
        {
            "configuration": row.configuration,
            "ratio": f"{row.ratio:.3f}",
            "interval": f"[{_g(row.ratio_lo)}, {_g(row.ratio_hi)}]",
            "p_adjusted": _g(row.p_adjusted, 2),
            "rep_sd": "–" if pd.isna(row.rep_sd) else f"{row.rep_sd:.1%}",
            "run_spread": f"{row.run_spread:.1%}",
            "disturbed_runs": f"{row.disturbed_runs}{'' if disturbed_left_out else ' (kept)'}",
            "runs": f"{row.baseline_reps} / {row.candidate_reps}",
            "baseline_median_s": _g(row.baseline_median_s),
            "candidate_median_s": _g(row.candidate_median_s),
            "reps_needed": _needed(row.reps_needed, row.rep_sd),
        }
        for row in frame.itertuples(index=False)
    ]


def _group_rows(frame: pd.DataFrame, threshold: float) -> list[dict]:
    def verdict(row) -> str:
        if row.regression:
            return f"REGRESSION (slower by more than {threshold:.0%})"
        if row.ratio > 1.0 + threshold:
            return "inconclusive (above the threshold, not settled)"
        return {"slower": "slower", "faster": "faster"}.get(row.verdict, "no change found")

    return [
        {
            "group": row.group,
            "configurations": str(row.configurations),
            "ratio": f"{row.ratio:.3f}",
            "interval": f"[{_g(row.ratio_lo)}, {_g(row.ratio_hi)}]",
            "p_adjusted": _g(row.p_adjusted, 2),
            "verdict": verdict(row),
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


def verdict(result: Comparison) -> str:
    """One line: the regressions (configurations, frameworks) or none."""
    s = result.settings
    if not result.failed:
        return f"no regression beyond {s.threshold:.0%}"
    parts = []
    if not result.regressions.empty:
        parts.append(f"{len(result.regressions)} configuration(s)")
    if not result.group_regressions.empty:
        names = ", ".join(result.group_regressions["group"])
        parts.append(f"{len(result.group_regressions)} framework(s) overall ({names})")
    return f"REGRESSION: {' and '.join(parts)} slower by more than {s.threshold:.0%}"


def context(result: Comparison) -> dict:
    """What the compare templates show of one comparison."""
    s = result.settings
    by_change = result.rows.sort_values("ratio", ascending=False, kind="stable")
    left_out = not s.keep_disturbed
    return {
        "r": result,
        "s": s,
        "verdict": verdict(result),
        "columns": TABLE_COLUMNS,
        "inconclusive_columns": INCONCLUSIVE_COLUMNS,
        "group_columns": GROUP_TABLE_COLUMNS,
        "model_columns": MODEL_TABLE_COLUMNS,
        "groups": _group_rows(result.groups, s.threshold),
        "slower": _table_rows(by_change[by_change["verdict"] == "slower"], left_out),
        "faster": _table_rows(by_change[by_change["verdict"] == "faster"].iloc[::-1], left_out),
        "inconclusive": _table_rows(by_change[by_change["inconclusive"]], left_out),
        "flags": _model_rows(result.model_flags),
        "compared": len(result.rows),
        "unchanged": int((result.rows["verdict"] == "same").sum()),
        "prior_df": f"{result.prior_df:.1f}",
        "disturbed_above": f"{NOISY_FOREIGN_CPU:.0%}",
    }


def environment(fmt: str) -> jinja2.Environment:
    """The templates of `dlperf compare` for 'markdown' or 'html'."""
    if fmt not in ("markdown", "html"):
        raise ValueError(f"--format must be markdown or html, got {fmt!r}")
    return jinja2.Environment(
        loader=jinja2.PackageLoader("dlperf", "templates"),
        autoescape=fmt == "html",
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )


def render(result: Comparison, fmt: str) -> str:
    """The comparison as 'markdown' or 'html'."""
    name = "compare.md.j2" if fmt == "markdown" else "compare.html.j2"
    return environment(fmt).get_template(name).render(**context(result))


def render_history(result: History, fmt: str) -> str:
    """Trends of several studies, then the last step in full, as 'markdown' or 'html'."""
    env = environment(fmt)
    groups = result.table("groups")
    configurations = result.table("rows")
    name = "compare_history.md.j2" if fmt == "markdown" else "compare_history.html.j2"
    return env.get_template(name).render(
        h=result,
        group_table=groups.to_dict("records"),
        group_header=list(groups.columns),
        config_table=configurations.to_dict("records"),
        config_header=list(configurations.columns),
        figure=trend_figure(result) if fmt == "html" else "",
        **context(result.last),
    )
