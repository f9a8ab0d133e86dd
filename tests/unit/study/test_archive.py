import contextlib
import gzip
import hashlib
import io
import itertools
import json
import shutil
import tarfile
import tracemalloc
import warnings

import pytest

from dlperf import config as cfg
from dlperf import stages
from dlperf.cli import main
from dlperf.io import atomic_write_json
from dlperf.report.study import ReportSources
from dlperf.study import archive
from recordmaker import make_record

CONFIG = cfg.validated(
    {
        "frameworks": ["pytorch"],
        "networks": ["mlp"],
        "procs": [1, 2],
        "batch_sizes": [8, 16, 32],
        "data_sizes": [64, 128],
        "repeats": 1,
        "seed": 0,
        "models": {"generic": {"popsize": 8, "maxiter": 60, "lambdas": [0.0]}},
        "validation": {"protocols": {"kfold": {"k": 3}, "loo_batch": {}}, "bootstrap": 50},
    }
)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """A small finished study, as the workflow leaves it: run records, tables, the framework
    environment's lock, a model, validation results, the report and the study's config."""
    results = tmp_path_factory.mktemp("study") / "results"
    records = []
    for procs, batch, data in itertools.product([1, 2], [8, 16, 32], [64, 128]):
        path = results / "runs" / "pytorch" / "mlp" / f"n1_p{procs}_b{batch}_d{data}_r0.json"
        iter_s = 0.002 + 0.0004 * batch + 0.003 * (procs - 1)
        atomic_write_json(path, make_record(procs=procs, batch=batch, data=data, iter_s=iter_s))
        records.append(path)
    stages.aggregate(
        records, results / "timings.csv", results / "timings.parquet", results / "failures.csv"
    )
    # What `dlperf env` writes, trimmed: the lock of the framework environment.
    atomic_write_json(
        results / "envs" / "pytorch.json",
        {"framework": "pytorch", "python_version": "3.11.2", "packages": ["torch==2.13.0"]},
    )
    stages.fit(
        results / "timings.csv", "pytorch", CONFIG["models"], 0, results / "models" / "pytorch.json"
    )
    validation = results / "validation"
    stages.validate(
        results / "timings.csv",
        "pytorch",
        CONFIG["models"],
        CONFIG["validation"]["protocols"],
        0,
        validation / "pytorch.csv",
        validation / "pytorch.summary.csv",
        n_boot=50,
    )
    stages.combine([validation / "pytorch.summary.csv"], validation / "summary.csv")
    sources = ReportSources(
        timings=results / "timings.csv",
        failures=results / "failures.csv",
        models=[results / "models" / "pytorch.json"],
        summary=validation / "summary.csv",
        predictions=[validation / "pytorch.csv"],
        config=CONFIG,
        results_dir=results,  # as the workflow's report rule passes it (--results results)
    )
    stages.report(sources, results / "report" / "index.html", results / "report" / "figures")
    assert (
        main(
            [
                "write-config",
                "--config-json",
                json.dumps(CONFIG),
                "--out",
                str(results / "config.json"),
            ]
        )
        == 0
    )
    (results / "runs" / "pytorch" / "mlp" / ".n1_p1_b8_d64_r0.work").mkdir()  # never archived
    return results


def test_archive_is_deterministic_and_verifies(study, tmp_path):
    first, second = tmp_path / "a.tar.gz", tmp_path / "b.tar.gz"
    manifest = archive.create(study, CONFIG, first)
    archive.create(study, CONFIG, second)
    assert first.read_bytes() == second.read_bytes()
    names = {node["@id"] for node in manifest["@graph"] if node.get("@type") == "File"}
    assert "results/timings.csv" in names and "config.json" in names
    assert "results/models/pytorch.json" in names and "results/envs/pytorch.json" in names
    assert "results/report/index.html" in names
    assert any(n.startswith("results/report/figures/") for n in names)
    assert sum(n.startswith("results/runs/") for n in names) == 12
    result = archive.verify(first)
    assert result.ok and result.files == len(names)


