"""The run record's one type: RunRecord.from_dict checks a record (its format version first)
and reads it."""

import pytest

from dlperf.measurements import records
from dlperf.measurements.configuration import key
from recordmaker import make_record


def test_a_successful_record_reads_as_its_fields():
    raw = make_record(procs=2, batch=8) | {
        "noise": {"foreign_cpu_fraction": 0.2},
        "environment": {"gpu_names": ["NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"]},
    }
    run = records.RunRecord.from_dict(raw, "run record x.json")
    assert run.ok and run.status == "ok" and run.error is None
    assert run.iter_times_s == tuple(raw["iter_times_s"])
    assert run.epoch_time_s == raw["epoch_time_s"] and run.iters_per_epoch == 4
    assert run.key == key(raw["config"]) and run.config["procs"] == 2
    assert run.foreign_cpu_fraction == 0.2 and run.gpu == "NVIDIA H100 80GB HBM3"
    assert run.resources == {} and run.network_features == {}
    assert records.RunRecord.VERSION == raw["schema_version"]


def test_a_failed_record_has_no_timings_and_empty_mappings():
    run = records.RunRecord.from_dict(make_record(status="oom") | {"noise": None}, "x")
    assert not run.ok and run.error == "boom"
    assert run.iter_times_s == () and run.epoch_time_s is None
    assert run.foreign_cpu_fraction is None and run.gpu == ""


@pytest.mark.parametrize(
    ("change", "cause"),
    [
        ({"schema_version": records.VERSION + 1}, "run-record format 2, and this dlperf reads"),
        ({"status": "finished"}, "its status 'finished' is not one of"),
        ({"iter_times_s": []}, "status ok but no iteration times"),
    ],
)
def test_a_record_that_cannot_be_used_is_refused_naming_where_cause_and_fix(change, cause):
    with pytest.raises(records.RecordError) as refused:
        records.RunRecord.from_dict(make_record() | change, "a.tar.gz: run record r.json", "fix it")
    message = str(refused.value)
    assert message.startswith("a.tar.gz: run record r.json cannot be used: ")
    assert cause in message and message.endswith("; fix it")
