import gc

import pytest

from dlperf.pipeline import gc_tuning


@pytest.fixture
def restored_gc_threshold():
    before = gc.get_threshold()
    yield before
    gc.set_threshold(*before)


def test_raises_the_youngest_generation_threshold_only(restored_gc_threshold):
    gc.set_threshold(700, 10, 10)
    gc_tuning.collect_garbage_less_often()
    assert gc.get_threshold() == (gc_tuning.PLANNING_GC_THRESHOLD, 10, 10)


def test_never_lowers_a_higher_threshold(restored_gc_threshold):
    gc.set_threshold(10 * gc_tuning.PLANNING_GC_THRESHOLD, 5, 3)
    gc_tuning.collect_garbage_less_often()
    assert gc.get_threshold() == (10 * gc_tuning.PLANNING_GC_THRESHOLD, 5, 3)