def run(argv):
    """Exit status, stdout and stderr of ``dlperf ARGV``."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_the_study_archives_its_own_config_and_reproduces(study, tmp_path):
    """`dlperf archive` with nothing but --out takes the study's results/config.json (written
    by the workflow), so `verify-archive --rerun` re-runs with the study's own settings."""
    path = tmp_path / "study.tar.gz"
    code, out, err = run(["archive", "--results", str(study), "--out", str(path)])
    assert code == 0, err
    with tarfile.open(path, "r:gz") as tar:
        archived = json.load(tar.extractfile("config.json"))
    assert archived == CONFIG and archived["models"] == CONFIG["models"]
    with warnings.catch_warnings():
        # No RuntimeWarning on the way (issue 37: a re-run printed logs of non-positive numbers).
        warnings.simplefilter("error", RuntimeWarning)
        code, out, err = run(["verify-archive", str(path), "--rerun"])
    assert code == 0, out + err
    assert f"{path}: intact" in out
    for name in (
        "results/models/pytorch.json",
        "results/validation/pytorch.summary.csv",
        "results/report/index.html",
    ):
        assert f"reproduced: {name}" in out


def test_without_the_study_config_archive_refuses(study, tmp_path):
    copy = tmp_path / "results"
    shutil.copytree(study, copy)
    (copy / "config.json").unlink()
    code, out, err = run(["archive", "--results", str(copy), "--out", str(tmp_path / "a.tar.gz")])
    assert code == 2 and err.count("\n") == 1
    assert "config.json does not exist" in err and "snakemake results/config.json" in err
    assert not (tmp_path / "a.tar.gz").exists()


def test_a_config_the_study_did_not_run_with_is_refused(study, tmp_path):
    other = cfg.validated({**CONFIG, "seed": 1, "models": {"generic": {}, "ernest": {}}})
    with pytest.raises(archive.ArchiveError, match="fitted with seed 0 and models generic"):
        archive.create(study, other, tmp_path / "a.tar.gz")
    assert not (tmp_path / "a.tar.gz").exists()


def _rewrite(path, change):
    """Copy the archive with ``change(name, data) -> data`` applied to every member; a member
    whose change is None is left out."""
    with tarfile.open(path, "r:gz") as tar:
        members = [(m, tar.extractfile(m).read()) for m in tar.getmembers()]
    buffer = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb") as zipped,
        tarfile.open(fileobj=zipped, mode="w") as tar,
    ):
        for info, data in members:
            data = change(info.name, data)
            if data is None:
                continue
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(buffer.getvalue())


def _edit_manifest(edit):
    """A ``change`` for ``_rewrite`` that edits the manifest's JSON with ``edit(crate)``."""

    def change(name, data):
        if name != archive.MANIFEST:
            return data
        crate = json.loads(data)
        edit(crate)
        return json.dumps(crate).encode()

    return change


def _drop_from_manifest(member):
    def edit(crate):
        crate["@graph"] = [n for n in crate["@graph"] if n.get("@id") != member]

    return edit


def test_tampering_is_found(study, tmp_path):
    path = tmp_path / "a.tar.gz"
    archive.create(study, CONFIG, path)
    _rewrite(
        path,
        lambda name, data: (
            data.replace(b"pytorch", b"pytorcH") if name.endswith("timings.csv") else data
        ),
    )
    result = archive.verify(path)
    assert not result.ok
    assert result.problems == ["results/timings.csv: checksum mismatch (the file was changed)"]


@pytest.mark.parametrize(
    "member",
    ["config.json", "results/validation/summary.csv", "results/models/pytorch.json"],
)
def test_a_member_every_study_has_is_required(study, tmp_path, member):
    path = tmp_path / "a.tar.gz"
    archive.create(study, CONFIG, path)
    # Removed from the archive only: the manifest still lists it.
    _rewrite(path, lambda name, data: None if name == member else data)
    result = archive.verify(path)
    assert result.problems == [f"{member}: listed in the manifest but missing"]
    # Removed from the manifest too, so every checksum agrees: still not a whole study.
    _rewrite(path, _edit_manifest(_drop_from_manifest(member)))
    result = archive.verify(path)
    assert not result.ok
    assert len(result.problems) == 1 and result.problems[0].startswith(f"{member}: missing")
    code, out, err = run(["verify-archive", str(path)])
    assert code == 1 and "NOT intact" in out and member in err


