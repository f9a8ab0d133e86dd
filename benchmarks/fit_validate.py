"""(c) Fitting every model and (d) the full validation, for 3 frameworks x 300 configurations.

    .venv/bin/python benchmarks/fit_validate.py

Target: (c) + (d) together <= 30 s (CPU time) on 2 cores. The timings are synthetic but shaped like
real ones (the generic model's terms plus 3 % noise), so the fits do real work.
"""

from __future__ import annotations

import itertools
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from common import best_of, report

from dlperf import config as cfg
from dlperf import stages
from dlperf.measurements import tables

FRAMEWORKS = ("pytorch", "tensorflow", "mxnet")


def synthetic_timings(seed: int = 0) -> pd.DataFrame:
    """300 configurations per framework (5 layouts x 6 batches x 10 data sizes), one run each."""
    rng = np.random.default_rng(seed)
    rows = []
    layouts = [(1, 1), (1, 2), (1, 4), (2, 8), (4, 16)]
    for f, framework in enumerate(FRAMEWORKS):
        for (nodes, procs), batch, data in itertools.product(
            layouts, [8, 16, 32, 64, 128, 256], [4096 * i for i in range(1, 11)]
        ):
            iters = int(np.ceil(data / (procs * batch)))
            t_iter = (0.004 + 0.001 * f) + 3e-4 * batch**0.95 + 0.01 * (procs - 1) / procs
            t_iter += 0.002 * np.ceil(np.log2(procs)) + 0.02 * (nodes > 1) * (procs - 1) / procs
            epoch = (0.5 + iters * t_iter) * (1 + 0.03 * rng.standard_normal())
            rows.append(
                {
                    "framework": framework,
                    "network": "lenet",
                    "device": "cuda",
                    "nodes": nodes,
                    "procs": procs,
                    "batch_size": batch,
                    "data_size": data,
                    "rep": 0,
                    "iters_per_epoch": iters,
                    "epoch_time_s": epoch,
                    "samples_per_s": data / epoch,
                }
            )
    return pd.DataFrame(rows)


def protocols_for_sweep(defaults: dict) -> dict:
    """Every within-network protocol this sweep supports, set as in the default config.

    The default config leaves out loo_procs (its sweep has 2 worker counts) and sets its
    extrapolation thresholds for its own grid; here, with 5 worker counts and 6 batch sizes,
    every protocol runs, and each extrapolation holds out the largest level, as the defaults
    do on theirs."""
    return {
        "kfold": defaults.get("kfold", {"k": 5}),
        "loo_batch": {},
        "loo_procs": {},
        "extrapolation_procs": {},
        "extrapolation_batch": {},
    }


def main() -> int:
    defaults = cfg.validated(cfg.with_minimal_sweep({}))
    models, validation, seed = defaults["models"], defaults["validation"], defaults["seed"]
    protocols = protocols_for_sweep(validation["protocols"])
    with tempfile.TemporaryDirectory(prefix="dlperf-fit-") as tmp:
        root = Path(tmp)
        timings = root / "timings.csv"
        tables.write_csv(synthetic_timings(), timings)

        def fit_all():
            for framework in FRAMEWORKS:
                stages.fit(timings, framework, models, seed, root / f"{framework}.json")

        def validate_all():
            for framework in FRAMEWORKS:
                stages.validate(
                    timings,
                    framework,
                    models,
                    protocols,
                    seed,
                    root / f"{framework}.csv",
                    root / f"{framework}.summary.csv",
                    n_boot=validation["bootstrap"],
                )

        fit = best_of(fit_all, repeats=1)
        validate = best_of(validate_all, repeats=1)
    print(f"models: {', '.join(models)}; protocols: {', '.join(protocols)}")
    report("(c) fit every model, 3 frameworks x 300 configs", fit.cpu_s, "s", wall=fit.wall_s)
    report(
        "(d) full validation, 3 frameworks x 300 configs", validate.cpu_s, "s", wall=validate.wall_s
    )
    ok = report(
        "(c) + (d)", fit.cpu_s + validate.cpu_s, "s", target=30, wall=fit.wall_s + validate.wall_s
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
