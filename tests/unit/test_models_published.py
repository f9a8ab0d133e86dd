"""Acceptance check on published multi-GPU measurements nobody on this team produced.

Lambda's PyTorch training throughputs (../shared/data, see its README) at 1, 2, 4 and 8 GPUs
with a fixed per-GPU batch: every model is trained on 1-4 GPUs and predicts 8 GPUs
(protocol extrapolation_procs). The data go through the bring-your-own path, as a user's
would. Skipped when the shared data are not present: the project never needs them.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest

from dlperf.external import read_external
from dlperf.models import DEFAULT_MODELS
from dlperf.validate.crossval import cross_validate

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
LAMBDA = DATA / "lambda_pytorch_train_throughput.csv"


def lambda_as_external_csv(path: Path) -> Path:
    """One 'network' per (network, GPU type, host, precision): one scaling series each."""
    raw = pd.read_csv(LAMBDA, comment="#")
    raw = raw[raw["throughput"] > 0].copy()
    raw["series"] = (
        raw["model"]
        + "|"
        + raw["gpu_type"]
        + "|"
        + raw["host_label"].fillna("")
        + "|"
        + raw["precision"]
    )
    # Network names become file names: keep letters, digits, '.', '_' and '-'.
    raw["series"] = raw["series"].str.replace(r"[^A-Za-z0-9._-]", "_", regex=True)
    raw = raw.drop_duplicates(["series", "num_gpus"])
    complete = raw.groupby("series")["num_gpus"].transform("nunique") == 4
    raw = raw[complete]
    # Drop series with physically implausible entries (e.g. 190x speed-up from 1 to 4 GPUs,
    # throughput collapsing at 8): scaling efficiency X(p) / (p X(1)) outside [0.5, 1.1].
    single = raw[raw["num_gpus"] == 1].set_index("series")["throughput"]
    efficiency = raw["throughput"] / (raw["num_gpus"] * raw["series"].map(single))
    plausible = efficiency.groupby(raw["series"]).transform(lambda e: e.between(0.5, 1.1).all())
    raw = raw[plausible]
    pd.DataFrame(
        {
            "framework": "pytorch",
            "network": raw["series"],
            "procs": raw["num_gpus"],
            "batch_size": raw["batch_size_per_gpu_derived"],
            "samples_per_s": raw["throughput"],
        }
    ).to_csv(path, index=False)
    return path


@pytest.mark.slow  # about 20 s: six models on ~140 scaling series
@pytest.mark.skipif(not LAMBDA.exists(), reason="../shared/data is not present")
def test_generic_model_extrapolates_procs_best_on_published_data(tmp_path):
    points = read_external(lambda_as_external_csv(tmp_path / "lambda.csv"))
    assert points["network"].nunique() >= 100
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        predictions, summary = cross_validate(
            points,
            "pytorch",
            {name: {} for name in DEFAULT_MODELS},
            {"extrapolation_procs": {"train_max_procs": 4}},
            seed=0,
            n_boot=0,
        )
    assert (predictions["procs"] == 8).all()
    # Pooled over every series' 8-GPU prediction.
    mape = predictions.groupby("model")["ape"].mean()
    fitted = summary[summary["status"] == "ok"].groupby("model").size()
    series = points["network"].nunique()
    compared = mape[[m for m in mape.index if fitted.get(m, 0) == series]]
    assert "generic" in compared.index
    assert len(compared) >= 4, f"too few baselines fitted every series: {fitted.to_dict()}"
    best_other = compared.drop("generic").min()
    assert compared["generic"] <= best_other + 0.5, compared.to_dict()
    assert compared["generic"] < 4.0, compared.to_dict()
