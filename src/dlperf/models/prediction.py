"""Predictions from a model artifact alone: epoch time, throughput and the prediction interval,
and warnings where a prediction leaves the measured ranges."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dlperf.errors import UnusablePrediction

from .answer import ANSWER, answer_table
from .artifact import ALL_NETWORKS, load_model, model_entry
from .base import FEATURES
from .intervals import DEFAULT_LEVEL, interval, no_interval_reason
from .terms import with_layout


def predict_rows(*args, **kwargs) -> pd.DataFrame:
    """:func:`prediction_table` of a usable model only (``usable=True``): ``dlperf predict``,
    ``plan`` and ``compare`` refuse a model that predicts a non-positive time at some row."""
    return prediction_table(*args, **kwargs, usable=True)


def prediction_table(
    artifact: dict,
    network: str,
    model_name: str,
    rows: pd.DataFrame,
    level: float = DEFAULT_LEVEL,
    seed: int | None = None,
    usable: bool = False,
) -> pd.DataFrame:
    """Epoch time and throughput for each row (nodes, procs, batch_size, data_size), with the
    bootstrap prediction interval at ``level`` (lo/hi columns; NaN for a model without refits).

    ``seed`` draws the residuals of the interval; by default the artifact's seed, so predict,
    plan and the report give the same interval at the same row. With ``usable``, a model that
    predicts a non-positive time at some row is refused (ValueError); without, the report's
    curves draw a model where it is usable and leave the rest of the axis empty."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"the interval level must be between 0 and 1, got {level}")
    seed = int(artifact.get("seed", 0)) if seed is None else seed
    if model_name == ANSWER:
        # The answer combines the models' own tables (dlperf.models.answer).
        out = answer_table(
            artifact,
            network,
            rows,
            level,
            seed,
            lambda name, r: prediction_table(artifact, network, name, r, level, seed),
        )
    else:
        out = _model_table(artifact, network, model_name, rows, level, seed)
    epoch = out["epoch_time_s"].to_numpy(float)
    if usable and (np.any(~np.isfinite(epoch)) or np.any(epoch <= 0)):
        raise UnusablePrediction(
            f"model {model_name!r} predicts a non-positive epoch time for some rows; it is not "
            "usable there (try the generic model, or a configuration nearer the measured ones)"
        )
    return out


def _model_table(
    artifact: dict, network: str, model_name: str, rows: pd.DataFrame, level: float, seed: int
) -> pd.DataFrame:
    model = load_model(artifact, network, model_name)
    layout = artifact.get("networks", {}).get(network, {}).get("layout")
    rows = with_layout(rows.reset_index(drop=True), layout)
    rows["network"] = rows.get("network", network)
    epoch = np.asarray(model.predict(rows), dtype=float)
    out = rows[[c for c in ["network", *FEATURES, "grad_accum_steps"] if c in rows]].copy()
    out["epoch_time_s"] = epoch
    data = rows["data_size"].to_numpy(float)
    with np.errstate(divide="ignore"):
        out["samples_per_s"] = data / epoch
    stored = model_entry(artifact, network, model_name).get("interval")
    bounds = interval(stored, rows, level, seed)
    lo, hi = bounds if bounds is not None else (np.nan, np.nan)
    out["epoch_time_lo_s"] = lo
    out["epoch_time_hi_s"] = hi
    out["samples_per_s_lo"] = data / out["epoch_time_hi_s"]
    out["samples_per_s_hi"] = data / out["epoch_time_lo_s"]
    return out


def interval_missing(artifact: dict, network: str, model_name: str) -> str:
    """Why the model has no prediction interval ("" when it has one)."""
    if model_name == ANSWER:
        return ""
    return no_interval_reason(model_entry(artifact, network, model_name).get("interval"))


def measured_ranges(artifact: dict, network: str) -> dict | None:
    """The measured levels behind a network's models (the across-network fit's for a network
    the artifact has no entry of); None for an artifact written before they were stored."""
    info = artifact.get("networks", {}).get(network) or artifact.get("all_networks") or {}
    return info.get("measured")


def _levels(values) -> str:
    return ", ".join(str(int(v)) for v in sorted(set(values)))


def extrapolation_warnings(artifact: dict, network: str, rows: pd.DataFrame) -> list[str]:
    """One sentence per way the rows leave what the models were fitted on: workers beyond twice
    the largest measured, more nodes than measured (any node count > 1 from single-node data),
    batch sizes outside the measured range. Empty when every row is inside."""
    measured = measured_ranges(artifact, network)
    where = network if network in artifact.get("networks", {}) else ALL_NETWORKS
    if measured is None:
        return [
            f"the artifact does not record the measured ranges of {where!r} (fitted by an "
            "older dlperf); fit again to have predictions outside them flagged"
        ]
    warnings = []
    procs, nodes, batch = (rows[c].to_numpy(int) for c in ("procs", "nodes", "batch_size"))
    most_procs = max(measured["procs"])
    beyond = procs[procs > 2 * most_procs]
    if beyond.size:
        warnings.append(
            f"{_levels(beyond)} workers is beyond twice the largest measured worker count "
            f"({most_procs}); the prediction is an extrapolation"
        )
    if not measured["multi_node"] and (nodes > 1).any():
        warnings.append(
            f"{_levels(nodes[nodes > 1])} nodes predicted from single-node measurements: the "
            "cost of the network between nodes was never measured"
        )
    elif (nodes > max(measured["nodes"])).any():
        warnings.append(
            f"{_levels(nodes[nodes > max(measured['nodes'])])} nodes is beyond the measured "
            f"node counts ({_levels(measured['nodes'])})"
        )
    warnings += _crowded(artifact, network, measured, rows)
    lo, hi = min(measured["batch_size"]), max(measured["batch_size"])
    outside = batch[(batch < lo) | (batch > hi)]
    if outside.size:
        warnings.append(
            f"batch size {_levels(outside)} is outside the measured range ({lo}..{hi}) per worker"
        )
    return warnings


def _crowded(artifact: dict, network: str, measured: dict, rows: pd.DataFrame) -> list[str]:
    """Rows with more workers on a node than a measured node holds (its GPUs or cores)."""
    capacity = measured.get("node_capacity")
    if not capacity:
        return []
    per_node = np.ceil(rows["procs"].to_numpy(float) / rows["nodes"].to_numpy(float))
    crowded = per_node[per_node > capacity]
    if not crowded.size:
        return []
    devices = (artifact.get("networks", {}).get(network) or {}).get("device") or []
    what = "GPUs" if "cuda" in devices else "cores" if "cpu" in devices else "workers"
    return [
        f"{_levels(crowded)} workers per node is more than a measured node had ({capacity} "
        f"{what}): the workers would share them; ask for more nodes (--nodes)"
    ]
