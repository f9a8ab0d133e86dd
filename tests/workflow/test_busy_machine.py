"""The workflow stops before fitting when most runs came out disturbed: the fit rule passes
``preflight.max_disturbed_fraction`` to ``dlperf fit`` (tests/unit/measurements/test_preflight.py
shows the stop itself)."""

from __future__ import annotations

import yaml
from snakerun import snakemake


def test_the_fit_rule_passes_the_threshold(workflow_bin, repo, tmp_path):
    path = tmp_path / "config.yaml"
    sweep = {"frameworks": ["pytorch"], "networks": ["mlp"], "procs": [1], "repeats": 1}
    path.write_text(yaml.safe_dump(sweep | {"preflight": {"max_disturbed_fraction": 0.3}}))
    proc = snakemake(workflow_bin, repo, tmp_path, "-n", "-p", configfile=path)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text[-3000:]
    fits = [line for line in text.splitlines() if "dlperf fit " in line]
    assert fits and all("--max-disturbed 0.3 " in line for line in fits), fits
