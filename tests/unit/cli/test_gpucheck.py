"""The GPU check's plan, and that it needs nothing a bare GPU machine lacks."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd

from dlperf.cli.gpucheck import main, plan, reference_lines


def test_the_gpu_plan_is_imagenet_resnet50_and_bert_base_in_tf32_and_amp():
    one_gpu = plan(dry_run=False, gpus=1, iterations=20)
    assert {(r.network, r.image_size if r.inputs == "image" else r.seq_len) for r in one_gpu} == {
        ("resnet50", 224),
        ("bert_base", 128),
    }
    assert {r.precision for r in one_gpu} == {"tf32", "amp_fp16"}
    assert {r.batch_size for r in one_gpu} == {128, 256}  # batches that fill the device
    assert not any(r.compile or r.cuda_graphs for r in one_gpu)
    assert {r.input for r in one_gpu} == {"device"}
    assert {r.device for r in one_gpu} == {"cuda"} and {r.procs for r in one_gpu} == {1}
    assert all(r.iters_per_epoch == 20 for r in one_gpu)
    assert {r.procs for r in plan(dry_run=False, gpus=8, iterations=20)} == {1, 2}


def test_the_dry_run_plan_runs_on_the_cpu_with_one_and_two_workers():
    runs = plan(dry_run=True, gpus=0, iterations=2)
    assert {r.device for r in runs} == {"cpu"} and {r.precision for r in runs} == {"fp32", "bf16"}
    assert {r.procs for r in runs} == {1, 2} and len(runs) == 16


def test_the_check_imports_none_of_the_workflows_packages():
    code = (
        "import sys, dlperf.cli.gpucheck, dlperf.models\n"
        "print(' '.join(sorted(n for n in ('yaml', 'jsonschema', 'snakemake', 'matplotlib',"
        " 'torch', 'tensorflow', 'mxnet', 'pynvml') if n in sys.modules)))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == ""


def test_options_reach_every_run_of_the_plan():
    runs = plan(False, 1, 20, {"compile": True, "cuda_graphs": True, "input": "host"})
    assert {(r.compile, r.cuda_graphs, r.input) for r in runs} == {(True, True, "host")}


def test_cuda_graphs_without_compile_is_one_line_before_anything_runs(tmp_path, capsys):
    # Found on an H200: it was a ConfigError traceback from inside the plan.
    assert main(["--cuda-graphs", "--dry-run", "--out", str(tmp_path / "check")]) == 2
    assert capsys.readouterr().err == (
        "gpu-check: error: --cuda-graphs runs through torch.compile; add --compile\n"
    )
    assert not (tmp_path / "check").exists()


def test_the_fastest_single_gpu_rate_stands_beside_the_references():
    timings = pd.DataFrame(
        {
            "network": ["resnet50"] * 3,
            "precision": ["amp_fp16"] * 3,
            "procs": [1, 1, 2],
            "batch_size": [128, 256, 256],
            "image_size": [224] * 3,
            "seq_len": [128] * 3,
            "gpu_names": ["NVIDIA H100 80GB HBM3"] * 3,
            "samples_per_s": [2500.0, 2795.0, 9000.0],
        }
    )
    lines = reference_lines(timings)
    assert lines[0].startswith("resnet50@224 amp_fp16 on H100: 2,795 samples/s per GPU")
    assert any(line.strip().startswith("1.00x pytorch 2,795") for line in lines)
    assert any(line.strip().startswith("0.40x mxnet 7,007") for line in lines)
