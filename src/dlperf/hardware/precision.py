"""Training precisions: their names, the spellings published tables use for them, and which of
a GPU's peak rates each one runs at."""

from __future__ import annotations

import re

from dlperf.errors import UnknownName

from .catalogue import GPU

# Each precision's matrix rate (GEMMs and convolutions, on tensor cores where the GPU has them,
# the vector rate otherwise) and its vector rate (everything else, kept in FP32).
PRECISIONS = {
    "fp32": ("tf32", "fp32"),
    "tf32": ("tf32", "fp32"),
    "amp_fp16": ("fp16", "fp32"),
    "bf16": ("bf16", "fp32"),
}
# Spellings seen in published tables, searched in order, as regular expressions on lower case.
SPELLINGS = (
    (r"\bbf16\b|bfloat16", "bf16"),
    (r"\btf32\b(?!.*possible)", "tf32"),
    (r"amp|fp16|float16|half|mixed", "amp_fp16"),
    (r"fp32|float32|single", "fp32"),
)


def precision_name(text: str) -> str:
    """The precision a table's spelling names ("FP32", "AMP/FP16", "fp16 (HF --fp16)")."""
    lowered = str(text).strip().lower()
    if lowered in PRECISIONS:
        return lowered
    for pattern, name in SPELLINGS:
        if re.search(pattern, lowered):
            return name
    raise UnknownName(f"unknown precision {text!r}; write one of {', '.join(PRECISIONS)}")


def rates(gpu: GPU, precision: str) -> tuple[float, float]:
    """(matrix, vector) peak TFLOP/s ``gpu`` trains at in ``precision``. FP32 training may run
    its matrix work in TF32 (frameworks' defaults differ), so its matrix rate is TF32's where
    the GPU has it: how much of the time follows which rate is what the models learn."""
    matrix_key, vector_key = PRECISIONS[precision_name(precision)]
    matrix = gpu.rate(matrix_key)
    if matrix is None and matrix_key in ("fp16", "bf16"):
        raise UnknownName(
            f"{gpu.name} has no {matrix_key.upper()} in hardware; ask for another precision "
            f"({', '.join(p for p in PRECISIONS if p != precision)}) or another GPU"
        )
    vector = gpu.rate(vector_key)
    return (matrix if matrix is not None else vector), vector