def _damage_entry(key, value):
    def edit(crate):
        node = crate["@graph"][3]
        if value is None:
            del node[key]
        else:
            node[key] = value

    return edit


@pytest.mark.parametrize(
    "edit, problem",
    [
        (_damage_entry("sha256", None), "ro-crate-metadata.json: @graph[3] ({name}) has no sha256"),
        (
            _damage_entry("sha256", "abc"),
            "ro-crate-metadata.json: @graph[3] ({name}) has a malformed",
        ),
        (
            _damage_entry("contentSize", -1),
            "ro-crate-metadata.json: @graph[3] ({name}) has no valid contentSize",
        ),
        (_damage_entry("@id", None), "ro-crate-metadata.json: @graph[3] has no @id"),
        (lambda crate: crate.pop("@graph"), "ro-crate-metadata.json: has no @graph list"),
    ],
)
def test_a_malformed_manifest_is_named_by_part(study, tmp_path, edit, problem):
    path = tmp_path / "a.tar.gz"
    manifest = archive.create(study, CONFIG, path)
    name = manifest["@graph"][3]["@id"]
    _rewrite(path, _edit_manifest(edit))
    result = archive.verify(path)
    assert not result.ok
    assert any(p.startswith(problem.format(name=name)) for p in result.problems), result.problems


