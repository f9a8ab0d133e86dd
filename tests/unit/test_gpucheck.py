"""The GPU check's plan, and that it needs nothing a bare GPU machine lacks."""

from __future__ import annotations

import subprocess
import sys

from dlperf.cli.gpucheck import plan


def test_the_gpu_plan_is_imagenet_resnet50_and_bert_base_in_fp32_and_amp():
    one_gpu = plan(dry_run=False, gpus=1, iterations=20)
    assert {(r.network, r.image_size if r.inputs == "image" else r.seq_len) for r in one_gpu} == {
        ("resnet50", 224),
        ("bert_base", 128),
    }
    assert {r.precision for r in one_gpu} == {"fp32", "amp_fp16"}
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
