"""The run records and model artifacts of a finished study, from its results directory or from
an archive written by `dlperf archive`.

Only what `dlperf compare` needs is read: every run record (it holds every iteration time) and
the model artifacts. Archive members are read one at a time, so a large archive never sits in
memory whole.
"""

from __future__ import annotations

import json
import os
import tarfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from dlperf.errors import InputFileError
from dlperf.io import read_json
from dlperf.layout import CONFIG, MODELS, RESULTS, RUNS, WORKFLOW, StudyLayout
from dlperf.measurements.records import RunRecord, read_records


@dataclass
class StudyFiles:
    source: str  # what the user named, for messages
    records: list[RunRecord] = field(default_factory=list)
    artifacts: dict[str, dict] = field(default_factory=dict)  # framework -> model artifact


def _results_dir(path: Path) -> Path:
    """The results directory itself, or a checkout holding one."""
    if (path / RUNS).is_dir():
        return path
    if (path / RESULTS / RUNS).is_dir():
        return path / RESULTS
    raise InputFileError(
        f"{path} holds no run records (no {RUNS}/ or {WORKFLOW.runs}/ below it); name a results "
        "directory written by the workflow, or an archive written by `dlperf archive`"
    )


def _own_files(results: Path):
    """Whether a file (relative to ``results``) is the study's own: one its configuration
    (``config.json``, written by the workflow) produces; every file when it has none."""
    from dlperf.study.outputs import Produced

    if not (results / CONFIG).is_file():
        return lambda relative: True
    return Produced.of(study_config(results)).holds


def study_config(results: str | os.PathLike) -> dict:
    """The configuration the study below ``results`` ran with: ``results/config.json``, which
    the workflow writes (rule ``study_config``)."""
    from dlperf import config as cfg

    path = Path(StudyLayout(os.fspath(results)).config)
    if not path.is_file():
        raise InputFileError(
            f"{path} does not exist, so the configuration the study ran with is unknown. "
            f"Write it with the same options as the study: `snakemake {WORKFLOW.config} "
            "--configfile <the study's config>` (a finished `make run` has it), or pass the "
            "study's config file with --config"
        )
    try:
        return cfg.validated(read_json(path))
    except json.JSONDecodeError as exc:
        raise InputFileError(
            f"{path} is not valid JSON ({exc}); write it again with `snakemake {WORKFLOW.config}`"
        ) from None


def _from_directory(path: Path) -> StudyFiles:
    results = _results_dir(path)
    study = StudyFiles(str(path))
    own = _own_files(results)
    record_paths = []
    for record_path in sorted(results.glob(f"{RUNS}/**/*.json")):
        relative = record_path.relative_to(results)
        if any(part.startswith(".") for part in relative.parts) or not own(relative.as_posix()):
            continue  # a run's work directory, or a run the study's configuration dropped
        record_paths.append(record_path)
    study.records.extend(record for _, record in read_records(record_paths))
    for artifact_path in sorted(results.glob(f"{MODELS}/*.json")):
        if not own(artifact_path.relative_to(results).as_posix()):
            continue
        artifact = json.loads(artifact_path.read_text(encoding="utf-8"))
        study.artifacts[_framework_of(artifact, artifact_path)] = artifact
    return study


# The fix for a damaged record in an archive.
DAMAGED = "the archive is damaged (check it with `dlperf verify-archive`)"


def _member_kind(name: str) -> str | None:
    relative = WORKFLOW.relative(name)
    parts = PurePosixPath(relative).parts if relative else ()
    if len(parts) >= 2 and parts[0] == RUNS and name.endswith(".json"):
        return None if any(p.startswith(".") for p in parts) else "record"
    if WORKFLOW.framework_of_model(name) is not None:
        return "artifact"
    return None


def _from_archive(path: Path) -> StudyFiles:
    study = StudyFiles(str(path))
    try:
        with tarfile.open(path, mode="r:gz") as tar:
            for member in tar:  # streamed: one member in memory at a time
                kind = _member_kind(member.name)
                if kind is None or not member.isfile():
                    continue
                data = json.loads(tar.extractfile(member).read())
                if kind == "artifact":
                    study.artifacts[_framework_of(data, f"{path}: {member.name}")] = data
                    continue
                study.records.append(
                    RunRecord.from_dict(data, f"{path}: run record {member.name}", DAMAGED)
                )
    except (tarfile.TarError, EOFError, json.JSONDecodeError) as exc:
        raise InputFileError(
            f"{path} is not a readable dlperf archive ({exc}); check it with "
            "`dlperf verify-archive`"
        ) from exc
    if not study.records:
        raise InputFileError(
            f"{path} holds no run records ({WORKFLOW.runs}/); it is not an archive of a study "
            "measured by dlperf"
        )
    return study


def load_study(path: str | os.PathLike) -> StudyFiles:
    """Run records and model artifacts of the study at ``path`` (directory or .tar.gz)."""
    path = Path(path)
    if not path.exists():
        raise InputFileError(f"{path} does not exist; name a results directory or an archive")
    if path.is_dir():
        return _from_directory(path)
    if path.name.endswith((".tar.gz", ".tgz")):
        return _from_archive(path)
    raise InputFileError(
        f"{path} is neither a directory nor a .tar.gz archive; name a results directory or "
        "an archive written by `dlperf archive`"
    )


def _framework_of(artifact: object, where: object) -> str:
    """The framework a model artifact is of; ArtifactError for a JSON file that is no artifact."""
    from dlperf.models.artifact_check import ArtifactError

    framework = artifact.get("framework") if isinstance(artifact, dict) else None
    if not isinstance(framework, str):
        raise ArtifactError(
            f"{where} is not a model artifact (it names no framework); move it out of the "
            "study's models/, or fit it again with `dlperf fit`"
        )
    return framework
