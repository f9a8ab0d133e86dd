"""Run records as `dlperf bench` writes them, for tests (tests/ is on the import path: the
conftest.py there is imported from it). Not in conftest.py: several conftest modules exist, and
`from conftest import ...` gets whichever pytest imported first."""

from __future__ import annotations

from dlperf.bench.spec import RunConfig


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
