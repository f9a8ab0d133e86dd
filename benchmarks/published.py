"""The published tables of ../shared/data as scaling series, for the benchmark scripts and tests.

Each table becomes timings points through the bring-your-own path
(``dlperf.measurements.external.read_external``), as a user's CSV would: one ``network`` per
scaling series
(a network on one system at one precision). The project never needs these tables; scripts and
tests that read them skip when ``../shared/data`` is absent.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from dlperf.measurements.external import read_external

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
LAMBDA = "lambda_pytorch_train_throughput.csv"
MXNET_FAQ = "mxnet_perf_faq_single_gpu_batch_sweep.csv"
DLE_GRID = "nvidia_dle_other_models_gpu_x_batch.csv"
# Scaling efficiency between any two worker counts p < q, X(q) q^-1 / (X(p) p^-1), outside this
# range is not physics but a broken measurement (e.g. 190x from 1 to 4 GPUs, or 8 GPUs running
# an iteration of the same per-GPU batch a third faster than 4 did).
PLAUSIBLE_EFFICIENCY = (0.5, 1.1)


def as_points(frame: pd.DataFrame) -> pd.DataFrame:
    """Series in the external-CSV format read back as a user's file would be."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "series.csv"
        frame.to_csv(path, index=False)
        return read_external(path)


def series_names(raw: pd.DataFrame, key: list[str]) -> pd.Series:
    """One name per series from the ``key`` columns; names become file names, so only letters,
    digits, '.', '_' and '-' are kept."""
    joined = raw[key].fillna("").astype(str).agg("|".join, axis=1)
    return joined.str.replace(r"[^A-Za-z0-9._-]", "_", regex=True)


def plausible_series(raw: pd.DataFrame) -> pd.Series:
    """Per row: whether its series scales plausibly between every pair of worker counts
    (:data:`PLAUSIBLE_EFFICIENCY`). Needs the columns series, num_gpus and throughput."""
    per_gpu = raw["throughput"] / raw["num_gpus"]
    lo, hi = PLAUSIBLE_EFFICIENCY

    def plausible(rows: pd.Index) -> bool:
        levels = per_gpu[rows].groupby(raw.loc[rows, "num_gpus"]).median().sort_index()
        x = levels.to_numpy()
        # efficiency[i, j] = X(q_j)/q_j over X(p_i)/p_i; the pairs p_i < q_j are above the diagonal.
        efficiency = (x[None, :] / x[:, None])[np.triu_indices(len(x), k=1)]
        return bool(((efficiency >= lo) & (efficiency <= hi)).all())

    verdict = {name: plausible(rows) for name, rows in raw.groupby("series").groups.items()}
    return raw["series"].map(verdict)


def lambda_series(shared: Path = SHARED) -> pd.DataFrame:
    """Lambda's PyTorch table: one series per (network, GPU, host, precision) measured at 1, 2,
    4 and 8 GPUs whose scaling is plausible between every pair of worker counts."""
    raw = pd.read_csv(shared / LAMBDA, comment="#")
    raw = raw[raw["throughput"] > 0].copy()
    raw["series"] = series_names(raw, ["model", "gpu_type", "host_label", "precision"])
    raw = raw.drop_duplicates(["series", "num_gpus"])
    raw = raw[raw.groupby("series")["num_gpus"].transform("nunique") == 4]
    raw = raw[plausible_series(raw)]
    return as_points(
        pd.DataFrame(
            {
                "framework": "pytorch",
                "network": raw["series"],
                "device": "cuda",
                "procs": raw["num_gpus"],
                "batch_size": raw["batch_size_per_gpu_derived"],
                "samples_per_s": raw["throughput"],
            }
        )
    )


