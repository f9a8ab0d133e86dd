"""MXNet: Gluon HybridBlocks (hybridized, static memory); data parallel through the
parameter-server kvstore ``dist_sync`` (``dist_device_sync`` on GPUs).

MXNet runs asynchronously, so ``sync`` is ``mx.nd.waitall()``, and ``step`` returns a
completion marker (see dlperf.bench.harness): a one-element sum read from every weight
after the update, which the engine computes once this step's updates (and the gradient
exchange they wait for) are done, and before the next step may overwrite the weights. Its
thread pool
is set from the environment before the library loads: OMP_NUM_THREADS (MXNet's
default is half the CPUs) and MXNET_CPU_WORKER_NTHREADS=1, set by the driver.
In a distributed run the launcher has started a ps-lite scheduler and server
and set the DMLC_* variables; ``kv.create`` connects to them.

Precision is MXNet's AMP (``mxnet.contrib.amp``: low-precision operators chosen by its
lists), with dynamic loss scaling for fp16; ``fp32`` is held to strict FP32 by the driver's
``NVIDIA_TF32_OVERRIDE=0`` (MXNet 1.x has no switch of its own). On a GPU the convolutional
networks run in NHWC, cuDNN's tensor-core layout (as NVIDIA's MXNet ResNet-50 does); MXNet's
CPU kernels have only NCHW. The graph is always hybridized (``compile`` adds nothing).
Gradient accumulation: the parameters sum their gradients (``grad_req='add'``) over an
optimizer step's micro-batches, and only the last calls ``trainer.step``, which pushes them to
the parameter server (the exchange), once per optimizer step.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon
from mxnet.contrib import amp

from .datasets import nchw_to_nhwc
from .options import TF32_OVERRIDE
from .ranks import DistInfo, host_address
from .spec import RunConfig


def gpu_count() -> int:
    try:
        return mx.context.num_gpus()
    except mx.base.MXNetError:  # a CPU-only build may refuse to ask the CUDA runtime
        return 0


AMP_DTYPES = {"amp_fp16": "float16", "bf16": "bfloat16"}


class MXNetBackend:
    def __init__(self, config: RunConfig, dist: DistInfo, threads: int) -> None:
        self.config = config
        self.dist = dist
        self.threads = threads
        if config.device == "cuda":
            count = gpu_count()
            if count == 0:
                cuda_built = mx.runtime.Features().is_enabled("CUDA")
                raise RuntimeError(
                    "no usable CUDA device: device 'cuda' was requested but MXNet sees none "
                    f"(mxnet {mx.__version__}, built with CUDA: {cuda_built}, "
                    f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')}). "
                    "Run on a GPU node with a CUDA build (e.g. mxnet-cu112), or set device: cpu"
                )
            self.ctx = mx.gpu(dist.local_rank % count)
        else:
            self.ctx = mx.cpu()
        if dist.is_distributed:
            if "DMLC_PS_ROOT_URI" not in os.environ:
                raise RuntimeError(
                    "a distributed MXNet worker needs the DMLC_* variables of its parameter "
                    "server; start the run with `dlperf bench` (local launcher or "
                    "--launcher srun), which sets them"
                )
            # Under srun each worker tells ps-lite its own address (zmq binds need an IP).
            os.environ.setdefault("DMLC_NODE_HOST", host_address())
            self.kvstore_name = "dist_device_sync" if config.device == "cuda" else "dist_sync"
        else:
            self.kvstore_name = "device" if config.device == "cuda" else "local"
        self.kv = None
        self.micro_step = 0  # micro-batches since the last optimizer step
        self.layout = "NHWC" if config.device == "cuda" and config.convolutional else "NCHW"

    def settings(self) -> dict:
        return {
            "input": self.config.input_place,
            "layout": self.layout,
            TF32_OVERRIDE: os.environ.get(TF32_OVERRIDE),
            "optimizer": "gluon.Trainer sgd",
            "attention": "batch_dot + softmax" if self.config.inputs == "tokens" else None,
            "compile": "hybridize(static_alloc=True, static_shape=True)",
            "cuda_graphs": False,
        }

    def environment(self) -> dict:
        features = mx.runtime.Features()
        count = gpu_count()
        return {
            "framework": "mxnet",
            "framework_version": mx.__version__,
            # MXNet has no getter for its OpenMP pool: the variables it read at start-up.
            "threads": int(os.environ.get("OMP_NUM_THREADS", "0")) or None,
            "interop_threads": int(os.environ.get("MXNET_CPU_WORKER_NTHREADS", "0")) or None,
            "device": str(self.ctx),
            "cuda_version": "built with CUDA" if features.is_enabled("CUDA") else None,
            "cudnn_version": "built with cuDNN" if features.is_enabled("CUDNN") else None,
            "gpu_names": [],
            "gpu_count": count,
            "distributed_backend": self.kv.type if self.kv is not None else None,
            "kvstore_rank": self.kv.rank if self.kv is not None else None,
            "kvstore_workers": self.kv.num_workers if self.kv is not None else None,
            "precision_mechanism": (
                f"mxnet.contrib.amp({AMP_DTYPES[self.config.precision]})"
                + (" + loss scaling" if self.config.precision == "amp_fp16" else "")
                if self.config.precision in AMP_DTYPES
                else "fp32"
            ),
        }

    def setup(self) -> int:
        from .mx_nets import build_network, trainable_parameters

        mx.random.seed(self.config.seed)
        np.random.seed(
            self.config.seed * 1000 + self.dist.rank
        )  # Gluon's DataLoader shuffles with it
        config = self.config
        if config.precision in AMP_DTYPES:
            amp.init(target_dtype=AMP_DTYPES[config.precision])  # before the network exists
        net = build_network(config.network, config.image_size, config.seq_len, self.layout)
        net.initialize(mx.init.Xavier(), ctx=self.ctx)
        net.hybridize(static_alloc=True, static_shape=True)
        self.net = net
        self.trainable = [p for p in net.collect_params().values() if p.grad_req != "null"]
        if config.grad_accum_steps > 1:
            for param in self.trainable:
                param.grad_req = "add"
        # For dist_* this connects to the scheduler and blocks until every worker has.
        self.kv = mx.kv.create(self.kvstore_name)
        self.trainer = gluon.Trainer(
            net.collect_params(), "sgd", {"learning_rate": 0.01, "momentum": 0.9}, kvstore=self.kv
        )
        if config.precision == "amp_fp16":
            amp.init_trainer(self.trainer)
        self.loss_fn = gluon.loss.SoftmaxCrossEntropyLoss(axis=-1)
        self._weight_probes = None
        self._grad_probes = None
        # Gradients are summed over the micro-batches and over the workers: scale by the
        # samples of one optimizer step.
        self.scale = config.batch_size * self.kv.num_workers * config.grad_accum_steps
        return trainable_parameters(net)

    def prepare_batch(self, *arrays: np.ndarray) -> tuple:
        if self.config.inputs == "tokens":
            tokens, labels, weights = arrays
            # The loss averages over the tokens: weights times seq_len make it their sum.
            arrays = (tokens, labels, weights[..., None] * weights.shape[1])
        elif self.layout == "NHWC":
            images, labels = arrays
            arrays = (nchw_to_nhwc(images), labels)
        return tuple(mx.nd.array(a, ctx=self.ctx, dtype="float32") for a in arrays)

    def input_pipeline(self, images: np.ndarray, labels: np.ndarray) -> Iterator[tuple]:
        # num_workers=0: loading runs in this process and shows as data wait.
        if self.layout == "NHWC":
            images = nchw_to_nhwc(images)
        dataset = gluon.data.ArrayDataset(images, labels.astype(np.float32))
        loader = gluon.data.DataLoader(
            dataset,
            batch_size=self.config.batch_size,
            shuffle=True,
            last_batch="discard",
            num_workers=0,
        )
        while True:
            for x, y in loader:
                yield x.as_in_context(self.ctx), y.as_in_context(self.ctx)

    def build_graph(self, batch: tuple) -> None:
        return None  # the hybridized graph is built inside the first step

    def step(self, batch: tuple) -> mx.nd.NDArray:
        inputs, labels, *weights = batch
        with autograd.record():
            loss = self.loss_fn(self.net(inputs), labels, *weights)
        if self.config.precision == "amp_fp16":
            with amp.scale_loss(loss, self.trainer) as scaled:
                autograd.backward(scaled)
        else:
            loss.backward()
        self.micro_step += 1
        if self.micro_step < self.config.grad_accum_steps:
            # Accumulating: the step is done once its gradients are summed.
            if self._grad_probes is None:
                self._grad_probes = self._probes(lambda p: p.grad(self.ctx))
            return mx.nd.add_n(*self._grad_probes)
        self.micro_step = 0
        self.trainer.step(self.scale)  # push gradients, pull updated weights
        if self.config.grad_accum_steps > 1:
            for param in self.trainable:
                param.zero_grad()
        if self._weight_probes is None:
            # Taken once the first step has initialised the weights (Gluon defers shapes).
            self._weight_probes = self._probes(lambda p: p.data(self.ctx))
        return mx.nd.add_n(*self._weight_probes)

    def _probes(self, array_of) -> list[mx.nd.NDArray]:
        """One element of every trainable parameter's array, as views (no copy)."""
        return [array_of(p).reshape((-1,))[:1] for p in self.trainable]

    def wait(self, marker: mx.nd.NDArray) -> None:
        marker.wait_to_read()

    def sync(self) -> None:
        mx.nd.waitall()

    def barrier(self) -> None:
        if self.dist.is_distributed and self.kv is not None:
            self.kv._barrier()  # ps-lite's global barrier (no public name in MXNet 1.x)

    def close(self) -> None:
        pass
