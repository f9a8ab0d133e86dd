"""``dlperf predict`` and ``plan``: a fitted model artifact answers what a configuration takes,
and which layout meets a deadline."""

from __future__ import annotations

import argparse
import json
import re

from dlperf.cli import arguments as arg
from dlperf.cli.output import data_warnings, warn
from dlperf.errors import UsageError


def _network(artifact: dict, requested: str | None) -> str:
    """The network asked for: a network trained (its series told apart later) or a series."""
    from dlperf.models.artifact import trained_networks

    networks = list(trained_networks(artifact))
    if requested:
        return requested
    if len(networks) == 1:
        return networks[0]
    raise UsageError(
        f"the artifact covers several networks ({', '.join(networks)}); choose one with --network"
    )


def _one_series(artifact: dict, network: str) -> str:
    """``network`` when the artifact fitted it as it is; a one-line error naming its series
    when it was measured on several GPU types or precisions (docs/hardware.md)."""
    from dlperf.models.artifact import trained_networks

    series = trained_networks(artifact).get(network, [network])
    if network in artifact["networks"] or len(series) < 2:
        return network
    raise UsageError(
        f"{network} was measured as several series, one per GPU type and precision "
        f"({'; '.join(series)}); name one with --network (predict: or with --gpu and "
        "--precision)"
    )


def _measured_series(args: argparse.Namespace, artifact: dict, network: str) -> str | None:
    """With --gpu: the artifact's own series of ``network`` on that GPU type and precision,
    whose per-network models then answer; None when the GPU type was not measured so (the
    answer across hardware then answers)."""
    from dlperf.hardware import load, precision_name
    from dlperf.models.artifact import series_on

    catalogue = load(args.hardware)
    gpu = catalogue.match(args.gpu).name
    return series_on(artifact, network, gpu, precision_name(args.precision), catalogue)


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
    p.add_argument(
        "--gpu",
        help="a GPU type of the catalogue, measured or not: the answer across hardware "
        "(docs/hardware.md); needs timings that name their GPU and precision in the artifact",
    )
    arg.add_hardware_options(p, "--gpu")
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
    from dlperf.cli import answer_tables
    from dlperf.models.answer import ANSWER
    from dlperf.models.answer_explained import answer_warnings
    from dlperf.models.artifact_check import load_artifact
    from dlperf.models.prediction import (
        extrapolation_warnings,
        interval_missing,
        predict_rows,
    )

    arg.check_layouts(args.nodes, args.procs)
    artifact = load_artifact(args.model)
    network = _network(artifact, args.network)
    rows = _rows(args)
    own = _measured_series(args, artifact, network) if args.gpu else None
    if args.gpu and own is None:
        return _predict_on_gpu(args, artifact, network, rows)
    network = own or _one_series(artifact, network)
    table = predict_rows(artifact, network, args.model_name, rows, level=args.level)
    table["total_time_s"] = table["epoch_time_s"] * args.epochs
    missing = interval_missing(artifact, network, args.model_name)
    warnings = data_warnings(artifact, network) + extrapolation_warnings(artifact, network, rows)
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
            **({"gpu": args.gpu, "said": _said_measured(args, artifact, own)} if own else {}),
            "predictions": json.loads(table.to_json(orient="records")),
            # The same warnings as on stderr: a program reading the JSON gets them too.
            "warnings": warnings,
        }
        print(json.dumps(answer, indent=2))
    else:
        if own:
            print(_said_measured(args, artifact, own))
        shared, text = answer_tables.table_text(
            table, _predicted_columns(table, args.epochs), args.level, keep=("procs",)
        )
        print(
            f"{artifact['framework']}/{network}, model {args.model_name} "
            f"({args.level:.0%} prediction interval)"
            + (f": {shared}" if shared else "")
            + (f"; {args.epochs:g} epochs" if args.epochs != 1 else "")
        )
        print(text)
    return 0


def _predicted_columns(table, epochs: float) -> list[str]:
    """What `predict` prints as text: the configuration, then the answer (the total only when
    more than one epoch is asked)."""
    answer = ["epoch_time_s", "samples_per_s", *(["total_time_s"] if epochs != 1 else [])]
    extra = ("ratio", "reach", "beyond_backtest", "held_to_envelope", "models")
    extra = [c for c in extra if c in table]
    return [*PREDICT_ROWS, *answer, *extra]


#: The configuration columns of `predict`'s rows (those all rows share are said above them).
PREDICT_ROWS = [
    "nodes",
    "procs",
    "batch_size",
    "data_size",
    "grad_accum_steps",
    "param_count",
    "flops_per_sample",
]


