"""The CLI tests' data: a timings table in the external format and the model artifact
fitted on it by `dlperf fit`, once per session."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from clirun import run

from dlperf.cli import main

MODELS = '{"models": {"generic": {"popsize": 6, "maxiter": 30, "lambdas": [0.0]}}}'


@pytest.fixture(scope="session")
def study(tmp_path_factory):
    """A small timings CSV (external format, one framework) and the artifact fitted on it."""
    path = tmp_path_factory.mktemp("hostile")
    rows = []
    for p, b in itertools.product((1, 2, 4), (16, 32, 64)):
        t_iter = 0.003 + 2e-4 * b + 0.01 * (p - 1) / p
        rows.append(
            {
                "framework": "pytorch",
                "network": "mlp",
                "procs": p,
                "batch_size": b,
                "iter_time_s": t_iter,
            }  # fmt: skip
        )
    pd.DataFrame(rows).to_csv(path / "t.csv", index=False)
    artifact = path / "pytorch.json"
    code, _ = run(
        ["fit", "--timings", str(path / "t.csv"), "--framework", "pytorch"]
        + ["--config-json", MODELS, "--out", str(artifact)]
    )
    assert code == 0 and artifact.exists()
    return {"timings": str(path / "t.csv"), "model": str(artifact), "dir": path}


MODELS_CONFIG = """
batch_sizes: [1]
data_sizes: [1]
models:
  generic: {lambdas: [0.0]}
  usl: {}
  ernest: {}
  extrap: {}
  linreg_sfs: {}
  castello: {}
"""


@pytest.fixture(scope="session")
def workdir(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(0)
    rows = []
    for framework in ("pytorch", "mxnet"):
        for p, b in itertools.product((1, 2, 4, 8), (16, 32, 64)):
            t_iter = 0.003 + 2e-4 * b**0.9 + 0.01 * (p - 1) / p + 0.002 * np.ceil(np.log2(p))
            rows.append(
                {
                    "framework": framework,
                    "network": "resnet18",
                    "procs": p,
                    "batch_size": b,
                    "iter_time_s": t_iter * rng.lognormal(0, 0.01),
                }
            )
    pd.DataFrame(rows).to_csv(path / "ext.csv", index=False)
    (path / "config.yaml").write_text(MODELS_CONFIG)
    assert (
        main(
            [
                "fit",
                "--timings",
                str(path / "ext.csv"),
                "--framework",
                "pytorch",
                "--config",
                str(path / "config.yaml"),
                "--out",
                str(path / "pytorch.json"),
            ]
        )
        == 0
    )
    return path
