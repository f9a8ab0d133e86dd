"""One file that holds a whole study, and the check that it is intact and reproducible.

The archive is a gzipped tar with an RO-Crate manifest (``ro-crate-metadata.json``):
every file with its SHA-256 and size, plus the provenance a colleague needs to
reproduce the study (workflow commit, dlperf version, the exact packages of every
framework environment). ``verify`` checks the checksums and, optionally, re-runs
fit, validate and report from the archived timings and compares the results byte
for byte.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import platform
import tarfile
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import dlperf
from dlperf.bench.envinfo import git_commit
from dlperf.io import atomic_path, dumps_json

MANIFEST = "ro-crate-metadata.json"
CONFIG = "config.json"
EXTERNAL_DIR = "external"
RO_CRATE_CONTEXT = "https://w3id.org/ro/crate/1.1/context"

# What a study consists of, relative to the results directory.
RESULT_PATTERNS = (
    "runs/**/*.json",
    "envs/*.json",
    "timings.csv",
    "timings.parquet",
    "failures.csv",
    "models/*.json",
    "validation/*.csv",
    "report/*",
)


class ArchiveError(ValueError):
    pass


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def collect(results: Path) -> list[Path]:
    """The study's files below ``results``, sorted; hidden files (work dirs, temp files) skipped."""
    found = set()
    for pattern in RESULT_PATTERNS:
        for path in results.glob(pattern):
            relative = path.relative_to(results)
            if path.is_file() and not any(part.startswith(".") for part in relative.parts):
                found.add(path)
    return sorted(found)


def _manifest(entries: dict[str, bytes], config: dict) -> dict:
    commit = git_commit(Path(__file__).resolve().parent)
    parts = [
        {
            "@id": name,
            "@type": "File",
            "contentSize": len(data),
            "sha256": sha256_bytes(data),
        }
        for name, data in sorted(entries.items())
    ]
    root = {
        "@id": "./",
        "@type": "Dataset",
        "name": "dlperf study",
        "description": "Benchmark run records, timings, performance models, validation and report",
        "hasPart": [{"@id": p["@id"]} for p in parts],
        "frameworks": config.get("frameworks"),
        "seed": config.get("seed"),
        "workflowCommit": commit,
        "dlperfVersion": dlperf.__version__,
        "python": platform.python_version(),
    }
    descriptor = {
        "@id": MANIFEST,
        "@type": "CreativeWork",
        "about": {"@id": "./"},
        "conformsTo": {"@id": "https://w3id.org/ro/crate/1.1"},
    }
    return {"@context": RO_CRATE_CONTEXT, "@graph": [descriptor, root, *parts]}


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    # Fixed owner, mode and time: the same study gives the same archive bytes.
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), 0o644, 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    tar.addfile(info, io.BytesIO(data))


def create(results: str | os.PathLike, config: dict, out: str | os.PathLike) -> dict:
    """Write the archive of the study below ``results`` to ``out``; return its manifest."""
    results = Path(results)
    files = collect(results)
    external = config.get("external_timings")
    if not any(p.name == "timings.csv" for p in files) and not external:
        raise ArchiveError(
            f"{results} holds no timings.csv: run the workflow (make run) before archiving it"
        )
    entries = {f"results/{p.relative_to(results).as_posix()}": p.read_bytes() for p in files}
    if external:
        # Measurements made elsewhere are part of the study: without them nothing reproduces.
        entries[f"{EXTERNAL_DIR}/{Path(external).name}"] = Path(external).read_bytes()
    entries[CONFIG] = dumps_json(config).encode()
    manifest = _manifest(entries, config)
    with atomic_path(out) as tmp:
        with (
            open(tmp, "wb") as raw,
            gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as zipped,
        ):
            with tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar:
                _add(tar, MANIFEST, dumps_json(manifest).encode())
                for name, data in sorted(entries.items()):
                    _add(tar, name, data)
    return manifest


