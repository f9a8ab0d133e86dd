"""benchmarks/hardware_prior.py: the slopes shipped as prior_hw.yaml, and the intervals of an
answer from one or two GPU types measured, are what Lambda's published table teaches, with its
source."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from benchmarkscripts import load_benchmark
from dlperf.models.hardware_answer import ANSWER_MODELS
from dlperf.models.prior_hw import shipped_prior

ROOT = Path(__file__).resolve().parents[3]
SHARED = ROOT / ".." / "shared" / "data"

prior_script = load_benchmark("hardware_prior")
# The file rounds to DIGITS places: a value that lies at a rounding boundary may round either way
# on another machine (its BLAS sums in another order), one unit of the last place apart.
WRITTEN = 1.5 * 10.0**-prior_script.DIGITS


@pytest.mark.skipif(not SHARED.exists(), reason="../shared/data is not present")
def test_the_shipped_slopes_are_what_the_published_table_teaches():
    learned = prior_script.prior(SHARED)
    shipped = shipped_prior()
    assert shipped["source"] == learned["source"]
    assert shipped["learned_on"] == learned["learned_on"]
    for precision, slopes in learned["slopes"].items():
        assert shipped["slopes"][precision] == pytest.approx(slopes, abs=WRITTEN)
    for entry in ("one_gpu_type", "two_gpu_types"):
        published, taught = shipped[entry], learned[entry]
        assert published["questions"] == taught["questions"]
        assert published["reach"] == pytest.approx(taught["reach"], abs=WRITTEN)
        assert published["radius"] == pytest.approx(taught["radius"], abs=WRITTEN)
    assert shipped["two_gpu_types"]["models"] == sorted(ANSWER_MODELS)


@pytest.mark.skipif(not SHARED.exists(), reason="../shared/data is not present")
def test_the_written_file_reads_back_as_the_prior(tmp_path, monkeypatch):
    target = tmp_path / "prior_hw.yaml"
    monkeypatch.setattr(prior_script, "TARGET", target)
    assert prior_script.main(["--shared", str(SHARED), "--write"]) == 0
    written = yaml.safe_load(target.read_text())
    assert written == prior_script.prior(SHARED)


def test_without_the_table_nothing_is_written(tmp_path, monkeypatch, capsys):
    target = tmp_path / "prior_hw.yaml"
    monkeypatch.setattr(prior_script, "TARGET", target)
    assert prior_script.main(["--shared", str(tmp_path / "absent"), "--write"]) == 1
    assert not target.exists() and "not present" in capsys.readouterr().err
