"""Run by test_workloads.py in the PyTorch environment, once per rank: train 8 micro-batches
through TorchBackend with DDP over gloo and count DDP's all-reduces (a communication hook).
Prints one JSON object: the micro-batches (0-7) during which DDP all-reduced, and a checksum
of the parameters.

    python torch_exchange_probe.py RANK PORT ACCUMULATION
"""

from __future__ import annotations

import json
import sys

from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

from dlperf.bench.datasets import synthetic_batches
from dlperf.bench.ranks import DistInfo
from dlperf.bench.spec import RunConfig
from dlperf.bench.torch_backend import TorchBackend


def main() -> None:
    rank, port, accumulation = (int(a) for a in sys.argv[1:4])
    config = RunConfig(
        "pytorch", "bert_tiny", "cpu", 1, 2, 2, 32, 0, seq_len=8, grad_accum_steps=accumulation
    )
    dist = DistInfo(rank=rank, world_size=2, local_rank=rank, local_world_size=2, master_port=port)
    backend = TorchBackend(config, dist, threads=1)
    backend.setup()
    current = {"micro_batch": -1}
    exchanged = set()

    def counting_hook(state, bucket):
        exchanged.add(current["micro_batch"])
        return allreduce_hook(state, bucket)

    backend.model.register_comm_hook(None, counting_hook)
    batches = [backend.prepare_batch(*arrays) for arrays in synthetic_batches(config, rank)]
    for i in range(8):
        current["micro_batch"] = i
        backend.step(batches[i % len(batches)])
    checksum = float(sum(p.detach().double().sum() for p in backend.model.parameters()))
    backend.close()
    print(json.dumps({"exchanged": sorted(exchanged), "checksum": checksum}))


if __name__ == "__main__":
    main()
