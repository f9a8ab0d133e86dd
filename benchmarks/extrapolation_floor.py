"""How well can anything predict the next worker count of a published table? (docs/model.md)

A model trained on 1, 2 and 4 GPUs and asked for 8 sees, per series, three epoch times
t_1, t_2, t_4. Every model dlperf fits is scale-free (seconds or hours, the same prediction
up to the unit), and every least-squares fit of a fixed shape (a + c log2 p, a + c (p-1)/p,
...) predicts t_8 as one linear combination of t_1, t_2, t_4. This script measures the lowest
pooled MAPE that such predictors can reach, with their weights chosen *in hindsight*: fitted to
the very 8-GPU times they are judged on, one set of weights shared by every series. No model
that sees only the training counts can beat that floor on average except by chance, so it says
which error targets a table can support at all.

The families, each a superset of the one before:

- ``t_last x one factor``: the last measured time times a factor shared by all series;
- ``linear in the training times``: every fixed-shape least-squares fit;
- ``+ abs(steps)``: adds |t_2 - t_1| and |t_4 - t_2|, so the weights can treat a series that slows
  down differently from one that does not (piecewise linear, still scale-free);
- ``+ rises, max, min, median``: adds the positive parts of the steps and the largest, smallest
  and middle of the three times.

Minimising the mean of |prediction / t_8 - 1| over weights that enter linearly is a linear
program, so each floor is the exact global minimum (``scipy.optimize.linprog``, HiGHS), not the
best of a local search. The generic model and ``loglin``, fitted only on the training counts
(protocol extrapolation_procs), are printed beside the floors.

    .venv/bin/python benchmarks/extrapolation_floor.py --shared ../shared/data \
        --write docs/model.md
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from ablation import pooled_mape
from common import write_between_markers
from published import LAMBDA, SHARED, lambda_series
from scipy.optimize import linprog

Features = Callable[[np.ndarray], list[np.ndarray]]


def _steps(times: np.ndarray) -> np.ndarray:
    return np.diff(times, axis=1)


# Feature columns per family, from the (series x training counts) matrix of epoch times.
FAMILIES: dict[str, Features] = {
    "t_last x one factor": lambda t: [t[:, -1]],
    "linear in the training times": lambda t: list(t.T),
    "+ abs(steps)": lambda t: list(t.T) + list(np.abs(_steps(t)).T),
    "+ rises, max, min, median": lambda t: (
        list(t.T)
        + list(np.abs(_steps(t)).T)
        + list(np.maximum(_steps(t), 0).T)
        + [t.max(axis=1), t.min(axis=1), np.median(t, axis=1)]
    ),
}


def hindsight_floor(columns: list[np.ndarray], target: np.ndarray) -> tuple[float, np.ndarray]:
    """The least mean APE (%) of ``sum_j w_j columns[j]`` against ``target`` over all weights w,
    and those weights: min over w, u of mean(u) with -u <= A w - 1 <= u, A = columns / target."""
    design = np.column_stack(columns) / target[:, None]
    n, k = design.shape
    identity = np.eye(n)
    result = linprog(
        c=np.r_[np.zeros(k), np.full(n, 1.0 / n)],
        A_ub=np.block([[design, -identity], [-design, -identity]]),
        b_ub=np.r_[np.ones(n), -np.ones(n)],
        bounds=[(None, None)] * k + [(0, None)] * n,
        method="highs",
    )
    if not result.success:
        raise RuntimeError(f"the floor's linear program failed: {result.message}")
    return 100.0 * result.fun, result.x[:k]


def epoch_times(points: pd.DataFrame) -> pd.DataFrame:
    """Series x worker counts of epoch times; each series must be measured at one batch size
    and at every worker count of the table."""
    batches = points.groupby("network")["batch_size"].nunique()
    if (batches > 1).any():
        raise SystemExit(f"series with several batch sizes: {list(batches[batches > 1].index)}")
    times = points.pivot_table(index="network", columns="procs", values="epoch_time_s")
    if times.isna().any().any():
        raise SystemExit("every series must be measured at every worker count")
    return times


def floors(times: pd.DataFrame, train_max_procs: int) -> dict[str, float]:
    """{family: hindsight floor (%)} for predicting the first count above ``train_max_procs``."""
    train = times.loc[:, times.columns <= train_max_procs].to_numpy()
    target = times.loc[:, times.columns > train_max_procs].iloc[:, 0].to_numpy()
    return {
        name: hindsight_floor(features(train), target)[0] for name, features in FAMILIES.items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=SHARED, help="published tables directory")
    parser.add_argument("--train-max-procs", type=int, default=4)
    parser.add_argument("--write", type=Path, default=None, help="Markdown file with markers")
    args = parser.parse_args(argv)
    if not (args.shared / LAMBDA).exists():
        raise SystemExit(f"Lambda's table is not in {args.shared}: pass --shared DIR")
    points = lambda_series(args.shared)
    times = epoch_times(points)
    target = int(times.columns[times.columns > args.train_max_procs][0])
    protocol = {"extrapolation_procs": {"train_max_procs": args.train_max_procs}}
    models = pooled_mape(points, {"generic": {}, "loglin": {}}, protocol)["extrapolation_procs"]
    hindsight = f"weights fitted to the {target}-GPU times (hindsight floor)"
    trained = f"fitted on 1-{args.train_max_procs} GPUs (extrapolation_procs)"
    rows = [
        f"| {name}, {hindsight} | {value:.2f} |"
        for name, value in floors(times, args.train_max_procs).items()
    ] + [f"| {name}, {trained} | {models[name]:.2f} |" for name in ("generic", "loglin")]
    markdown = "\n".join(
        [f"| predictor of t_{target} (Lambda, {len(times)} series) | MAPE % |", "|---|---|", *rows]
    )
    print(markdown)
    if args.write is not None:
        command = "python benchmarks/extrapolation_floor.py " + " ".join(argv or sys.argv[1:])
        write_between_markers(args.write, "floor", f"Measured with `{command}`.\n\n{markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
