"""PyTorch: networks written with torch.nn, DistributedDataParallel (gloo on CPU, NCCL on GPU).

Precision: ``torch.autocast`` (fp16 or bf16) and, for fp16, a ``GradScaler`` (dynamic loss
scaling); float32 math is strict FP32 for ``fp32`` and may use TF32 otherwise on a GPU
(:func:`set_float32_math`). Gradient accumulation: every micro-batch but the last of an
optimizer step runs under DDP's ``no_sync``, so the all-reduce runs once per optimizer step.

On a GPU the reference's settings (NVIDIA's ConvNets and BERT code): convolutional networks in
channels_last, ``cudnn.benchmark``, the fused SGD; the encoders' attention is
``scaled_dot_product_attention`` everywhere. ``compile`` wraps the network in
``torch.compile`` (``mode="reduce-overhead"``, CUDA graphs, with ``cuda_graphs``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as torch_dist
from torch import nn

from .options import TF32_OVERRIDE, tf32_allowed
from .ranks import DistInfo
from .spec import RunConfig
from .torch_nets import build_network, trainable_parameters

AUTOCAST_DTYPES = {"fp32": None, "tf32": None, "amp_fp16": torch.float16, "bf16": torch.bfloat16}


def set_float32_math(tf32: bool) -> dict:
    """Let float32 matrix products and convolutions use TF32, or hold them to strict FP32
    (all three of PyTorch's switches); returns what they read afterwards."""
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.set_float32_matmul_precision("high" if tf32 else "highest")
    return {
        "matmul_precision": torch.get_float32_matmul_precision(),
        "cuda_matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
    }


def attention_kernels() -> dict:
    """Which kernels ``scaled_dot_product_attention`` may choose from."""
    return {
        "function": "torch.nn.functional.scaled_dot_product_attention",
        "flash": torch.backends.cuda.flash_sdp_enabled(),
        "memory_efficient": torch.backends.cuda.mem_efficient_sdp_enabled(),
        "math": torch.backends.cuda.math_sdp_enabled(),
    }


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
        self.autocast_dtype = AUTOCAST_DTYPES[config.precision]
        if (
            config.precision == "bf16"
            and self.device.type == "cuda"
            and not torch.cuda.is_bf16_supported()
        ):
            raise RuntimeError(
                f"precision bf16 needs a GPU with bfloat16 support (Ampere or later); "
                f"{torch.cuda.get_device_name(self.device)} has none. Use amp_fp16 or fp32"
            )
        # Dynamic loss scaling for fp16; disabled, it passes everything through.
        self.scaler = torch.amp.GradScaler(self.device.type, enabled=config.precision == "amp_fp16")
        self.micro_step = 0  # micro-batches since the last optimizer step
        on_gpu = self.device.type == "cuda"
        self.float32_math = set_float32_math(tf32_allowed(config.precision, self.device.type))
        # The reference's algorithm search per shape (cuDNN only; no effect on the CPU).
        torch.backends.cudnn.benchmark = on_gpu
        self.memory_format = (
            torch.channels_last if on_gpu and config.convolutional else torch.contiguous_format
        )
        self.compile_mode = "reduce-overhead" if config.cuda_graphs else "default"
        # The fused SGD (one kernel for every parameter) where it exists: on the GPU.
        self.fused_optimizer = on_gpu

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
            "precision_mechanism": (
                f"torch.autocast({self.autocast_dtype})"
                + (" + GradScaler" if self.scaler.is_enabled() else "")
                if self.autocast_dtype
                else "fp32"
            ),
        }
        if torch.cuda.is_available():
            env["gpu_count"] = torch.cuda.device_count()
            env["gpu_names"] = [torch.cuda.get_device_name(i) for i in range(env["gpu_count"])]
        return env

    def settings(self) -> dict:
        return {
            "input": self.config.input_place,
            "memory_format": "channels_last"
            if self.memory_format == torch.channels_last
            else "contiguous (NCHW)",
            "cudnn_benchmark": torch.backends.cudnn.benchmark,
            **self.float32_math,
            TF32_OVERRIDE: os.environ.get(TF32_OVERRIDE),
            "optimizer": "SGD(fused=True)" if self.fused_optimizer else "SGD (for-loop)",
            "attention": attention_kernels() if self.config.inputs == "tokens" else None,
            "compile": f"torch.compile(mode={self.compile_mode!r})"
            if self.config.compile
            else None,
            "cuda_graphs": self.config.cuda_graphs,
        }

    def setup(self) -> int:
        torch.manual_seed(self.config.seed)
        model = build_network(self.config.network, self.config.image_size).to(self.device)
        model = model.to(memory_format=self.memory_format)
        params = trainable_parameters(model)
        if self.config.compile:
            # Compiled at its first call (so in the first warm-up step: the record's compile_s).
            model = torch.compile(model, mode=self.compile_mode)
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
        self.optimizer = torch.optim.SGD(
            model.parameters(), lr=0.01, momentum=0.9, fused=self.fused_optimizer or None
        )
        self.loss_fn = nn.CrossEntropyLoss(reduction="none")
        return params

    def _on_device(self, tensor: torch.Tensor) -> torch.Tensor:
        tensor = tensor.to(self.device, non_blocking=True)
        if tensor.dim() == 4:  # images: in the network's memory format
            return tensor.contiguous(memory_format=self.memory_format)
        return tensor

    def prepare_batch(self, *arrays: np.ndarray) -> tuple:
        return tuple(self._on_device(torch.from_numpy(a)) for a in arrays)

    def loss(self, batch: tuple) -> torch.Tensor:
        """The micro-batch's mean loss per sample (tokens: per masked token, weighted)."""
        inputs, labels, *weights = batch
        with torch.autocast(
            self.device.type, dtype=self.autocast_dtype, enabled=self.autocast_dtype is not None
        ):
            logits = self.model(inputs)
        per_item = self.loss_fn(logits.float().flatten(0, -2), labels.flatten())
        if weights:
            return (per_item * weights[0].flatten()).sum() / inputs.shape[0]
        return per_item.mean()

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
                yield self._on_device(x), self._on_device(y)

    def build_graph(self, batch: tuple) -> None:
        return None  # eager: nothing is traced ahead of the first step

    def step(self, batch: tuple) -> torch.cuda.Event | None:
        accum = self.config.grad_accum_steps
        self.micro_step += 1
        last = self.micro_step == accum
        # DDP all-reduces the gradients during backward: skipped but on the last micro-batch.
        exchange_now = last or not self.dist.is_distributed
        with contextlib.nullcontext() if exchange_now else self.model.no_sync():
            self.scaler.scale(self.loss(batch) / accum).backward()
        if last:
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad(set_to_none=True)
            self.micro_step = 0
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
