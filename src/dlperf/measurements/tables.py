"""The timings table: every run record as one tidy row; failures kept apart.

Also the *points* every model is fitted on: one per measured configuration,
the median epoch time over its repetitions.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable

import numpy as np
import pandas as pd

from dlperf.bench.spec import RunConfig, run_features
from dlperf.errors import InputFileError
from dlperf.io import atomic_path, atomic_write_text, unopenable
from dlperf.measurements.configuration import (
    ACCUMULATION,
    CONFIG_COLUMNS,
    INPUT_COLUMNS,
    POINT_KEYS,
)
from dlperf.measurements.records import RunRecord, read_records

TIMING_COLUMNS = (
    CONFIG_COLUMNS
    + list(INPUT_COLUMNS)
    + [
        "global_batch",
        "iters_per_epoch",
        "iter_time_median_s",
        "iter_time_q25_s",
        "iter_time_q75_s",
        "iter_time_iqr_s",
        "iter_time_mean_s",
        "iter_time_n",
        "warmup_iters",
        "epoch_time_s",
        "samples_per_s",
        "param_count",
        "flops_per_sample",
        "setup_s",
        "compile_s",
        "framework_version",
        "threads_per_worker",
        "cores_per_node",
        "ranks",
        "hostname",
        "cpu_model",
        "gpu_names",
        "gpu",  # the GPU type as NVML names it (the host's first GPU), empty on CPU runs
        "slurm_job_id",
        "git_commit",
        "start_time",
        "source",
    ]
    + [
        # What the hardware did during the timed epoch (run record "resources", "noise"); empty
        # for records written before dlperf captured it, GPU columns empty on CPU runs.
        "peak_host_memory_mb",  # largest peak resident memory of any rank
        "cpu_utilisation",  # CPU seconds / (epoch seconds * threads), mean over ranks
        "device_memory_mb",  # largest peak device memory of any rank, as the framework reports it
        "gpu_utilisation_pct",  # NVML, mean over the epoch and over the ranks' GPUs
        "gpu_power_w",  # NVML, mean power of all the run's GPUs together
        "energy_per_sample_j",  # the run's GPU energy over the epoch / samples trained
        "foreign_cpu_fraction",  # CPU used by other programs on rank 0's host (noise)
        "data_wait_fraction",  # share of the timed iterations spent fetching batches (rank 0)
    ]
)
MIB = 2**20
# A run during whose timed epoch other programs used more than this share of its host's CPU
# (foreign_cpu_fraction) was disturbed: its times say more about the neighbours than about it.
NOISY_FOREIGN_CPU = 0.10
#: The column of that share.
FOREIGN_CPU = "foreign_cpu_fraction"
# Results from runs more than this share disturbed are not to be quoted (the report marks them,
# `dlperf predict` warns).
MOSTLY_DISTURBED = 0.5
# Optional per-network features carried from the timings into the points when present.
NETWORK_FEATURES = ["param_count", "flops_per_sample"]
# How workers shared a node (the generic model's core_share and ps_sync terms); optional:
# absent cores mean a worker with its own device, absent ps_servers one parameter server.
LAYOUT_COLUMNS = ["threads_per_worker", "cores_per_node", "ps_servers"]
# The GPU type and precision of a run: rows that differ in either are never pooled into one point.
SERIES_COLUMNS = ["gpu", "precision"]
FAILURE_COLUMNS = (
    CONFIG_COLUMNS + list(INPUT_COLUMNS) + ["status", "error", "hostname", "slurm_job_id", "record"]
)


def iteration_stats(series: list[list[float]]) -> dict[str, np.ndarray]:
    """Quartiles (numpy's linear method), mean and count of every run's iteration times.

    All runs at once: one sort of the concatenated times instead of a percentile call per
    run, which dominated aggregating tens of thousands of records.
    """
    counts = np.fromiter((len(s) for s in series), dtype=np.int64, count=len(series))
    if not len(series):
        return {k: np.empty(0) for k in ("q25", "median", "q75", "mean", "n")}
    flat = np.fromiter((t for s in series for t in s), dtype=float, count=int(counts.sum()))
    run = np.repeat(np.arange(len(series)), counts)
    ordered = flat[np.lexsort((flat, run))]
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])

    def quantile(q: float) -> np.ndarray:
        position = starts + q * (counts - 1)
        below = np.floor(position).astype(np.int64)
        above = np.ceil(position).astype(np.int64)
        return ordered[below] + (position - below) * (ordered[above] - ordered[below])

    return {
        "q25": quantile(0.25),
        "median": quantile(0.5),
        "q75": quantile(0.75),
        "mean": np.add.reduceat(flat, starts) / counts,
        "n": counts,
    }


def _timing_row(record: RunRecord) -> dict:
    """The row of a successful run, less the iteration statistics (see iteration_stats)."""
    config, env = record.config, record.environment
    row = {key: config[key] for key in CONFIG_COLUMNS}
    row.update({key: config.get(key, default) for key, default in INPUT_COLUMNS.items()})
    row.update(
        global_batch=config["procs"] * config["batch_size"],
        iters_per_epoch=record.iters_per_epoch,
        warmup_iters=record.warmup_iters,
        epoch_time_s=record.epoch_time_s,
        samples_per_s=record.samples_per_s,
        param_count=record.param_count,
        # Intrinsic features of the network at the run's input size, from its definition.
        flops_per_sample=_flops_per_sample(record),
        setup_s=record.setup_s,
        compile_s=record.compile_s,
        framework_version=env.get("framework_version"),
        threads_per_worker=env.get("threads_per_worker"),
        cores_per_node=env.get("cores_available"),
        ranks=record.ranks,
        hostname=env.get("hostname"),
        cpu_model=env.get("cpu_model"),
        gpu_names=";".join(env.get("gpu_names") or []),
        gpu=record.gpu,
        slurm_job_id=env.get("slurm_job_id"),
        git_commit=env.get("git_commit"),
        start_time=env.get("start_time"),
        source="dlperf",
    )
    row.update(_resource_columns(record))
    return row


def _flops_per_sample(record: RunRecord) -> int | None:
    """Forward FLOPs per sample as the record states them, else from the network's definition
    at the record's input size (None for a network this version does not know)."""
    stated = record.network_features.get("flops_per_sample")
    if stated is not None:
        return stated
    try:
        return run_features(RunConfig.from_dict(record.config))["flops_per_sample"]
    except (ValueError, TypeError):
        return None


def _resource_columns(record: RunRecord) -> dict:
    used = record.resources

    def scaled(key: str, factor: float) -> float | None:
        value = used.get(key)
        return None if value is None else value / factor

    samples = record.iters_per_epoch * record.config["procs"] * record.config["batch_size"]
    return {
        "peak_host_memory_mb": scaled("peak_host_memory_bytes", MIB),
        "cpu_utilisation": used.get("cpu_utilisation"),
        "device_memory_mb": scaled("device_memory_bytes", MIB),
        "gpu_utilisation_pct": used.get("gpu_utilisation_pct"),
        "gpu_power_w": used.get("gpu_power_mean_w"),
        "energy_per_sample_j": scaled("gpu_energy_j", samples),
        "foreign_cpu_fraction": record.foreign_cpu_fraction,
        "data_wait_fraction": record.data_wait_fraction,
    }


def _failure_row(record: RunRecord, path: str) -> dict:
    config, env = record.config, record.environment
    row = {key: config.get(key) for key in CONFIG_COLUMNS}
    row.update({key: config.get(key, default) for key, default in INPUT_COLUMNS.items()})
    row.update(
        status=record.status,
        error=(record.error or "")[:2000],
        hostname=env.get("hostname"),
        slurm_job_id=env.get("slurm_job_id"),
        record=str(path),
    )
    return row


def build_tables(paths: Iterable[str | os.PathLike]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(timings, failures) from run record files, both sorted by configuration."""
    ok_rows, failed_rows, iter_times = [], [], []
    for path, record in read_records(paths):
        if record.ok:
            ok_rows.append(_timing_row(record))
            iter_times.append(record.iter_times_s)
        else:
            failed_rows.append(_failure_row(record, str(path)))
    timings = pd.DataFrame(ok_rows, columns=TIMING_COLUMNS)
    stats = iteration_stats(iter_times)
    timings["iter_time_median_s"] = stats["median"]
    timings["iter_time_q25_s"] = stats["q25"]
    timings["iter_time_q75_s"] = stats["q75"]
    timings["iter_time_iqr_s"] = stats["q75"] - stats["q25"]
    timings["iter_time_mean_s"] = stats["mean"]
    timings["iter_time_n"] = stats["n"]
    failures = pd.DataFrame(failed_rows, columns=FAILURE_COLUMNS)
    timings = timings.sort_values(CONFIG_COLUMNS, kind="stable").reset_index(drop=True)
    failures = failures.sort_values(CONFIG_COLUMNS, kind="stable").reset_index(drop=True)
    return timings, failures


def write_csv(frame: pd.DataFrame, path: str | os.PathLike) -> None:
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False, float_format="%.9g", lineterminator="\n")
    atomic_write_text(path, buffer.getvalue())


def write_parquet(frame: pd.DataFrame, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        frame.to_parquet(tmp, index=False)


def read_csv(
    path: str | os.PathLike, fix: str = "pass the file a dlperf command wrote", **options
) -> pd.DataFrame:
    """A CSV file a user names; a missing or malformed one is an error naming the file (and,
    for a malformed one, ``fix``)."""
    try:
        return pd.read_csv(path, **options)
    except FileNotFoundError:
        raise InputFileError(f"{path} does not exist; check the path") from None
    except (IsADirectoryError, PermissionError) as exc:
        raise unopenable(path, exc) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise InputFileError(f"{path} is not a readable CSV table ({exc}); {fix}") from None


def read_timings(path: str | os.PathLike) -> pd.DataFrame:
    frame = read_csv(path)
    missing = [c for c in POINT_KEYS + ["epoch_time_s"] if c not in frame.columns]
    if missing:
        raise InputFileError(
            f"{path} lacks the column(s) {', '.join(missing)}; pass a timings table written by "
            "`dlperf aggregate` (results/timings.csv)."
        )
    return frame


def disturbed(timings: pd.DataFrame) -> pd.Series:
    """Which runs were disturbed: other programs used more than :data:`NOISY_FOREIGN_CPU` of
    the host's CPU during the timed epoch (False where it was not measured)."""
    if "foreign_cpu_fraction" not in timings:
        return pd.Series(False, index=timings.index)
    return pd.to_numeric(timings["foreign_cpu_fraction"], errors="coerce") > NOISY_FOREIGN_CPU


def mostly_disturbed(share: float | None) -> list[str]:
    """A warning when more than :data:`MOSTLY_DISTURBED` of the runs behind a result (``share``,
    as a model artifact records it; None where not measured) were disturbed."""
    if share is None or share <= MOSTLY_DISTURBED:
        return []
    return [
        f"{share:.0%} of the runs behind these models were disturbed by other programs: not to "
        "be quoted; re-measure them on a quiet machine (docs/report.md, disturbed runs) and "
        "fit again"
    ]


def node_capacity(frame: pd.DataFrame) -> pd.Series:
    """Workers a node of each run holds: its GPUs on cuda runs (``gpu_names``, joined by ";":
    those the run saw, e.g. the GPUs a Slurm job was given), its cores on other runs
    (``cores_per_node``, the run record's cores_available); NaN where the run does not say (an
    external table without those columns)."""
    nan = pd.Series(float("nan"), index=frame.index)
    cores = nan
    if "cores_per_node" in frame:
        cores = pd.to_numeric(frame["cores_per_node"], errors="coerce")
    gpus = nan
    if "gpu_names" in frame:
        names = frame["gpu_names"].astype(object).where(frame["gpu_names"].notna(), "")
        gpus = names.astype(str).map(lambda text: text.count(";") + 1 if text else float("nan"))
    device = frame["device"].astype(str) if "device" in frame else pd.Series("", index=frame.index)
    return gpus.where(device == "cuda", cores).astype(float)


def left_out(timings: pd.DataFrame) -> pd.Series:
    """Which runs the models leave out: the disturbed runs of every configuration that also has
    an undisturbed repetition (its times say more about the neighbours than about the run). A
    configuration measured only while disturbed keeps its runs: no point is better than a
    flagged one only where another exists (the report warns about both)."""
    flagged = disturbed(timings)
    if not flagged.any():
        return flagged
    keys = [timings[k] for k in POINT_KEYS]
    if ACCUMULATION in timings:
        keys.append(timings[ACCUMULATION])
    clean_in_config = (~flagged).groupby(keys, dropna=False).transform("any")
    return flagged & clean_in_config
