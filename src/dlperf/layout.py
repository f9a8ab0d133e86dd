"""Where every file of a study lives: each path is named here once, and the workflow rules,
the stages, the archive, ``dlperf compare`` and the retiring of stale outputs take it from here.

A study's directory holds ``results/`` (what it produced) and ``logs/`` (one log per job).
:class:`StudyLayout` joins each name to a root: ``StudyLayout()`` gives the paths the rules
write (``results/timings.csv``), ``StudyLayout("")`` the names relative to the results
directory (``timings.csv``), ``StudyLayout(some_dir)`` the files of the study below
``some_dir``. Paths are POSIX strings: the same names serve as archive members.

Standard library only: the Snakefile imports it as it loads.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import PurePosixPath

#: The results directory, relative to the study's directory.
RESULTS = "results"
#: The jobs' logs, relative to the study's directory.
LOGS = "logs"

# Below the results directory.
RUNS = "runs"
ENVS = "envs"
MODELS = "models"
VALIDATION = "validation"
REPORT = "report"
ADAPTIVE = "adaptive"
HISTORY = "history"
TIMINGS = "timings.csv"
TIMINGS_PARQUET = "timings.parquet"
#: Every framework's validation summary in one table, below :data:`VALIDATION`.
VALIDATION_SUMMARY = "summary.csv"
FAILURES = "failures.csv"
#: The configuration the study ran with (rule ``study_config``).
CONFIG = "config.json"
#: The study's archive (``snakemake archive``).
ARCHIVE = "dlperf-archive.tar.gz"
#: An adaptive sweep's round, below :data:`ADAPTIVE` (``*`` for every round).
ADAPTIVE_ROUND = "round{}.json"

#: A run record, below :data:`RUNS`. ``{accum}`` is empty without gradient accumulation (so
#: every record of a sweep without it keeps its name) and ``_a<k>`` with k micro-batches per
#: optimizer step. image_size, seq_len and precision are the study's, like device: a change
#: re-measures the same records (dlperf.pipeline.bench_params).
RUN_RECORD_NAME = "n{nodes}_p{procs}_b{batch_size}_d{data_size}_r{rep}{accum}.json"
RUN_RECORD = f"{RUNS}/{{framework}}/{{network}}/{RUN_RECORD_NAME}"
#: The same name read back (the aggregate step checks each record against its name).
RUN_RECORD_NAME_PATTERN = re.compile(
    r"n(?P<nodes>\d+)_p(?P<procs>\d+)_b(?P<batch_size>\d+)_d(?P<data_size>\d+)_r(?P<rep>\d+)"
    r"(?:_a(?P<grad_accum_steps>\d+))?\.json"
)
#: The bench rule's wildcards for the fields of :data:`RUN_RECORD` (its own shorter names).
BENCH_WILDCARDS = {
    "framework": "{framework}",
    "network": "{network}",
    "nodes": "{nodes}",
    "procs": "{procs}",
    "batch_size": "{batch}",
    "data_size": "{data}",
    "rep": "{rep}",
    "accum": "{accum}",
}

#: Per framework, below the results directory: what each output group holds for one framework.
PER_FRAMEWORK = {
    MODELS: ("{}.json",),
    VALIDATION: ("{}.csv", "{}.summary.csv"),
}
#: Our own tables: only a study that benchmarks has them.
OWN_TABLES = (TIMINGS, TIMINGS_PARQUET, FAILURES)

#: What an archive holds besides ``results/...``: its manifest, the configuration, the
#: external timings and the user's GPU catalogue (each by its file name).
ARCHIVE_MANIFEST = "ro-crate-metadata.json"
ARCHIVE_CONFIG = CONFIG
ARCHIVE_EXTERNAL = "external"
ARCHIVE_HARDWARE = "hardware"
#: Beside an archive, its own SHA-256 (``sha256sum`` format), to be recorded elsewhere.
ARCHIVE_DIGEST_SUFFIX = ".sha256"


def archive_digest_of(archive: str | os.PathLike) -> str:
    """The file beside ``archive`` that holds the archive's own SHA-256."""
    return f"{os.fspath(archive)}{ARCHIVE_DIGEST_SUFFIX}"


def accumulation_suffix(steps: int) -> str:
    """The ``{accum}`` part of a run record's name for ``steps`` micro-batches per step."""
    return "" if steps == 1 else f"_a{steps}"


def accumulation_from_suffix(suffix: str) -> int:
    """The inverse of :func:`accumulation_suffix` (the bench rule's ``accum`` wildcard)."""
    return int(suffix.removeprefix("_a")) if suffix else 1


def external_member(external: str | os.PathLike) -> str:
    """The archive member of a study's external timings file."""
    return f"{ARCHIVE_EXTERNAL}/{PurePosixPath(os.fspath(external)).name}"


def hardware_member(catalogue: str | os.PathLike) -> str:
    """The archive member of a study's own GPU catalogue (config key ``hardware``)."""
    return f"{ARCHIVE_HARDWARE}/{PurePosixPath(os.fspath(catalogue)).name}"


def inputs_from_outside(config: dict) -> dict[str, str]:
    """The files a study reads from outside its results, by their archive member: without
    them nothing of it reproduces."""
    found = {}
    if config.get("external_timings"):
        found[external_member(config["external_timings"])] = config["external_timings"]
    if config.get("hardware"):
        found[hardware_member(config["hardware"])] = config["hardware"]
    return found


