"""What the report's figures plot, shaped from the study's tables: the workers a model is drawn
over, measured medians with their spread, a model's curve and band, speed-ups, the
configurations along an axis. No drawing here (the figure kinds draw, rendering.py renders)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .curves import Curve

CONFIG_KEYS = ["nodes", "procs", "batch_size", "data_size"]


def prediction_grid(points: pd.DataFrame, batch: int, data: int) -> pd.DataFrame:
    """Workers from 1 to twice the largest measured count, nodes filled like the measurements."""
    max_procs = int(points["procs"].max())
    per_node = max(1, int((points["procs"] / points["nodes"]).max()))
    procs = np.unique(
        np.concatenate([np.arange(1, 2 * max_procs + 1), points["procs"].to_numpy(int)])
    )
    first = points.iloc[0]
    return pd.DataFrame(
        {
            "framework": first["framework"],
            "network": first["network"],
            "device": first["device"],
            "nodes": np.ceil(procs / per_node).astype(int),
            "procs": procs.astype(int),
            "batch_size": int(batch),
            "data_size": int(data),
        }
    )


def measured_spread(
    sel: pd.DataFrame, data: int, throughput: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Medians over repetitions and their interquartile error bars (below, above); throughput
    is d / epoch time, so the time quartiles swap ends."""
    median, q25, q75 = (
        sel[k].to_numpy(float) for k in ("epoch_time_s", "epoch_time_q25_s", "epoch_time_q75_s")
    )
    if throughput:
        median, q25, q75 = data / median, data / q75, data / q25
    return median, np.vstack([np.maximum(median - q25, 0), np.maximum(q75 - median, 0)])


def model_curve_on(curve: Curve, grid: pd.DataFrame, throughput: bool):
    """The model's prediction over ``grid`` and its band (lower, upper; None without one), as
    epoch time or as throughput (the band's ends swap)."""
    data = int(grid["data_size"].iloc[0])
    pred = np.asarray(curve.predict(grid), dtype=float)
    band = curve.band(grid) if curve.band else None
    if throughput:
        pred = data / pred
        band = (data / band[1], data / band[0]) if band else None
    return pred, band


def predicted_speedup(
    curve: Curve, points: pd.DataFrame, batch: int, data: int, base: pd.Series
) -> tuple[pd.Series, np.ndarray]:
    """Workers from the fewest measured (``base``) on, and the speed-up the model predicts there
    relative to ``base``, times its worker count (as the measured speed-up is), at most the
    ideal."""
    grid = prediction_grid(points, batch, data)
    grid = grid[grid["procs"] >= base["procs"]]
    pred = np.asarray(curve.predict(grid), dtype=float)
    # Never drawn above the ideal line (speed-up = workers): no prediction beats perfect scaling.
    return grid["procs"], np.minimum(pred[0] / pred * base["procs"], grid["procs"].to_numpy(float))


def protocols(predictions: pd.DataFrame) -> list[str]:
    """The validation protocols of held-out predictions, one panel each."""
    return sorted(predictions["protocol"].unique())


def config_label(nodes, procs, batch, data) -> str:
    return f"n{nodes} p{procs} b{batch} d{data}"


def config_positions(predictions: pd.DataFrame) -> tuple[dict[tuple, int], list[str]]:
    """Each measured configuration's place along a sorted axis, and the axis labels."""
    configs = (
        predictions[CONFIG_KEYS].drop_duplicates().sort_values(CONFIG_KEYS).reset_index(drop=True)
    )
    position = {tuple(row): i for i, row in enumerate(configs.itertuples(index=False))}
    return position, [config_label(*row) for row in configs.itertuples(index=False)]


def model_offsets(models: list[str]) -> dict[str, float]:
    """A small sideways shift per model, so models at one configuration do not hide each other."""
    return {m: (i - (len(models) - 1) / 2) * 0.12 for i, m in enumerate(models)}


def breakdown_rows(breakdown: list[dict]) -> tuple[list[str], list[dict], list[str]]:
    """The generic model's terms, its breakdown rows in configuration order, and their labels."""
    terms = list(breakdown[0]["seconds"]) if breakdown else []
    rows = sorted(breakdown, key=lambda r: tuple(r[k] for k in CONFIG_KEYS))
    return terms, rows, [config_label(*(r[k] for k in CONFIG_KEYS)) for r in rows]
