"""Series: a network measured on several GPU types or precisions is one series per GPU type and
precision for everything fitted or validated per network (docs/hardware.md)."""

from __future__ import annotations

import pandas as pd

from dlperf.hardware import gpu_names

from .hardware_features import HARDWARE_COLUMNS

# The network trained, in points whose network column names series (:func:`as_series`).
BASE_NETWORK = "base_network"


def series_name(network: str, gpu: str, precision: str) -> str:
    """What a series of ``network`` is called: "resnet50 (A100-SXM4-80GB, amp_fp16)"."""
    return f"{network} ({', '.join(v for v in (gpu, precision) if v)})"


def as_series(points: pd.DataFrame) -> pd.DataFrame:
    """``points`` in which each framework's network measured on several GPU types or precisions
    (rows that differ in ``gpu`` or ``precision``) is one network per series, named by
    :func:`series_name`, so that the models fitted per network keep them apart; the network
    trained goes to :data:`BASE_NETWORK`. Points of one series each are returned unchanged."""
    if not set(HARDWARE_COLUMNS) <= set(points.columns) or points.empty:
        return points
    gpu, precision = gpu_names(points["gpu"]), gpu_names(points["precision"])
    series = gpu + "\0" + precision
    several = series.groupby([points["framework"], points["network"]]).transform("nunique") > 1
    if not several.any():
        return points
    points = points.copy()
    points[BASE_NETWORK] = points["network"]
    names = [
        series_name(n, g, p) for n, g, p in zip(points["network"], gpu, precision, strict=True)
    ]
    points.loc[several, "network"] = pd.Series(names, index=points.index)[several]
    return points


def base_networks(points: pd.DataFrame) -> pd.Series:
    """The network trained at every point (its series' network, :func:`as_series`)."""
    return points[BASE_NETWORK] if BASE_NETWORK in points.columns else points["network"]
