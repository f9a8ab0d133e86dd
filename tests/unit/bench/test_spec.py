"""The analytic network table (parameters, FLOPs) and the run configuration."""

from __future__ import annotations

import pytest

from dlperf.bench.spec import (
    NETWORKS,
    RunConfig,
    flops_per_sample,
    layers,
    network_features,
    param_count,
)


def test_every_network_is_in_the_feature_table():
    features = network_features()
    assert set(features) == set(NETWORKS)
    for name, row in features.items():
        assert row["param_count"] == param_count(name) > 0
        assert row["flops_per_sample"] == flops_per_sample(name) > row["param_count"]


def test_mlp_and_lenet_counts_by_hand():
    assert param_count("mlp") == (3072 * 512 + 512) + (512 * 256 + 256) + (256 * 10 + 10)
    conv1 = 3 * 3 * 3 * 32 + 32
    conv2 = 3 * 3 * 32 * 64 + 64
    assert param_count("lenet") == conv1 + conv2 + (4096 * 256 + 256) + (256 * 10 + 10)


def test_resnet_counts_match_the_published_cifar_resnets():
    # The CIFAR ResNets of e.g. kuangliu/pytorch-cifar (10 classes).
    assert param_count("resnet18") == 11_173_962
    assert param_count("resnet50") == 23_520_842


def test_resnet18_convolution_macs_match_the_literature():
    # 555.42 M multiply-adds in the convolutions is the usual figure for CIFAR ResNet-18.
    conv_macs = sum(layer.flops // 2 for layer in layers("resnet18") if layer.kind == "conv")
    assert conv_macs == 555_417_600


def test_lenet_flops_by_hand():
    conv1 = 2 * 27 * 32 * 32 * 32 + 32 * 32 * 32  # multiply-adds + bias
    conv2 = 2 * 288 * 64 * 16 * 16 + 64 * 16 * 16
    relu_pool = 32 * 32 * 32 + 32 * 16 * 16 * 4 + 64 * 16 * 16 + 64 * 8 * 8 * 4
    dense = (2 * 4096 * 256 + 256) + 256 + (2 * 256 * 10 + 10)
    assert flops_per_sample("lenet") == conv1 + conv2 + relu_pool + dense


def test_resnet_shapes_end_in_the_classes():
    for name in ("resnet18", "resnet50"):
        net = layers(name)
        assert net[-1].out_shape == (10,)
        assert net[-2].kind == "avgpool"
        assert net[-2].out_shape == ((512,) if name == "resnet18" else (2048,))


def test_unknown_network_names_the_choices():
    with pytest.raises(ValueError, match="resnet18"):
        param_count("vgg16")


def test_run_config_accepts_digits_and_rejects_unknown_datasets():
    base = dict(
        framework="mxnet",
        network="resnet18",
        device="cpu",
        nodes=1,
        procs=2,
        batch_size=8,
        data_size=100,
        rep=0,
    )
    assert RunConfig(**base, dataset="digits").iters_per_epoch == 7
    with pytest.raises(ValueError, match="dataset 'imagenet' is not one of synthetic, digits"):
        RunConfig(**base, dataset="imagenet")
