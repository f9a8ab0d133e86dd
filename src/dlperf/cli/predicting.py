"""``dlperf predict`` and ``plan``: a fitted model artifact answers what a configuration takes,
and which layout meets a deadline."""

from __future__ import annotations

import argparse
import json

from dlperf.cli import arguments as arg
from dlperf.cli.output import warn
from dlperf.errors import UsageError


def _network(artifact: dict, requested: str | None) -> str:
    networks = list(artifact["networks"])
    if requested:
        return requested
    if len(networks) == 1:
        return networks[0]
    raise UsageError(
        f"the artifact covers several networks ({', '.join(networks)}); choose one with --network"
    )


def add_predict(sub) -> None:
    p = sub.add_parser(
        "predict",
        help="predict epoch time and throughput from a model artifact",
        parents=[
            arg.artifact_options(
                "one model of the artifact; default: the answer, the models combined by how "
                "well they extrapolated (docs/model.md)"
            )
        ],
    )
    p.add_argument("--nodes", type=arg.NODES, nargs="+", default=[1], help="nodes per row (1)")
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
    p.add_argument("--epochs", type=arg.EPOCHS, default=1.0, help="epochs, for total_time_s (1)")
    p.add_argument("--param-count", type=arg.PARAMS, help="W of an unseen network (generic_xnet)")
    p.add_argument(
        "--flops-per-sample", type=arg.FLOPS, help="F of an unseen network (generic_xnet)"
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run_predict)


def _rows(args: argparse.Namespace):
    """The configurations to predict, one row each: an option of one value stands for every row."""
    import pandas as pd

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
        raise UsageError(f"{', '.join(uneven)} must have one value or {n_rows} (one per row)")
    rows = pd.DataFrame({k: v * n_rows if len(v) == 1 else v for k, v in given.items()})
    if args.param_count:
        rows["param_count"] = args.param_count
    if args.flops_per_sample:
        rows["flops_per_sample"] = args.flops_per_sample
    return rows


def run_predict(args: argparse.Namespace) -> int:
    from dlperf.models.answer import ANSWER
    from dlperf.models.answer_explained import answer_warnings
    from dlperf.models.artifact_check import load_artifact, version_warnings
    from dlperf.models.prediction import extrapolation_warnings, interval_missing, predict_rows

    arg.check_layouts(args.nodes, args.procs)
    artifact = load_artifact(args.model)
    network = _network(artifact, args.network)
    rows = _rows(args)
    table = predict_rows(artifact, network, args.model_name, rows, level=args.level)
    table["total_time_s"] = table["epoch_time_s"] * args.epochs
    missing = interval_missing(artifact, network, args.model_name)
    warnings = version_warnings(artifact) + extrapolation_warnings(artifact, network, rows)
    if args.model_name == ANSWER:
        warnings += answer_warnings(artifact, network, rows)
    if missing:
        warnings.append(f"no prediction interval for {args.model_name!r}: {missing}")
    warn("predict", warnings)
    if args.json:
        answer = {
            "framework": artifact["framework"],
            "network": network,
            "model": args.model_name,
            "epochs": args.epochs,
            "level": args.level,
            "predictions": json.loads(table.to_json(orient="records")),
            # The same warnings as on stderr: a program reading the JSON gets them too.
            "warnings": warnings,
        }
        print(json.dumps(answer, indent=2))
    else:
        print(
            f"{artifact['framework']}/{network}, model {args.model_name}, "
            f"{args.level:.0%} prediction interval (lo..hi):"
        )
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    return 0


def add_plan(sub) -> None:
    p = sub.add_parser(
        "plan",
        help="fewest workers (or cheapest GPU-hours) that meet a deadline",
        parents=[arg.artifact_options("one model of the artifact (default: the answer)")],
    )
    p.add_argument("--batch-size", type=arg.BATCH, required=True, help="per worker")
    p.add_argument("--data-size", type=arg.DATA_SIZE, help="samples per epoch")
    p.add_argument("--epochs", type=arg.EPOCHS, help="epochs to train (default 1)")
    p.add_argument(
        "--samples", type=arg.SAMPLES, help="total samples to train on (instead of --epochs)"
    )
    p.add_argument(
        "--deadline",
        required=True,
        type=arg.duration,
        help="seconds, or with a unit: 90m, 2h, 1d",
    )
    p.add_argument("--gpus-per-node", type=arg.COUNT, default=8, help="workers a node holds (8)")
    p.add_argument(
        "--max-procs", type=arg.WORKERS, default=64, help="largest worker count to consider"
    )
    p.add_argument(
        "--objective",
        choices=["workers", "cost"],
        default="workers",
        help="fewest workers, or lowest cost in worker-hours (workers)",
    )
    p.add_argument(
        "--safe",
        action="store_true",
        help="meet the deadline at the prediction interval's upper end",
    )
    p.set_defaults(func=run_plan)


def _work(args: argparse.Namespace) -> tuple[int, float]:
    """Samples per epoch and epochs, from --data-size and --epochs or --samples."""
    if args.samples is not None:
        if args.epochs is not None:
            raise UsageError(
                "--epochs and --samples both give the work to do; give one: --data-size D "
                "--epochs E, or --samples N"
            )
        data_size = args.data_size or args.samples
        return data_size, args.samples / data_size
    if args.data_size is not None:
        return args.data_size, 1.0 if args.epochs is None else args.epochs
    raise UsageError("give the work to do: --data-size D [--epochs E] or --samples N")


PLAN_COLUMNS = ["nodes", "procs", "epoch_time_s", "epoch_time_lo_s", "epoch_time_hi_s"]


def run_plan(args: argparse.Namespace) -> int:
    import pandas as pd

    from dlperf.cli import plan_output
    from dlperf.durations import readable
    from dlperf.models.artifact_check import load_artifact, version_warnings
    from dlperf.models.planning import cost_unit, parse_duration, plan
    from dlperf.models.prediction import extrapolation_warnings

    artifact = load_artifact(args.model)
    warn("plan", version_warnings(artifact))
    network = _network(artifact, args.network)
    data_size, epochs = _work(args)
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
    print(
        f"{artifact['framework']}/{network}, model {args.model_name}: "
        f"batch {args.batch_size}/worker, "
        f"{data_size} samples x {epochs:g} epochs, deadline {readable(deadline)}"
    )
    columns = [*PLAN_COLUMNS, "total_time_s", cost, "meets_deadline"]
    print(plan_output.table_text(table, choice, columns))
    chosen = choice if choice is not None else table.sort_values("total_time_s").iloc[0]
    layout = pd.DataFrame([chosen])[["nodes", "procs", "batch_size"]]
    which = "chosen" if choice is not None else "fastest"
    warn(
        "plan",
        [f"the {which} layout: {w}" for w in extrapolation_warnings(artifact, network, layout)],
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
