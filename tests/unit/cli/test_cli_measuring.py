"""`dlperf env` and `bench` refuse a bad value before they start anything."""

from __future__ import annotations

from clirun import assert_refused


def test_bench_refuses_before_starting_anything(tmp_path):
    base = ["bench", "--env", str(tmp_path / "env.json"), "--out", str(tmp_path / "r.json")]
    base += ["--batch-size", "8", "--data-size", "64"]
    assert_refused(base + ["--framework", "nosuch", "--network", "mlp"], "--framework", "pytorch")
    assert_refused(base + ["--framework", "pytorch", "--network", "vgg"], "--network", "lenet")
    good = base + ["--framework", "pytorch", "--network", "mlp"]
    assert_refused(good + ["--procs", "3", "--nodes", "2"], "not a multiple")
    assert_refused(good + ["--timeout", "nan"], "--timeout")
    assert not (tmp_path / "r.json").exists()


def test_env_refuses_an_unknown_framework(tmp_path):
    # Its name becomes a directory name: '../x' would build outside the environments' root.
    assert_refused(
        ["env", "--framework", "../x", "--requirements", "envs/pytorch.txt"]
        + ["--root", str(tmp_path), "--out", str(tmp_path / "env.json")],
        "--framework",
        "pytorch",
    )
    assert list(tmp_path.iterdir()) == []
