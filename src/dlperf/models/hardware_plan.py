"""Choosing hardware: per GPU type, the fewest GPUs whose answer across hardware meets a
deadline, with its interval and the cost at the user's own prices (the project ships none)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import yaml

from dlperf.durations import readable
from dlperf.errors import InputFileError
from dlperf.hardware import load

from .hardware_answer import answer_at
from .planning import layouts


def read_prices(path: str | Path | None, hardware: str | None = None) -> dict[str, float]:
    """A YAML file of GPU name -> price per GPU-hour (any currency), keyed by catalogue name;
    None: no prices."""
    if path is None:
        return {}
    path = Path(path)
    if not path.is_file():
        raise InputFileError(f"prices file {path} not found; give a YAML file of GPU: price")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError:
        raise InputFileError(
            f"prices file {path} is not YAML; write lines 'GPU name: price'"
        ) from None
    if not isinstance(data, dict):
        raise InputFileError(f"prices file {path} must map GPU names to prices per GPU-hour")
    catalogue, prices = load(hardware), {}
    for name, price in data.items():
        if not isinstance(price, (int, float)) or not math.isfinite(price) or price < 0:
            raise InputFileError(f"prices file {path}: {name!r} needs a price >= 0, got {price!r}")
        prices[catalogue.match(str(name)).name] = float(price)
    return prices


def plan_gpus(
    block: dict,
    gpus: list[str],
    prices: dict[str, float],
    work: dict,
    deadline_s: float,
    safe: bool = False,
    hardware: str | None = None,
) -> pd.DataFrame:
    """One row per GPU type: the fewest GPUs up to ``work["max_procs"]`` (``gpus_per_node`` a
    node; only powers of two with ``work["powers_of_two"]``) that train ``work`` (batch_size,
    data_size, epochs, precision) within the deadline
    (at the interval's upper end with ``safe``), or the fastest when none does, with its cost."""
    catalogue = load(hardware)
    out = []
    for asked in gpus:
        gpu = catalogue.match(asked).name
        shapes = layouts(work["max_procs"], work["gpus_per_node"], work["powers_of_two"])
        rows = pd.DataFrame(shapes, columns=["nodes", "procs"]).assign(
            batch_size=work["batch_size"],
            data_size=work["data_size"],
            gpu=gpu,
            precision=work["precision"],
        )
        found = answer_at(block, rows, hardware)
        total = found.predicted * work["epochs"]
        upper = total if found.hi is None else found.hi * work["epochs"]
        judged = upper if safe else total
        meets = judged <= deadline_s
        i = int(meets.argmax()) if meets.any() else int(total.argmin())
        hours = total[i] / 3600 * rows["procs"].iloc[i]
        out.append(
            {
                "gpu": gpu,
                "measured": bool(found.measured[i]),
                "reach": float(found.reach[i]),
                "nodes": int(rows["nodes"].iloc[i]),
                "procs": int(rows["procs"].iloc[i]),
                "total_time_s": float(total[i]),
                "total_time_lo_s": None
                if found.lo is None
                else float(found.lo[i] * work["epochs"]),
                "total_time_hi_s": None if found.hi is None else float(upper[i]),
                "meets_deadline": bool(meets[i]),
                "gpu_hours": float(hours),
                "cost": float(hours * prices[gpu]) if gpu in prices else None,
            }
        )
    return pd.DataFrame(out)


def cheapest(table: pd.DataFrame, deadline_s: float) -> pd.Series | None:
    """The row that meets the deadline at the lowest cost (fewest GPU-hours without prices),
    with its ``risk``: :func:`extrapolation_risk`'s line, or None."""
    meeting = table[table["meets_deadline"]]
    if meeting.empty:
        return None
    key = "cost" if meeting["cost"].notna().all() else "gpu_hours"
    choice = meeting.loc[meeting[key].astype(float).idxmin()].copy()
    choice["risk"] = extrapolation_risk(choice, deadline_s)
    return choice


def extrapolation_risk(choice: pd.Series, deadline_s: float) -> str | None:
    """For a choice on a GPU type never measured: that its answer is an extrapolation, how far
    (its reach), and whether it still meets the deadline at its interval's upper end (what
    ``--safe`` plans on); None for a GPU type measured."""
    if choice["measured"]:
        return None
    upper = choice["total_time_hi_s"]
    if upper is None or not math.isfinite(upper):
        at_upper = "it has no interval to judge the risk by"
    elif upper <= deadline_s:
        at_upper = f"it meets the deadline even at its interval's upper end ({readable(upper)})"
    else:
        at_upper = (
            f"at its interval's upper end ({readable(upper)}) it misses the deadline; "
            "--safe plans for that end"
        )
    return (
        f"{choice['gpu']} was not measured: its answer is an extrapolation to a GPU type whose "
        f"figures lie up to {choice['reach']:.2g}x beyond those measured; {at_upper}"
    )
