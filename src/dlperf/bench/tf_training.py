"""TensorFlow training steps: the loss, mixed precision and gradient accumulation.

Precision is Keras' own mechanism: a global dtype policy (``mixed_float16`` or
``mixed_bfloat16``: float32 variables, low-precision compute, float32 logits), and for fp16
a ``LossScaleOptimizer`` (dynamic loss scaling). With accumulation, every micro-batch but
the last of an optimizer step adds its gradients to per-worker accumulators (sync-on-read
variables: nothing is exchanged); the last adds its own and calls ``apply_gradients``, where
the optimizer all-reduces them across workers, once per optimizer step.

``compile`` (XLA): each worker's forward and backward pass is a ``tf.function`` with
``jit_compile=True``; the update and its all-reduce stay outside it, where every strategy
runs them.
"""

from __future__ import annotations

import keras
import tensorflow as tf

from .spec import RunConfig

POLICIES = {
    "fp32": "float32",
    "tf32": "float32",
    "amp_fp16": "mixed_float16",
    "bf16": "mixed_bfloat16",
}


def set_precision(precision: str) -> None:
    """Set the dtype policy the networks are built with (before building them)."""
    keras.mixed_precision.set_dtype_policy(POLICIES[precision])


def optimizer_for(precision: str) -> keras.optimizers.Optimizer:
    sgd = keras.optimizers.SGD(learning_rate=0.01, momentum=0.9)
    return keras.optimizers.LossScaleOptimizer(sgd) if precision == "amp_fp16" else sgd


def per_sample_loss(loss_fn, logits, labels, weights=None):
    """Cross-entropy per sample; for tokens, the weighted sum over its masked positions."""
    per_item = loss_fn(labels, tf.cast(logits, tf.float32))
    if weights is None:
        return per_item
    return tf.reduce_sum(per_item * weights, axis=1)


class TrainSteps:
    """``micro(*batch)`` accumulates one micro-batch's gradients; ``last(*batch)`` adds its
    own and updates the weights. Without accumulation only ``last`` runs."""

    def __init__(self, config: RunConfig, model, optimizer, strategy) -> None:
        self.model = model
        self.optimizer = optimizer
        self.strategy = strategy
        self.loss_fn = keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction="none"
        )
        # Summed over the micro-batches, the losses average over the optimizer step's samples.
        self.samples_per_update = config.global_batch * config.grad_accum_steps
        self.scaled = config.precision == "amp_fp16"
        self.accumulators = []
        if config.grad_accum_steps > 1:
            with strategy.scope():
                self.accumulators = [
                    tf.Variable(
                        tf.zeros_like(v),
                        trainable=False,
                        synchronization=tf.VariableSynchronization.ON_READ,
                        aggregation=tf.VariableAggregation.NONE,
                    )
                    for v in model.trainable_variables
                ]
        # XLA compiles at the first call: in the first step, the record's compile_s.
        self.gradients = (
            tf.function(self._gradients, jit_compile=True) if config.compile else self._gradients
        )
        self.micro = tf.function(self._run(self._accumulate))
        self.last = tf.function(self._run(self._apply))

    def _run(self, replica_fn):
        def step(*batch):
            losses = self.strategy.run(replica_fn, args=batch)
            return self.strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

        return step

    def _gradients(self, inputs, labels, weights=None):
        with tf.GradientTape() as tape:
            logits = self.model(inputs, training=True)
            per_example = per_sample_loss(self.loss_fn, logits, labels, weights)
            loss = tf.nn.compute_average_loss(
                per_example, global_batch_size=self.samples_per_update
            )
            scaled = self.optimizer.scale_loss(loss) if self.scaled else loss
        grads = tape.gradient(scaled, self.model.trainable_variables)
        return loss, [tf.convert_to_tensor(g) for g in grads]

    def _accumulate(self, *batch):
        loss, grads = self.gradients(*batch)
        for accumulator, grad in zip(self.accumulators, grads, strict=True):
            accumulator.assign_add(grad)
        return loss

    def _apply(self, *batch):
        loss, grads = self.gradients(*batch)
        if self.accumulators:
            grads = [a.read_value() + g for a, g in zip(self.accumulators, grads, strict=True)]
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables, strict=True))
        for accumulator in self.accumulators:
            accumulator.assign(tf.zeros_like(accumulator))
        return loss
