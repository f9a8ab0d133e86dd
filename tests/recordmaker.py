"""Run records as `dlperf bench` writes them, for tests (tests/ is on the import path: the
conftest.py there is imported from it). Not in conftest.py: several conftest modules exist, and
`from conftest import ...` gets whichever pytest imported first."""

from __future__ import annotations

import itertools
import math

import numpy as np

from dlperf.bench.spec import RunConfig
from dlperf.io import atomic_write_json

#: The configurations of study_records: (procs, batch).
CONFIGS = list(itertools.product((1, 2, 4), (8, 16)))


def make_record(procs=1, batch=8, data=64, rep=0, iter_s=0.01, status="ok", network="mlp"):
    config = RunConfig("pytorch", network, "cpu", 1, procs, batch, data, rep, warmup_iters=2)
    record = {
        "schema_version": 1,
        "config": config.to_dict(),
        "status": status,
        "error": None if status == "ok" else "boom",
        "environment": {"hostname": "h", "framework_version": "2.13.0", "threads_per_worker": 1},
    }
    if status == "ok":
        iters = config.iters_per_epoch
        times = [iter_s * (1 + 0.01 * i) for i in range(iters)]
        record.update(
            warmup_iters=2,
            iter_times_s=times,
            iters_per_epoch=iters,
            epoch_time_s=sum(times),
            samples_per_s=iters * config.global_batch / sum(times),
            param_count=1000,
            ranks=procs,
        )
    return record


def study_records(seed: int, slow_config=None, factor=1.0, rep_sd=0.0, reps=3):
    """Three repetitions of six configurations; iteration times with a few % of noise, each
    repetition's level with ``rep_sd``; ``slow_config`` slowed by ``factor`` ("all": all)."""
    rng = np.random.default_rng(seed)
    records = []
    for (procs, batch), rep in itertools.product(CONFIGS, range(reps)):
        record = make_record(procs=procs, batch=batch, data=512, rep=rep)
        base = 0.002 + 1e-4 * batch + 0.001 * (procs - 1) / procs
        level = base * math.exp(rng.normal(0.0, rep_sd)) if rep_sd else base
        times = level * rng.lognormal(0.0, 0.03, size=len(record["iter_times_s"]))
        if slow_config in ((procs, batch), "all"):
            times = times * factor
        record["iter_times_s"] = times.tolist()
        record["epoch_time_s"] = float(times.sum())
        records.append(record)
    return records


def write_study(root, records):
    """The records below ``root``'s runs/ as the bench rule names them; returns ``root``."""
    for record in records:
        c = record["config"]
        name = f"n{c['nodes']}_p{c['procs']}_b{c['batch_size']}_d{c['data_size']}_r{c['rep']}"
        atomic_write_json(root / "runs" / c["framework"] / c["network"] / f"{name}.json", record)
    return root
