"""A sweep whose layout asks for more than the site's maxima (cluster.max_mem_mb) is refused
while the workflow loads, before any job is planned."""

from __future__ import annotations

import yaml
from snakerun import snakemake


def test_a_layout_past_the_site_memory_is_refused_while_the_workflow_loads(
    workflow_bin, repo, tmp_path
):
    path = tmp_path / "config.yaml"
    sweep = {"frameworks": ["pytorch"], "networks": ["mlp"], "procs": [1, 2]}
    path.write_text(yaml.safe_dump(sweep | {"cluster": {"max_mem_mb": 6000}}))
    proc = snakemake(workflow_bin, repo, tmp_path, "-n", configfile=path)
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Job stats" not in text
    assert "8000 MiB a node, more than cluster.max_mem_mb (6000)" in text
