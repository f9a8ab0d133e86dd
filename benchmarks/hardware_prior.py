"""Learn prior_hw's slopes on Lambda's published table and write them as package data.

The slopes of log time per sample on the log matrix and vector peak rates, memory bandwidth
and batch, pooled over every network and configuration of Lambda's PyTorch table (the points
``hardware_backtest.py`` judges on, implausible series left out), one set per precision
(``dlperf.models.prior_hw.learn_slopes``). Beside them, the interval of an answer from one GPU
type measured (``one_gpu_type``): per network and precision each GPU type asked from each other
one alone, by prior_hw with slopes learned without the GPU type asked, held to the envelope of
the one measured; the split-conformal radius of those absolute log errors at each level from
0.50 to 0.99, and the largest reach a question went. Prints them; ``--write`` writes
``src/dlperf/models/prior_hw.yaml`` (atomically). A test holds the shipped file equal to what
this learns when ``../shared`` is present.

    .venv/bin/python benchmarks/hardware_prior.py --write
"""

from __future__ import annotations

import argparse
import math
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from hardware_backtest import lambda_points
from published import LAMBDA, SHARED

from dlperf.io import atomic_write_text
from dlperf.models import make_model
from dlperf.models.hardware_answer import conformal_radius, hardware_range, reach
from dlperf.models.hardware_envelope import envelope, envelope_points
from dlperf.models.prior_hw import learn_slopes

TARGET = Path(__file__).resolve().parents[1] / "src" / "dlperf" / "models" / "prior_hw.yaml"
DIGITS = 6
# The levels the one-GPU-type radius is shipped at: a level between two takes the higher.
LEVELS = [round(0.5 + 0.01 * step, 2) for step in range(50)]


def source_line(shared: Path) -> str:
    """The table's first comment line: where it was taken from."""
    with open(shared / LAMBDA, encoding="utf-8") as table:
        return table.readline().lstrip("#").strip().removeprefix("source:").strip()


def one_gpu_type_errors(points: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """log(predicted / measured) of every point asked from each other GPU type of its network
    and precision alone (module docstring), and each question's reach."""
    errors, reaches, slopes = [], [], {}
    for _, series in points.groupby(["network", "precision"], sort=True):
        gpus = sorted(series["gpu"].unique())
        for asked in gpus:
            if asked not in slopes:
                slopes[asked] = learn_slopes(points[points["gpu"] != asked])
            test = series[series["gpu"] == asked]
            for measured in gpus:
                if measured == asked:
                    continue
                train = series[series["gpu"] == measured]
                model = make_model("prior_hw", {"slopes": slopes[asked]}).fit(train)
                low, high = envelope(envelope_points(train), test)
                predicted = np.clip(model.predict(test), low, high)
                errors.append(np.log(predicted / test["epoch_time_s"].to_numpy(float)))
                reaches.append(reach(hardware_range(train, None), test, None))
    return np.concatenate(errors), np.concatenate(reaches)


def one_gpu_type(points: pd.DataFrame) -> dict:
    errors, reaches = one_gpu_type_errors(points)
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
        "one_gpu_type": one_gpu_type(points),
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