def _said_measured(args: argparse.Namespace, artifact: dict, own: str) -> str:
    return (
        f"{artifact['framework']}/{own}: measured (asked: {args.gpu}, {args.precision}); "
        "the answer of this series' own models (docs/hardware.md)"
    )


def _hardware_block(artifact: dict, network: str, precision: str) -> dict:
    """The artifact's answer across hardware for a network (trained, or one of its series) and
    precision, or a one-line error."""
    from dlperf.models.artifact import trained_network

    network = trained_network(artifact, network)
    block = artifact.get("across_hardware", {}).get(network, {}).get(precision)
    if block is None or block.get("status") != "ok":
        why = "" if block is None else f" ({block.get('reason')})"
        raise UsageError(
            f"the artifact has no answer across hardware for {network} at {precision}{why}; "
            "fit timings with gpu and precision columns (docs/hardware.md)"
        )
    return block


def _plan_gpus(args, artifact: dict, network: str, data_size, epochs, deadline) -> int:
    """``plan --gpus``: per GPU type the fewest GPUs that meet the deadline, and the cheapest."""
    from dlperf.cli import answer_tables
    from dlperf.durations import readable
    from dlperf.hardware import precision_name
    from dlperf.models.hardware_plan import cheapest, plan_gpus, read_prices
    from dlperf.models.planning import DEFAULT_MAX_PROCS

    precision = precision_name(args.precision)
    block = _hardware_block(artifact, network, precision)
    work = {
        "batch_size": args.batch_size,
        "data_size": data_size,
        "epochs": epochs,
        "precision": precision,
        "max_procs": args.max_procs or DEFAULT_MAX_PROCS,
        "gpus_per_node": _per_node(args, artifact, network),
        "powers_of_two": args.powers_of_two,
    }
    prices = read_prices(args.prices, args.hardware)
    table = plan_gpus(block, args.gpus, prices, work, deadline, args.safe, args.hardware)
    print(
        f"{artifact['framework']}/{network} ({precision}): batch {args.batch_size}/GPU, "
        f"{data_size:,.0f} samples x {epochs:g} epochs, deadline {readable(deadline)}; "
        f"GPU types measured: {', '.join(block['gpus'])}"
    )
    columns = [c for c in table.columns if not re.search(r"_(lo|hi)_s$", c)]
    print(answer_tables.table_text(table, columns, args.level, keep=("nodes",))[1])
    choice = cheapest(table, deadline)
    if choice is None:
        print("no GPU type meets the deadline within --max-procs; raise it or the deadline")
        return 1
    price = "" if choice["cost"] is None else f", cost {answer_tables.number(choice['cost'])}"
    warn("plan", [choice["risk"]] if choice["risk"] else [])
    print(
        f"cheapest: {int(choice['procs'])} x {choice['gpu']}: "
        f"{readable(choice['total_time_s'])}, {answer_tables.number(choice['gpu_hours'])} "
        f"GPU-hours{price}" + (f" ({choice['risk']})" if choice["risk"] else "")
    )
    return 0


