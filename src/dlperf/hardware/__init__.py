"""The GPU catalogue (peak rates per precision, memory, links, with their sources) and the
training precisions, for the models that predict across hardware (docs/hardware.md)."""

from .catalogue import GPU, Catalogue, gpu_names, load, words
from .precision import PRECISIONS, precision_name, rates

__all__ = [
    "GPU",
    "Catalogue",
    "PRECISIONS",
    "gpu_names",
    "load",
    "precision_name",
    "rates",
    "words",
]
