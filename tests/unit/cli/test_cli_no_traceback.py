"""Inputs a user gets wrong that once ended in a traceback or in dangerous advice: each is now
refused in one line naming the fix, before any work, and nothing of the user's is touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirun import assert_refused, run

from dlperf import stages

PREDICT = ["--procs", "8", "--batch-size", "32", "--data-size", "1000"]
FIT = ["--framework", "pytorch", "--config-json", '{"models": {"generic": {"maxiter": 5}}}']


def test_a_directory_given_as_the_model_is_refused(study):
    assert_refused(["predict", "--model", str(study["dir"]), *PREDICT], "is a directory")


def test_a_directory_given_as_timings_is_refused(study, tmp_path):
    argv = ["adaptive-replay", "--timings", str(study["dir"]), "--budget", "0.5"]
    assert_refused([*argv, "--out", str(tmp_path / "r")], "is a directory")


def test_an_artifact_missing_its_terms_is_refused_by_field(study, tmp_path):
    artifact = json.loads(open(study["model"]).read())
    del artifact["networks"]["mlp"]["models"]["generic"]["terms"]
    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps(artifact))
    assert_refused(
        ["predict", "--model", str(damaged), *PREDICT], "networks.mlp.models.generic.terms"
    )


@pytest.mark.parametrize(
    ("command", "out", "extra"),
    [
        ("fit", "{file}/m.json", FIT),
        ("validate", "{file}/v", FIT[2:]),
        ("validate", "{file}", FIT[2:]),
        ("adaptive-replay", "{file}/r", ["--budget", "0.5"]),
        ("combine", "{dir}", []),
    ],
)
def test_an_output_that_cannot_be_written_is_refused_before_any_work(
    study, tmp_path, monkeypatch, command, out, extra
):
    def never(*args, **kwargs):
        raise AssertionError("the command started its work")

    for stage in ("fit", "validate", "adaptive_replay", "combine"):
        monkeypatch.setattr(stages, stage, never)
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    path = out.format(file=a_file, dir=tmp_path)
    inputs = [study["timings"]] if command == "combine" else ["--timings", study["timings"]]
    assert_refused([command, *inputs, *extra, "--out", path], "--out")


def test_a_budget_below_one_run_replays_nothing_and_says_so(study, tmp_path):
    argv = ["adaptive-replay", "--timings", study["timings"], "--budget", "0.01"]
    code, err = run([*argv, "--out", str(tmp_path / "r")])
    assert code == 0 and "Traceback" not in err
    assert "(0 runs) is too few" in err
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["runs_used"] == 0 and summary["mape_random"] is None


def test_a_model_file_given_as_the_environment_is_refused_and_left_alone(study, tmp_path):
    before = open(study["model"]).read()
    record = tmp_path / "run.json"
    argv = ["bench", "--env", study["model"], "--framework", "pytorch", "--network", "mlp"]
    argv += ["--procs", "1", "--batch-size", "8", "--data-size", "64", "--out", str(record)]
    err = assert_refused(argv, "not a framework environment description", "dlperf env")
    assert "delete" not in err.lower()
    assert not record.exists() and open(study["model"]).read() == before


def test_ctrl_c_is_one_line_and_exit_130(monkeypatch, tmp_path):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(stages, "combine", interrupted)
    code, err = run(["combine", str(tmp_path / "a.csv"), "--out", str(tmp_path / "b.csv")])
    assert code == 130 and err.count("\n") == 1 and "interrupted" in err, err


def _not_utf8(folder):
    path = folder / "bad.yaml"
    path.write_bytes(b"frameworks: [pytorch]\n# \xff\xfe\n")
    return path


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["check-config", "{tmp}"], ["{tmp} is a directory; name a file in it"]),
        (["plan-sweep", "{tmp}"], ["{tmp} is a directory"]),
        (["check-config", "{bad}"], ["is not UTF-8 text", "save it as UTF-8"]),
    ],
)
def test_a_config_that_is_a_directory_or_not_utf8_is_refused(tmp_path, argv, words):
    bad = _not_utf8(tmp_path)
    fill = {"tmp": tmp_path, "bad": bad}
    assert_refused([a.format(**fill) for a in argv], *(w.format(**fill) for w in words))


def test_aggregate_into_a_folder_that_cannot_be_written_is_refused(tmp_path, monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("the command started its work")

    monkeypatch.setattr(stages, "aggregate", never)
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    ok = str(tmp_path / "f.csv")
    argv = ["aggregate", "--runs-dir", str(tmp_path)]
    assert_refused([*argv, "--timings", f"{a_file}/sub/t.csv", "--failures", ok], "--timings")
    assert_refused([*argv, "--timings", ok, "--failures", f"{a_file}/f.csv"], "--failures")


def test_the_hardware_model_alone_fits(tmp_path):
    """generic_hw has a breakdown but not the generic model's term list: no KeyError 'terms'
    (fit_one on two GPU types; `dlperf fit` keeps each GPU type a series of its own and says in
    one line that no model could be fitted per series)."""
    from dlperf.measurements.external import read_external
    from dlperf.models.artifact import fit_one

    rows = []
    for gpu, slower in (("A100-SXM4-40GB", 1.0), ("V100-SXM2-16GB", 2.0)):
        for procs, batch in ((1, 16), (1, 64), (2, 16), (2, 64), (4, 16), (4, 64)):
            t_iter = slower * (0.003 + 2e-4 * batch + 0.01 * (procs - 1) / procs)
            rows.append(f"pytorch,resnet50,{gpu},fp32,{procs},{batch},{t_iter}")
    timings = tmp_path / "hw.csv"
    timings.write_text(
        "framework,network,gpu,precision,procs,batch_size,iter_time_s\n" + "\n".join(rows) + "\n"
    )
    entry = fit_one("generic_hw", {}, read_external(timings), seed=0, refits=10)
    assert entry["status"] == "ok" and "identifiability" not in entry
    config = tmp_path / "m.yaml"
    config.write_text("models: {generic_hw: {}}\n")
    argv = ["fit", "--timings", str(timings), "--framework", "pytorch", "--config", str(config)]
    code, err = run([*argv, "--out", str(tmp_path / "hw.json")])
    assert code == 1 and "Traceback" not in err and "no model could be fitted" in err


def test_a_model_artifact_given_as_timings_is_named_json(study, tmp_path):
    argv = ["fit", "--timings", study["model"], "--framework", "pytorch"]
    argv += ["--out", str(tmp_path / "m.json")]
    assert_refused(argv, "is JSON (a model artifact or a run record?), not a timings table")


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs a /proc file system")
def test_an_output_where_nothing_can_be_written_is_refused_even_as_root():
    # os.access says yes to root for /proc: the check writes a file there instead.
    assert_refused(["write-config", "--out", "/proc/dlperf-config.json"], "is not writable")
