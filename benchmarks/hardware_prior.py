"""Learn prior_hw's slopes on Lambda's published table and write them as package data.

The slopes of log time per sample on the log matrix and vector peak rates, memory bandwidth
and batch, pooled over every network and configuration of Lambda's PyTorch table (the points
``hardware_backtest.py`` judges on, implausible series left out), one set per precision
(``dlperf.models.prior_hw.learn_slopes``). Prints them; ``--write`` writes
``src/dlperf/models/prior_hw.yaml`` (atomically). A test holds the shipped file equal to what
this learns when ``../shared`` is present.

    .venv/bin/python benchmarks/hardware_prior.py --write
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml
from hardware_backtest import lambda_points
from published import LAMBDA, SHARED

from dlperf.io import atomic_write_text
from dlperf.models.prior_hw import learn_slopes

TARGET = Path(__file__).resolve().parents[1] / "src" / "dlperf" / "models" / "prior_hw.yaml"
DIGITS = 6


def source_line(shared: Path) -> str:
    """The table's first comment line: where it was taken from."""
    with open(shared / LAMBDA, encoding="utf-8") as table:
        return table.readline().lstrip("#").strip().removeprefix("source:").strip()


def prior(shared: Path = SHARED) -> dict:
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
