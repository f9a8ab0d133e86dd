"""The GPU catalogue (peak rates per precision, memory, links, with their sources) and the
training precisions, for the models that predict across hardware (docs/hardware.md)."""

from .catalogue import GPU, Catalogue, load, words
from .precision import PRECISIONS, precision_name, rates

__all__ = ["GPU", "Catalogue", "PRECISIONS", "load", "precision_name", "rates", "words"]
