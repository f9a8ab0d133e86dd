import gzip
import io
import itertools
import tarfile

import pytest

from dlperf import archive, stages
from dlperf.io import atomic_write_json

CONFIG = {
    "frameworks": ["pytorch"],
    "seed": 0,
    "models": {"generic": {"popsize": 8, "maxiter": 60, "lambdas": [0.0]}},
    "validation": {"protocols": {"kfold": {"k": 3}, "loo_batch": {}}, "bootstrap": 50},
}


@pytest.fixture
def study(tmp_path, record_factory):
    """A small finished study: run records, tables, a model and validation results."""
    results = tmp_path / "results"
    records = []
    for procs, batch, data in itertools.product([1, 2], [8, 16, 32], [64, 128]):
        path = results / "runs" / "pytorch" / "mlp" / f"n1_p{procs}_b{batch}_d{data}_r0.json"
        iter_s = 0.002 + 0.0004 * batch + 0.003 * (procs - 1)
        atomic_write_json(path, record_factory(procs=procs, batch=batch, data=data, iter_s=iter_s))
        records.append(path)
    stages.aggregate(
        records, results / "timings.csv", results / "timings.parquet", results / "failures.csv"
    )
    stages.fit(
        results / "timings.csv", "pytorch", CONFIG["models"], 0, results / "models" / "pytorch.json"
    )
    stages.validate(
        results / "timings.csv",
        "pytorch",
        CONFIG["models"],
        CONFIG["validation"]["protocols"],
        0,
        results / "validation" / "pytorch.csv",
        results / "validation" / "pytorch.summary.csv",
        n_boot=50,
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
    assert "results/models/pytorch.json" in names
    assert sum(n.startswith("results/runs/") for n in names) == 12
    result = archive.verify(first)
    assert result.ok and result.files == len(names)


def test_rerun_reproduces_models_and_validation(study, tmp_path):
    path = tmp_path / "a.tar.gz"
    archive.create(study, CONFIG, path)
    result = archive.verify(path, rerun=True)
    assert result.ok, result.problems
    assert "results/models/pytorch.json" in result.reproduced
    assert "results/validation/pytorch.summary.csv" in result.reproduced


def _rewrite(path, change):
    """Copy the archive with ``change(name, data) -> data`` applied to every member."""
    with tarfile.open(path, "r:gz") as tar:
        members = [(m, tar.extractfile(m).read()) for m in tar.getmembers()]
    buffer = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb") as zipped,
        tarfile.open(fileobj=zipped, mode="w") as tar,
    ):
        for info, data in members:
            data = change(info.name, data)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(buffer.getvalue())


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


def test_not_an_archive_and_nothing_to_archive(tmp_path):
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not a tarball")
    with pytest.raises(archive.ArchiveError, match="not a readable dlperf archive"):
        archive.verify(junk)
    with pytest.raises(archive.ArchiveError, match="no timings.csv"):
        archive.create(tmp_path, CONFIG, tmp_path / "x.tar.gz")
    assert not (tmp_path / "x.tar.gz").exists()
