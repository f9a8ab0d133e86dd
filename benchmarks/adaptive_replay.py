"""How much the adaptive loop saves: `dlperf adaptive-replay` on measured grids.

For every grid, the loop runs within 35% of the grid's runs (seed 0); the table gives the runs it
used, the MAPE over every configuration of the grid of the generic model fitted on the chosen runs
(adaptive), the mean of the same over random subsets of as many runs (random), and the model
fitted on the whole grid (full). Grids: the default run's timings (when given) and the published
tables in ../shared/data that have at least 8 configurations per scaling series (skipped when
absent).

    .venv/bin/python benchmarks/adaptive_replay.py [results/timings.csv ...] [--budget 0.35]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from dlperf import stages

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
MIN_CONFIGURATIONS = 8


def published_grids(out: Path) -> dict[str, Path]:
    """The shared tables as external-timings CSVs: one network per scaling series."""
    grids = {}
    specs = {
        "ssd300 (NVIDIA, GPUs x batch)": (
            "nvidia_dle_pytorch_ssd300_benchmark_baselines.csv",
            ["model", "container_or_version", "precision"],
        ),
        "mxnet perf FAQ (batch sweep)": (
            "mxnet_perf_faq_single_gpu_batch_sweep.csv",
            ["model", "gpu_type", "precision"],
        ),
        "NVIDIA DLE other models (GPUs x batch)": (
            "nvidia_dle_other_models_gpu_x_batch.csv",
            ["framework", "model", "gpu_type", "precision", "extra_config"],
        ),
    }
    for name, (filename, series) in specs.items():
        path = DATA / filename
        if not path.exists():
            continue
        raw = pd.read_csv(path, comment="#")
        raw = raw[raw["throughput"] > 0].copy()
        raw["network"] = (
            raw[series]
            .fillna("")
            .astype(str)
            .agg("|".join, axis=1)
            .str.replace(r"[^A-Za-z0-9._-]", "_", regex=True)
        )
        raw = raw.drop_duplicates(["network", "num_nodes", "num_gpus", "batch_size_per_gpu"])
        sizes = raw.groupby("network")["throughput"].transform("size")
        raw = raw[sizes >= MIN_CONFIGURATIONS]
        if raw.empty:
            continue
        csv = out / f"{filename}"
        pd.DataFrame(
            {
                "framework": "published",
                "network": raw["network"],
                "nodes": raw["num_nodes"].astype(int),
                "procs": raw["num_gpus"].astype(int),
                "batch_size": raw["batch_size_per_gpu"].astype(int),
                "samples_per_s": raw["throughput"],
            }
        ).to_csv(csv, index=False)
        grids[name] = csv
    return grids


def synthetic_grid(out: Path, seed: int = 11) -> Path:
    """A grid from a known data-parallel law (overhead, compute b^0.85, ring all-reduce, log
    latency, inter-node cost growing with nodes) with 3% noise and 3 repetitions: 2 series of
    nodes 1-4 x workers 1-32 x 4 batch sizes x 2 data sizes."""
    rng = np.random.default_rng(seed)
    laws = {"fast-net": (3e-3, 2e-4, 8e-3, 2e-3, 1e-2), "slow-net": (6e-3, 5e-4, 3e-2, 4e-3, 6e-2)}
    rows = []
    for name, (c1, c2, c3, c4, c5) in laws.items():
        for n, p, b, d in itertools.product(
            (1, 2, 4), (1, 2, 4, 8, 16, 32), (16, 32, 64, 128), (8192, 32768)
        ):
            if p % n or (n > 1 and p < 2 * n):
                continue
            iters = np.ceil(d / (p * b))
            t_iter = (
                c1
                + c2 * b**0.85
                + c3 * (p - 1) / p
                + c4 * np.ceil(np.log2(p))
                + c5 * np.log2(n) * (p - 1) / p
            )
            for rep in range(3):
                rows.append(
                    {
                        "framework": "synthetic",
                        "network": name,
                        "nodes": n,
                        "procs": p,
                        "batch_size": b,
                        "data_size": d,
                        "rep": rep,
                        "epoch_time_s": (0.8 + iters * t_iter) * rng.lognormal(0, 0.03),
                    }
                )
    path = out / "synthetic.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _percent(value: float | None) -> str:
    """n/a where the model could not be fitted on some series (too few runs for it)."""
    return "n/a" if value is None else f"{value:.2f}%"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("timings", nargs="*", help="timings tables of our own runs")
    parser.add_argument("--budget", type=float, default=0.35)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        grids = {f"our run: {t}": Path(t) for t in args.timings}
        grids["synthetic law, 3 repetitions"] = synthetic_grid(Path(tmp))
        grids.update(published_grids(Path(tmp)))
        print(
            "| grid | runs used / total | adaptive MAPE | random MAPE | full-grid MAPE "
            "| adaptive / full |"
        )
        print("|---|---|---|---|---|---|")
        for name, path in grids.items():
            summary = stages.adaptive_replay(
                [path], args.budget, {"seed": args.seed}, Path(tmp) / "out"
            )
            adaptive, random, full = (
                summary[k] for k in ("mape_adaptive", "mape_random", "mape_full")
            )
            ratio = "n/a" if adaptive is None or not full else f"{adaptive / full:.2f}"
            print(
                f"| {name} | {summary['runs_used']} / {summary['runs_total']} | "
                f"{_percent(adaptive)} | {_percent(random)} | {_percent(full)} | {ratio} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
