"""Sweeps that cannot run are refused before any job is planned, one line per problem naming
the key, the value and the fix."""

from __future__ import annotations

import pytest

from dlperf import config as cfg
from dlperf.pipeline.sweep_checks import local_machine_problems, short_epochs, visible_gpus


def sweep(**keys):
    return {"batch_sizes": [8], "data_sizes": [64], **keys}


@pytest.mark.parametrize(
    ("keys", "named"),
    [
        ({"data_sizes": [10**15]}, "data_sizes: 1000000000000000 is beyond"),
        ({"batch_sizes": [10**10]}, "batch_sizes: 10000000000 is beyond"),
        ({"procs": [10**7]}, "procs: 10000000 is beyond"),
        ({"procs": [64], "max_procs_per_node": 8}, "procs: 64 workers fit no node count"),
        ({"nodes": [2], "procs": [3]}, "multiple of nodes"),
        ({"nodes": [1], "procs": [10**6]}, "procs: 1000000 workers fit no node count"),
        ({"nodes": [1], "procs": [8192], "max_procs_per_node": 10**5}, "more than any machine"),
        (
            {"report": {"target": {"data_size": 10, "epochs": 1, "deadline": "2 hours"}}},
            "report.target.deadline: cannot read the deadline '2 hours'",
        ),
    ],
)
def test_values_no_run_could_use_are_refused_naming_key_and_fix(keys, named):
    with pytest.raises(cfg.ConfigError) as refused:
        cfg.validated(sweep(**keys))
    message = str(refused.value)
    assert named in message
    for line in message.splitlines():
        assert line.startswith("invalid configuration: ")
        assert any(fix in line for fix in ("give ", "add ", "write "))


def test_a_deadline_with_a_unit_and_pairs_left_out_by_max_procs_per_node_are_accepted():
    config = cfg.validated(
        sweep(
            nodes=[1, 2],
            procs=[1, 16],
            max_procs_per_node=8,
            report={"target": {"data_size": 10, "epochs": 1, "deadline": "2.5h"}},
        )
    )
    assert cfg.run_layouts(config) == [(1, 1), (2, 16)]


def test_a_node_count_that_holds_the_workers_keeps_them_and_drops_the_pair_no_node_holds():
    config = cfg.validated(sweep(nodes=[1, 1000], procs=[10**6]))
    assert cfg.run_layouts(config) == [(1000, 10**6)]


def test_a_local_run_beyond_the_cores_or_without_a_gpu_is_refused():
    cpu = cfg.validated(sweep(procs=[1, 4]))
    assert local_machine_problems(cpu, cores=4, gpus=0) == []
    (problem,) = local_machine_problems(cpu, cores=2, gpus=0)
    assert problem.startswith("procs: 4 workers") and "give procs up to 2" in problem
    cuda = cfg.validated(sweep(procs=[1, 2], device="cuda"))
    (problem,) = local_machine_problems(cuda, cores=64, gpus=0)
    assert problem.startswith("device: cuda") and "use device: cpu" in problem
    (problem,) = local_machine_problems(cuda, cores=64, gpus=1)
    assert "give procs up to 1" in problem
    assert local_machine_problems(cuda, cores=1, gpus=2) == []


def test_a_local_run_on_several_nodes_or_beyond_the_cores_in_threads_is_refused():
    two_nodes = cfg.validated(sweep(nodes=[1, 2], procs=[2]))
    (problem,) = local_machine_problems(two_nodes, cores=4, gpus=0)
    assert problem.startswith("nodes: [2] on a local run") and "give nodes: [1]" in problem
    threads = cfg.validated(sweep(procs=[1], threads_per_proc=64))
    (problem,) = local_machine_problems(threads, cores=2, gpus=0)
    assert problem.startswith("threads_per_proc: 64") and "up to 2" in problem
    assert local_machine_problems(cfg.validated(sweep(threads_per_proc=2)), 2, 0) == []


def test_visible_gpus_counts_device_files_narrowed_by_cuda_visible_devices(tmp_path):
    for name in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm"):
        (tmp_path / name).touch()
    assert visible_gpus(tmp_path, {}) == 2
    assert visible_gpus(tmp_path, {"CUDA_VISIBLE_DEVICES": "1"}) == 1
    assert visible_gpus(tmp_path, {"CUDA_VISIBLE_DEVICES": "-1"}) == 0
    assert visible_gpus(tmp_path, {"CUDA_VISIBLE_DEVICES": ""}) == 0
    assert visible_gpus(tmp_path / "absent", {}) == 0


def test_short_epochs_are_named_with_the_data_size_that_lengthens_them():
    config = cfg.validated(
        sweep(procs=[1, 2, 32], nodes=[1, 4], batch_sizes=[128, 256], data_sizes=[51200])
    )
    (warning,) = short_epochs(cfg.run_configs(config))
    assert warning.startswith("data_sizes: 2 of 6 configurations time fewer than 20 iterations")
    assert "fewest: 7, at procs 32, batch 256, data 51200" in warning
    assert "at least 163840 (20 x the largest global batch, 8192)" in warning
    longer = cfg.validated({**config, "data_sizes": [163840]})
    assert short_epochs(cfg.run_configs(longer)) == []