@dataclass
class Verification:
    files: int = 0
    problems: list[str] = field(default_factory=list)
    reproduced: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _read_members(path: Path) -> dict[str, bytes]:
    try:
        with tarfile.open(path, mode="r:gz") as tar:
            members = {}
            for member in tar.getmembers():
                if not member.isfile():
                    raise ArchiveError(f"{path}: {member.name} is not a regular file")
                name = Path(member.name)
                if name.is_absolute() or ".." in name.parts:
                    raise ArchiveError(f"{path}: unsafe member path {member.name}")
                members[member.name] = tar.extractfile(member).read()
            return members
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ArchiveError(f"{path} is not a readable dlperf archive ({exc})") from exc


def _parts(manifest: dict) -> dict[str, dict]:
    return {
        node["@id"]: node
        for node in manifest.get("@graph", [])
        if node.get("@type") == "File" and "sha256" in node
    }


def verify(path: str | os.PathLike, rerun: bool = False) -> Verification:
    """Check every checksum; with ``rerun``, re-run fit/validate/report and compare."""
    path = Path(path)
    members = _read_members(path)
    if MANIFEST not in members:
        raise ArchiveError(f"{path} has no {MANIFEST}: it was not written by `dlperf archive`")
    parts = _parts(json.loads(members[MANIFEST]))
    result = Verification(files=len(parts))
    for name, node in sorted(parts.items()):
        data = members.get(name)
        if data is None:
            result.problems.append(f"{name}: listed in the manifest but missing")
        elif sha256_bytes(data) != node["sha256"] or len(data) != node["contentSize"]:
            result.problems.append(f"{name}: checksum mismatch (the file was changed)")
    for name in sorted(set(members) - set(parts) - {MANIFEST}):
        result.problems.append(f"{name}: in the archive but not in the manifest")
    if rerun and result.ok:
        _rerun_and_compare(members, result)
    return result


def _write_members(members: dict[str, bytes], root: Path, names: Iterable[str]) -> None:
    for name in names:
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(members[name])


def _rerun_and_compare(members: dict[str, bytes], result: Verification) -> None:
    from dlperf import stages

    config = json.loads(members[CONFIG])
    with tempfile.TemporaryDirectory(prefix="dlperf-verify-") as tmp:
        root = Path(tmp)
        own = [n for n in ("results/timings.csv", "results/failures.csv") if n in members]
        external = [n for n in members if n.startswith(f"{EXTERNAL_DIR}/")]
        _write_members(members, root, own + external)
        timings = [root / n for n in own + external if not n.endswith("failures.csv")]
        fresh = root / "fresh"
        frameworks = sorted(
            n.removeprefix("results/models/").removesuffix(".json")
            for n in members
            if n.startswith("results/models/")
        )
        compared = {}
        for framework in frameworks:
            out = fresh / "models" / f"{framework}.json"
            stages.fit(timings, framework, config["models"], config["seed"], out)
            compared[f"results/models/{framework}.json"] = out
        validation = config.get("validation", {})
        for framework in frameworks:
            points = fresh / "validation" / f"{framework}.csv"
            summary = fresh / "validation" / f"{framework}.summary.csv"
            stages.validate(
                timings,
                framework,
                config["models"],
                validation.get("protocols", {}),
                config["seed"],
                points,
                summary,
                n_boot=validation.get("bootstrap", 1000),
            )
            compared[f"results/validation/{framework}.csv"] = points
            compared[f"results/validation/{framework}.summary.csv"] = summary
        # The report, rendered again from the archived tables, models and validation results.
        report_inputs = [
            n for n in members if n.startswith(("results/models/", "results/validation/"))
        ]
        _write_members(members, root, report_inputs)
        if "results/report/index.html" in members:
            failures = root / "results" / "failures.csv"
            html = fresh / "report" / "index.html"
            stages.report(
                timings,
                failures if failures.exists() else None,
                [root / f"results/models/{f}.json" for f in frameworks],
                root / "results" / "validation" / "summary.csv",
                [root / f"results/validation/{f}.csv" for f in frameworks],
                config,
                html,
                fresh / "report" / "figures",
            )
            compared["results/report/index.html"] = html
        for name, fresh_path in sorted(compared.items()):
            if name not in members:
                result.problems.append(f"{name}: not in the archive, cannot compare")
            elif fresh_path.read_bytes() != members[name]:
                result.problems.append(f"{name}: re-running gives different bytes")
            else:
                result.reproduced.append(name)
