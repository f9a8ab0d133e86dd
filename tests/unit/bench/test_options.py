"""The reference settings each framework declares (dlperf.bench.options): which precision sets
which switch, which options a run may have, and how they reach the worker and the record."""

from __future__ import annotations

import argparse
import itertools

import pytest

from dlperf import config as cfg
from dlperf.bench.harness import batch_source
from dlperf.bench.options import OPTIONS, TF32_OVERRIDE, precision_environment, tf32_allowed
from dlperf.bench.ranks import DistInfo
from dlperf.bench.runner import worker_environment
from dlperf.bench.spec import FRAMEWORKS, PRECISIONS, RunConfig
from dlperf.cli.arguments import add_input_arguments
from dlperf.errors import ConfigError
from dlperf.pipeline import bench_params as remeasure


def run(**changes) -> RunConfig:
    settings = dict(
        framework="pytorch",
        network="lenet",
        device="cpu",
        nodes=1,
        procs=1,
        batch_size=4,
        data_size=16,
        rep=0,
    )
    return RunConfig(**{**settings, **changes})


def test_fp32_is_strict_and_tf32_only_on_a_gpu():
    assert [tf32_allowed(p, "cuda") for p in PRECISIONS] == [False, True, True, True]
    assert not any(tf32_allowed(p, "cpu") for p in PRECISIONS)
    with pytest.raises(ConfigError, match="pytorch cannot train in tf32 on cpu"):
        run(precision="tf32")
    assert run(device="cuda", precision="tf32").precision == "tf32"


def test_every_framework_declares_its_switches_and_fp32_sets_the_library_override():
    assert set(OPTIONS) == set(FRAMEWORKS)
    for framework in FRAMEWORKS:
        assert precision_environment(framework, "fp32") == {TF32_OVERRIDE: "0"}
        assert precision_environment(framework, "tf32") == {}
        assert OPTIONS[framework].strict_fp32 and OPTIONS[framework].compile
    assert OPTIONS["mxnet"].compiled_always and not OPTIONS["pytorch"].compiled_always


def test_the_worker_gets_only_its_precisions_override(tmp_path, monkeypatch):
    monkeypatch.setenv(TF32_OVERRIDE, "0")  # inherited: would make a tf32 run strict
    tf32 = worker_environment(tmp_path, 1, run(device="cuda", precision="tf32"))
    assert TF32_OVERRIDE not in tf32
    monkeypatch.delenv(TF32_OVERRIDE)
    assert worker_environment(tmp_path, 1, run())[TF32_OVERRIDE] == "0"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"framework": "tensorflow", "device": "cuda", "compile": True, "cuda_graphs": True},
            "tensorflow offers no CUDA graphs",
        ),
        ({"framework": "mxnet", "device": "cuda", "cuda_graphs": True}, "mxnet offers no CUDA"),
        ({"cuda_graphs": True, "compile": True}, "cuda_graphs needs device: cuda"),
        ({"device": "cuda", "cuda_graphs": True}, "set compile: true with it"),
        ({"input": "disk"}, "input 'disk' is not one of device, host"),
    ],
)
def test_options_a_framework_cannot_honour_are_refused(changes, message):
    with pytest.raises(ConfigError, match=message):
        run(**changes)


def test_cuda_graphs_run_through_torch_compile_on_a_gpu():
    graphs = run(device="cuda", compile=True, cuda_graphs=True)
    assert graphs.cuda_graphs and graphs.compile
    assert run(framework="tensorflow", compile=True).compile  # XLA is a choice on any device


def test_a_dataset_loader_is_always_host_fed():
    assert run().input_place == "device" and run(input="host").input_place == "host"
    assert run(dataset="digits").input_place == "host"


class CountingBackend:
    def __init__(self) -> None:
        self.prepared = 0

    def prepare_batch(self, *arrays):
        self.prepared += 1
        return arrays


@pytest.mark.parametrize(("place", "prepared"), [("device", 4), ("host", 12)])
def test_device_batches_are_placed_once_and_host_batches_every_step(place, prepared):
    backend = CountingBackend()
    config = run(input=place)
    source = batch_source(backend, config, DistInfo(), None)
    batches = list(itertools.islice(source, 12))
    assert len(batches) == 12 and backend.prepared == prepared


def test_the_config_keys_reach_every_run_and_its_measured_settings():
    config = cfg.validated(
        {"batch_sizes": [8], "data_sizes": [64], "input": "host", "compile": True}
    )
    runs = cfg.run_configs(config)
    assert {(r.input, r.compile, r.cuda_graphs) for r in runs} == {("host", True, False)}
    settings = remeasure.measured_settings(config)
    assert "--input host" in settings and "--compile true" in settings
    assert "--cuda-graphs" not in settings
    default = remeasure.measured_settings(cfg.validated({"batch_sizes": [8], "data_sizes": [64]}))
    assert "--input" not in default and "--compile" not in default


def test_the_config_refuses_cuda_graphs_for_a_framework_without_them():
    with pytest.raises(ConfigError, match="tensorflow offers no CUDA graphs"):
        cfg.validated(
            {
                "frameworks": ["pytorch", "tensorflow"],
                "device": "cuda",
                "compile": True,
                "cuda_graphs": True,
                "batch_sizes": [8],
                "data_sizes": [64],
            }
        )


def test_bench_reads_the_options_as_the_workflow_writes_them():
    parser = argparse.ArgumentParser()
    add_input_arguments(parser)
    args = parser.parse_args(["--compile", "true", "--cuda-graphs", "False", "--input", "host"])
    assert (args.compile, args.cuda_graphs, args.input) == (True, False, "host")
    with pytest.raises(SystemExit):
        parser.parse_args(["--compile", "yes"])
