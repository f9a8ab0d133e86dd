"""A check of one GPU machine without the workflow: ``scripts/gpu-check.sh``.

Runs PyTorch's CUDA paths through the real harness (``dlperf.bench.runner``, one process per
worker, NVML sampled during every epoch): ImageNet-sized ResNet-50 and BERT-Base, in fp32 and
in fp16 mixed precision, on 1 GPU and on 2 where the machine has them. Then it aggregates the
run records into a timings table, fits the performance models that the measurements can
support, and prints a summary: throughput, peak device memory, GPU utilisation and power.

``--dry-run`` runs the same path on the CPU with small networks (224-pixel ResNet-18 and
BERT-Tiny), bf16 for the mixed precision, 1 and 2 workers and no NVML: what this project's
CPU machines can check of it.

Imports: the standard library, NumPy, pandas, SciPy and scikit-learn (the models), and PyTorch
in the workers; no workflow, no configuration files, no network.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dlperf.bench.runner import run_benchmark
from dlperf.bench.spec import RunConfig
from dlperf.environments.site import describe_site_env
from dlperf.io import atomic_write_text
from dlperf.measurements import tables


@dataclass(frozen=True)
class Workload:
    network: str
    batch_sizes: tuple[int, ...]
    image_size: int = 32
    seq_len: int = 128


GPU_WORKLOADS = (
    Workload("resnet50", (64, 128), image_size=224),
    Workload("bert_base", (16, 32), seq_len=128),
)
CPU_WORKLOADS = (
    Workload("resnet18", (1, 2), image_size=224),
    Workload("bert_tiny", (4, 8), seq_len=32),
)
# Models whose fits a handful of points per series can support (generic needs more levels).
MODELS = {"loglin": {}, "ernest": {}, "usl": {}, "generic": {"popsize": 10, "maxiter": 100}}
SUMMARY_COLUMNS = {
    "samples_per_s": "samples/s",
    "iter_time_median_s": "iter s",
    "device_memory_mb": "peak dev MiB",
    "peak_host_memory_mb": "peak host MiB",
    "gpu_utilisation_pct": "GPU util %",
    "gpu_power_w": "power W",
}


def plan(dry_run: bool, gpus: int, iterations: int) -> list[RunConfig]:
    """Every run of the check: workload x precision x worker count x batch size."""
    device = "cpu" if dry_run else "cuda"
    precisions = ("fp32", "bf16") if dry_run else ("fp32", "amp_fp16")
    procs = (1, 2) if dry_run or gpus >= 2 else (1,)
    runs = []
    for workload in CPU_WORKLOADS if dry_run else GPU_WORKLOADS:
        for precision in precisions:
            for p in procs:
                for batch in workload.batch_sizes:
                    runs.append(
                        RunConfig(
                            framework="pytorch",
                            network=workload.network,
                            device=device,
                            nodes=1,
                            procs=p,
                            batch_size=batch,
                            data_size=iterations * batch * p,
                            rep=0,
                            warmup_iters=2 if dry_run else 10,
                            image_size=workload.image_size,
                            seq_len=workload.seq_len,
                            precision=precision,
                        )
                    )
    return runs


def record_name(run: RunConfig) -> str:
    return f"{run.network}_{run.precision}_p{run.procs}_b{run.batch_size}.json"


def fit_summary(timings: pd.DataFrame) -> list[str]:
    """Per network and precision, each model's fit to the measured points (or why none)."""
    from dlperf.models import InsufficientData, ModelUnavailable, make_model

    lines = []
    for (network, precision), series in timings.groupby(["network", "precision"]):
        points = tables.to_points(series)
        for name, settings in MODELS.items():
            model = make_model(name, settings, seed=0)
            try:
                model.fit(points)
            except (InsufficientData, ModelUnavailable) as exc:
                lines.append(f"  {network} {precision} {name}: not fitted ({exc})")
                continue
            predicted = model.predict(points)
            error = (abs(predicted - points["epoch_time_s"]) / points["epoch_time_s"]).mean()
            lines.append(
                f"  {network} {precision} {name}: fitted on {len(points)} points, "
                f"training error {100 * error:.1f} %"
            )
    return lines


def summary(timings: pd.DataFrame, failures: pd.DataFrame) -> str:
    keys = ["network", "precision", "procs", "batch_size"]
    table = timings[keys + list(SUMMARY_COLUMNS)].rename(columns=SUMMARY_COLUMNS)
    table = table.astype(object).where(table.notna(), "n/a")  # GPU columns on a CPU
    lines = ["Measured (one epoch per configuration, rank 0's iterations):", ""]
    lines += [table.to_string(index=False, float_format=lambda v: f"{v:.4g}"), ""]
    mixed = timings[timings["precision"] != "fp32"]
    for row in mixed.itertuples():
        same = timings[
            (timings["network"] == row.network)
            & (timings["procs"] == row.procs)
            & (timings["batch_size"] == row.batch_size)
            & (timings["precision"] == "fp32")
        ]
        if len(same):
            speedup = row.samples_per_s / same["samples_per_s"].iloc[0]
            lines.append(
                f"{row.network} p={row.procs} b={row.batch_size}: {row.precision} is "
                f"{speedup:.2f}x the fp32 throughput"
            )
    lines += ["", "Model fits:", *fit_summary(timings)]
    if len(failures):
        lines += ["", f"{len(failures)} run(s) failed:"]
        lines += [
            f"  {r.network} b={r.batch_size}: {r.status}: {r.error[:300]}"
            for r in failures.itertuples()
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=f"gpu-check-{time.strftime('%Y%m%d-%H%M%S')}")
    parser.add_argument("--dry-run", action="store_true", help="the same path on the CPU")
    parser.add_argument("--iterations", type=int, default=20, help="timed iterations per run")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    args = parser.parse_args(argv)
    out = Path(args.out)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    env_file = out / "env.json"
    describe_site_env("pytorch", "python", sys.executable, env_file, out, gpus=False)
    gpus = 0
    if not args.dry_run:
        import torch

        gpus = torch.cuda.device_count()
        if gpus == 0:
            print("gpu-check: error: PyTorch sees no CUDA device; run with --dry-run on a CPU")
            return 2
    records = []
    for run in plan(args.dry_run, gpus, args.iterations):
        run = RunConfig.from_dict({**run.to_dict(), "timeout_s": args.timeout})
        path = out / "runs" / record_name(run)
        record = run_benchmark(run, env_file, path, launcher="local")
        rate = f"{record['samples_per_s']:.1f} samples/s" if record["status"] == "ok" else ""
        print(f"{path.name}: {record['status']} {rate} {record.get('error') or ''}"[:400])
        records.append(path)
    timings, failures = tables.build_tables(records)
    tables.write_csv(timings, out / "timings.csv")
    tables.write_csv(failures, out / "failures.csv")
    text = summary(timings, failures)
    atomic_write_text(out / "summary.txt", text + "\n")
    print(text)
    return 0 if len(timings) else 1


if __name__ == "__main__":
    sys.exit(main())
