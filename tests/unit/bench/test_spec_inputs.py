"""Input sizes, the transformers, precision and accumulation in the analytic network table and
the run configuration."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dlperf import config as cfg
from dlperf.bench.archs import layers
from dlperf.bench.count_params import network_sizes
from dlperf.bench.datasets import masked_count, synthetic_batches
from dlperf.bench.spec import (
    NETWORKS,
    SUPPORTED_PRECISIONS,
    RunConfig,
    flops_per_sample,
    param_count,
    run_features,
)

BASE = dict(framework="pytorch", network="lenet", device="cpu", nodes=1, procs=2)
BASE.update(batch_size=8, data_size=100, rep=0)


@pytest.mark.parametrize(("network", "size"), network_sizes())
def test_every_network_at_every_input_size_has_parameters_and_flops(network, size):
    assert param_count(network, size) > 0
    assert flops_per_sample(network, size) > param_count(network, size)


def test_imagenet_resnets_match_torchvision():
    # torchvision's resnet18 / resnet50 (ImageNet stem, 1000 classes).
    assert param_count("resnet18", 224) == 11_689_512
    assert param_count("resnet50", 224) == 25_557_032
    macs = sum(layer.flops // 2 for layer in layers("resnet50", 224) if layer.kind == "conv")
    assert round(macs / 1e9, 2) == 4.09  # the usual "4.1 GFLOPs" (multiply-adds) of ResNet-50
    stem = layers("resnet50", 224)[:4]
    assert [layer.kind for layer in stem] == ["conv", "bn", "relu", "maxpool"]
    assert stem[-1].out_shape == (64, 56, 56)


def test_bert_counts_match_the_published_models():
    # Hugging Face BertForMaskedLM (bert-base-uncased: no pooler, decoder tied to the
    # embedding) and BERT-Tiny (L=2, H=128) with the same head.
    assert param_count("bert_base") == 109_514_298
    assert param_count("bert_tiny") == 4_416_698


def test_bert_flops_grow_with_the_sequence_and_parameters_do_not():
    assert param_count("bert_base", seq_len=512) == param_count("bert_base", seq_len=128)
    short, long = (
        flops_per_sample("bert_base", seq_len=128),
        flops_per_sample("bert_base", seq_len=512),
    )
    # Dense layers are linear in the tokens, attention quadratic: more than 4x per sample.
    assert long > 4 * short
    # About 2 FLOPs per parameter per token for the dense part (embeddings are lookups).
    assert 2 * 85e6 * 128 < short < 2 * 110e6 * 128 * 1.2


def test_run_features_follow_the_input_size():
    features = run_features(RunConfig(**{**BASE, "network": "resnet50", "image_size": 224}))
    assert features == {
        "param_count": 25_557_032,
        "flops_per_sample": flops_per_sample("resnet50", 224),
    }


def test_token_batches_mask_a_fixed_share_of_every_sample():
    config = RunConfig(**{**BASE, "network": "bert_tiny", "seq_len": 40})
    tokens, labels, weights = synthetic_batches(config, rank=0)[0]
    assert tokens.shape == labels.shape == weights.shape == (8, 40)
    assert np.allclose(weights.sum(axis=1), 1.0)
    masked = weights > 0
    assert masked_count(40) == 6
    assert (masked.sum(axis=1) == 6).all()
    assert (tokens[masked] == 103).all() and (tokens[~masked] == labels[~masked]).all()


def test_imagenet_batches_have_imagenet_shape_and_classes():
    images, labels = synthetic_batches(RunConfig(**{**BASE, "image_size": 224}), rank=1)[0]
    assert images.shape == (8, 3, 224, 224) and labels.max() < 1000


def test_accumulation_counts_micro_batches_in_whole_optimizer_steps():
    assert RunConfig(**BASE).iters_per_epoch == 7  # ceil(100 / 16)
    assert RunConfig(**{**BASE, "grad_accum_steps": 4}).iters_per_epoch == 8  # 2 steps of 4
    with pytest.raises(ValueError, match="grad_accum_steps must be at least 1"):
        RunConfig(**{**BASE, "grad_accum_steps": 0})


@pytest.mark.parametrize(("framework", "device"), sorted(SUPPORTED_PRECISIONS))
def test_a_precision_a_framework_cannot_run_is_refused_naming_it(framework, device):
    for precision in ("fp32", "amp_fp16", "bf16"):
        settings = {**BASE, "framework": framework, "device": device, "precision": precision}
        if precision in SUPPORTED_PRECISIONS[framework, device]:
            assert RunConfig(**settings).precision == precision
        else:
            with pytest.raises(ValueError, match=f"{framework} cannot train in {precision}"):
                RunConfig(**settings)


def test_the_workflow_config_refuses_an_unsupported_precision_before_any_run():
    sweep = {"batch_sizes": [8], "data_sizes": [64], "precision": "amp_fp16"}
    with pytest.raises(cfg.ConfigError, match="pytorch cannot train in amp_fp16 on cpu"):
        cfg.validated(sweep)
    assert cfg.validated({**sweep, "device": "cuda"})["precision"] == "amp_fp16"


def test_digits_are_refused_for_inputs_they_cannot_fill():
    with pytest.raises(ValueError, match="dataset 'digits' holds 32-pixel images"):
        RunConfig(**{**BASE, "network": "bert_tiny", "dataset": "digits"})
    with pytest.raises(ValueError, match="image_size 64 is not one of"):
        RunConfig(**{**BASE, "image_size": 64})


def test_every_network_has_an_input_kind():
    assert {spec.inputs for spec in NETWORKS.values()} == {"image", "tokens"}


def test_points_keep_accumulation_apart_and_count_micro_batches():
    from dlperf.measurements.points import to_points

    rows = [
        {
            "framework": "pytorch",
            "network": "bert_tiny",
            "device": "cpu",
            "nodes": 1,
            "procs": 2,
            "batch_size": 8,
            "data_size": 100,
            "grad_accum_steps": accum,
            "epoch_time_s": seconds,
            "samples_per_s": 100 / seconds,
        }
        for accum, seconds in [(1, 2.0), (1, 2.2), (4, 1.5), (None, 2.1)]
    ]
    points = to_points(pd.DataFrame(rows))
    assert list(points["grad_accum_steps"]) == [1, 4]  # a row that does not say did not accumulate
    assert list(points["n_reps"]) == [3, 1]
    assert list(points["iters_per_epoch"]) == [7, 8]  # ceil(100/16); 4 * ceil(100/64)
