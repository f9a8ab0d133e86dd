"""The published reference table and datasheet peaks shipped as package data, and a measured
rate put beside them (dlperf.bench.references)."""

from __future__ import annotations

import pytest

from dlperf.bench import references as ref
from dlperf.bench.spec import NETWORKS, PRECISIONS, flops_per_sample

FAMILIES = {"V100", "A100", "H100", "H200"}


def test_every_reference_names_its_source_gpu_and_a_precision_dlperf_runs():
    rows = ref.references()
    assert len(rows) >= 15
    for row in rows:
        assert row.network in {*NETWORKS, "bert_large"}
        assert row.gpu in FAMILIES and row.precision in PRECISIONS
        assert row.samples_per_s > 0 and row.source and row.how
    # ResNet-50 at 224 on every GPU family, in the float32 math and in mixed precision.
    for gpu in FAMILIES:
        published = {r.precision for r in rows if (r.network, r.gpu) == ("resnet50", gpu)}
        assert "amp_fp16" in published and published & {"fp32", "tf32"}
    # No TF32 before Ampere: a V100's "FP32" is strict.
    assert {r.precision for r in rows if r.gpu == "V100"} == {"fp32", "amp_fp16"}


def test_every_gpu_has_a_datasheet_peak_for_its_float32_math_and_fp16():
    for gpu in FAMILIES:
        assert ref.peak_for(gpu, "fp32").tflops < ref.peak_for(gpu, "amp_fp16").tflops
    assert ref.peak_for("A100", "tf32").tflops == 156
    assert ref.peak_for("V100", "tf32") is None  # no TF32 units
    assert ref.peak_for("V100", "bf16").precision == "amp_fp16"


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("NVIDIA H200", "H200"),
        ("NVIDIA H100 80GB HBM3", "H100"),
        ("NVIDIA A100-SXM4-80GB", "A100"),
        ("Tesla V100-SXM2-16GB", "V100"),
        ("NVIDIA GeForce RTX 3090", None),
        ("", None),
    ],
)
def test_gpu_families_from_nvml_names(name, family):
    assert ref.gpu_family(name) == family


def test_model_flops_utilisation_counts_three_forward_passes():
    flops = ref.training_flops("resnet50", 224, 128)
    assert flops == 3 * flops_per_sample("resnet50", 224)
    assert 7.5e9 < flops / 3 < 8.5e9  # ResNet-50 at 224: about 4.1 G multiply-adds forward
    peak = ref.peak_for("H200", "amp_fp16")
    assert ref.model_flops_utilisation(1000.0, flops, peak) == pytest.approx(
        1000.0 * flops / 989.4e12
    )


def test_a_measured_rate_stands_beside_the_references_for_its_gpu_and_precision():
    lines = ref.beside_references("resnet50", 224, 128, "NVIDIA H200", "amp_fp16", 3079.0)
    assert lines[0].startswith("resnet50@224 amp_fp16 on H200: 3,079 samples/s per GPU; MFU")
    assert any(line.strip().startswith("1.00x pytorch 3,079") for line in lines[1:])
    bert = ref.beside_references("bert_base", 224, 128, "NVIDIA H200", "amp_fp16", 1450.0)
    assert "no published H200 amp_fp16 figure for bert_base at 128" in bert[1]
    cpu = ref.beside_references("resnet18", 224, 128, "", "bf16", 50.0)
    assert cpu == ["resnet18 bf16: no reference for this device (CPU)"]
