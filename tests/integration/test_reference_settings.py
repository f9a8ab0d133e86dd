"""Each framework's reference settings on the CPU (issue 38): every run record carries the
settings block the worker read back from the framework; fp32 sets each framework's strict-FP32
switch (and the TF32 switch really moves PyTorch's three flags); the device-resident and the
host-fed input paths both run and say which they were; compile runs torch.compile, XLA and
MXNet's hybridized graph, with the compile time apart (compile_s). The GPU-only settings
(channels_last, cudnn.benchmark, the fused optimizer, MXNet's NHWC) are declared in
dlperf.bench.options and checked on a GPU by scripts/gpu-check.sh."""

from __future__ import annotations

import json
import statistics

import pytest

from dlperf.bench.options import TF32_OVERRIDE
from dlperf.bench.spec import FRAMEWORKS, param_count

pytestmark = [pytest.mark.framework, pytest.mark.slow]

STRICT = {
    "pytorch": {
        "matmul_precision": "highest",
        "cuda_matmul_allow_tf32": False,
        "cudnn_allow_tf32": False,
        "memory_format": "contiguous (NCHW)",  # channels_last is the GPU's
        "cudnn_benchmark": False,
        "optimizer": "SGD (for-loop)",
    },
    "tensorflow": {
        "tensor_float_32_execution": False,  # TensorFlow's default is True
        "data_format": "channels_last",
        "dtype_policy": "float32",
    },
    "mxnet": {"layout": "NCHW", "compile": "hybridize(static_alloc=True, static_shape=True)"},
}
COMPILED = {
    "pytorch": "torch.compile(mode='default')",
    "tensorflow": "XLA (jit_compile=True)",
    "mxnet": "hybridize(static_alloc=True, static_shape=True)",
}


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_fp32_is_strict_and_the_settings_are_recorded(
    framework_env, run_bench, tmp_path, framework
):
    record = run_bench(framework_env(framework), framework, tmp_path / "run.json")
    assert record["status"] == "ok", record.get("error")
    settings = record["settings"]
    assert settings["input"] == "device" and settings[TF32_OVERRIDE] == "0"
    assert settings["compile"] == (COMPILED["mxnet"] if framework == "mxnet" else None)
    assert settings["cuda_graphs"] is False
    assert {key: settings[key] for key in STRICT[framework]} == STRICT[framework]
    assert record["config"]["precision"] == "fp32" and record["config"]["input"] == "device"


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_host_fed_and_compiled(framework_env, run_bench, tmp_path, framework):
    record = run_bench(
        framework_env(framework),
        framework,
        tmp_path / "run.json",
        input="host",
        compile="true",
        precision="bf16",
        timeout=600,
    )
    assert record["status"] == "ok", record.get("error")
    settings = record["settings"]
    assert settings["input"] == "host" and settings["compile"] == COMPILED[framework]
    assert settings[TF32_OVERRIDE] is None  # only fp32 forbids TF32
    assert len(record["data_wait_s"]) == len(record["iter_times_s"])
    if framework == "pytorch":
        # torch.compile compiles in the first step: reported apart, not in the iterations.
        assert record["first_iter_s"] > max(record["iter_times_s"])
        assert record["compile_s"] > 3 * statistics.median(record["iter_times_s"])


def test_pytorchs_tf32_switch_moves_all_three_flags(framework_env, run_in_env):
    code = (
        "import json; from dlperf.bench.torch_backend import set_float32_math as s; "
        "print(json.dumps([s(True), s(False)]))"
    )
    tf32, strict = json.loads(run_in_env(framework_env("pytorch"), ["-c", code]))
    assert tf32 == {
        "matmul_precision": "high",
        "cuda_matmul_allow_tf32": True,
        "cudnn_allow_tf32": True,
    }
    assert strict == {
        "matmul_precision": "highest",
        "cuda_matmul_allow_tf32": False,
        "cudnn_allow_tf32": False,
    }


def test_mxnets_nhwc_networks_have_the_specs_parameters(framework_env, run_in_env):
    code = (
        "import json; from dlperf.bench import mx_nets as m\n"
        "out = {}\n"
        "for name in ('lenet', 'resnet18', 'resnet50'):\n"
        "    net = m.build_network(name, 224, layout='NHWC'); net.initialize()\n"
        "    out[name] = m.trainable_parameters(net)\n"
        "print(json.dumps(out))"
    )
    counts = json.loads(run_in_env(framework_env("mxnet"), ["-c", code]))
    assert counts == {name: param_count(name, 224) for name in counts}
