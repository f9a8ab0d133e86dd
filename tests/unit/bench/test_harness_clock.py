"""The harness's clock (dlperf.bench.harness.timed_steps) on backends that only keep a log:
when it synchronises, when it waits for which step, and what it counts as an iteration."""

from __future__ import annotations

import itertools
import time

import pytest

from dlperf.bench.harness import timed_steps


class SyncBackend:
    """A step that has finished when it returns (PyTorch on CPU, TensorFlow)."""

    def __init__(self, step_s: float = 0.0) -> None:
        self.log: list[str] = []
        self.step_s = step_s

    def step(self, batch) -> None:
        self.log.append(f"step {batch}")
        time.sleep(self.step_s)
        return None

    def sync(self) -> None:
        self.log.append("sync")


class AsyncBackend(SyncBackend):
    """A queued step (MXNet, CUDA): ``step`` returns a marker, ``wait`` blocks on it. The
    engine runs steps one after another, each ``step_s`` long, from when it is queued."""

    def __init__(self, step_s: float) -> None:
        super().__init__(step_s)
        self.engine_free_at = 0.0

    def step(self, batch) -> tuple[int, float]:
        self.log.append(f"step {batch}")
        start = max(time.perf_counter(), self.engine_free_at)
        self.engine_free_at = start + self.step_s
        return (batch, self.engine_free_at)

    def wait(self, marker) -> None:
        batch, done_at = marker
        self.log.append(f"wait {batch}")
        time.sleep(max(0.0, done_at - time.perf_counter()))

    def sync(self) -> None:
        self.log.append("sync")
        time.sleep(max(0.0, self.engine_free_at - time.perf_counter()))


def test_a_synchronous_step_is_clocked_after_a_sync():
    backend = SyncBackend()
    timed = timed_steps(backend, itertools.count(), 3)
    assert len(timed) == 3
    # The batch is synchronised before its step (its wait is apart), the step after.
    assert backend.log == [
        "sync",
        "step 0",
        "sync",
        "sync",
        "step 1",
        "sync",
        "sync",
        "step 2",
        "sync",
    ]


def test_an_asynchronous_step_is_clocked_when_the_next_one_is_queued():
    backend = AsyncBackend(step_s=0.0)
    timed = timed_steps(backend, itertools.count(), 3)
    assert len(timed) == 3
    # Never an idle engine: step i+1 is queued before the harness waits for step i, and the
    # last step is drained by a sync.
    assert backend.log == ["sync", "step 0", "step 1", "wait 0", "step 2", "wait 1", "sync"]


@pytest.mark.parametrize("backend_type", [SyncBackend, AsyncBackend])
def test_iteration_times_add_up_to_the_epoch(backend_type):
    step_s = 0.05
    backend = backend_type(step_s=step_s)
    start = time.perf_counter()
    timed = timed_steps(backend, itertools.count(), 5)
    elapsed = time.perf_counter() - start
    total = sum(t for t, _ in timed)
    assert total == pytest.approx(elapsed, abs=2e-3)
    # Each iteration is one step of the (simulated) device, not none, not two. Half a step of
    # slack either way: a sleep that wakes late on a busy machine (10 ms was seen in CI) moves
    # time between neighbouring iterations, never a whole step.
    assert all(0.5 * step_s < t < 1.5 * step_s for t, _ in timed[1:])


def test_fetch_time_is_kept_with_its_own_step():
    def slow_batches():
        for i in itertools.count():
            if i == 1:
                time.sleep(0.1)
            yield i

    timed = timed_steps(AsyncBackend(step_s=0.001), slow_batches(), 3)
    waits = [w for _, w in timed]
    # The others' fetches take microseconds; the bound leaves room for a late wake-up.
    assert waits[1] >= 0.1 and waits[0] < 0.05 and waits[2] < 0.05


def test_no_steps_no_times():
    assert timed_steps(AsyncBackend(step_s=0.001), itertools.count(), 0) == []
