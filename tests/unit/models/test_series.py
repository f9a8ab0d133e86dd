"""A network measured on several GPU types or precisions is one series per GPU type and
precision for the models fitted per network: each GPU type's predictions follow its own
timings, and `predict --gpu` of a measured GPU type answers from its own series."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd

from dlperf.cli import main
from dlperf.hardware import load
from dlperf.models.artifact import fit_framework, series_on, trained_networks
from dlperf.models.prediction import predict_rows
from dlperf.models.series import BASE_NETWORK, as_series

# The A100 computes 3x faster than the V100.
SPEED = {"V100-SXM2-16GB": 1.0, "A100-SXM4-80GB": 3.0}
MODELS = {"generic": {"lambdas": [0.0], "popsize": 8, "maxiter": 60}, "usl": {}}


def truth(gpu: str, p, b, d):
    t_iter = 0.002 + 3e-4 * np.asarray(b) / SPEED[gpu] + 0.004 * (np.asarray(p) - 1) / p
    return np.ceil(np.asarray(d) / (np.asarray(p) * b)) * t_iter


def two_gpus(procs=(1, 2, 4)) -> pd.DataFrame:
    rows = [
        {"framework": "pytorch", "network": "mlp", "device": "cuda", "gpu": gpu,
         "precision": "amp_fp16", "nodes": 1, "procs": p, "batch_size": b, "data_size": d,
         "epoch_time_s": float(truth(gpu, p, b, d))}
        for gpu, p, b, d in itertools.product(SPEED, procs, (16, 32, 64), (6400, 12800))
    ]  # fmt: skip
    return pd.DataFrame(rows)


ASKED = pd.DataFrame({"nodes": 1, "procs": [2, 4], "batch_size": [32, 48], "data_size": 9600})


def test_each_gpu_type_is_predicted_from_its_own_series():
    artifact = fit_framework(as_series(two_gpus()), "pytorch", MODELS, seed=0, refits=5)
    assert trained_networks(artifact) == {
        "mlp": ["mlp (A100-SXM4-80GB, amp_fp16)", "mlp (V100-SXM2-16GB, amp_fp16)"]
    }
    for gpu in SPEED:
        name = series_on(artifact, "mlp", gpu, "amp_fp16", load())
        assert artifact["networks"][name]["series"] == {
            "network": "mlp", "gpu": gpu, "precision": "amp_fp16"
        }  # fmt: skip
        predicted = predict_rows(artifact, name, "answer", ASKED)["epoch_time_s"]
        expected = truth(gpu, ASKED["procs"], ASKED["batch_size"], ASKED["data_size"])
        assert np.abs(predicted / expected - 1).max() < 0.05, gpu
    assert series_on(artifact, "mlp", "A10", "amp_fp16", load()) is None
    assert series_on(artifact, "mlp", "A100-SXM4-80GB", "fp32", load()) is None


def test_pooled_gpu_types_would_miss_both():
    """What the series avoid: the two GPU types fitted as one network."""
    pooled = fit_framework(two_gpus().drop(columns=["gpu"]), "pytorch", MODELS, seed=0, refits=5)
    predicted = predict_rows(pooled, "mlp", "answer", ASKED)["epoch_time_s"]
    misses = [
        np.abs(predicted / truth(g, ASKED["procs"], ASKED["batch_size"], 9600) - 1).max()
        for g in SPEED
    ]
    assert min(misses) > 0.15


def test_one_series_keeps_its_network_name():
    single = two_gpus().query("gpu == 'V100-SXM2-16GB'")
    assert as_series(single) is single
    both = as_series(two_gpus())
    assert set(both[BASE_NETWORK]) == {"mlp"} and both["network"].nunique() == 2
    assert as_series(both) is both  # already series: unchanged


def test_predict_asks_a_measured_gpu_of_its_own_series(tmp_path, capsys):
    external = two_gpus()
    external["gpu"] = external["gpu"].map(lambda g: f"NVIDIA {g}")
    external.to_csv(tmp_path / "t.csv", index=False)
    artifact = tmp_path / "pytorch.json"
    fit = ["fit", "--timings", str(tmp_path / "t.csv"), "--framework", "pytorch"]
    settings = ["--config-json", json.dumps({"models": MODELS})]
    assert main([*fit, *settings, "--out", str(artifact)]) == 0
    capsys.readouterr()
    ask = ["predict", "--model", str(artifact), "--procs", "2", "4", "--batch-size", "32", "48"]
    ask += ["--data-size", "9600", "--precision", "amp_fp16", "--json"]
    for gpu in SPEED:
        assert main([*ask, "--gpu", gpu]) == 0
        said = json.loads(capsys.readouterr().out)
        assert said["network"] == f"mlp (NVIDIA {gpu}, amp_fp16)" and "measured" in said["said"]
        predicted = [row["epoch_time_s"] for row in said["predictions"]]
        expected = truth(gpu, ASKED["procs"], ASKED["batch_size"], 9600)
        assert np.abs(np.array(predicted) / expected - 1).max() < 0.05, gpu
    # Not measured: the answer across hardware.
    assert main([*ask, "--gpu", "H100 80GB HBM3"]) == 0
    assert "not measured" in json.loads(capsys.readouterr().out)["said"]
    # Without --gpu the network is ambiguous: the error names its series.
    assert main(ask) == 2
    err = capsys.readouterr().err
    assert "mlp was measured as several series" in err and "mlp (NVIDIA A100-SXM4-80GB" in err


def test_plan_takes_a_series_by_name(tmp_path, capsys):
    name = "mlp (NVIDIA V100-SXM2-16GB, amp_fp16)"
    external = two_gpus()
    external["gpu"] = external["gpu"].map(lambda g: f"NVIDIA {g}")
    external.to_csv(tmp_path / "t.csv", index=False)
    artifact = tmp_path / "pytorch.json"
    fit = ["fit", "--timings", str(tmp_path / "t.csv"), "--framework", "pytorch"]
    assert main(fit + ["--config-json", '{"models": {"usl": {}}}', "--out", str(artifact)]) == 0
    plan = ["plan", "--model", str(artifact), "--batch-size", "32", "--data-size", "9600"]
    plan += ["--deadline", "1h"]
    assert main(plan) == 2
    assert main([*plan, "--network", name]) == 0
    assert name in capsys.readouterr().out
