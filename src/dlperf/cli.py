"""The ``dlperf`` command: every workflow stage, runnable outside Snakemake too."""

from __future__ import annotations

import argparse
import glob
import json
import sys
from pathlib import Path

from dlperf import __version__
from dlperf import arguments as arg
from dlperf.bench.spec import FRAMEWORKS, NETWORKS


def _config_sections(args: argparse.Namespace) -> dict:
    """The workflow configuration a stage runs with: a config file (--config), or the
    sections the workflow passes inline (--config-json); schema defaults fill the rest."""
    from dlperf import config as cfg

    if args.config:
        return cfg.load(args.config)
    try:
        sections = json.loads(args.config_json) if args.config_json else {}
    except json.JSONDecodeError as exc:
        raise ValueError(f"--config-json is not valid JSON ({exc}); pass a JSON object") from None
    if not isinstance(sections, dict):
        raise ValueError('--config-json must be a JSON object of config sections, e.g. {"seed": 1}')
    return cfg.validated(cfg.with_minimal_sweep(sections))


def cmd_env(args: argparse.Namespace) -> int:
    from dlperf.envs import build_and_describe, default_root
    from dlperf.site_envs import describe_site_env

    root = Path(args.root) if args.root else default_root()
    if args.python or args.container:
        kind = "python" if args.python else "container"
        info = describe_site_env(
            args.framework, kind, args.python or args.container, Path(args.out), root, args.gpus
        )
    elif args.requirements:
        info = build_and_describe(args.framework, Path(args.requirements), root, Path(args.out))
    else:
        raise ValueError(
            "give the environment: --requirements FILE, --python PATH or --container IMAGE"
        )
    print(f"{args.framework}: {info['python']} ({len(info['packages'])} packages) -> {args.out}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from dlperf.bench.runner import run_benchmark
    from dlperf.bench.spec import RunConfig
    from dlperf.history import keep_previous

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
        image_size=args.image_size,
        seq_len=args.seq_len,
        precision=args.precision,
        grad_accum_steps=args.accumulation_steps,
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


def _check_frameworks(timings: list[str], requested: list[str]) -> None:
    """Refuse a framework the timings know nothing of, naming the ones they hold."""
    import pandas as pd

    from dlperf.external import is_own_timings, load_all_points

    known = set(load_all_points(timings)["framework"].dropna().astype(str))
    # Our own table leaves out a framework whose every run failed (failures.csv keeps those):
    # such a framework is fitted as "no successful run", not refused.
    if any(is_own_timings(pd.read_csv(path, nrows=0).columns) for path in timings):
        known |= set(FRAMEWORKS)
    arg.check_known("framework", requested, sorted(known), f"from {', '.join(timings)}")


def cmd_fit(args: argparse.Namespace) -> int:
    from dlperf import stages

    config = _config_sections(args)
    _check_frameworks(args.timings, [args.framework])
    seed = args.seed if args.seed is not None else config["seed"]
    artifact = stages.fit(
        args.timings, args.framework, config["models"], seed, args.out, args.interval_refits
    )
    groups = list(artifact["networks"].items())
    if "all_networks" in artifact:
        groups.append(("all networks", artifact["all_networks"]))
    for network, info in groups:
        for name, entry in info["models"].items():
            if entry["status"] == "ok":
                stored = entry["interval"]
                refits = len(stored["refits"])
                detail = (
                    f"train MAPE {entry['train_mape']:.2f}%, "
                    f"{refits}/{refits + stored['skipped']} interval refits"
                )
            else:
                detail = entry["reason"]
            print(f"{args.framework}/{network}/{name}: {entry['status']} ({detail})")
    print(f"-> {args.out}")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from dlperf import stages
    from dlperf.validate.protocols import expand_aliases

    config = _config_sections(args)
    protocols = dict(config["validation"]["protocols"])
    if args.protocol:
        settings = {}
        if args.train_max_procs is not None:
            settings["train_max_procs"] = args.train_max_procs
        if args.train_max_batch is not None:
            settings["train_max_batch"] = args.train_max_batch
        if args.k is not None:
            settings["k"] = args.k
        protocols = {p: settings for p in expand_aliases(args.protocol)}
    seed = args.seed if args.seed is not None else config["seed"]
    out = Path(args.out)
    if args.framework:
        _check_frameworks(args.timings, args.framework)
        frameworks = args.framework
    else:
        from dlperf.external import load_all_points

        frameworks = sorted(load_all_points(args.timings)["framework"].dropna().unique())
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
        shown = summary[["network", "model", "protocol", "status", "mape"]]
        print(f"{framework}:\n{shown.to_string(index=False)}")
    if not args.no_summary:
        stages.combine(summaries, out / "summary.csv")
        print(f"-> {out / 'summary.csv'}")
    return 0


def cmd_combine(args: argparse.Namespace) -> int:
    from dlperf import stages

    combined = stages.combine(args.tables, args.out)
    print(f"{len(args.tables)} tables, {len(combined)} rows -> {args.out}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from dlperf import stages

    config = _config_sections(args)
    written = stages.report(
        args.timings,
        args.failures,
        args.models,
        args.summary,
        args.predictions,
        config,
        args.out,
        args.figures,
        args.results,
        args.adaptive_rounds,
    )
    print(f"report -> {args.out} ({len(written)} figure files)")
    return 0


def _read_artifact(path: str) -> dict:
    from dlperf.models.artifact_check import load_artifact

    return load_artifact(path)


def _warn(command: str, warnings: list[str]) -> None:
    for warning in warnings:
        print(f"dlperf {command}: warning: {warning}", file=sys.stderr)


def _network(artifact: dict, requested: str | None) -> str:
    networks = list(artifact["networks"])
    if requested:
        return requested
    if len(networks) == 1:
        return networks[0]
    raise ValueError(
        f"the artifact covers several networks ({', '.join(networks)}); choose one with --network"
    )


def cmd_predict(args: argparse.Namespace) -> int:
    import pandas as pd

    from dlperf.models.answer import ANSWER, answer_warnings
    from dlperf.models.prediction import extrapolation_warnings, interval_missing, predict_rows

    artifact = _read_artifact(args.model)
    network = _network(artifact, args.network)
    given = {
        "nodes": args.nodes,
        "procs": args.procs,
        "batch_size": args.batch_size,
        "data_size": args.data_size,
        "grad_accum_steps": args.grad_accum_steps,
    }
    n_rows = max(len(v) for v in given.values())
    uneven = [f"--{k.replace('_', '-')}" for k, v in given.items() if len(v) not in (1, n_rows)]
    if uneven:
        raise ValueError(f"{', '.join(uneven)} must have one value or {n_rows} (one per row)")
    rows = pd.DataFrame({k: v * n_rows if len(v) == 1 else v for k, v in given.items()})
    if args.param_count:
        rows["param_count"] = args.param_count
    if args.flops_per_sample:
        rows["flops_per_sample"] = args.flops_per_sample
    table = predict_rows(artifact, network, args.model_name, rows, level=args.level)
    table["total_time_s"] = table["epoch_time_s"] * args.epochs
    missing = interval_missing(artifact, network, args.model_name)
    _warn("predict", extrapolation_warnings(artifact, network, rows))
    if args.model_name == ANSWER:
        _warn("predict", answer_warnings(artifact, network))
    if missing:
        _warn("predict", [f"no prediction interval for {args.model_name!r}: {missing}"])
    if args.json:
        print(
            json.dumps(
                {
                    "framework": artifact["framework"],
                    "network": network,
                    "model": args.model_name,
                    "epochs": args.epochs,
                    "level": args.level,
                    "predictions": json.loads(table.to_json(orient="records")),
                },
                indent=2,
            )
        )
    else:
        print(
            f"{artifact['framework']}/{network}, model {args.model_name}, "
            f"{args.level:.0%} prediction interval (lo..hi):"
        )
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    import pandas as pd

    from dlperf import plan_output
    from dlperf.durations import readable
    from dlperf.models.planning import cost_unit, parse_duration, plan
    from dlperf.models.prediction import extrapolation_warnings

    artifact = _read_artifact(args.model)
    network = _network(artifact, args.network)
    if args.samples is not None:
        data_size = args.data_size or args.samples
        epochs = args.samples / data_size
    elif args.data_size is not None:
        data_size, epochs = args.data_size, args.epochs
    else:
        raise ValueError("give the work to do: --data-size D [--epochs E] or --samples N")
    deadline = parse_duration(args.deadline)
    table, choice = plan(
        artifact,
        network,
        args.model_name,
        args.batch_size,
        data_size,
        epochs,
        deadline,
        args.gpus_per_node,
        args.max_procs,
        args.objective,
        args.safe,
        args.level,
    )
    cost, cost_label = cost_unit(artifact, network)
    columns = [
        "nodes",
        "procs",
        "epoch_time_s",
        "epoch_time_lo_s",
        "epoch_time_hi_s",
        "total_time_s",
        cost,
        "meets_deadline",
    ]
    print(
        f"{artifact['framework']}/{network}, model {args.model_name}: "
        f"batch {args.batch_size}/worker, "
        f"{data_size} samples x {epochs:g} epochs, deadline {readable(deadline)}"
    )
    print(plan_output.table_text(table, choice, columns))
    chosen = choice if choice is not None else table.sort_values("total_time_s").iloc[0]
    layout = pd.DataFrame([chosen])[["nodes", "procs", "batch_size"]]
    _warn(
        "plan",
        [
            f"the {'chosen' if choice is not None else 'fastest'} layout: {w}"
            for w in extrapolation_warnings(artifact, network, layout)
        ],
    )
    if choice is None:
        print(
            f"no layout up to {args.max_procs} workers meets the deadline; the fastest is "
            f"{int(chosen['procs'])} workers on {int(chosen['nodes'])} node(s) at "
            f"{readable(chosen['total_time_s'])}. Raise --max-procs or the deadline."
        )
        return 1
    print(
        f"choice ({args.objective}): {int(choice['procs'])} workers on {int(choice['nodes'])} "
        f"node(s): {readable(choice['total_time_s'])}, {plan_output.number(choice[cost])} "
        f"{cost_label}"
    )
    return 0


def cmd_write_config(args: argparse.Namespace) -> int:
    from dlperf.io import atomic_write_json

    atomic_write_json(args.out, _config_sections(args))
    print(f"the effective configuration -> {args.out}")
    return 0


def cmd_forget_disturbed(args: argparse.Namespace) -> int:
    from dlperf.disturbed_runs import forget_disturbed

    records = forget_disturbed(args.timings, args.results, args.out)
    print(
        f"{len(records)} disturbed run(s) kept in {Path(args.results) / 'history'} and removed; "
        "`make run` (or snakemake) measures exactly them again"
    )
    return 0


def cmd_check_config(args: argparse.Namespace) -> int:
    from dlperf import config as cfg

    config = cfg.load(args.config, default=args.defaults)
    runs = len(cfg.run_configs(config))
    print(f"{args.config}: valid ({runs} benchmark runs in the sweep)")
    return 0


def cmd_archive(args: argparse.Namespace) -> int:
    from dlperf import archive

    given = args.config or args.config_json
    config = _config_sections(args) if given else archive.study_config(args.results)
    manifest = archive.create(args.results, config, args.out)
    files = sum(1 for node in manifest["@graph"] if node.get("@type") == "File")
    print(f"{files} files with SHA-256 checksums -> {args.out}")
    return 0


def cmd_verify_archive(args: argparse.Namespace) -> int:
    from dlperf import archive

    result = archive.verify(args.archive, rerun=args.rerun)
    for name in result.reproduced:
        print(f"reproduced: {name}")
    for problem in result.problems:
        print(f"problem: {problem}", file=sys.stderr)
    verdict = "intact" if result.ok else "NOT intact"
    print(
        f"{args.archive}: {verdict} ({result.files} files checked"
        + (f", {len(result.reproduced)} results reproduced byte for byte)" if args.rerun else ")")
    )
    return 0 if result.ok else 1


def cmd_adaptive_replay(args: argparse.Namespace) -> int:
    from dlperf import stages

    settings = {"seed": args.seed, "model": args.model_name}
    if args.initial is not None:
        settings["initial"] = args.initial
    if args.per_round is not None:
        settings["per_round"] = args.per_round
    summary = stages.adaptive_replay(args.timings, args.budget, settings, args.out)
    print(
        f"{summary['runs_used']} of {summary['runs_total']} runs in {summary['rounds']} rounds "
        f"({summary['stop']}): MAPE {_percent(summary['mape_adaptive'])} adaptive, "
        f"{_percent(summary['mape_random'])} random, {_percent(summary['mape_full'])} full grid "
        f"-> {args.out}"
    )
    if summary["mape_adaptive"] is None or summary["mape_random"] is None:
        _warn(
            "adaptive-replay",
            [
                f"--budget {args.budget:g} ({summary['budget_runs']} runs) is too few to fit the "
                f"{summary['model']} model on every series, so its error is undefined; raise "
                "--budget"
            ],
        )
    return 0


def _percent(mape: float | None) -> str:
    """A MAPE the replay could compute, or why not (a series the model cannot be fitted on)."""
    return "undefined" if mape is None else f"{mape:.3g}%"


def cmd_adaptive_round(args: argparse.Namespace) -> int:
    from dlperf.adaptive.sweep import choose_round

    result = choose_round(_config_sections(args), args.records, args.round, args.out)
    what = result["stop"] or f"{len(result['chosen'])} configurations"
    print(f"round {args.round}: {what} -> {args.out}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from dlperf.compare import Settings, compare
    from dlperf.compare_history import history
    from dlperf.compare_render import render, render_history
    from dlperf.io import atomic_write_text
    from dlperf.study_files import load_study

    settings = Settings(
        threshold=args.threshold,
        alpha=args.alpha,
        power=args.power,
        keep_disturbed=args.keep_disturbed,
        model=args.model_name,
    )
    if len(args.studies) < 2:
        raise ValueError(
            f"compare needs two or more studies (oldest first), got {len(args.studies)}; "
            "name a baseline and a candidate"
        )
    studies = [load_study(s) for s in args.studies]
    if len(studies) == 2:
        result = compare(studies[0], studies[1], settings)
        failed, text = result.failed, render(result, args.format)
    else:  # a history: the exit status is the last step's
        steps = history(studies, settings)
        failed, text = steps.last.failed, render_history(steps, args.format)
    if args.out:
        atomic_write_text(args.out, text)
        print(f"{'regression' if failed else 'no regression'} -> {args.out}")
    else:
        sys.stdout.write(text)
    return 1 if failed else 0


def build_parser() -> argparse.ArgumentParser:
    parser = arg.Parser(prog="dlperf", description=__doc__)
    parser.add_argument("--version", action="version", version=f"dlperf {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("env", help="build (or reuse) a framework environment and write its lock")
    p.add_argument("--framework", required=True, choices=FRAMEWORKS)
    source = p.add_mutually_exclusive_group()
    source.add_argument("--requirements", help="requirements file, e.g. envs/pytorch.txt")
    source.add_argument("--python", help="an existing interpreter that has the framework")
    source.add_argument("--container", help="a container image that has it (run with apptainer)")
    p.add_argument("--gpus", action="store_true", help="--container: give it the GPUs (--nv)")
    p.add_argument(
        "--root", help="where environments live (default: $DLPERF_ENV_ROOT or ~/.cache/dlperf/envs)"
    )
    p.add_argument("--out", required=True, help="environment description (JSON)")
    p.set_defaults(func=cmd_env)

    p = sub.add_parser("bench", help="run one benchmark configuration and write its run record")
    p.add_argument(
        "--env", required=True, help="framework environment description from `dlperf env`"
    )
    p.add_argument("--framework", required=True, choices=FRAMEWORKS)
    p.add_argument("--network", required=True, choices=list(NETWORKS))
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--nodes", type=arg.NODES, default=1)
    p.add_argument("--procs", type=arg.WORKERS, default=1)
    p.add_argument("--batch-size", type=arg.BATCH, required=True)
    p.add_argument("--data-size", type=arg.DATA_SIZE, required=True)
    p.add_argument("--rep", type=arg.NON_NEGATIVE, default=0)
    p.add_argument("--warmup-iters", type=arg.NON_NEGATIVE, default=5)
    p.add_argument("--threads-per-proc", type=arg.NON_NEGATIVE, default=0)
    p.add_argument(
        "--dataset",
        default="synthetic",
        choices=["synthetic", "digits"],
        help="synthetic: random batches, no input pipeline; digits: scikit-learn's digits through "
        "each framework's own data loader (time waiting for data is recorded)",
    )
    p.add_argument("--seed", type=arg.SEED, default=0)
    p.add_argument(
        "--timeout", type=arg.SECONDS, default=600.0, help="seconds before the run is ended"
    )
    p.add_argument("--launcher", default="auto", choices=["auto", "local", "srun"])
    arg.add_input_arguments(p)
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
    p.add_argument(
        "--timings",
        required=True,
        nargs="+",
        help="results/timings.csv and/or external timings CSVs (docs/external-timings.md)",
    )
    p.add_argument("--framework", required=True)
    p.add_argument("--config", help="workflow config (models section); default settings otherwise")
    p.add_argument("--config-json", help="config sections as JSON (what the workflow passes)")
    p.add_argument("--seed", type=arg.SEED)
    p.add_argument(
        "--interval-refits",
        type=arg.NON_NEGATIVE,
        help="bootstrap refits per model for its prediction interval (default 20; 0: none)",
    )
    p.add_argument("--out", required=True, help="model artifact (JSON)")
    p.set_defaults(func=cmd_fit)

    p = sub.add_parser("validate", help="cross-validate the models")
    p.add_argument(
        "--timings",
        required=True,
        nargs="+",
        help="results/timings.csv and/or external timings CSVs (docs/external-timings.md)",
    )
    p.add_argument(
        "--framework", action="append", help="repeatable; default: every framework in the table"
    )
    p.add_argument("--config", help="workflow config (models and validation sections)")
    p.add_argument("--config-json", help="config sections as JSON (what the workflow passes)")
    p.add_argument(
        "--protocol",
        action="append",
        help="repeatable: kfold, loo_procs, loo_batch, extrapolation_procs, extrapolation_batch, "
        "cross_network, or loo / extrapolation for both of a pair; default: the config's protocols",
    )
    p.add_argument("--k", type=arg.FOLDS, help="folds for --protocol kfold")
    p.add_argument(
        "--train-max-procs", type=arg.WORKERS, help="for extrapolation_procs: train on procs <= N"
    )
    p.add_argument(
        "--train-max-batch", type=arg.BATCH, help="for extrapolation_batch: train on batch <= N"
    )
    p.add_argument("--seed", type=arg.SEED)
    p.add_argument(
        "--out", required=True, help="output directory: <framework>.csv, <framework>.summary.csv"
    )
    p.add_argument(
        "--no-summary",
        action="store_true",
        help="skip OUT/summary.csv (the workflow combines the per-framework summaries "
        "with `dlperf combine`)",
    )
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("combine", help="concatenate per-framework tables of the same columns")
    p.add_argument("tables", nargs="+", help="CSV files, e.g. results/validation/*.summary.csv")
    p.add_argument("--out", required=True, help="combined CSV")
    p.set_defaults(func=cmd_combine)

    p = sub.add_parser("report", help="render the HTML report")
    p.add_argument(
        "--timings",
        required=True,
        nargs="+",
        help="results/timings.csv and/or external timings CSVs (docs/external-timings.md)",
    )
    p.add_argument("--failures", help="failures table of our own runs (results/failures.csv)")
    p.add_argument("--models", nargs="+", required=True, help="model artifacts")
    p.add_argument("--summary", required=True, help="validation summary CSV")
    p.add_argument("--predictions", nargs="*", default=[], help="per-framework validation CSVs")
    p.add_argument("--config", help="workflow config, shown in the report")
    p.add_argument("--config-json", help="config sections as JSON (what the workflow passes)")
    p.add_argument("--out", required=True, help="index.html to write")
    p.add_argument(
        "--results",
        help="the study's results directory: the report counts the superseded run records "
        "its history/ keeps",
    )
    p.add_argument(
        "--adaptive-rounds",
        nargs="*",
        default=[],
        help="round files of an adaptive sweep (results/adaptive/round*.json)",
    )
    p.add_argument(
        "--figures",
        help="directory for the figures as PNG and SVG (default: figures/ beside --out)",
    )
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("predict", help="predict epoch time and throughput from a model artifact")
    p.add_argument("--model", required=True, help="model artifact (results/models/<fw>.json)")
    p.add_argument(
        "--model-name",
        default="answer",
        help="one model of the artifact; default: the answer, the models combined by how well "
        "they extrapolated (docs/model.md)",
    )
    p.add_argument("--network", help="needed when the artifact covers several networks")
    p.add_argument("--nodes", type=arg.NODES, nargs="+", default=[1])
    p.add_argument(
        "--procs", type=arg.WORKERS, nargs="+", required=True, help="one value, or one per row"
    )
    p.add_argument("--batch-size", type=arg.BATCH, nargs="+", required=True, help="per worker")
    p.add_argument(
        "--data-size", type=arg.DATA_SIZE, nargs="+", required=True, help="samples per epoch"
    )
    p.add_argument(
        "--grad-accum-steps",
        type=arg.COUNT,
        nargs="+",
        default=[1],
        help="micro-batches per optimizer step (--batch-size is then the micro-batch)",
    )
    p.add_argument("--epochs", type=arg.EPOCHS, default=1.0)
    p.add_argument("--level", type=arg.LEVEL, default=0.9, help="prediction-interval level (0.9)")
    p.add_argument("--param-count", type=arg.PARAMS, help="W of an unseen network (generic_xnet)")
    p.add_argument(
        "--flops-per-sample", type=arg.FLOPS, help="F of an unseen network (generic_xnet)"
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=cmd_predict)

    p = sub.add_parser("plan", help="fewest workers (or cheapest GPU-hours) that meet a deadline")
    p.add_argument("--model", required=True, help="model artifact (results/models/<fw>.json)")
    p.add_argument(
        "--model-name", default="answer", help="one model of the artifact (default: the answer)"
    )
    p.add_argument("--network")
    p.add_argument("--batch-size", type=arg.BATCH, required=True, help="per worker")
    p.add_argument("--data-size", type=arg.DATA_SIZE, help="samples per epoch")
    p.add_argument("--epochs", type=arg.EPOCHS, default=1.0)
    p.add_argument(
        "--samples", type=arg.SAMPLES, help="total samples to train on (instead of --epochs)"
    )
    p.add_argument(
        "--deadline",
        required=True,
        type=arg.duration,
        help="seconds, or with a unit: 90m, 2h, 1d",
    )
    p.add_argument("--gpus-per-node", type=arg.COUNT, default=8)
    p.add_argument(
        "--max-procs", type=arg.WORKERS, default=64, help="largest worker count to consider"
    )
    p.add_argument("--objective", choices=["workers", "cost"], default="workers")
    p.add_argument(
        "--safe",
        action="store_true",
        help="meet the deadline at the prediction interval's upper end",
    )
    p.add_argument("--level", type=arg.LEVEL, default=0.9)
    p.set_defaults(func=cmd_plan)

    p = sub.add_parser(
        "write-config",
        help="write the effective configuration (defaults filled in) as JSON: "
        "results/config.json, which `dlperf archive` archives",
    )
    p.add_argument("--config", help="a workflow config file")
    p.add_argument("--config-json", help="the config as JSON (what the workflow passes)")
    p.add_argument("--out", required=True, help="JSON file to write")
    p.set_defaults(func=cmd_write_config)

    p = sub.add_parser(
        "forget-disturbed",
        help="keep the records of the runs flagged disturbed in the history and remove them, "
        "so that the workflow measures exactly those again",
    )
    p.add_argument("--timings", default="results/timings.csv", help="the study's timings table")
    p.add_argument("--results", default="results", help="the results directory (default: results)")
    p.add_argument("--out", help="JSON file listing the removed records (optional)")
    p.set_defaults(func=cmd_forget_disturbed)

    p = sub.add_parser(
        "check-config",
        help="check a config file before running it: YAML errors with file, line and column, "
        "then every value that cannot run",
    )
    p.add_argument("config", help="the config file (as given to snakemake --configfile)")
    p.add_argument(
        "--defaults",
        help="the config it is merged into, as the workflow does (config/config.yaml)",
    )
    p.set_defaults(func=cmd_check_config)

    p = sub.add_parser("archive", help="write one file holding the whole study, with checksums")
    p.add_argument("--results", default="results", help="the results directory (default: results)")
    p.add_argument(
        "--config",
        help="the workflow config file the study ran with (default: RESULTS/config.json, "
        "which the workflow writes)",
    )
    p.add_argument("--config-json", help="the effective config as JSON")
    p.add_argument("--out", required=True, help="archive to write (.tar.gz)")
    p.set_defaults(func=cmd_archive)

    p = sub.add_parser("verify-archive", help="check an archive's checksums (and reproduce it)")
    p.add_argument("archive")
    p.add_argument(
        "--rerun",
        action="store_true",
        help="re-run fit, validate and report from the archived timings and compare byte for byte",
    )
    p.set_defaults(func=cmd_verify_archive)

    p = sub.add_parser(
        "adaptive-replay",
        help="run the adaptive loop on a measured table: what it would have saved",
    )
    p.add_argument(
        "--timings", required=True, nargs="+", help="the measured grid: timings.csv or external CSV"
    )
    p.add_argument(
        "--budget", required=True, type=arg.SHARE, help="share of the grid's runs to use, e.g. 0.35"
    )
    p.add_argument("--seed", type=arg.SEED, default=0)
    p.add_argument("--model-name", default="generic", help="the model the loop fits (generic)")
    p.add_argument("--initial", type=arg.COUNT, help="configurations per series in round 0 (4)")
    p.add_argument("--per-round", type=arg.COUNT, help="runs per later round (4)")
    p.add_argument("--out", required=True, help="directory for rounds.csv and summary.json")
    p.set_defaults(func=cmd_adaptive_replay)

    p = sub.add_parser(
        "adaptive-round", help="choose the next round of an adaptive sweep (the workflow's step)"
    )
    p.add_argument("records", nargs="*", help="run records of the rounds before")
    p.add_argument(
        "--round", type=arg.NON_NEGATIVE, required=True, help="the round to choose (0 = initial)"
    )
    p.add_argument("--config", help="workflow config (sweep and adaptive sections)")
    p.add_argument("--config-json", help="config sections as JSON (what the workflow passes)")
    p.add_argument("--out", required=True, help="round file to write (JSON)")
    p.set_defaults(func=cmd_adaptive_round)

    p = sub.add_parser(
        "compare",
        help="compare two studies configuration by configuration; exit 1 on a regression",
    )
    p.add_argument(
        "studies",
        nargs="+",
        metavar="STUDY",
        help="results directories or archives (.tar.gz), oldest first: a baseline and a "
        "candidate, or a history of studies (each compared with the one before)",
    )
    p.add_argument(
        "--threshold",
        type=arg.FRACTION,
        default=0.05,
        help="slowdown (fraction of the median iteration) that counts as a regression "
        "(default 0.05)",
    )
    p.add_argument(
        "--alpha",
        type=arg.RATE,
        default=0.05,
        help="false discovery rate of the tests (default 0.05)",
    )
    p.add_argument(
        "--power",
        type=arg.POWER,
        default=0.8,
        help="chance to detect that the repetitions an inconclusive slowdown needs are "
        "sized for (default 0.8)",
    )
    p.add_argument(
        "--keep-disturbed",
        action="store_true",
        help="test runs that other programs disturbed too (left out by default)",
    )
    p.add_argument(
        "--model-name",
        default="generic",
        help="baseline model whose prediction interval the candidate's runs are checked against",
    )
    p.add_argument("--format", choices=["markdown", "html"], default="markdown")
    p.add_argument("--out", help="write the answer here instead of to standard output")
    p.set_defaults(func=cmd_compare)
    return parser


def _check_together(args: argparse.Namespace) -> None:
    """The checks that need two arguments at once (each argument alone is checked by its type)."""
    if args.command in ("bench", "predict"):
        nodes = args.nodes if isinstance(args.nodes, list) else [args.nodes]
        procs = args.procs if isinstance(args.procs, list) else [args.procs]
        arg.check_layouts(nodes, procs)


def main(argv: list[str] | None = None) -> int:
    from dlperf.config import ConfigError

    args = build_parser().parse_args(argv)
    try:
        _check_together(args)
        return args.func(args)
    except (ConfigError, ValueError, FileNotFoundError, KeyError) as exc:  # ArchiveError too
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        # One line, whatever the message or a value quoted in it holds.
        print(f"dlperf {args.command}: error: {arg.one_line(message)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
