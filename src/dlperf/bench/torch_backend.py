"""PyTorch: networks written with torch.nn, DistributedDataParallel (gloo on CPU, NCCL on GPU)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as torch_dist
from torch import nn

from .ranks import DistInfo
from .spec import RunConfig
from .torch_nets import build_network, trainable_parameters


class TorchBackend:
    def __init__(self, config: RunConfig, dist: DistInfo, threads: int) -> None:
        self.config = config
        self.dist = dist
        self.threads = threads
        torch.set_num_threads(threads)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:  # already set in this process
            pass
        if config.device == "cuda":
            if not torch.cuda.is_available():
                raise RuntimeError(
                    "no usable CUDA device: device 'cuda' was requested but PyTorch sees none "
                    f"(torch {torch.__version__}, CUDA build {torch.version.cuda}, "
                    f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')}). "
                    "Run on a GPU node with a CUDA build of torch, or set device: cpu"
                )
            self.device = torch.device("cuda", dist.local_rank % torch.cuda.device_count())
            torch.cuda.set_device(self.device)
        else:
            self.device = torch.device("cpu")
        self.model: nn.Module | None = None

    def environment(self) -> dict:
        env = {
            "framework": "pytorch",
            "framework_version": torch.__version__,
            "threads": torch.get_num_threads(),
            "interop_threads": torch.get_num_interop_threads(),
            "device": str(self.device),
            "cuda_version": torch.version.cuda,
            "cudnn_version": torch.backends.cudnn.version() if torch.cuda.is_available() else None,
            "gpu_names": [],
            "gpu_count": 0,
            "distributed_backend": torch_dist.get_backend()
            if torch_dist.is_initialized()
            else None,
        }
        if torch.cuda.is_available():
            env["gpu_count"] = torch.cuda.device_count()
            env["gpu_names"] = [torch.cuda.get_device_name(i) for i in range(env["gpu_count"])]
        return env

    def setup(self) -> int:
        torch.manual_seed(self.config.seed)
        model = build_network(self.config.network).to(self.device)
        params = trainable_parameters(model)
        if self.dist.is_distributed:
            backend = "nccl" if self.device.type == "cuda" else "gloo"
            torch_dist.init_process_group(
                backend,
                init_method=f"tcp://{self.dist.master_addr}:{self.dist.master_port}",
                rank=self.dist.rank,
                world_size=self.dist.world_size,
                timeout=timedelta(seconds=max(60, int(self.config.timeout_s))),
            )
            device_ids = [self.device.index] if self.device.type == "cuda" else None
            model = nn.parallel.DistributedDataParallel(model, device_ids=device_ids)
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        self.loss_fn = nn.CrossEntropyLoss()
        return params

    def prepare_batch(self, images: np.ndarray, labels: np.ndarray) -> tuple:
        return (
            torch.from_numpy(images).to(self.device),
            torch.from_numpy(labels).to(self.device),
        )

    def input_pipeline(self, images: np.ndarray, labels: np.ndarray) -> Iterator[tuple]:
        # num_workers=0: loading runs in this process, so its cost shows as data wait
        # instead of competing invisibly for the worker's cores.
        dataset = torch.utils.data.TensorDataset(torch.from_numpy(images), torch.from_numpy(labels))
        generator = torch.Generator().manual_seed(self.config.seed * 1000 + self.dist.rank)
        loader = torch.utils.data.DataLoader(
            dataset,
            batch_size=self.config.batch_size,
            shuffle=True,
            drop_last=True,
            num_workers=0,
            generator=generator,
            pin_memory=self.device.type == "cuda",
        )
        while True:
            for x, y in loader:
                yield x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True)

    def build_graph(self, batch: tuple) -> None:
        return None  # eager: nothing is traced ahead of the first step

    def step(self, batch: tuple) -> torch.cuda.Event | None:
        images, labels = batch
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.loss_fn(self.model(images), labels)
        loss.backward()  # DDP all-reduces the gradients during backward
        self.optimizer.step()
        if self.device.type != "cuda":
            return None  # on the CPU the step has run when it returns
        # Kernels are queued: an event after the update is this step's completion marker.
        # DDP makes the compute stream wait for its all-reduce, so the event covers it.
        done = torch.cuda.Event()
        done.record()
        return done

    def wait(self, marker: torch.cuda.Event) -> None:
        marker.synchronize()

    def sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def barrier(self) -> None:
        if torch_dist.is_initialized():
            if self.device.type == "cuda":
                torch_dist.barrier(device_ids=[self.device.index])
            else:
                torch_dist.barrier()

    def close(self) -> None:
        if torch_dist.is_initialized():
            # A barrier first: gloo sometimes aborts when a peer tears down early.
            self.barrier()
            torch_dist.destroy_process_group()
