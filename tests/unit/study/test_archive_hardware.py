"""A study with its own GPU catalogue (config key ``hardware``) archives that file, and
`verify-archive --rerun` reproduces it from the archive alone, the catalogue's path gone."""

from __future__ import annotations

import json
import tarfile

import pytest

from dlperf import config as cfg
from dlperf import stages
from dlperf.cli import main
from dlperf.report.study import ReportSources
from dlperf.study import archive
from gpupoints import USER_CATALOGUE, gpu_points


@pytest.fixture
def study(tmp_path):
    """External timings of four GPU types, one of them only in the user's catalogue, fitted,
    validated across hardware and reported as the workflow does; then the study's config."""
    catalogue = tmp_path / "mine" / "gpus.yaml"
    catalogue.parent.mkdir()
    catalogue.write_text(USER_CATALOGUE)
    timings = tmp_path / "mine" / "gpus.csv"
    points = gpu_points()
    points["gpu"] = points["gpu"].replace({"A10": "Z9000"})
    points.to_csv(timings, index=False)
    config = cfg.validated(
        {
            "frameworks": [],
            "networks": ["mlp"],
            "procs": [1],
            "batch_sizes": [16],
            "data_sizes": [6400],
            "external_timings": str(timings),
            "hardware": str(catalogue),
            "models": {"loglin": {}},
            "validation": {"protocols": {"cross_hardware": {}}, "bootstrap": 20},
            "seed": 0,
        }
    )
    results = tmp_path / "study" / "results"
    model = results / "models" / "pytorch.json"
    stages.fit(timings, "pytorch", config["models"], 0, model, hardware=str(catalogue))
    validation = results / "validation"
    held_out, summary = validation / "pytorch.csv", validation / "pytorch.summary.csv"
    protocols = config["validation"]["protocols"]
    stages.validate(
        timings, "pytorch", config["models"], protocols, 0, held_out, summary, 20, str(catalogue)
    )
    stages.combine([summary], validation / "summary.csv")
    sources = ReportSources(
        timings=timings,
        failures=None,
        models=[model],
        summary=validation / "summary.csv",
        predictions=[held_out],
        config=config,
        hardware=str(catalogue),
        results_dir=results,
    )
    stages.report(sources, results / "report" / "index.html", results / "report" / "figures")
    config_json = json.dumps(config)
    assert (
        main(["write-config", "--config-json", config_json, "--out", str(results / "config.json")])
        == 0
    )
    return results, config, catalogue


def test_the_catalogue_is_archived_and_the_rerun_needs_nothing_else(study, tmp_path, capsys):
    results, config, catalogue = study
    path = tmp_path / "study.tar.gz"
    archive.create(results, config, path)
    with tarfile.open(path, "r:gz") as tar:
        assert tar.extractfile("hardware/gpus.yaml").read().decode() == USER_CATALOGUE
    catalogue.unlink()  # a colleague's machine: the path the config names does not exist
    assert main(["verify-archive", str(path), "--rerun"]) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    for name in ("results/models/pytorch.json", "results/validation/pytorch.summary.csv"):
        assert f"reproduced: {name}" in out
    assert "reproduced: results/report/index.html" in out


def test_a_study_whose_catalogue_is_gone_is_not_archived(study, tmp_path):
    results, config, catalogue = study
    catalogue.unlink()
    with pytest.raises(FileNotFoundError):
        archive.create(results, config, tmp_path / "study.tar.gz")
