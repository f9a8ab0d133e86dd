"""The report's "Which hardware" section, when a network was measured on two or more GPU types
or ``report.target.gpus`` names GPU types: the answer across hardware the fit stored
(docs/hardware.md), read from the artifacts only; with ``report.target`` the fewest GPUs of each
GPU type that meet its deadline, and with ``report.target.gpus`` those GPU types with their
datasheet figures (from a study of one GPU type, the answer anchored on it)."""

from __future__ import annotations

import pandas as pd

from dlperf.durations import parse_duration, readable
from dlperf.hardware import gpu_names, load
from dlperf.models.hardware_plan import plan_gpus
from dlperf.models.planning import DEFAULT_MAX_PROCS
from dlperf.models.series import base_networks

from .markup import Section, introduced, paragraph, table

# Workers a node holds when report.target does not say (as `dlperf plan --gpus`).
GPUS_PER_NODE = 8


def _answers(artifacts: dict[str, dict]):
    """(framework, network, precision, block) of every answer across hardware, sorted."""
    for framework, artifact in sorted(artifacts.items()):
        for network, by_precision in sorted(artifact.get("across_hardware", {}).items()):
            for precision, block in sorted(by_precision.items()):
                yield framework, network, precision, block


def hardware_table(artifacts: dict[str, dict]) -> pd.DataFrame:
    """One row per framework, network and precision with an answer across hardware."""
    rows = []
    for framework, network, precision, block in _answers(artifacts):
        if block.get("status") != "ok":
            rows.append(
                {"framework": framework, "network": network, "precision": precision,
                 "GPU types measured": "", "models (weight)": "",
                 "90 % interval": "", "how": block.get("reason", "")}
            )  # fmt: skip
            continue
        factors = block.get("interval_factors")
        spread = (
            f"-{(1 - factors[0]) * 100:.0f} % .. +{(factors[1] - 1) * 100:.0f} %"
            if factors
            else "none (see how)"
        )
        weights = ", ".join(f"{n} ({w:.2f})" for n, w in block["weights"].items())
        rows.append(
            {"framework": framework, "network": network, "precision": precision,
             "GPU types measured": ", ".join(block["gpus"]),
             "models (weight)": weights, "90 % interval": spread,
             "how": block["method"]}
        )  # fmt: skip
    return pd.DataFrame(rows)


def _target(study) -> dict:
    return (study.config.get("report") or {}).get("target") or {}


def _largest_batch(study, framework: str, network: str) -> int:
    """The target's batch per GPU, else the largest measured for the network."""
    points = study.points
    mine = points[(points["framework"] == framework) & (base_networks(points) == network)]
    return int(_target(study).get("batch_size") or mine["batch_size"].max())


def target_plan(study) -> pd.DataFrame:
    """With ``report.target``: per answer across hardware and GPU type (``target.gpus``, else
    the GPU types measured) the fewest GPUs that train the target within its deadline."""
    target = _target(study)
    if not target:
        return pd.DataFrame()
    hardware = study.hardware
    deadline = parse_duration(str(target["deadline"]))
    frames = []
    for framework, network, precision, block in _answers(study.artifacts):
        if block.get("status") != "ok":
            continue
        work = {
            "batch_size": _largest_batch(study, framework, network),
            "data_size": int(target["data_size"]),
            "epochs": float(target["epochs"]),
            "precision": precision,
            "max_procs": int(target.get("max_procs") or DEFAULT_MAX_PROCS),
            "gpus_per_node": int(target.get("procs_per_node") or GPUS_PER_NODE),
            "powers_of_two": False,
        }
        gpus = target.get("gpus") or block["gpus"]
        planned = plan_gpus(block, gpus, {}, work, deadline, hardware=hardware)
        where = {"framework": framework, "network": network, "precision": precision}
        frames.append(_plan_rows(planned, where))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _plan_rows(planned: pd.DataFrame, where: dict) -> pd.DataFrame:
    """:func:`plan_gpus`'s table as the report shows it, after the columns of ``where``."""
    yes_no = {True: "yes", False: "no"}
    spans = zip(planned["total_time_lo_s"], planned["total_time_hi_s"], strict=True)
    return pd.DataFrame(
        {
            **where,
            "GPU type": planned["gpu"],
            "measured": planned["measured"].map(yes_no),
            "reach": planned["reach"].round(2),
            "GPUs": planned["procs"],
            "nodes": planned["nodes"],
            "total time": planned["total_time_s"].map(readable),
            "90 % interval": [_span(lo, hi) for lo, hi in spans],
            "meets deadline": planned["meets_deadline"].map(yes_no),
        }
    )


