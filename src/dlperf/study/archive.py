"""One file that holds a whole study, and the check that it is intact and reproducible.

The archive is a gzipped tar with an RO-Crate manifest (``ro-crate-metadata.json``):
every file with its SHA-256 and size, plus the provenance a colleague needs to
reproduce the study (workflow commit, dlperf version, the exact packages of every
framework environment). ``config.json`` is the configuration the study ran with (the
workflow writes it as ``results/config.json``). ``verify`` checks that every member a
study must have is there and matches its checksum; the re-run of fit, validate and report
from the archived timings, compared byte for byte, is :mod:`dlperf.rerun`'s (it calls the
stages, which this module never loads).

Members are streamed in chunks, both ways: a run record of gigabytes never sits in memory.

The manifest only proves that the members agree with it: whoever rewrites a member can rewrite
the manifest too. The archive's own SHA-256, written beside it (``A.tar.gz.sha256``) and
recorded elsewhere (a paper, a lab notebook), is what :func:`check_digest` compares.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import tarfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from dlperf.errors import DlperfError
from dlperf.io import atomic_path, atomic_write_text, dumps_json, read_json
from dlperf.layout import ARCHIVE_CONFIG as CONFIG
from dlperf.layout import ARCHIVE_MANIFEST as MANIFEST
from dlperf.layout import RELATIVE, WORKFLOW, archive_digest_of, inputs_from_outside
from dlperf.study import crate
from dlperf.study.outputs import Produced, not_the_configs

SHA256_HEX = re.compile(r"[0-9a-f]{64}")
CHUNK = 1 << 18  # tarfile copies a read a few times over: a small chunk keeps that small
# The manifest and config.json are read whole; ours are kilobytes, a larger one is not ours.
MAX_SMALL_MEMBER = 64 << 20


class ArchiveError(DlperfError):
    pass


def collect(results: Path) -> list[Path]:
    """The study's files below ``results``, sorted; hidden files (work dirs, temp files) skipped."""
    found = set()
    for pattern in RELATIVE.study_patterns:
        for path in results.glob(pattern):
            relative = path.relative_to(results)
            if path.is_file() and not any(part.startswith(".") for part in relative.parts):
                found.add(path)
    return sorted(found)


def required_members(config: dict, names: Iterable[str]) -> list[str]:
    """The members a study of ``config`` must have that ``names`` lacks, sorted."""
    names = set(names)
    frameworks = list(config.get("frameworks") or [])
    required = {CONFIG, WORKFLOW.validation_summary, WORKFLOW.report}
    if frameworks:
        required |= {WORKFLOW.timings, WORKFLOW.failures}
        required |= {WORKFLOW.env(f) for f in frameworks}
    required |= set(inputs_from_outside(config))
    fitted = {f for n in names if (f := WORKFLOW.framework_of_model(n)) is not None}
    for framework in set(frameworks) | fitted:
        required |= {
            WORKFLOW.model(framework),
            WORKFLOW.validation_points(framework),
            WORKFLOW.validation_summary_of(framework),
        }
    missing = sorted(required - names)
    if not frameworks and not fitted:
        missing.append(f"{WORKFLOW.model('<framework>')} (no model artifact at all)")
    return missing


def _model_names(artifact: dict) -> set[str]:
    groups = list(artifact.get("networks", {}).values())
    if "all_networks" in artifact:
        groups.append(artifact["all_networks"])
    return {name for group in groups for name in group.get("models", {})}


def _check_config_matches(artifacts: list[Path], config: dict) -> None:
    """Refuse a config that is not the one the study's models were fitted with."""
    for path in sorted(artifacts):
        artifact = read_json(path)
        fitted = _model_names(artifact)
        if artifact.get("seed") != config["seed"] or (fitted and fitted != set(config["models"])):
            raise ArchiveError(
                f"{path} was fitted with seed {artifact.get('seed')} and models "
                f"{', '.join(sorted(fitted)) or 'none'}, but the config to archive has seed "
                f"{config['seed']} and models {', '.join(sorted(config['models']))}: archive the "
                f"study with the configuration it ran with ({WORKFLOW.config}, or --config with "
                "the study's config file)"
            )


