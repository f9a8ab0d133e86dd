"""The run record (results/runs/.../*.json, written by :mod:`dlperf.bench.runner`) as the
analysis reads it: :class:`RunRecord`, its format version, the check of its structure, and the
one reader every stage and `dlperf compare` use. A record of another format version is refused
with the fix, never half read."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import ClassVar

from dlperf.bench.record import VERSION
from dlperf.errors import DlperfError, InputFileError
from dlperf.layout import RUN_RECORD_NAME_PATTERN
from dlperf.measurements.configuration import CONFIG_COLUMNS
from dlperf.measurements.configuration import key as configuration_key

# The epoch is timed around its iterations: their sum falls short of it by the loop's own
# time (measured: under 0.03 %), never by more than this share plus a clock's granularity.
EPOCH_TOLERANCE = 0.05
EPOCH_SLACK_S = 1e-3


class RecordError(DlperfError):
    pass


STATUSES = ("ok", "failed", "timeout", "oom")
#: A damaged record read from a run's file: how it is made again.
NOT_WHOLE = (
    "it was not written whole by `dlperf bench`. Delete it and re-run the workflow to measure "
    "it again."
)
# Fields of a successful run the table is built from, with what each must be.
OK_NUMBERS = ("epoch_time_s", "samples_per_s")
OK_COUNTS = ("iters_per_epoch", "warmup_iters")


def _is_number(value, positive: bool = False) -> bool:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return ok and (value > 0 if positive else True)


def other_format(record: dict) -> str | None:
    """Why a record of another format version cannot be read (None for this format's)."""
    version = record.get("schema_version", VERSION)
    if version == VERSION:
        return None
    return f"it is of run-record format {version!r}, and this dlperf reads format {VERSION}"


def record_problem(record: object) -> str | None:
    """What is wrong with a run record's structure, or None when the table can use it."""
    if not isinstance(record, dict):
        return "it is not a JSON object"
    if other_format(record):
        return other_format(record)
    missing = [key for key in ("config", "status", "environment") if key not in record]
    if missing:
        return f"it lacks {', '.join(missing)}"
    config = record["config"]
    if not isinstance(config, dict) or not isinstance(record["environment"], dict):
        return "its config or environment is not an object"
    absent = [key for key in CONFIG_COLUMNS if key not in config]
    if absent:
        return f"its config lacks {', '.join(absent)}"
    for key in ("nodes", "procs", "batch_size", "data_size"):
        if not (
            isinstance(config[key], int) and not isinstance(config[key], bool) and config[key] > 0
        ):
            return f"its config has {key}={config[key]!r}, not a positive integer"
    if record["status"] not in STATUSES:
        return f"its status {record['status']!r} is not one of {', '.join(STATUSES)}"
    if record["status"] != "ok":
        return None
    times = record.get("iter_times_s")
    if not isinstance(times, list) or not times:
        return "it has status ok but no iteration times"
    if not all(_is_number(t, positive=True) for t in times):
        return "its iteration times are not all positive numbers"
    for key in OK_NUMBERS:
        if not _is_number(record.get(key), positive=True):
            return f"it has status ok but {key}={record.get(key)!r}"
    for key in OK_COUNTS:
        value = record.get(key)
        if not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
            return f"it has status ok but {key}={value!r}"
    return _timing_mismatch(record)


def _timing_mismatch(record: dict) -> str | None:
    """A successful record whose totals no longer follow from its iteration times (the
    harness times the epoch around exactly those iterations): an edited record."""
    times = record["iter_times_s"]
    if record["iters_per_epoch"] != len(times):
        return f"its iters_per_epoch={record['iters_per_epoch']} but it holds {len(times)} times"
    total, epoch = math.fsum(times), record["epoch_time_s"]
    if abs(epoch - total) > EPOCH_TOLERANCE * total + EPOCH_SLACK_S:
        return (
            f"its epoch_time_s={epoch:g} but its iteration times add up to {total:g} s "
            "(the epoch is timed around them)"
        )
    return None


def _name_mismatch(record: RunRecord, path: Path) -> str | None:
    """A workflow record (runs/<framework>/<network>/n.._p.._b.._d.._r...json) whose
    configuration is not the one its path names."""
    match = RUN_RECORD_NAME_PATTERN.fullmatch(path.name)
    if not match:
        return None
    config = record.config
    # A name without the accumulation suffix is a run without accumulation.
    named = {key: int(value or 1) for key, value in match.groupdict().items()}
    named |= {"framework": path.parent.parent.name, "network": path.parent.name}
    given = {"grad_accum_steps": 1} | config
    differ = [key for key, value in named.items() if given.get(key) != value]
    if differ:
        found = ", ".join(f"{key}={config.get(key)!r}" for key in differ)
        return f"its configuration ({found}) is not the one its file name and folder give"
    return None


# The mappings of a record that read empty where absent or null.
_MAPPINGS = ("network_features", "resources", "noise")


@dataclass(frozen=True)
class RunRecord:
    """One run as its record tells it, checked: the fields the timings table and `dlperf
    compare` read, named once. Build it with :meth:`from_dict`, which refuses a record of
    another format version or a damaged one. The timings and counts are those of a successful
    run (None, or empty, for another status); a mapping the record lacks (or holds null for)
    reads empty."""

    #: The format version this type reads (the record's ``schema_version``).
    VERSION: ClassVar[int] = VERSION

    config: dict  # the run's configuration, as dlperf.bench.spec.RunConfig.to_dict writes it
    status: str  # one of STATUSES
    environment: dict
    error: str | None = None
    iter_times_s: tuple[float, ...] = ()  # every timed iteration, in order
    epoch_time_s: float | None = None
    samples_per_s: float | None = None
    iters_per_epoch: int | None = None
    warmup_iters: int | None = None
    param_count: int | None = None
    setup_s: float | None = None
    compile_s: float | None = None
    ranks: int | None = None
    data_wait_fraction: float | None = None  # share of the timed iterations spent on batches
    network_features: dict = field(default_factory=dict)  # what the network costs per sample
    resources: dict = field(default_factory=dict)  # what the hardware did (peak memory, power)
    noise: dict = field(default_factory=dict)  # what other programs did (foreign_cpu_fraction)

    @classmethod
    def from_dict(cls, record: object, where: str, fix: str = NOT_WHOLE) -> RunRecord:
        """The record read from ``where`` (a path, for messages), checked; RecordError naming
        it, the cause and ``fix`` otherwise."""
        problem = record_problem(record)
        if problem:
            raise RecordError(f"{where} cannot be used: {problem}; {fix}")
        values = {f.name: record.get(f.name) for f in fields(cls)}
        values.update({name: values[name] or {} for name in _MAPPINGS})
        values["iter_times_s"] = tuple(values["iter_times_s"] or ())
        return cls(**values)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def key(self) -> tuple:
        """Its configuration's key (dlperf.measurements.configuration.key)."""
        return configuration_key(self.config)

    @property
    def gpu(self) -> str:
        """The GPU type as NVML names it (the host's first GPU); empty on a CPU run."""
        return (self.environment.get("gpu_names") or [""])[0]

    @property
    def foreign_cpu_fraction(self) -> float | None:
        """The share of the host's CPU other programs used during the timed epoch (None where
        it was not measured); dlperf.measurements.tables.disturbed says what is too much."""
        return self.noise.get("foreign_cpu_fraction")


def read_record(path: str | os.PathLike) -> RunRecord:
    """One run record; a truncated or malformed file is an error naming the file and the fix."""
    try:
        with open(path, encoding="utf-8") as fh:
            record = json.load(fh)
    except FileNotFoundError:
        raise InputFileError(f"run record {path} does not exist; check the path") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RecordError(
            f"run record {path} is not valid JSON ({exc}); it was probably truncated. "
            "Delete it and re-run the workflow to measure that configuration again."
        ) from exc
    if isinstance(record, dict) and other_format(record):
        raise RecordError(
            f"run record {path} cannot be used: {other_format(record)}. Delete it and re-run "
            "the workflow to measure it again with this dlperf."
        )
    run = RunRecord.from_dict(record, f"run record {path}")
    problem = _name_mismatch(run, Path(path))
    if problem:
        raise RecordError(f"run record {path} cannot be used: {problem}; {NOT_WHOLE}")
    return run


def read_records(
    paths: Iterable[str | os.PathLike],
) -> list[tuple[str | os.PathLike, RunRecord]]:
    """(path, record) of every run record of ``paths``; the damaged ones refused together in
    one error (how many, the first few paths, the first one's cause and the fix), not one per
    run."""
    records, damaged = [], []
    for path in paths:
        try:
            records.append((path, read_record(path)))
        except RecordError as exc:
            damaged.append((path, exc))
    if len(damaged) == 1:
        raise damaged[0][1]
    if damaged:
        shown = ", ".join(str(path) for path, _ in damaged[:3])
        more = f" and {len(damaged) - 3} more" if len(damaged) > 3 else ""
        raise RecordError(
            f"{len(damaged)} run records cannot be used ({shown}{more}); delete them and re-run "
            f"the workflow to measure them again. The first: {damaged[0][1]}"
        )
    return records