def _span(lo: float | None, hi: float | None) -> str:
    if lo is None or hi is None or pd.isna(lo) or pd.isna(hi):
        return "none"
    return f"{readable(lo)} .. {readable(hi)}"


def datasheet_table(study) -> pd.DataFrame:
    """The catalogue's figures of the GPU types ``report.target.gpus`` names and of those the
    study measured, one row each."""
    catalogue = load(study.hardware)
    seen = gpu_names(study.points["gpu"]) if "gpu" in study.points else pd.Series(dtype=str)
    measured = {catalogue.match(g).name for g in seen.unique() if g}
    named = [catalogue.match(g).name for g in _target(study).get("gpus", [])]
    rows = []
    for name in dict.fromkeys([*named, *sorted(measured)]):
        gpu = catalogue.gpus[name]
        rows.append(
            {"GPU type": name, "measured": "yes" if name in measured else "no",
             **{f"{p} TFLOP/s": gpu.rate(p) for p in ("fp32", "tf32", "fp16", "bf16")},
             "memory GB/s": round(gpu.memory_bandwidth_gbs),
             "link": f"{gpu.link_name} ({gpu.link_bandwidth_gbs:g} GB/s)"}
        )  # fmt: skip
    return pd.DataFrame(rows)


INTRO = (
    "The answer across hardware, which predicts any GPU of the catalogue from its datasheet "
    "figures. Ask it with `dlperf predict --gpu NAME --precision P` and choose among GPU types "
    "with `dlperf plan --gpus ... --prices prices.yaml` (docs/hardware.md). The interval "
    "is the answer's spread on GPU types left out of the fit; for a GPU farther beyond those "
    "measured than any the fit left out, each form of model weighs alike and the interval "
    'widens (the "how" column gives that reach); for more GPUs than were measured its upper '
    "end widens (more GPUs never shorten an iteration). From one GPU type measured, prior_hw "
    "alone answers, its slopes and interval from the published table it was learned on; from "
    "two, too few to leave one out, the models alike, with the interval that table gave them."
)


def which_hardware(study) -> list[Section]:
    """The section, when a study holds a network measured on two or more GPU types or its
    config names GPU types in ``report.target.gpus``."""
    frame = hardware_table(study.artifacts)
    named = _target(study).get("gpus")
    several = any(len(block.get("gpus", [])) >= 2 for *_, block in _answers(study.artifacts))
    if not several and not named:
        return []
    section = introduced("which-hardware", "Which hardware", INTRO)
    if frame.empty:
        section.blocks.append(
            paragraph(
                "No timings of this study name a GPU, so there is no answer across hardware "
                "for the GPU types report.target.gpus names: measure on a GPU (or bring "
                "external_timings with gpu and precision columns). Their datasheet figures:",
                ident="hardware-unanswered",
            )
        )
    else:
        section.blocks.append(
            table(frame, left=set(frame.columns) - {"90 % interval"}, ident="hardware-table")
        )
    planned = target_plan(study)
    if not planned.empty:
        target = _target(study)
        section.blocks.append(
            paragraph(
                f"The target, {int(target['data_size']):,} samples x {float(target['epochs']):g} "
                f"epochs within {readable(parse_duration(str(target['deadline'])))}: per GPU "
                "type the fewest GPUs that meet it (the fastest when none does), from the "
                "answer across hardware; reach 1 is within the GPU types measured."
            )
        )
        numeric = {"reach", "GPUs", "nodes"}
        section.blocks.append(
            table(planned, left=set(planned.columns) - numeric, ident="hardware-plan")
        )
    if named:
        figures = datasheet_table(study)
        section.blocks.append(
            paragraph(
                "The GPU types report.target.gpus names, then the others measured: peak dense "
                "TFLOP/s per precision (fp16 with FP32 accumulate; – where the GPU lacks it), "
                "memory bandwidth and the link between the GPUs of a node, as the catalogue "
                "has them from their datasheets (docs/hardware.md)."
            )
        )
        section.blocks.append(
            table(figures, left={"GPU type", "measured", "link"}, ident="hardware-datasheets")
        )
    return [section]
