"""docs/cluster.md describes the GPU sweep config/gpu.yaml runs: its networks, no other."""

import re
from pathlib import Path

import yaml

from dlperf.bench.spec import NETWORKS

REPO = Path(__file__).resolve().parents[2]


def test_the_gpu_sweep_paragraph_names_the_configs_networks():
    config = yaml.safe_load((REPO / "config" / "gpu.yaml").read_text())
    text = (REPO / "docs" / "cluster.md").read_text()
    paragraph = text[text.index("`config/gpu.yaml`: ") :].split("\n\n", 1)[0]
    named = set(re.findall(r"`(\w+)`", paragraph)) & set(NETWORKS)
    assert named == set(config["networks"]), paragraph


def test_the_gpu_config_sends_site_settings_to_the_overlay_not_the_tracked_profile():
    header = (REPO / "config" / "gpu.yaml").read_text().split("\n\n", 1)[0]
    assert "--profile dlperf-site" in header and "A site overlay" in header
    assert "edit in profiles/slurm/profile.yaml" not in header


def test_the_gpu_sweep_runs_mxnet_the_way_the_docs_say():
    """MXNet's CUDA wheel predates current GPUs: config/gpu.yaml runs it from the container
    image docs/cluster.md names, and the docs give the steps (Apptainer, the image pulled once)."""
    from dlperf import config as cfg
    from dlperf.environments.site import env_kind

    config = cfg.load(REPO / "config" / "gpu.yaml", default=REPO / "config" / "config.yaml")
    kind, image = env_kind(config, "mxnet")
    assert kind == "container"
    text = (REPO / "docs" / "cluster.md").read_text()
    section = text[text.index("### MXNet on GPUs") :].split("\n## ", 1)[0]
    assert f'mxnet: {{container: "{image}"}}' in section
    assert f"apptainer pull /shared/images/mxnet-23.09.sif {image}" in section
    assert "envs/cuda/mxnet.txt" in section  # the wheel, and when it still serves
    for framework in ("pytorch", "tensorflow"):
        assert env_kind(config, framework) == ("requirements", None)
