"""Run every benchmark of benchmarks/ and print each figure beside its target.

    .venv/bin/python benchmarks/run_all.py [--skip harness_overhead ...]

Each benchmark runs as its own process (a fresh interpreter, as a user would start it); the
exit status is 1 when any target is missed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = ("plan_sweep", "aggregate_records", "fit_validate", "harness_overhead")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skip", nargs="*", default=[], choices=BENCHMARKS)
    args = parser.parse_args()
    missed = []
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
    for name in BENCHMARKS:
        if name in args.skip:
            continue
        code = subprocess.run([sys.executable, str(HERE / f"{name}.py")]).returncode
        if code != 0:
            missed.append(name)
    print("targets missed in: " + ", ".join(missed) if missed else "every target met")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
