"""TensorFlow: Keras 3 networks trained by a custom loop; data parallel with
MultiWorkerMirroredStrategy (RING all-reduce on CPU, NCCL on GPU).

A custom loop rather than ``model.fit``: Keras 3's fit fails under
MultiWorkerMirroredStrategy (keras-team/keras#20585). The Keras 3 optimizer
all-reduces the gradients across workers inside ``apply_gradients``.

The reference's settings: images in NHWC (Keras' channels_last, TensorFlow's own layout),
Keras' mixed-precision policy, float32 math strict for ``fp32`` (TF32 otherwise on a GPU,
TensorFlow's default there); ``compile`` runs each worker's forward and backward pass through
XLA (see :mod:`.tf_training`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator

import numpy as np
import tensorflow as tf

from .datasets import nchw_to_nhwc
from .options import TF32_OVERRIDE, tf32_allowed
from .ranks import DistInfo
from .spec import RunConfig


def tf_config(dist: DistInfo) -> dict:
    """TF_CONFIG for MultiWorkerMirroredStrategy: every worker's address (its host and its
    own port), and which one we are."""
    return {
        "cluster": {"worker": dist.worker_addresses()},
        "task": {"type": "worker", "index": dist.rank},
    }


class TensorFlowBackend:
    def __init__(self, config: RunConfig, dist: DistInfo, threads: int) -> None:
        self.config = config
        self.dist = dist
        self.threads = threads
        # Thread pools are fixed at the first op: set them before anything else.
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        tf.config.experimental.enable_tensor_float_32_execution(
            tf32_allowed(config.precision, config.device)
        )
        gpus = tf.config.list_physical_devices("GPU")
        if config.device == "cuda":
            if not gpus:
                raise RuntimeError(
                    "no usable CUDA device: device 'cuda' was requested but TensorFlow sees none "
                    f"(tensorflow {tf.__version__}, "
                    f"built with CUDA: {tf.test.is_built_with_cuda()}, "
                    f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')}). "
                    "Run on a GPU node with tensorflow[and-cuda], or set device: cpu"
                )
            # One GPU per worker, chosen by local rank; grow memory instead of grabbing it all.
            gpu = gpus[dist.local_rank % len(gpus)]
            tf.config.set_visible_devices(gpu, "GPU")
            tf.config.experimental.set_memory_growth(gpu, True)
            self.device_name = "/GPU:0"
        else:
            if gpus:
                tf.config.set_visible_devices([], "GPU")
            self.device_name = "/CPU:0"
        if dist.is_distributed:
            os.environ["TF_CONFIG"] = json.dumps(tf_config(dist))
            implementation = (
                tf.distribute.experimental.CommunicationImplementation.NCCL
                if config.device == "cuda"
                else tf.distribute.experimental.CommunicationImplementation.RING
            )
            self.strategy = tf.distribute.MultiWorkerMirroredStrategy(
                communication_options=tf.distribute.experimental.CommunicationOptions(
                    implementation=implementation
                )
            )
            self.communication = implementation.name
        else:
            self.strategy = tf.distribute.get_strategy()
            self.communication = None
        self._last_loss = None

    def environment(self) -> dict:
        build = tf.sysconfig.get_build_info()
        gpus = tf.config.get_visible_devices("GPU")
        import keras

        return {
            "framework": "tensorflow",
            "framework_version": tf.__version__,
            "keras_version": keras.__version__,
            "precision_mechanism": keras.mixed_precision.dtype_policy().name
            + (" + LossScaleOptimizer" if self.config.precision == "amp_fp16" else ""),
            "threads": tf.config.threading.get_intra_op_parallelism_threads(),
            "interop_threads": tf.config.threading.get_inter_op_parallelism_threads(),
            "device": self.device_name,
            "cuda_version": build.get("cuda_version"),
            "cudnn_version": build.get("cudnn_version"),
            "gpu_names": [
                tf.config.experimental.get_device_details(g).get("device_name", g.name)
                for g in gpus
            ],
            "gpu_count": len(gpus),
            "distributed_backend": (
                f"MultiWorkerMirroredStrategy/{self.communication}" if self.communication else None
            ),
            "tf_config": json.loads(os.environ["TF_CONFIG"]) if self.dist.is_distributed else None,
        }

    def settings(self) -> dict:
        import keras

        tokens = self.config.inputs == "tokens"
        return {
            "input": self.config.input_place,
            "data_format": keras.config.image_data_format(),
            "dtype_policy": keras.mixed_precision.dtype_policy().name,
            "tensor_float_32_execution": tf.config.experimental.tensor_float_32_execution_enabled(),
            TF32_OVERRIDE: os.environ.get(TF32_OVERRIDE),
            "optimizer": "keras.optimizers.SGD",
            "attention": "keras.layers.MultiHeadAttention" if tokens else None,
            "compile": "XLA (jit_compile=True)" if self.config.compile else None,
            "cuda_graphs": False,
        }

    def setup(self) -> int:
        import keras

        from .tf_nets import build_network, trainable_parameters
        from .tf_training import TrainSteps, optimizer_for, set_precision

        keras.utils.set_random_seed(self.config.seed)
        set_precision(self.config.precision)
        with self.strategy.scope():
            self.model = build_network(self.config.network, self.config.image_size)
            self.optimizer = optimizer_for(self.config.precision)
            self.optimizer.build(self.model.trainable_variables)
        self.steps = TrainSteps(self.config, self.model, self.optimizer, self.strategy)
        self.micro_step = 0  # micro-batches since the last optimizer step
        strategy = self.strategy

        @tf.function
        def all_reduce_one():
            # No worker gets past an all-reduce before every worker has arrived.
            ones = strategy.run(lambda: tf.ones([]))
            return strategy.reduce(tf.distribute.ReduceOp.SUM, ones, axis=None)

        self._all_reduce_one = all_reduce_one
        return trainable_parameters(self.model)

    def _on_device(self, images: np.ndarray, labels: np.ndarray) -> tuple:
        with tf.device(self.device_name):
            return tf.identity(images), tf.identity(labels)

    def prepare_batch(self, *arrays: np.ndarray) -> tuple:
        if self.config.inputs == "tokens":
            tokens, labels, weights = arrays
            tensors = (tf.constant(tokens, tf.int32), tf.constant(labels), tf.constant(weights))
        else:
            images, labels = arrays
            tensors = (tf.constant(nchw_to_nhwc(images)), tf.constant(labels))
        with tf.device(self.device_name):
            return tuple(tf.identity(t) for t in tensors)

    def input_pipeline(self, images: np.ndarray, labels: np.ndarray) -> Iterator[tuple]:
        # No prefetch (as in the other frameworks): the loading cost shows as data wait.
        options = tf.data.Options()
        options.threading.private_threadpool_size = self.threads
        # Each worker already holds only its own shard.
        options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
        dataset = (
            tf.data.Dataset.from_tensor_slices((nchw_to_nhwc(images), labels))
            .shuffle(
                len(images),
                seed=self.config.seed * 1000 + self.dist.rank,
                reshuffle_each_iteration=True,
            )
            .repeat()
            .batch(self.config.batch_size, drop_remainder=True)
            .with_options(options)
        )
        for x, y in dataset:
            yield self._on_device(x, y) if self.config.device == "cuda" else (x, y)

    def build_graph(self, batch: tuple) -> float:
        """Trace the step function (Python -> graph) before the first step runs it."""
        start = time.perf_counter()
        self.steps.last.get_concrete_function(*batch)
        if self.config.grad_accum_steps > 1:
            self.steps.micro.get_concrete_function(*batch)
        return time.perf_counter() - start

    def step(self, batch: tuple) -> None:
        self.micro_step += 1
        if self.micro_step == self.config.grad_accum_steps:
            self._last_loss = self.steps.last(*batch)
            self.micro_step = 0
        else:
            self._last_loss = self.steps.micro(*batch)
        return None  # no completion marker: the harness calls ``sync`` after the step

    def sync(self) -> None:
        if self.config.device == "cuda" and hasattr(tf.test.experimental, "sync_devices"):
            tf.test.experimental.sync_devices()
        if self._last_loss is not None:
            self._last_loss.numpy()  # the step's result exists only once the step has run

    def barrier(self) -> None:
        if self.dist.is_distributed:
            self._all_reduce_one().numpy()

    def close(self) -> None:
        pass