def test_members_are_streamed_in_bounded_memory(study, tmp_path):
    """A member far larger than the chunk size is hashed and archived without being held."""
    copy = tmp_path / "results"
    shutil.copytree(study, copy)
    size = 64 << 20
    # One of the study's records, replaced by a large file (the archive does not parse records).
    big = copy / "runs" / "pytorch" / "mlp" / "n1_p1_b8_d64_r0.json"
    with open(big, "wb") as fh:
        for _ in range(size // (1 << 20)):
            fh.write(b"0123456789abcdef" * (1 << 16))
    path = tmp_path / "a.tar.gz"
    tracemalloc.start()
    try:
        manifest = archive.create(copy, CONFIG, path)
        _, create_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        result = archive.verify(path)
        _, verify_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    entry = next(n for n in manifest["@graph"] if n["@id"] == f"results/{big.relative_to(copy)}")
    assert entry["contentSize"] == size
    assert result.ok, result.problems
    assert create_peak < size / 16 and verify_peak < size / 16, (create_peak, verify_peak)


def test_not_an_archive_and_nothing_to_archive(tmp_path):
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not a tarball")
    with pytest.raises(archive.ArchiveError, match="not a readable dlperf archive"):
        archive.verify(junk)
    with pytest.raises(archive.ArchiveError, match="not a finished study: .*results/timings.csv"):
        archive.create(tmp_path, CONFIG, tmp_path / "x.tar.gz")
    assert not (tmp_path / "x.tar.gz").exists()


def _foreign_outputs(results):
    """What an earlier study in the same directory left: another framework's records, model
    and validation, and a run of a batch size the config no longer sweeps."""
    paths = [
        results / "runs" / "mxnet" / "mlp" / "n1_p1_b8_d64_r0.json",
        results / "runs" / "pytorch" / "mlp" / "n1_p1_b64_d64_r0.json",
        results / "models" / "mxnet.json",
        results / "validation" / "mxnet.csv",
        results / "validation" / "mxnet.summary.csv",
        results / "envs" / "mxnet.json",
    ]
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
    shutil.copyfile(results / "models" / "pytorch.json", results / "models" / "mxnet.json")
    return paths


def test_outputs_the_config_does_not_produce_are_retired_and_left_out(study, tmp_path):
    from dlperf.study.outputs import Produced, retire

    copy = tmp_path / "results"
    shutil.copytree(study, copy)
    foreign = _foreign_outputs(copy)
    path = tmp_path / "a.tar.gz"
    manifest = archive.create(copy, CONFIG, path)
    names = {n["@id"] for n in manifest["@graph"]}
    assert not any("mxnet" in n or "_b64_" in n for n in names)
    assert archive.verify(path).ok

    moved = retire(copy, Produced.of(CONFIG), stamp="t0")
    assert sorted(moved) == sorted(
        copy / "history" / "retired" / "t0" / p.relative_to(copy) for p in foreign
    )
    assert not any(p.exists() for p in foreign)
    assert retire(copy, Produced.of(CONFIG), stamp="t1") == []  # nothing left to retire


def test_verify_refuses_records_that_are_not_the_archived_configs(study, tmp_path, monkeypatch):
    copy = tmp_path / "results"
    shutil.copytree(study, copy)
    _foreign_outputs(copy)
    (copy / "runs" / "pytorch" / "mlp" / "n1_p2_b32_d128_r0.json").unlink()
    path = tmp_path / "a.tar.gz"
    # An archive as dlperf wrote one before it knew a study's own files: everything packed.
    everything = archive.Produced(frozenset(), frozenset(), None)
    monkeypatch.setattr(archive.Produced, "holds", lambda self, relative: True)
    monkeypatch.setattr(archive.Produced, "of", classmethod(lambda cls, config: everything))
    archive.create(copy, CONFIG, path)
    monkeypatch.undo()
    result = archive.verify(path)
    assert not result.ok
    assert (
        "results/runs/mxnet/mlp/n1_p1_b8_d64_r0.json: not an output of the archived "
        "configuration (config.json)" in result.problems
    )
    assert (
        "results/models/mxnet.json: not an output of the archived configuration (config.json)"
        in (result.problems)
    )
    assert (
        "results/runs/pytorch/mlp/n1_p2_b32_d128_r0.json: missing (a run of the archived "
        "configuration)" in result.problems
    )


def test_compare_reads_only_the_study_configurations_own_files(study, tmp_path):
    from dlperf.study.files import load_study

    copy = tmp_path / "results"
    shutil.copytree(study, copy)
    _foreign_outputs(copy)
    atomic_write_json(copy / "config.json", CONFIG)
    files = load_study(copy)
    assert {r.config["framework"] for r in files.records} == {"pytorch"}
    assert len(files.records) == 12 and set(files.artifacts) == {"pytorch"}


def test_a_rewritten_archive_fails_against_the_digest_recorded_elsewhere(study, tmp_path):
    """A member changed and its checksum in the manifest with it passes the manifest check; the
    archive's own SHA-256, printed by `dlperf archive` and recorded elsewhere, catches it."""
    path = tmp_path / "a.tar.gz"
    code, out, err = run(["archive", "--results", str(study), "--out", str(path)])
    assert code == 0, err
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert f"SHA-256 of the archive: {digest}" in out
    assert (tmp_path / "a.tar.gz.sha256").read_text() == f"{digest}  a.tar.gz\n"
    code, out, err = run(["verify-archive", str(path), "--digest", digest.upper()])
    assert code == 0 and "intact" in out and "the recorded one" in out, out + err

    def tamper(name, data):
        return data.replace(b"pytorch", b"pytorcH") if name.endswith("timings.csv") else data

    timings = tamper("timings.csv", (study / "timings.csv").read_bytes())

    def rechecksum(crate):
        node = next(n for n in crate["@graph"] if n.get("@id") == "results/timings.csv")
        node["sha256"] = hashlib.sha256(timings).hexdigest()

    _rewrite(path, tamper)
    _rewrite(path, _edit_manifest(rechecksum))
    assert archive.verify(path).ok  # the manifest alone cannot tell
    code, out, err = run(["verify-archive", str(path), "--digest", digest])
    assert code == 1 and err == "" and out.count("\n") == 1, out + err
    assert f"{path}: NOT intact (its SHA-256 is " in out and f"not the recorded {digest}" in out
    code, out, err = run(["verify-archive", str(path), "--digest", "abc"])
    assert code == 2 and err.count("\n") == 1 and "is not a SHA-256 digest" in err
