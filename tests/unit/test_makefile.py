"""`make run` with a study whose name has a space, a target after a study's config, and a dry run
that announces no report: the Makefile run against stand-ins for dlperf and snakemake that
record their arguments."""

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# Every call's arguments, appended (make run calls dlperf twice: check-config, preflight).
RECORDER = (
    '#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done >> "$(dirname "$0")/{name}.args"\n'
)


@pytest.fixture
def fake_venv(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for name in ("dlperf", "snakemake", "python"):
        tool = venv / "bin" / name
        tool.write_text(RECORDER.format(name=name))
        tool.chmod(0o755)
    (venv / ".dlperf-installed").touch()  # newer than pyproject.toml: no set-up
    return venv


def make_run(venv, study, *variables):
    return subprocess.run(
        ["make", "-s", "run", f"VENV={venv}", f"STUDY={study}", *variables],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_a_study_with_a_space_is_one_argument(fake_venv, tmp_path):
    study = tmp_path / "my study"
    study.mkdir()
    (study / "config.yaml").write_text("procs: [1]\n")
    done = make_run(fake_venv, study)
    assert done.returncode == 0, done.stderr
    args = (fake_venv / "bin" / "snakemake.args").read_text().splitlines()
    assert args[args.index("--directory") + 1] == str(study)
    assert f"--configfile={study / 'config.yaml'}" in args
    checked = (fake_venv / "bin" / "dlperf.args").read_text().splitlines()
    assert checked[checked.index("check-config") + 1] == str(study / "config.yaml")


def test_a_dry_run_announces_no_report(fake_venv, tmp_path):
    study = tmp_path / "s"
    report = study / "results" / "report" / "index.html"
    report.parent.mkdir(parents=True)
    report.write_text("")
    assert "Report: " in make_run(fake_venv, study).stdout
    assert "Report: " not in make_run(fake_venv, study, "SNAKEMAKE_ARGS=-n").stdout
    report.unlink()
    assert "Report: " not in make_run(fake_venv, study).stdout


def test_a_study_whose_every_run_failed_ends_with_a_non_zero_status(fake_venv, tmp_path):
    """make run's last step: dlperf.report.failure_reasons, after the report is announced."""
    from dlperf.measurements import tables

    study = tmp_path / "s"
    results = study / "results"
    (results / "report").mkdir(parents=True)
    (results / "report" / "index.html").write_text("")
    (fake_venv / "bin" / "python").write_text(f'#!/bin/sh\nexec {shutil.which("python3")} "$@"\n')
    pd = pytest.importorskip("pandas")
    pd.DataFrame(columns=tables.TIMING_COLUMNS).to_csv(results / "timings.csv", index=False)
    failed = {"framework": "pytorch", "status": "failed", "error": "nodes=2 needs a cluster"}
    pd.DataFrame([failed]).reindex(columns=tables.FAILURE_COLUMNS).to_csv(
        results / "failures.csv", index=False
    )
    done = make_run(fake_venv, study, f"PYTHONPATH={REPO / 'src'}")
    assert done.returncode == 2  # make's status for a failed step, as the README says
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert "`make run` itself exits with status 2" in readme
    assert "Report: " in done.stdout
    said = done.stderr.strip().splitlines()[-2]  # then make's own "Error 1"
    assert "every benchmark run failed" in said and said.endswith(
        "`make run` exits 2 (make's status for a failed step)"
    )
    assert make_run(fake_venv, study, "SNAKEMAKE_ARGS=-n").returncode == 0
    pd.DataFrame([{"framework": "pytorch"}]).reindex(columns=tables.TIMING_COLUMNS).to_csv(
        results / "timings.csv", index=False
    )
    assert make_run(fake_venv, study, f"PYTHONPATH={REPO / 'src'}").returncode == 0


def test_a_target_after_a_remembered_config_stays_a_target(fake_venv, tmp_path):
    """`make run STUDY=s SNAKEMAKE_ARGS=archive` on a study with its config.yaml: `archive` is a
    target, not a second config file (`--configfile FILE archive` would read it as one)."""
    study = tmp_path / "s"
    study.mkdir()
    (study / "config.yaml").write_text("procs: [1]\n")
    done = make_run(fake_venv, study, "SNAKEMAKE_ARGS=archive")
    assert done.returncode == 0, done.stderr
    args = (fake_venv / "bin" / "snakemake.args").read_text().splitlines()
    assert "--configfile" not in args
    assert args[-1] == "archive"
