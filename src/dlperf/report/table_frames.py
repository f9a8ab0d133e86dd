"""The report's tables as data: model-by-protocol errors with CIs, the ranking, the environment."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

import dlperf

GROUP = ["framework", "network", "protocol"]


def _ci(row: pd.Series, key: str) -> str:
    value, lo, hi = row.get(key), row.get(f"{key}_lo"), row.get(f"{key}_hi")
    if value is None or pd.isna(value):
        return "–"
    if lo is None or pd.isna(lo):
        return f"{value:.3g}"
    return f"{value:.3g} [{lo:.3g}, {hi:.3g}]"


def best_rows(summary: pd.DataFrame) -> set:
    """Index labels of the lowest-MAPE model of each framework/network/protocol."""
    ok = summary[(summary["status"] == "ok") & summary["mape"].notna()]
    return {group["mape"].idxmin() for _, group in ok.groupby(GROUP, sort=True)}


def error_table(summary: pd.DataFrame) -> tuple[pd.DataFrame, list[bool]]:
    """One row per framework/network/protocol/model, errors as 'value [lo, hi]', best model
    first within each protocol (by ``vs_best`` where the summary has it, then MAPE); flags of
    the lowest MAPE."""
    best = best_rows(summary)
    order = summary.assign(
        _vs=summary.get("vs_best", pd.Series(index=summary.index, dtype=object)).map(
            {"best": 0, "not_shown_worse": 1, "worse": 2}
        )
    )
    ordered = order.sort_values(
        GROUP + ["_vs", "mape", "model"], kind="stable", na_position="last"
    ).drop(columns="_vs")
    rows = []
    for _idx, row in ordered.iterrows():
        status = (
            row["status"]
            if row["status"] == "ok" and pd.isna(row["reason"])
            else (f"{row['status']}: {row['reason']}")
        )
        rows.append(
            {
                "framework": row["framework"],
                "network": row["network"],
                "protocol": row["protocol"],
                "model": row["model"],
                "status": status,
                "points": "–" if pd.isna(row["n_points"]) else int(row["n_points"]),
                "MAPE % [95% CI]": _ci(row, "mape"),
                "median APE %": _ci(row, "median_ape"),
                "max APE %": _ci(row, "max_ape"),
                "RMSE s": _ci(row, "rmse"),
                "R²": _ci(row, "r2"),
                **({"vs best": row["vs_best"]} if "vs_best" in row else {}),
            }
        )
    return pd.DataFrame(rows), [idx in best for idx in ordered.index]


def ranking_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Per framework/network: each model's MAPE rank under each protocol (1 = best), its mean
    rank over the protocols it was validated on, and the overall place by that mean."""
    ok = summary[(summary["status"] == "ok") & summary["mape"].notna()].copy()
    if ok.empty:
        return pd.DataFrame(columns=["framework", "network", "model", "mean rank", "place"])
    ok["rank"] = ok.groupby(GROUP)["mape"].rank(method="min")
    wide = ok.pivot_table(
        index=["framework", "network", "model"], columns="protocol", values="rank"
    )
    wide = wide.reindex(columns=sorted(wide.columns))
    wide["mean rank"] = wide.mean(axis=1)
    wide["protocols"] = wide.drop(columns="mean rank").notna().sum(axis=1)
    wide = wide.reset_index()
    wide["place"] = (
        wide.groupby(["framework", "network"])["mean rank"].rank(method="min").astype(int)
    )
    wide = wide.sort_values(["framework", "network", "place", "model"], kind="stable").reset_index(
        drop=True
    )
    for column in wide.columns:
        if column not in ("framework", "network", "model", "mean rank", "protocols", "place"):
            wide[column] = [("–" if np.isnan(v) else str(int(v))) for v in wide[column]]
    wide["mean rank"] = wide["mean rank"].map(lambda v: f"{v:.2f}")
    return wide


def _distinct(frame: pd.DataFrame, column: str) -> list[str]:
    if column not in frame.columns:
        return []
    values = frame[column].dropna().astype(str)
    return sorted({v for v in values if v and v != "nan"})


def environment_table(timings: pd.DataFrame) -> pd.DataFrame:
    """Per framework: versions, devices, hardware and where/when it ran."""
    rows = []
    for framework, group in timings.groupby("framework", sort=True):
        rows.append(
            {
                "framework": framework,
                "framework version": ", ".join(_distinct(group, "framework_version")) or "unknown",
                "device": ", ".join(_distinct(group, "device")),
                "CPU": ", ".join(_distinct(group, "cpu_model")) or "unknown",
                "GPUs": ", ".join(_distinct(group, "gpu_names")) or "none",
                "threads per worker": ", ".join(_distinct(group, "threads_per_worker"))
                or "unknown",
                "hostnames": ", ".join(_distinct(group, "hostname")) or "unknown",
                "Slurm job ids": ", ".join(_distinct(group, "slurm_job_id")) or "none (local run)",
                "runs": len(group),
            }
        )
    return pd.DataFrame(rows)


def provenance(timings: pd.DataFrame) -> dict[str, str]:
    return {
        "workflow git commit": ", ".join(_distinct(timings, "git_commit")) or "unknown",
        "dlperf version (report)": dlperf.__version__,
    }


def config_table(config: dict) -> pd.DataFrame:
    """Every configuration key; nested sections as compact, key-sorted JSON."""
    rows = []
    for key in sorted(config):
        value = config[key]
        text = json.dumps(value, sort_keys=True) if isinstance(value, dict | list) else str(value)
        rows.append({"setting": key, "value": text})
    return pd.DataFrame(rows, columns=["setting", "value"])