class _Below:
    """A path below the study's root, read as an attribute of :class:`StudyLayout`."""

    def __init__(self, *parts: str) -> None:
        self.parts = parts

    def __get__(self, layout: StudyLayout | None, owner: type | None = None):
        return self if layout is None else layout.path(*self.parts)


@dataclass(frozen=True)
class StudyLayout:
    """Every path of one study, below ``root`` (its results directory)."""

    root: str = RESULTS

    @cached_property
    def _prefix(self) -> str:
        root = os.fspath(self.root)
        return f"{root.rstrip('/')}/" if root else ""

    def path(self, *parts: str) -> str:
        """``parts`` joined below the root."""
        # Joined by hand: the workflow asks for every run record's path while it plans.
        return self._prefix + "/".join(parts)

    def relative(self, path: str) -> str | None:
        """``path`` relative to the root, or None when it is not below it."""
        return path.removeprefix(self._prefix) if path.startswith(self._prefix) else None

    # Benchmarks.
    def run_record(self, **fields) -> str:
        """A run record, from its fields (``accum`` is the suffix, see accumulation_suffix)."""
        return self.path(RUN_RECORD.format(**fields))

    def record_of(self, run) -> str:
        """The run record of a :class:`dlperf.bench.spec.RunConfig`."""
        # The fields as they are (vars), not to_dict's deep copy: the aggregate rule asks this
        # once per job when the workflow is parsed.
        return self.run_record(**vars(run), accum=accumulation_suffix(run.grad_accum_steps))

    @property
    def run_record_wildcards(self) -> str:
        """The bench rule's output: a run record with the rule's wildcards."""
        return self.run_record(**BENCH_WILDCARDS)

    runs = _Below(RUNS)

    def env(self, framework: str) -> str:
        """The framework environment a study used (interpreter and exact packages)."""
        return self.path(ENVS, f"{framework}.json")

    # Tables.
    timings = _Below(TIMINGS)
    timings_parquet = _Below(TIMINGS_PARQUET)
    failures = _Below(FAILURES)

    # Models and validation.
    models = _Below(MODELS)

    def model(self, framework: str) -> str:
        """A framework's model artifact."""
        return self.path(MODELS, PER_FRAMEWORK[MODELS][0].format(framework))

    def framework_of_model(self, path: str) -> str | None:
        """The framework whose model artifact ``path`` is, or None for any other path."""
        relative = self.relative(path)
        parts = PurePosixPath(relative).parts if relative else ()
        if len(parts) == 2 and parts[0] == MODELS and parts[1].endswith(".json"):
            return parts[1].removesuffix(".json")
        return None

    validation = _Below(VALIDATION)

    def validation_points(self, framework: str) -> str:
        """Held-out predictions of every model of ``framework``, one row per point."""
        return self.path(VALIDATION, PER_FRAMEWORK[VALIDATION][0].format(framework))

    def validation_summary_of(self, framework: str) -> str:
        return self.path(VALIDATION, PER_FRAMEWORK[VALIDATION][1].format(framework))

    #: Every framework's summary in one table.
    validation_summary = _Below(VALIDATION, VALIDATION_SUMMARY)

    # Report.
    report = _Below(REPORT, "index.html")
    figures = _Below(REPORT, "figures")

    # Adaptive sweeps, history, the study's configuration and archive.
    adaptive = _Below(ADAPTIVE)

    def adaptive_round(self, number: int | str) -> str:
        return self.path(ADAPTIVE, ADAPTIVE_ROUND.format(number))

    history = _Below(HISTORY)
    #: Superseded run records (re-measured on purpose), below their runs/ path.
    history_runs = _Below(HISTORY, RUNS)
    #: Outputs the configuration no longer produces, below ``retired/<time>/``.
    retired = _Below(HISTORY, "retired")
    config = _Below(CONFIG)
    #: The runs ``forget_disturbed`` removed to be measured again (a temporary listing).
    disturbed = _Below("disturbed.json")
    archive = _Below(ARCHIVE)
    #: The archive's own SHA-256 beside it, to be recorded elsewhere.
    archive_digest = _Below(archive_digest_of(ARCHIVE))

    @property
    def study_patterns(self) -> tuple[str, ...]:
        """Glob patterns of everything a study consists of (its archive's ``results/...``)."""
        return (
            f"{RUNS}/**/*.json",
            f"{ENVS}/*.json",
            *OWN_TABLES,
            f"{MODELS}/*.json",
            f"{VALIDATION}/*.csv",
            f"{REPORT}/**/*",
            # Superseded records (re-measured on purpose) and an adaptive sweep's rounds: the
            # report shows both, and nothing a user measured is left out of the study.
            f"{HISTORY}/{RUNS}/**/*.json",
            f"{ADAPTIVE}/{ADAPTIVE_ROUND.format('*')}",
        )


#: The paths the workflow writes, relative to the study's directory.
WORKFLOW = StudyLayout()
#: Names relative to the results directory.
RELATIVE = StudyLayout("")


def log(stage: str, *names: str) -> str:
    """A job's log: ``logs/<stage>.log``, or ``logs/<stage>/<names...>.log``."""
    if not names:
        return f"{LOGS}/{stage}.log"
    return "/".join((LOGS, stage, *names[:-1], f"{names[-1]}.log"))


def bench_log() -> str:
    """A benchmark job's log: the run record's path below ``logs/bench/``, with the rule's
    wildcards."""
    record = RUN_RECORD.removeprefix(f"{RUNS}/").format(**BENCH_WILDCARDS)
    return log("bench", record.removesuffix(".json"))
