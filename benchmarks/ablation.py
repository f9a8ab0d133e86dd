"""Ablation of the generic model's terms and search, measured on real timings (docs/model.md).

Every term set of the ablation (each new term on and off, and differential evolution over all
constants against the exponent search with exact constants) is cross-validated on

- our own timings tables (``--timings``, e.g. results/timings.csv of a default run), per
  framework: grouped k-fold and leave-one-batch-level-out;
- every published table in ``--shared`` (../shared/data; skipped when absent), each turned into
  scaling series through the bring-your-own path
  (``dlperf.measurements.external.read_external``), as a user's CSV would be: Lambda's PyTorch
  table (train on 1-4 GPUs, predict 8), NVIDIA's SSD300 baselines
  and other-models grid (extrapolation to 8 GPUs where measured, grouped k-fold) and MXNet's
  single-GPU batch sweep (leave one batch level out).

The pooled MAPE (%) of the held-out points is printed as a Markdown table, with the baselines
(loglin first) as reference rows; ``--write docs/model.md`` puts it between the ablation markers
of that file together with the command that produced it.

    .venv/bin/python benchmarks/ablation.py --timings results/timings.csv \
        --shared ../shared/data --write docs/model.md
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pandas as pd
from common import markers, write_between_markers
from published import lambda_series, mxnet_batch_series, nvidia_grid_series, ssd300_series

from dlperf.config import default_models
from dlperf.measurements.timings_files import load_points
from dlperf.models.terms import DEFAULT_TERMS
from dlperf.validate.crossval import cross_validate

# The models fitted by default: the config schema's default models section.
DEFAULT_MODELS = default_models()

# The expression before the physics terms (and the default while no data support them).
BASE = ["fixed", "overhead", "compute", "allreduce_bw", "allreduce_lat", "internode"]
NEW_TERMS = ["core_share", "overlap", "ps_sync", "internode_scaling"]
START, END = markers("ablation")


def variants() -> dict[str, dict]:
    """Generic-model settings per ablation row: the base terms, each new term on, all on, all on
    but one, and the two searches."""
    rows = {"base": {"terms": BASE}}
    for term in NEW_TERMS:
        rows[f"base + {term}"] = {"terms": BASE + [term]}
    everything = BASE + NEW_TERMS
    rows["all"] = {"terms": everything}
    for term in NEW_TERMS:
        rows[f"all - {term}"] = {"terms": [t for t in everything if t != term]}
    rows["base, full DE"] = {"terms": BASE, "search": "full_de"}
    rows["default terms (DEFAULT_TERMS)"] = {"terms": DEFAULT_TERMS}
    return rows


# Published tables: (label, loader, protocols).
PUBLISHED: list[tuple[str, Callable[[Path], pd.DataFrame], dict[str, dict]]] = [
    ("Lambda PyTorch", lambda_series, {"extrapolation_procs": {"train_max_procs": 4}}),
    (
        "NVIDIA SSD300",
        ssd300_series,
        {"extrapolation_procs": {"train_max_procs": 4}, "kfold": {"k": 5}},
    ),
    (
        "NVIDIA grid",
        nvidia_grid_series,
        {"extrapolation_procs": {"train_max_procs": 4}, "kfold": {"k": 3}},
    ),
    ("MXNet batch sweep", mxnet_batch_series, {"loo_batch": {}, "kfold": {"k": 3}}),
]
OWN_PROTOCOLS = {"kfold": {"k": 5}, "loo_batch": {}}


# -- the measurement ----------------------------------------------------------------------------


def pooled_mape(points: pd.DataFrame, models: dict[str, dict], protocols: dict) -> pd.DataFrame:
    """Mean APE (%) of every held-out point, per (model, protocol), over all frameworks."""
    frames = []
    for framework in sorted(points["framework"].unique()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            predictions, _ = cross_validate(points, framework, models, protocols, seed=0, n_boot=0)
        frames.append(predictions.assign(framework=framework))
    held_out = pd.concat(frames, ignore_index=True)
    return held_out.groupby(["model", "protocol"])["ape"].mean().unstack("protocol")


def ablate(label: str, points: pd.DataFrame, protocols: dict) -> dict[tuple[str, str], float]:
    """{(row, column): MAPE} for one table: every generic variant and every baseline."""
    results: dict[tuple[str, str], float] = {}
    series = points["network"].nunique()
    for row, settings in variants().items():
        started = time.perf_counter()
        mape = pooled_mape(points, {"generic": settings}, protocols)
        for protocol in mape.columns:
            results[(row, f"{label}: {protocol} ({series} series)")] = mape.loc["generic", protocol]
        print(f"  {label:20s} {row:45s} {time.perf_counter() - started:6.1f} s", file=sys.stderr)
    baselines = {name: {} for name in DEFAULT_MODELS if name != "generic"}
    mape = pooled_mape(points, baselines, protocols)
    for name in mape.index:
        for protocol in mape.columns:
            results[(f"baseline {name}", f"{label}: {protocol} ({series} series)")] = mape.loc[
                name, protocol
            ]
    return results


def table(results: dict[tuple[str, str], float]) -> str:
    frame = pd.Series(results).unstack()
    rows = list(variants()) + sorted(r for r in frame.index if r.startswith("baseline"))
    frame = frame.reindex([r for r in rows if r in frame.index])
    columns = list(dict.fromkeys(c for _, c in results))
    lines = ["| term set | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    best = frame[columns].min()
    for row, values in frame[columns].iterrows():
        cells = [
            "" if pd.isna(v) else (f"**{v:.2f}**" if v == best[c] else f"{v:.2f}")
            for c, v in values.items()
        ]
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_into(doc: Path, command: str, markdown: str) -> None:
    write_between_markers(
        doc,
        "ablation",
        f"Measured with `{command}` (pooled MAPE % of held-out points; lower is better; bold: "
        f"best of its column).\n\n{markdown}",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timings", nargs="*", default=[], help="our timings tables (CSV)")
    parser.add_argument("--label", default="default run", help="name of the timings in the table")
    parser.add_argument("--shared", type=Path, default=None, help="published tables directory")
    parser.add_argument("--only", nargs="*", default=None, help="labels of tables to run")
    parser.add_argument("--write", type=Path, default=None, help="Markdown file with markers")
    args = parser.parse_args(argv)
    results: dict[tuple[str, str], float] = {}
    for path in args.timings:
        points = load_points(path)
        for (framework, device), group in points.groupby(["framework", "device"]):
            label = f"{args.label} {framework} {device}"
            if args.only is None or label in args.only or framework in args.only:
                results.update(ablate(label, group.reset_index(drop=True), OWN_PROTOCOLS))
    if args.shared is not None and args.shared.exists():
        for label, load, protocols in PUBLISHED:
            if args.only is None or label in args.only:
                results.update(ablate(label, load(args.shared), protocols))
    if not results:
        raise SystemExit("nothing measured: pass --timings FILE and/or --shared DIR")
    markdown = table(results)
    print(markdown)
    if args.write is not None:
        command = "python benchmarks/ablation.py " + " ".join(argv or sys.argv[1:])
        write_into(args.write, command, markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
