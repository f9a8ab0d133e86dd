"""Shared by the benchmark scripts: timing and the one-line result format."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(fn: Callable[[], object], repeats: int = 3) -> float:
    """The fastest of ``repeats`` wall-clock timings of ``fn()``, in seconds (least disturbed)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def report(name: str, value: float, unit: str, target: float | None = None) -> bool:
    """Print one figure beside its target; True when the target holds (or there is none)."""
    if target is None:
        print(f"{name:<48} {value:10.3f} {unit}")
        return True
    ok = value <= target
    verdict = "ok" if ok else "MISSED"
    print(f"{name:<48} {value:10.3f} {unit}   target <= {target:g} {unit}   {verdict}")
    return ok
