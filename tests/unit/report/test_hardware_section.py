"""The report's "Which hardware" section: there when a network was measured on two or more GPU
types, absent otherwise, and it shows what the fit stored."""

from __future__ import annotations

from types import SimpleNamespace

from dlperf.models.artifact import fit_framework
from dlperf.report.hardware_section import which_hardware
from gpupoints import gpu_points


def artifact(gpus) -> dict:
    return fit_framework(gpu_points(gpus), "pytorch", {"usl": {}}, seed=0, refits=2)


def test_the_section_shows_the_answer_across_hardware():
    gpus = ["V100-SXM2-16GB", "A100-SXM4-80GB", "A10"]
    (section,) = which_hardware(SimpleNamespace(artifacts={"pytorch": artifact(gpus)}))
    html = "".join(str(block) for block in section.blocks)
    assert section.title == "Which hardware" and "A10, A100-SXM4-80GB, V100-SXM2-16GB" in html
    assert "powerlaw_hw" in html and "leave-one-GPU-type-out" in html


def test_no_section_without_two_gpu_types():
    one = artifact(["A10"])
    assert which_hardware(SimpleNamespace(artifacts={"pytorch": one})) == []