def _predict_on_gpu(args: argparse.Namespace, artifact: dict, network: str, rows) -> int:
    """``predict --gpu``: the answer across hardware, saying whether the GPU was measured and
    how far its figures lie beyond those measured."""
    from dlperf.cli import answer_tables
    from dlperf.hardware import load, precision_name
    from dlperf.models.hardware_answer import answer_at

    precision = precision_name(args.precision)
    gpu = load(args.hardware).match(args.gpu).name
    block = _hardware_block(artifact, network, precision)
    rows = rows.assign(gpu=gpu, precision=precision)
    found = answer_at(block, rows, args.hardware)
    table = rows.drop(columns=["gpu", "precision"]).assign(
        epoch_time_s=found.predicted,
        epoch_time_lo_s=found.lo,
        epoch_time_hi_s=found.hi,
        total_time_s=found.predicted * args.epochs,
        reach=found.reach,
        beyond_backtest=found.beyond_backtest,
        held_to_envelope=found.held_to_envelope,
    )
    measured = "measured" if found.measured.all() else "not measured"
    reach = float(found.reach.max())
    beyond = "within" if reach <= 1 else f"up to {reach:.2g}x beyond"
    said = (
        f"{artifact['framework']}/{network} on {gpu} ({precision}): {measured}; its figures lie "
        f"{beyond} those of the GPU types measured ({', '.join(block['gpus'])}). "
        f"{block['method']}."
    )
    if args.json:
        records = json.loads(table.to_json(orient="records"))
        print(
            json.dumps(
                {"gpu": gpu, "precision": precision, "said": said, "predictions": records}, indent=2
            )
        )
    else:
        shared, text = answer_tables.table_text(
            table, _predicted_columns(table, args.epochs), args.level, keep=("procs",)
        )
        print(said + (f" {shared}." if shared else ""))
        print(text)
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
    p.add_argument(
        "--gpus-per-node",
        type=arg.COUNT,
        help="workers a node holds (default: a measured node's GPUs or cores, else 8)",
    )
    p.add_argument(
        "--max-procs",
        type=arg.WORKERS,
        default=None,  # dlperf.models.planning.DEFAULT_MAX_PROCS (pandas: not while parsing)
        help="largest worker count to consider",
    )
    p.add_argument(
        "--powers-of-two",
        action="store_true",
        help="consider only worker counts that are powers of two (1, 2, 4, 8, ...)",
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
    p.add_argument(
        "--gpus",
        nargs="+",
        help="GPU types of the catalogue to choose among (the answer across hardware; "
        "docs/hardware.md): per type the fewest GPUs that meet the deadline, and the cheapest",
    )
    p.add_argument("--prices", help="with --gpus: YAML of GPU name -> price per GPU-hour")
    arg.add_hardware_options(p, "--gpus")
    p.set_defaults(func=run_plan)


# Workers a node holds when neither --gpus-per-node nor the artifact says (a GPU server's 8).
DEFAULT_PER_NODE = 8


def _per_node(args: argparse.Namespace, artifact: dict, network: str) -> int:
    """--gpus-per-node, else the GPUs or cores of a measured node (the artifact's
    ``node_capacity``), else :data:`DEFAULT_PER_NODE`."""
    from dlperf.models.prediction import measured_ranges

    recorded = (measured_ranges(artifact, network) or {}).get("node_capacity")
    return args.gpus_per_node or recorded or DEFAULT_PER_NODE


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


PLAN_COLUMNS = ["nodes", "procs", "epoch_time_s"]


def run_plan(args: argparse.Namespace) -> int:
    from dlperf.cli import answer_tables
    from dlperf.durations import readable
    from dlperf.models.artifact_check import load_artifact
    from dlperf.models.planning import DEFAULT_MAX_PROCS, cost_unit, parse_duration, planned

    artifact = load_artifact(args.model)
    network = _network(artifact, args.network)
    warn("plan", data_warnings(artifact, network))
    data_size, epochs = _work(args)
    deadline = parse_duration(args.deadline)
    if args.gpus:
        return _plan_gpus(args, artifact, network, data_size, epochs, deadline)
    network = _one_series(artifact, network)
    max_procs = args.max_procs or DEFAULT_MAX_PROCS
    found = planned(
        artifact,
        network,
        args.model_name,
        args.batch_size,
        data_size=data_size,
        epochs=epochs,
        deadline_s=deadline,
        gpus_per_node=_per_node(args, artifact, network),
        max_procs=max_procs,
        objective=args.objective,
        safe=args.safe,
        level=args.level,
        powers_of_two=args.powers_of_two,
    )
    table, choice = found.table, found.choice
    cost, cost_label = cost_unit(artifact, network)
    print(
        f"{artifact['framework']}/{network}, model {args.model_name}: "
        f"batch {args.batch_size}/worker, "
        f"{data_size:,.0f} samples x {epochs:g} epochs, deadline {readable(deadline)}"
    )
    columns = [*PLAN_COLUMNS, "total_time_s", cost, "meets_deadline"]
    print(answer_tables.plan_text(table, choice, columns, args.level))
    which = "chosen" if choice is not None else "fastest"
    warn("plan", [f"the {which} layout: {w}" for w in found.extrapolated])
    if choice is None:
        fastest = found.fastest
        print(
            f"no layout up to {max_procs} workers meets the deadline; the fastest is "
            f"{int(fastest['procs'])} workers on {int(fastest['nodes'])} node(s) at "
            f"{readable(fastest['total_time_s'])}. Raise --max-procs or the deadline."
        )
        return 1
    print(
        f"choice ({args.objective}): {int(choice['procs'])} workers on {int(choice['nodes'])} "
        f"node(s): {readable(choice['total_time_s'])}, {answer_tables.number(choice[cost])} "
        f"{cost_label}"
    )
    return 0
