"""Acceptance check on published multi-GPU measurements nobody on this team produced.

Lambda's PyTorch training throughputs (../shared/data, see its README) at 1, 2, 4 and 8 GPUs
with a fixed per-GPU batch: every model is trained on 1-4 GPUs and predicts 8 GPUs
(protocol extrapolation_procs), on every series whose scaling is physically plausible
(benchmarks/published.py). The data go through the bring-your-own path, as a user's would.
Skipped when the shared data are not present: the project never needs them.
"""

from __future__ import annotations

import warnings

import pytest

from benchmarkscripts import load_benchmark
from dlperf.config import default_models
from dlperf.validate.crossval import cross_validate

# The models fitted by default: the config schema's default models section.
DEFAULT_MODELS = default_models()

published = load_benchmark("published")
LAMBDA = published.SHARED / published.LAMBDA


@pytest.mark.slow  # about 20 s: six models on ~140 scaling series
@pytest.mark.skipif(not LAMBDA.exists(), reason="../shared/data is not present")
def test_generic_model_extrapolates_procs_best_on_published_data():
    points = published.lambda_series()
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
