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
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dlperf.bench import references
from dlperf.bench.options import INPUTS
from dlperf.bench.runner import run_benchmark
from dlperf.bench.spec import RunConfig
from dlperf.environments.site import describe_site_env
from dlperf.io import atomic_write_text
from dlperf.measurements import tables
from dlperf.measurements.points import to_points

REPO = Path(__file__).resolve().parents[3]  # the checkout this runs from (scripts/gpu-check.sh)


@dataclass(frozen=True)
class Workload:
    network: str
    batch_sizes: tuple[int, ...]
    image_size: int = 32
    seq_len: int = 128


# Per-GPU batches that fill a 40-140 GB device, as the published references' do.
GPU_WORKLOADS = (
    Workload("resnet50", (128, 256), image_size=224),
    Workload("bert_base", (128, 256), seq_len=128),
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


#: The precisions each mode runs; the first is the one the others' speed-up is against.
PRECISIONS = {True: ("fp32", "bf16"), False: ("tf32", "amp_fp16")}


def plan(dry_run: bool, gpus: int, iterations: int, options: dict | None = None) -> list[RunConfig]:
    """Every run of the check: workload x precision x worker count x batch size, each with
    ``options`` (compile, cuda_graphs, input)."""
    device = "cpu" if dry_run else "cuda"
    precisions = PRECISIONS[dry_run]
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
                            **(options or {}),
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
        points = to_points(series)
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


def reference_lines(timings: pd.DataFrame) -> list[str]:
    """Per network and precision, the fastest measured per-GPU rate of one worker beside the
    published figures for that GPU (:mod:`dlperf.bench.references`)."""
    single = timings[timings["procs"] == 1]
    lines = []
    for (network, precision), series in single.groupby(["network", "precision"]):
        best = series.loc[series["samples_per_s"].idxmax()]
        lines += references.beside_references(
            network,
            int(best["image_size"]),
            int(best["seq_len"]),
            str(best["gpu_names"]) if pd.notna(best["gpu_names"]) else "",
            precision,
            float(best["samples_per_s"]),
        )
    return lines


def summary(timings: pd.DataFrame, failures: pd.DataFrame) -> str:
    keys = ["network", "precision", "procs", "batch_size"]
    table = timings[keys + list(SUMMARY_COLUMNS)].rename(columns=SUMMARY_COLUMNS)
    table = table.astype(object).where(table.notna(), "n/a")  # GPU columns on a CPU
    lines = ["Measured (one epoch per configuration, rank 0's iterations):", ""]
    lines += [table.to_string(index=False, float_format=lambda v: f"{v:.4g}"), ""]
    # The speed-ups are against the float32 runs (strict on the CPU, TF32 on a GPU).
    base = "fp32" if "fp32" in set(timings["precision"]) else "tf32"
    mixed = timings[timings["precision"] != base]
    for row in mixed.itertuples():
        same = timings[
            (timings["network"] == row.network)
            & (timings["procs"] == row.procs)
            & (timings["batch_size"] == row.batch_size)
            & (timings["precision"] == base)
        ]
        if len(same):
            speedup = row.samples_per_s / same["samples_per_s"].iloc[0]
            lines.append(
                f"{row.network} p={row.procs} b={row.batch_size}: {row.precision} is "
                f"{speedup:.2f}x the {base} throughput"
            )
    lines += ["", "Beside the published references (best batch per network and precision):"]
    lines += reference_lines(timings)
    lines += ["", "Model fits:", *fit_summary(timings)]
    if len(failures):
        lines += ["", f"{len(failures)} run(s) failed:"]
        lines += [
            f"  {r.network} b={r.batch_size}: {r.status}: {r.error[:300]}"
            for r in failures.itertuples()
        ]
    return "\n".join(lines)


def workflow_config(dry_run: bool, gpus: int, iterations: int, python: str) -> dict:
    """The study ``--workflow`` runs: the check's networks through the real workflow on 1
    worker and on every GPU (1 and 2 CPU workers in a dry run), ``python`` running them."""
    procs = sorted({1, 2 if dry_run else gpus})
    batches = [4, 8] if dry_run else [128, 256]
    return {
        "frameworks": ["pytorch"],
        "framework_envs": {"pytorch": {"python": python}},
        "networks": ["lenet", "bert_tiny"] if dry_run else ["resnet50", "bert_base"],
        "image_size": 32 if dry_run else 224,
        "seq_len": 32 if dry_run else 128,
        "precision": "fp32" if dry_run else "amp_fp16",
        "device": "cpu" if dry_run else "cuda",
        "procs": procs,
        "max_procs_per_node": None,
        "batch_sizes": batches,
        "data_sizes": [iterations * max(batches) * max(procs)],
        "repeats": 1 if dry_run else 2,
        "warmup_iters": 2 if dry_run else 10,
        "timeout_s": 600 if dry_run else 1800,
        "models": MODELS,
        "validation": {
            "protocols": {"kfold": {"k": 2}, "extrapolation_batch": {}},
            "bootstrap": 100,
        },
        # A dry run shares this CPU machine's cores between its own jobs: its runs come out
        # disturbed by design, and it checks the path, not the numbers (1: never stop).
        **({"preflight": {"max_disturbed_fraction": 1.0}} if dry_run else {}),
    }


def run_workflow(args: argparse.Namespace, gpus: int, out: Path) -> int:
    """Write the study's configuration and run the real Snakefile on it (aggregate, fit,
    validate, report); then the summary of its timings beside the references."""
    import yaml

    from dlperf.layout import WORKFLOW

    python = os.environ.get("TORCH_PYTHON", sys.executable)
    config = workflow_config(args.dry_run, gpus, args.iterations, python)
    config_path = out / "workflow.yaml"
    atomic_write_text(config_path, yaml.safe_dump(config, sort_keys=False))
    study = out / "study"
    study.mkdir(exist_ok=True)
    argv = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile")]
    argv += ["--directory", str(study), "--configfile", str(config_path)]
    argv += ["--cores", str(os.cpu_count() or 1)]
    print("gpu-check: " + " ".join(argv), flush=True)
    code = subprocess.run(argv, check=False).returncode
    if code != 0:
        print(f"gpu-check: error: the workflow failed (exit {code}); its logs: {study}/logs")
        return 1
    timings = pd.read_csv(study / WORKFLOW.timings)
    failures = pd.read_csv(study / WORKFLOW.failures)
    text = summary(timings, failures) + f"\n\nReport: {study / WORKFLOW.report}"
    atomic_write_text(out / "summary.txt", text + "\n")
    print(text)
    return 0 if (study / WORKFLOW.report).exists() else 1


def run_check(args: argparse.Namespace, gpus: int, out: Path) -> int:
    """The harness alone: every run of :func:`plan`, its records aggregated and summarised."""
    (out / "runs").mkdir(parents=True, exist_ok=True)
    env_file = out / "env.json"
    describe_site_env("pytorch", "python", sys.executable, env_file, out, gpus=False)
    records = []
    options = {"compile": args.compile, "cuda_graphs": args.cuda_graphs, "input": args.input}
    for run in plan(args.dry_run, gpus, args.iterations, options):
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=f"gpu-check-{time.strftime('%Y%m%d-%H%M%S')}")
    parser.add_argument("--dry-run", action="store_true", help="the same path on the CPU")
    parser.add_argument(
        "--workflow", action="store_true", help="the real Snakemake workflow, through the report"
    )
    parser.add_argument("--iterations", type=int, default=20, help="timed iterations per run")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    parser.add_argument("--compile", action="store_true", help="torch.compile every network")
    parser.add_argument(
        "--cuda-graphs", action="store_true", help="with --compile: CUDA graphs (reduce-overhead)"
    )
    parser.add_argument("--input", choices=INPUTS, default="device", help="where batches live")
    args = parser.parse_args(argv)
    if args.cuda_graphs and not args.compile:
        # CUDA graphs come through torch.compile(mode="reduce-overhead"): refused before any run.
        print(
            "gpu-check: error: --cuda-graphs runs through torch.compile; add --compile",
            file=sys.stderr,
        )
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    gpus = 0
    if not args.dry_run:
        import torch

        gpus = torch.cuda.device_count()
        if gpus == 0:
            print("gpu-check: error: PyTorch sees no CUDA device; run with --dry-run on a CPU")
            return 2
    if args.workflow:
        return run_workflow(args, gpus, out.resolve())
    return run_check(args, gpus, out)


if __name__ == "__main__":
    sys.exit(main())
