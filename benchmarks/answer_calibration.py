"""Is the answer's 90 % interval calibrated on laws with a known truth? (docs/model.md)

Two laws, 100 iterations an epoch, a and c drawn per series, lognormal noise; the models
(loglin, castello, usl) are fitted with ``fit_framework`` on 1-8 workers:
- ``log``: t_iter = a + c log2 p, measured at 1-32 workers, the answer asked for 16 and 32;
- ``saturating``: t_iter = a + c (p - 1) / p (a ring all-reduce's bandwidth term), asked for
  64 workers, 8x beyond the measured range and 2x beyond the largest ratio the backtest saw.
Prints the share of held-out points inside the interval and its median half-width in log time,
per law, noise and seed.

    .venv/bin/python benchmarks/answer_calibration.py
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

from dlperf.models.answer import ANSWER
from dlperf.models.artifact import fit_framework
from dlperf.models.prediction import predict_rows

PROCS = [1, 2, 4, 8, 16, 32]
MODELS = {"loglin": {}, "castello": {}, "usl": {}}


def known_law(
    series: int, noise: float, seed: int, levels: list[int] = PROCS, law: str = "log"
) -> pd.DataFrame:
    """``series`` networks of ``law`` (``log`` or ``saturating``) measured at ``levels``
    workers, one row each."""
    rng = np.random.default_rng(seed)
    procs = np.array(levels, float)
    frames = []
    for k in range(series):
        if law == "log":
            overhead, comm = rng.uniform(0.05, 0.2), rng.uniform(0.002, 0.02)
            t_iter = overhead + comm * np.log2(procs)
        else:
            overhead, comm = rng.uniform(0.05, 0.2), rng.uniform(0.02, 0.1)
            t_iter = overhead + comm * (procs - 1) / procs
        frames.append(
            pd.DataFrame(
                {
                    "framework": "pytorch",
                    "network": f"net{k}",
                    "device": "cuda",
                    "nodes": 1,
                    "procs": levels,
                    "batch_size": 32,
                    "data_size": [100 * p * 32 for p in levels],
                    "epoch_time_s": 100 * t_iter * rng.lognormal(0.0, noise, procs.size),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


# Per law: the worker counts measured (the answer is fitted on those up to 8).
LEVELS = {"log": PROCS, "saturating": [1, 2, 4, 8, 64]}


def calibration(
    series: int, noise: float, seed: int, refits: int, law: str = "log"
) -> tuple[float, float]:
    points = known_law(series, noise, seed, LEVELS[law], law)
    train, test = points[points["procs"] <= 8], points[points["procs"] > 8]
    artifact = fit_framework(train, "pytorch", MODELS, seed=0, refits=refits)
    inside, half = [], []
    for network, held in test.groupby("network"):
        table = predict_rows(artifact, network, ANSWER, held)
        measured = held["epoch_time_s"].to_numpy()
        lo, hi = table["epoch_time_lo_s"].to_numpy(), table["epoch_time_hi_s"].to_numpy()
        inside += list((lo <= measured) & (measured <= hi))
        half += list(np.log(hi / lo) / 2)
    return float(np.mean(inside)), float(np.median(half))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--series", type=int, default=40)
    parser.add_argument("--seeds", type=int, nargs="+", default=[3, 7, 11])
    parser.add_argument("--noise", type=float, nargs="+", default=[0.02, 0.05])
    parser.add_argument("--refits", type=int, default=5)
    args = parser.parse_args(argv)
    print("| law | noise | seed | 90 % interval covers % | median half-width (log time) |")
    print("|---|---|---|---|---|")
    for law in LEVELS:
        for noise in args.noise:
            for seed in args.seeds:
                covered, half = calibration(args.series, noise, seed, args.refits, law)
                print(
                    f"| {law} | {noise:.0%} | {seed} | {covered * 100:.1f} | {half:.3f} |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