def _hash_stream(stream: BinaryIO, sink: Callable[[bytes], object] | None = None) -> tuple:
    """(SHA-256, size) of what ``stream`` holds, read in chunks; each chunk also goes to
    ``sink``."""
    digest, size = hashlib.sha256(), 0
    while chunk := stream.read(CHUNK):
        digest.update(chunk)
        size += len(chunk)
        if sink is not None:
            sink(chunk)
    return digest.hexdigest(), size


def _hash_file(path: Path) -> tuple[str, int]:
    with open(path, "rb") as fh:
        return _hash_stream(fh)


def _add(tar: tarfile.TarFile, name: str, size: int, stream: BinaryIO) -> None:
    # Fixed owner, mode and time: the same study gives the same archive bytes.
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = size, 0o644, 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    tar.addfile(info, stream)


def create(results: str | os.PathLike, config: dict, out: str | os.PathLike) -> dict:
    """Write the archive of the study below ``results``, run with ``config``, to ``out``;
    return its manifest."""
    results = Path(results)
    produced = Produced.of(config)
    # Only the study's own files: outputs of runs or frameworks the config dropped are not its.
    sources = {
        WORKFLOW.path(relative): p
        for p in collect(results)
        if produced.holds(relative := p.relative_to(results).as_posix())
    }
    # Measurements made elsewhere and the user's GPU catalogue are part of the study.
    sources |= {member: Path(path) for member, path in inputs_from_outside(config).items()}
    missing = required_members(config, {*sources, CONFIG})
    if missing:
        raise ArchiveError(
            f"{results} is not a finished study: {', '.join(missing)} missing. Run the workflow "
            "to the end (make run, or snakemake with the study's --configfile) before archiving it"
        )
    _check_config_matches(
        [path for name, path in sources.items() if WORKFLOW.framework_of_model(name)], config
    )
    config_bytes = dumps_json(config).encode()
    parts = {name: _hash_file(path) for name, path in sources.items()}
    parts[CONFIG] = (hashlib.sha256(config_bytes).hexdigest(), len(config_bytes))
    manifest = crate.manifest(parts, config)
    manifest_bytes = dumps_json(manifest).encode()
    with atomic_path(out) as tmp:
        with (
            open(tmp, "wb") as raw,
            gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as zipped,
        ):
            with tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar:
                _add(tar, MANIFEST, len(manifest_bytes), io.BytesIO(manifest_bytes))
                for name in sorted(parts):
                    if name == CONFIG:
                        _add(tar, name, len(config_bytes), io.BytesIO(config_bytes))
                        continue
                    with open(sources[name], "rb") as fh:
                        _add(tar, name, parts[name][1], fh)
    return manifest


def write_digest(path: str | os.PathLike) -> str:
    """Write the SHA-256 of the archive at ``path`` beside it (``sha256sum`` format, so
    ``sha256sum -c`` checks it too) and return it."""
    digest = _hash_file(Path(path))[0]
    atomic_write_text(archive_digest_of(path), f"{digest}  {Path(path).name}\n")
    return digest


def parse_digest(text: str) -> str:
    """A SHA-256 as given on the command line (hex, either case), or ArchiveError."""
    digest = text.strip().lower()
    if not SHA256_HEX.fullmatch(digest):
        raise ArchiveError(
            f"{text!r} is not a SHA-256 digest: give the 64 hexadecimal digits `dlperf archive` "
            "printed (also in the .sha256 file it wrote beside the archive)"
        )
    return digest


def check_digest(path: str | os.PathLike, expected: str) -> str | None:
    """The problem with the archive at ``path`` when its SHA-256 is not ``expected`` (a digest
    recorded elsewhere when it was written), else None."""
    expected = parse_digest(expected)
    try:
        actual = _hash_file(Path(path))[0]
    except OSError as exc:
        raise ArchiveError(f"{path} cannot be read ({exc})") from exc
    if actual == expected:
        return None
    return (
        f"its SHA-256 is {actual}, not the recorded {expected}: the archive was "
        "changed or replaced after it was written (its manifest cannot tell, whoever changed "
        "a member can rewrite it too); use the archive the digest was recorded for"
    )


@dataclass
class Verification:
    files: int = 0
    problems: list[str] = field(default_factory=list)
    reproduced: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class _Contents:
    """What one pass over an archive found: each member's checksum and size, the manifest and
    config.json (small, read whole), and the problems seen on the way."""

    digests: dict[str, tuple[str, int]] = field(default_factory=dict)
    manifest: bytes | None = None
    config: bytes | None = None
    problems: list[str] = field(default_factory=list)


