"""The ``dlperf`` command: every workflow stage, runnable outside Snakemake too."""

from __future__ import annotations

import argparse
import glob
import json
import sys
from pathlib import Path

from dlperf import __version__


def _config_sections(path: str | None) -> dict:
    from dlperf import config as cfg

    if path:
        return cfg.load(path)
    # No config file: the schema's defaults for the modelling sections.
    return cfg.validated({"batch_sizes": [1], "data_sizes": [1]})


def cmd_env(args: argparse.Namespace) -> int:
    from dlperf.envs import build_and_describe, default_root

    root = Path(args.root) if args.root else default_root()
    info = build_and_describe(args.framework, Path(args.requirements), root, Path(args.out))
    print(f"{args.framework}: {info['python']} ({len(info['packages'])} packages) -> {args.out}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from dlperf.bench.runner import run_benchmark
    from dlperf.bench.spec import RunConfig

    config = RunConfig(
        framework=args.framework,
        network=args.network,
        device=args.device,
        nodes=args.nodes,
        procs=args.procs,
        batch_size=args.batch_size,
        data_size=args.data_size,
        rep=args.rep,
        warmup_iters=args.warmup_iters,
        threads_per_proc=args.threads_per_proc,
        dataset=args.dataset,
        seed=args.seed,
        timeout_s=args.timeout,
    )
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


def cmd_aggregate(args: argparse.Namespace) -> int:
    from dlperf import stages

    records = list(args.records)
    if args.runs_dir:
        records += sorted(glob.glob(str(Path(args.runs_dir) / "**" / "*.json"), recursive=True))
    if not records:
        print("dlperf aggregate: no run records given (pass files or --runs-dir)", file=sys.stderr)
        return 2
    ok, failed = stages.aggregate(records, args.timings, args.parquet, args.failures)
    print(f"{ok} successful runs -> {args.timings}; {failed} failed -> {args.failures}")
    return 0


def cmd_fit(args: argparse.Namespace) -> int:
    from dlperf import stages

    config = _config_sections(args.config)
    seed = args.seed if args.seed is not None else config["seed"]
    artifact = stages.fit(args.timings, args.framework, config["models"], seed, args.out)
    for network, info in artifact["networks"].items():
        for name, entry in info["models"].items():
            detail = f"train MAPE {entry['train_mape']:.2f}%" if entry["status"] == "ok" else entry["reason"]
            print(f"{args.framework}/{network}/{name}: {entry['status']} ({detail})")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from dlperf import stages

    config = _config_sections(args.config)
    protocols = dict(config["validation"]["protocols"])
    if args.protocol:
        settings = {}
        if args.train_max_procs is not None:
            settings["train_max_procs"] = args.train_max_procs
        if args.train_max_batch is not None:
            settings["train_max_batch"] = args.train_max_batch
        if args.k is not None:
            settings["k"] = args.k
        protocols = {p: settings for p in args.protocol}
    seed = args.seed if args.seed is not None else config["seed"]
    out = Path(args.out)
    frameworks = args.framework or sorted(__import__("pandas").read_csv(args.timings)["framework"].unique())
    summaries = []
    for framework in frameworks:
        summary = stages.validate(
            args.timings,
            framework,
            config["models"],
            protocols,
            seed,
            out / f"{framework}.csv",
            out / f"{framework}.summary.csv",
            n_boot=config["validation"]["bootstrap"],
        )
        summaries.append(out / f"{framework}.summary.csv")
        print(summary[["framework", "network", "model", "protocol", "status", "mape"]].to_string(index=False))
    stages.combine(summaries, out / "summary.csv")
    print(f"-> {out / 'summary.csv'}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from dlperf import stages

    config = _config_sections(args.config)
    stages.report(args.timings, args.failures, args.models, args.summary, args.predictions, config, args.out)
    print(f"report -> {args.out}")
    return 0


def cmd_predict(args: argparse.Namespace) -> int:
    import pandas as pd

    from dlperf.io import read_json
    from dlperf.models.artifact import load_model

    artifact = read_json(args.model)
    network = args.network or next(iter(artifact["networks"]))
    model = load_model(artifact, network, args.model_name)
    rows = pd.DataFrame(
        {"nodes": [args.nodes], "procs": [args.procs], "batch_size": [args.batch_size], "data_size": [args.data_size]}
    )
    epoch = float(model.predict(rows)[0])
    result = {
        "framework": artifact["framework"],
        "network": network,
        "model": args.model_name,
        "nodes": args.nodes,
        "procs": args.procs,
        "batch_size": args.batch_size,
        "data_size": args.data_size,
        "epoch_time_s": epoch,
        "samples_per_s": args.data_size / epoch,
    }
    print(json.dumps(result, indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dlperf", description=__doc__)
    parser.add_argument("--version", action="version", version=f"dlperf {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("env", help="build (or reuse) a framework environment and write its lock")
    p.add_argument("--framework", required=True)
    p.add_argument("--requirements", required=True, help="requirements file, e.g. envs/pytorch.txt")
    p.add_argument("--root", help="where environments live (default: $DLPERF_ENV_ROOT or ~/.cache/dlperf/envs)")
    p.add_argument("--out", required=True, help="environment description (JSON)")
    p.set_defaults(func=cmd_env)

    p = sub.add_parser("bench", help="run one benchmark configuration and write its run record")
    p.add_argument("--env", required=True, help="framework environment description from `dlperf env`")
    p.add_argument("--framework", required=True)
    p.add_argument("--network", required=True)
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--nodes", type=int, default=1)
    p.add_argument("--procs", type=int, default=1)
    p.add_argument("--batch-size", type=int, required=True)
    p.add_argument("--data-size", type=int, required=True)
    p.add_argument("--rep", type=int, default=0)
    p.add_argument("--warmup-iters", type=int, default=5)
    p.add_argument("--threads-per-proc", type=int, default=0)
    p.add_argument(
        "--dataset",
        default="synthetic",
        choices=["synthetic", "digits"],
        help="synthetic: random batches, no input pipeline; digits: scikit-learn's digits through "
        "each framework's own data loader (time waiting for data is recorded)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=600.0, help="seconds before the run is ended")
    p.add_argument("--launcher", default="auto", choices=["auto", "local", "srun"])
    p.add_argument("--out", required=True, help="run record (JSON)")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("aggregate", help="run records -> timings table and failures table")
    p.add_argument("records", nargs="*", help="run record files")
    p.add_argument("--runs-dir", help="take every *.json below this directory")
    p.add_argument("--timings", required=True, help="output CSV")
    p.add_argument("--parquet", help="output Parquet (optional)")
    p.add_argument("--failures", required=True, help="output CSV of failed runs")
    p.set_defaults(func=cmd_aggregate)

    p = sub.add_parser("fit", help="fit the performance models of one framework")
    p.add_argument("--timings", required=True)
    p.add_argument("--framework", required=True)
    p.add_argument("--config", help="workflow config (models section); default settings otherwise")
    p.add_argument("--seed", type=int)
    p.add_argument("--out", required=True, help="model artifact (JSON)")
    p.set_defaults(func=cmd_fit)

    p = sub.add_parser("validate", help="cross-validate the models")
    p.add_argument("--timings", required=True)
    p.add_argument("--framework", action="append", help="repeatable; default: every framework in the table")
    p.add_argument("--config", help="workflow config (models and validation sections)")
    p.add_argument("--protocol", action="append", help="repeatable; default: the config's protocols")
    p.add_argument("--k", type=int, help="folds for --protocol kfold")
    p.add_argument("--train-max-procs", type=int, help="for extrapolation_procs: train on procs <= N")
    p.add_argument("--train-max-batch", type=int, help="for extrapolation_batch: train on batch <= N")
    p.add_argument("--seed", type=int)
    p.add_argument("--out", required=True, help="output directory")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("report", help="render the HTML report")
    p.add_argument("--timings", required=True)
    p.add_argument("--failures", required=True)
    p.add_argument("--models", nargs="+", required=True, help="model artifacts")
    p.add_argument("--summary", required=True, help="validation summary CSV")
    p.add_argument("--predictions", nargs="*", default=[], help="per-framework validation CSVs")
    p.add_argument("--config", help="workflow config, shown in the report")
    p.add_argument("--out", required=True, help="index.html to write")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("predict", help="predict epoch time from a model artifact")
    p.add_argument("--model", required=True, help="model artifact, e.g. results/models/pytorch.json")
    p.add_argument("--model-name", default="generic")
    p.add_argument("--network")
    p.add_argument("--nodes", type=int, default=1)
    p.add_argument("--procs", type=int, required=True)
    p.add_argument("--batch-size", type=int, required=True)
    p.add_argument("--data-size", type=int, required=True)
    p.set_defaults(func=cmd_predict)
    return parser


def main(argv: list[str] | None = None) -> int:
    from dlperf.config import ConfigError

    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ConfigError, ValueError, FileNotFoundError, KeyError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"dlperf {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
