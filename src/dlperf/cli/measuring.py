"""``dlperf env``, ``bench`` and ``aggregate``: framework environments, one benchmark run, and
the run records gathered into tables."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dlperf.bench.spec import FRAMEWORKS, NETWORKS
from dlperf.cli import arguments as arg
from dlperf.errors import UsageError


def add_env(sub) -> None:
    p = sub.add_parser("env", help="build (or reuse) a framework environment and write its lock")
    p.add_argument(
        "--framework", required=True, choices=FRAMEWORKS, help="framework to build or describe"
    )
    source = p.add_mutually_exclusive_group()
    source.add_argument("--requirements", help="requirements file, e.g. envs/pytorch.txt")
    source.add_argument("--python", help="an existing interpreter that has the framework")
    source.add_argument("--container", help="a container image that has it (run with apptainer)")
    p.add_argument("--gpus", action="store_true", help="--container: give it the GPUs (--nv)")
    p.add_argument(
        "--root", help="where environments live (default: $DLPERF_ENV_ROOT or ~/.cache/dlperf/envs)"
    )
    p.add_argument("--out", required=True, type=arg.OUT_FILE, help="environment description (JSON)")
    p.set_defaults(func=run_env)


def run_env(args: argparse.Namespace) -> int:
    from dlperf.environments.requirements import build_and_describe, default_root
    from dlperf.environments.site import describe_site_env

    root = Path(args.root) if args.root else default_root()
    if args.python or args.container:
        kind = "python" if args.python else "container"
        info = describe_site_env(
            args.framework, kind, args.python or args.container, Path(args.out), root, args.gpus
        )
    elif args.requirements:
        info = build_and_describe(args.framework, Path(args.requirements), root, Path(args.out))
    else:
        raise UsageError(
            "give the environment: --requirements FILE, --python PATH or --container IMAGE"
        )
    print(f"{args.framework}: {info['python']} ({len(info['packages'])} packages) -> {args.out}")
    return 0


def add_bench(sub) -> None:
    p = sub.add_parser("bench", help="run one benchmark configuration and write its run record")
    p.add_argument(
        "--env", required=True, help="framework environment description from `dlperf env`"
    )
    p.add_argument("--framework", required=True, choices=FRAMEWORKS, help="framework to run")
    p.add_argument("--network", required=True, choices=list(NETWORKS), help="network to train")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="cpu or cuda (cpu)")
    p.add_argument("--nodes", type=arg.NODES, default=1, help="nodes the workers span (1)")
    p.add_argument("--procs", type=arg.WORKERS, default=1, help="total workers (1)")
    p.add_argument("--batch-size", type=arg.BATCH, required=True, help="per worker")
    p.add_argument("--data-size", type=arg.DATA_SIZE, required=True, help="samples per epoch")
    p.add_argument("--rep", type=arg.NON_NEGATIVE, default=0, help="repetition number (0)")
    p.add_argument(
        "--warmup-iters", type=arg.NON_NEGATIVE, default=5, help="untimed iterations first (5)"
    )
    p.add_argument(
        "--threads-per-proc",
        type=arg.NON_NEGATIVE,
        default=0,
        help="threads per worker (0: the cores shared among the workers)",
    )
    p.add_argument(
        "--dataset",
        default="synthetic",
        choices=["synthetic", "digits"],
        help="synthetic: random batches, no input pipeline; digits: scikit-learn's digits through "
        "each framework's own data loader (time waiting for data is recorded)",
    )
    p.add_argument("--seed", type=arg.SEED, default=0, help="seed of the data and weights (0)")
    p.add_argument(
        "--timeout", type=arg.SECONDS, default=600.0, help="seconds before the run is ended"
    )
    p.add_argument(
        "--launcher",
        default="auto",
        choices=["auto", "local", "srun"],
        help="how the workers start (auto: srun inside a Slurm allocation, else local)",
    )
    arg.add_input_arguments(p)
    p.add_argument("--out", required=True, type=arg.OUT_FILE, help="run record (JSON)")
    p.set_defaults(func=run_bench)


#: The options of `dlperf bench` named as the RunConfig fields they set.
RUN_OPTIONS = (
    "framework network device nodes procs batch_size data_size rep warmup_iters "
    "threads_per_proc dataset seed image_size seq_len precision compile cuda_graphs input"
).split()


def run_bench(args: argparse.Namespace) -> int:
    from dlperf.bench.runner import environment_description, run_benchmark
    from dlperf.bench.spec import RunConfig
    from dlperf.study.superseded import keep_previous

    arg.check_layouts([args.nodes], [args.procs])
    environment_description(args.env)  # refused before a record is written: not a failed run
    named_alike = {name: vars(args)[name] for name in RUN_OPTIONS}
    config = RunConfig(
        **named_alike, timeout_s=args.timeout, grad_accum_steps=args.accumulation_steps
    )
    # Measured again (forced, or its configuration changed): the previous record is kept.
    kept = keep_previous(args.out)
    if kept:
        print(f"previous record kept as {kept}")
    record = run_benchmark(config, args.env, args.out, launcher=args.launcher)
    if record["status"] == "ok":
        print(
            f"ok: epoch {record['epoch_time_s']:.3f} s, {record['samples_per_s']:.1f} samples/s, "
            f"{len(record['iter_times_s'])} timed iterations -> {args.out}"
        )
    else:
        print(f"{record['status']}: {record['error']}\nrecorded in {args.out}")
    # A failed benchmark is a result, not a workflow error: the record says what happened.
    return 0


def add_aggregate(sub) -> None:
    p = sub.add_parser("aggregate", help="run records -> timings table and failures table")
    p.add_argument("records", nargs="*", help="run record files")
    p.add_argument("--runs-dir", help="take every *.json below this directory")
    p.add_argument("--timings", required=True, help="output CSV")
    p.add_argument("--parquet", help="output Parquet (optional)")
    p.add_argument("--failures", required=True, help="output CSV of failed runs")
    p.set_defaults(func=run_aggregate)


def run_aggregate(args: argparse.Namespace) -> int:
    from dlperf import stages

    for option, path in (
        ("--timings", args.timings),
        ("--parquet", args.parquet),
        ("--failures", args.failures),
    ):
        arg.check_written(option, path)
    records = list(args.records)
    if args.runs_dir:
        if not Path(args.runs_dir).is_dir():
            raise UsageError(
                f"--runs-dir {args.runs_dir} is not a directory; give a study's results/runs"
            )
        records += stages.run_records(args.runs_dir)
    if not records:
        where = f"below {args.runs_dir}" if args.runs_dir else "given"
        print(
            f"dlperf aggregate: no run records {where} (pass files or --runs-dir)", file=sys.stderr
        )
        return 2
    ok, failed = stages.aggregate(records, args.timings, args.parquet, args.failures)
    print(f"{ok} successful runs -> {args.timings}; {failed} failed -> {args.failures}")
    return 0