def _scan(path: Path, extract_to: Path | None, wanted: Callable[[str], bool]) -> _Contents:
    """Stream every member once: hash it in chunks, and copy the ``wanted`` ones below
    ``extract_to`` (when given)."""
    found = _Contents()
    try:
        # A stream, read once front to back. GzipFile inflates no more than it is asked for
        # (tarfile's own "r|gz" inflates whole compressed blocks: megabytes of zeros at once).
        with gzip.open(path, "rb") as raw, tarfile.open(fileobj=raw, mode="r|") as tar:
            for member in tar:
                if not member.isfile():
                    raise ArchiveError(f"{path}: {member.name} is not a regular file")
                name = Path(member.name)
                if name.is_absolute() or ".." in name.parts:
                    raise ArchiveError(f"{path}: unsafe member path {member.name}")
                if member.name in found.digests:
                    found.problems.append(f"{member.name}: in the archive twice")
                    continue
                stream = tar.extractfile(member)
                if member.name in (MANIFEST, CONFIG):
                    if member.size > MAX_SMALL_MEMBER:
                        found.problems.append(
                            f"{member.name}: {member.size} bytes, too large to be ours"
                        )
                        continue
                    data = stream.read()
                    setattr(found, "manifest" if member.name == MANIFEST else "config", data)
                    stream = io.BytesIO(data)
                if extract_to is not None and wanted(member.name):
                    target = extract_to / member.name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with open(target, "wb") as out:
                        found.digests[member.name] = _hash_stream(stream, out.write)
                else:
                    found.digests[member.name] = _hash_stream(stream)
    except (tarfile.TarError, OSError, EOFError, gzip.BadGzipFile) as exc:
        raise ArchiveError(f"{path} is not a readable dlperf archive ({exc})") from exc
    return found


def _archived_config(data: bytes | None) -> tuple[dict | None, list[str]]:
    """The archived config.json, or the problem with it (an absent one is reported apart)."""
    if data is None:
        return None, []
    try:
        config = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return None, [f"{CONFIG}: not valid JSON ({exc})"]
    if not isinstance(config, dict):
        return None, [f"{CONFIG}: not a configuration (a JSON object)"]
    return config, []


def verify(path: str | os.PathLike) -> Verification:
    """Check that every member a study must have is there and matches the manifest."""
    return check(Path(path)).verification


@dataclass
class Checked:
    """What :func:`check` found: the verification, the manifest's parts (member -> its node)
    and the archived configuration (None when absent or unreadable)."""

    verification: Verification
    parts: dict[str, dict]
    config: dict | None


def check(
    path: Path, extract_to: Path | None = None, wanted: Callable[[str], bool] = lambda name: False
) -> Checked:
    """Check ``path`` as :func:`verify` does, copying the ``wanted`` members below
    ``extract_to`` (when given) on the way: the re-run (dlperf.rerun) reads them there."""
    found = _scan(path, extract_to, wanted)
    if found.manifest is None:
        raise ArchiveError(f"{path} has no {MANIFEST}: it was not written by `dlperf archive`")
    parts, problems = crate.parts(found.manifest)
    result = Verification(files=len(parts), problems=found.problems + problems)
    for name, node in sorted(parts.items()):
        if name not in found.digests:
            result.problems.append(f"{name}: listed in the manifest but missing")
        elif found.digests[name] != (node["sha256"], node["contentSize"]):
            result.problems.append(f"{name}: checksum mismatch (the file was changed)")
    for name in sorted(set(found.digests) - set(parts) - {MANIFEST}):
        result.problems.append(f"{name}: in the archive but not in the manifest")
    # A member the manifest lists is reported above when absent; here, the ones that are
    # in neither: an archive can be consistent and still not hold a whole study.
    listed = set(parts) | set(found.digests)
    if found.config is None and CONFIG not in listed:
        result.problems.append(f"{CONFIG}: missing (the configuration the study ran with)")
    config, problems = _archived_config(found.config)
    result.problems += problems
    if config is not None:
        result.problems += [
            f"{name}: missing (every study has it)" for name in required_members(config, listed)
        ]
        result.problems += not_the_configs(config, listed)
    return Checked(result, parts, config)


def same_bytes(path: Path, node: dict) -> bool:
    """Whether the file at ``path`` has the checksum and size the manifest's ``node`` gives."""
    return _hash_file(path) == (node["sha256"], node["contentSize"])
