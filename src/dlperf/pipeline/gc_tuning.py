"""Garbage-collection tuning of the Snakemake process that plans and schedules a sweep."""

from __future__ import annotations

import gc

#: Allocations between two collections of Python's youngest generation in the planning process.
#: With the default (700), planning a 5,000-job sweep collects 1,491 times, 136 of them the
#: middle generation and 10 all objects, each walking job objects that live until the process
#: ends; with 50,000, 358, 33 and 3 times. That was a tenth of its CPU time
#: (benchmarks/plan_sweep.py's sweep on this repository's 2-core machine: 9.3 s against
#: 10.4 s, mean of five plans each) at the same memory (261 MB against 260 MB): almost
#: nothing it allocates is garbage in a cycle.
PLANNING_GC_THRESHOLD = 50_000


def collect_garbage_less_often() -> None:
    """Raise the youngest generation's collection threshold to :data:`PLANNING_GC_THRESHOLD`
    (never lower it); the older generations keep theirs. Jobs run in their own processes and
    are not affected."""
    youngest, older, oldest = gc.get_threshold()
    gc.set_threshold(max(youngest, PLANNING_GC_THRESHOLD), older, oldest)