def grid_series(raw: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    """A GPUs x batch table (NVIDIA's, MXNet's) as series named by ``key``."""
    raw = raw[raw["throughput"] > 0].copy()
    raw["series"] = series_names(raw, key)
    raw = raw.drop_duplicates(["series", "num_nodes", "num_gpus", "batch_size_per_gpu"])
    framework = raw["framework"].str.lower().str.extract(r"(pytorch|tensorflow|mxnet)")[0]
    return as_points(
        pd.DataFrame(
            {
                "framework": framework.fillna("other"),
                "network": raw["series"],
                "device": "cuda",
                "nodes": raw["num_nodes"],
                "procs": raw["num_gpus"],
                "batch_size": raw["batch_size_per_gpu"],
                "samples_per_s": raw["throughput"],
            }
        )
    )


def ssd300_series(shared: Path = SHARED) -> pd.DataFrame:
    raw = pd.read_csv(shared / "nvidia_dle_pytorch_ssd300_benchmark_baselines.csv", comment="#")
    return grid_series(raw, ["precision", "container_or_version"])


def nvidia_grid_series(shared: Path = SHARED) -> pd.DataFrame:
    raw = pd.read_csv(shared / DLE_GRID, comment="#")
    points = grid_series(
        raw, ["model", "gpu_type", "precision", "extra_config", "framework", "source_table"]
    )
    # Series too small for grouped k-fold (fewer than four configurations) are left out.
    size = points.groupby("network")["procs"].transform("size")
    return points[size >= 4].reset_index(drop=True)


def mxnet_batch_series(shared: Path = SHARED) -> pd.DataFrame:
    raw = pd.read_csv(shared / MXNET_FAQ, comment="#")
    return grid_series(raw, ["model", "gpu_type", "source_table"])


def accumulation_steps(raw: pd.Series) -> pd.Series:
    """Gradient-accumulation steps as printed ('32', '32.0', '64/gpus = 16', empty) -> int >= 1."""
    text = raw.astype(str).str.extract(r"(\d+(?:\.\d+)?)\s*$")[0]
    return pd.to_numeric(text, errors="coerce").fillna(1).astype(int).clip(lower=1)


def multinode_series(raw: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    """A multi-node table (columns nodes, gpus, batch_per_gpu, grad_accum_steps, throughput)
    as series named by ``key``; the batch is the per-GPU micro-batch."""
    raw = raw[raw["throughput"] > 0].copy()
    raw["series"] = series_names(raw, key)
    raw = raw.drop_duplicates(["series", "nodes", "gpus", "batch_per_gpu"])
    return as_points(
        pd.DataFrame(
            {
                "framework": "pytorch",
                "network": raw["series"],
                "device": "cuda",
                "nodes": raw["nodes"],
                "procs": raw["gpus"],
                "batch_size": raw["batch_per_gpu"],
                "grad_accum_steps": accumulation_steps(raw["grad_accum_steps"]),
                "samples_per_s": raw["throughput"],
            }
        )
    )


def nvidia_multinode_series(shared: Path = SHARED) -> pd.DataFrame:
    """NVIDIA's BERT, BART and Transformer-XL scaling tables (to 1024 GPUs on 64 nodes)."""
    raw = pd.read_csv(shared / "nvidia_dle_pytorch_multinode_scaling.csv", comment="#")
    return multinode_series(raw, ["fit_series_key"])


def csc_series(shared: Path = SHARED) -> pd.DataFrame:
    """CSC's ml-benchmarks (Puhti, Mahti, LUMI; 1 GPU to 2 nodes)."""
    raw = pd.read_csv(shared / "csc_ml_benchmarks_pytorch_scaling.csv", comment="#")
    return multinode_series(raw, ["series_id"])


def translation_series(shared: Path = SHARED) -> pd.DataFrame:
    """NVIDIA's GNMT v2 and Transformer-big translation tables (1-16 GPUs of one node), tokens
    per second as the samples."""
    raw = pd.read_csv(shared / "nvidia_dle_pytorch_translation_scaling.csv", comment="#")
    return grid_series(raw, ["network", "gpu_type", "precision"])
