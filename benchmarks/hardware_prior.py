"""Learn prior_hw's slopes on Lambda's published table and write them as package data.

The slopes of log time per sample on the log matrix and vector peak rates, memory bandwidth
and batch, pooled over every network and configuration of Lambda's PyTorch table (the points
``hardware_backtest.py`` judges on, implausible series left out), one set per precision
(``dlperf.models.prior_hw.learn_slopes``). Beside them, the interval of an answer from one GPU
type measured (``one_gpu_type``): per network and precision each GPU type asked from each other
one alone, by prior_hw with slopes learned without the GPU type asked, held to the envelope of
the one measured; the split-conformal radius of those absolute log errors at each level from
0.50 to 0.99, and the largest reach a question went. And the same for an answer from two GPU
types measured (``two_gpu_types``): each GPU type asked from PAIRS pairs of its series' other
GPU types, drawn at random with a fixed seed (every pair would take half an hour), by the
answer's models alike (``dlperf.models.hardware_answer.ANSWER_MODELS``), prior_hw's slopes
learned without the GPU type asked. Prints them; ``--write`` writes
``src/dlperf/models/prior_hw.yaml`` (atomically). A test holds the shipped file equal to what
this learns when ``../shared`` is present.

    .venv/bin/python benchmarks/hardware_prior.py --write
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from hardware_backtest import lambda_points
from published import LAMBDA, SHARED

from dlperf.io import atomic_write_text
from dlperf.models import make_model
from dlperf.models.hardware_answer import ANSWER_MODELS, answer, conformal_radius
from dlperf.models.hardware_reach import hardware_range, reach
from dlperf.models.prior_hw import learn_slopes

TARGET = Path(__file__).resolve().parents[1] / "src" / "dlperf" / "models" / "prior_hw.yaml"
DIGITS = 6
# The levels the one-GPU-type radius is shipped at: a level between two takes the higher.
LEVELS = [round(0.5 + 0.01 * step, 2) for step in range(50)]
PAIRS = 8  # pairs of other GPU types each GPU type is asked from, for two GPU types measured
SEED = 0


def source_line(shared: Path) -> str:
    """The table's first comment line: where it was taken from."""
    with open(shared / LAMBDA, encoding="utf-8") as table:
        return table.readline().lstrip("#").strip().removeprefix("source:").strip()


def asked_errors(
    points: pd.DataFrame,
    models: tuple[str, ...],
    measured: Callable[[list[str]], Iterable[tuple[str, ...]]],
) -> tuple[np.ndarray, np.ndarray]:
    """log(predicted / measured) of every point asked by the answer of ``models`` alike, fitted
    on each set of GPU types ``measured`` draws from the other GPU types of its network and
    precision (module docstring), and each question's reach; a set on which one of the models
    cannot be fitted asks nothing (the answer there is another combination)."""
    errors, reaches, slopes = [], [], {}
    for _, series in points.groupby(["network", "precision"], sort=True):
        gpus = sorted(series["gpu"].unique())
        for asked in gpus:
            if asked not in slopes:
                slopes[asked] = learn_slopes(points[points["gpu"] != asked])
            settings = {"prior_hw": {"slopes": slopes[asked]}}
            test = series[series["gpu"] == asked]
            for gpu_types in measured([g for g in gpus if g != asked]):
                train = series[series["gpu"].isin(gpu_types)]
                found = answer([make_model(m, settings.get(m, {})) for m in models], train, test)
                if set(found.weights) != set(models):
                    continue
                errors.append(np.log(found.predicted / test["epoch_time_s"].to_numpy(float)))
                reaches.append(reach(hardware_range(train, None), test, None))
    return np.concatenate(errors), np.concatenate(reaches)


def each_one(others: list[str]) -> list[tuple[str, ...]]:
    """Each other GPU type alone: a study of one GPU type."""
    return [(gpu,) for gpu in others]


def drawn_pairs(rng: np.random.Generator) -> Callable[[list[str]], list[tuple[str, ...]]]:
    """PAIRS pairs of the other GPU types, drawn by ``rng``: a study of two GPU types (every
    pair would take half an hour)."""

    def pairs_of(others: list[str]) -> list[tuple[str, ...]]:
        pairs = list(itertools.combinations(others, 2))
        drawn = rng.choice(len(pairs), size=min(PAIRS, len(pairs)), replace=False)
        return [pairs[index] for index in sorted(drawn)]

    return pairs_of


def published_interval(errors: np.ndarray, reaches: np.ndarray) -> dict:
    """How many questions, the largest reach they went and the radius at each of LEVELS."""
    return {
        "questions": len(errors),
        # Rounded up: the question that went farthest stays within it.
        "reach": math.ceil(float(reaches.max()) * 10**DIGITS) / 10**DIGITS,
        "radius": {at: round(conformal_radius(errors, at), DIGITS) for at in LEVELS},
    }


@lru_cache(maxsize=2)
def prior(shared: Path = SHARED) -> dict:
    """What the table teaches (module docstring), as prior_hw.yaml holds it."""
    points = lambda_points(shared)
    learned = learn_slopes(points)
    return {
        "source": source_line(shared),
        "learned_on": {
            "points": len(points),
            "gpu_types": int(points["gpu"].nunique()),
            "networks": int(points["network"].nunique()),
        },
        "slopes": {
            precision: {name: round(value, DIGITS) for name, value in slopes.items()}
            for precision, slopes in learned.items()
        },
        "one_gpu_type": published_interval(*asked_errors(points, ("prior_hw",), each_one)),
        "two_gpu_types": {
            "models": sorted(ANSWER_MODELS),
            "pairs_per_gpu_type": PAIRS,
            **published_interval(
                *asked_errors(points, ANSWER_MODELS, drawn_pairs(np.random.default_rng(SEED)))
            ),
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("--write", action="store_true", help=f"write {TARGET.name}")
    args = parser.parse_args(argv)
    if not args.shared.exists():
        print(f"{args.shared} is not present; nothing to learn from", file=sys.stderr)
        return 1
    found = prior(args.shared)
    header = (
        "# prior_hw's slopes (src/dlperf/models/prior_hw.py, docs/hardware.md), learned on the\n"
        "# published table named under source. Written by\n"
        "# `.venv/bin/python benchmarks/hardware_prior.py --write`; do not edit by hand.\n"
    )
    text = header + yaml.safe_dump(found, sort_keys=False, width=100)
    print(text)
    if args.write:
        atomic_write_text(TARGET, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
