"""The GPU catalogue: read the shipped ``catalogue.yaml`` (and a user's file of the same form),
check it, and find a GPU by any name NVML or a published table gives it.

Names are matched on their words, not their spelling: lower case, vendor and brand words ("NVIDIA",
"Tesla", "GeForce", "AMD", "Instinct") dropped, "80 GB" read as "80gb", apostrophes dropped, and
split at spaces, dashes, underscores, brackets and other punctuation. A name whose words are
exactly an entry's name or one of its aliases is that entry; otherwise the entry whose name or
alias has the most words, all of them in the given name, is it ("H100 80GB PCIe Gen5" is the
H100-PCIe-80GB), unless a word it adds names another card: a variant ("RTX 3090 Ti", "RTX 4090
Laptop GPU", a MIG slice) or another memory size ("P100 12GB" is not the 16 GB part, whose
bandwidth differs). A tie between entries, or no entry at all, is a one-line error naming the
nearest known GPUs and how to add one.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import pandas as pd

from dlperf.errors import InputFileError, UnknownName
from dlperf.io import unopenable

PRECISION_RATES = ("fp32", "tf32", "fp16", "bf16")
FIGURE_GROUPS = ("peak_tflops", "memory", "link")
# Words that name a vendor or brand, never a GPU: dropped before matching.
FILLER = frozenset({"nvidia", "tesla", "geforce", "amd", "instinct", "radeon"})
# Words that, added to a card's name, name another card (fewer units, other clocks, a slice of
# the GPU): a name carrying one is never read as the entry without it.
VARIANTS = frozenset(
    {"ti", "super", "d", "s", "xt", "xtx", "nvl", "laptop", "mobile", "max", "q", "maxq", "mig"}
)
MEMORY_WORD = re.compile(r"(\d+)gb")
HOW_TO_ADD = (
    "add it in a YAML file of the catalogue's form (--hardware FILE or config key hardware; "
    "docs/hardware.md)"
)


@dataclass(frozen=True)
class GPU:
    """One catalogue entry: peak dense TFLOP/s per precision (None: not in hardware), memory in
    GB and GB/s, the intra-node link in GB/s, and the source of each figure group."""

    name: str
    vendor: str
    aliases: tuple[str, ...]
    peak_tflops: dict[str, float | None]
    memory_gb: float
    memory_bandwidth_gbs: float
    link_name: str
    link_bandwidth_gbs: float
    sources: dict[str, str]
    notes: str = ""

    def rate(self, key: str) -> float | None:
        """Peak TFLOP/s for one of :data:`PRECISION_RATES`; None where the GPU lacks it."""
        return self.peak_tflops[key]


def words(name: str) -> frozenset[str]:
    """The words a name is matched on (module docstring)."""
    text = re.sub(r"(\d+)\s*gb\b", r"\1gb", str(name).lower())
    # An apostrophe joins its word ("Lambda's" is one), never leaving an "s" read as a variant.
    text = re.sub(r"['\u2019]", "", text)
    return frozenset(w for w in re.split(r"[^a-z0-9]+", text) if w and w not in FILLER)


def gpu_names(column: pd.Series) -> pd.Series:
    """A ``gpu`` column as text, '' where a row names no GPU (empty, or NaN once read back)."""
    return column.astype(object).where(column.notna(), "").astype(str).str.strip()


class Catalogue:
    """GPUs by name, with the sources their figures come from."""

    def __init__(self, gpus: dict[str, GPU], sources: dict[str, dict]) -> None:
        self.gpus = gpus
        self.sources = sources
        self._keys = [
            (words(n), gpu.name) for gpu in gpus.values() for n in (gpu.name, *gpu.aliases)
        ]

    def names(self) -> list[str]:
        return list(self.gpus)

    def match(self, name: str) -> GPU:
        """The entry ``name`` means (module docstring); UnknownName if none or several."""
        asked = words(name)
        exact = {gpu for key, gpu in self._keys if key == asked}
        if len(exact) == 1:
            return self.gpus[exact.pop()]
        best, found = 0, set()
        for key, gpu in self._keys:
            if key and key <= asked and len(key) >= best and self._same_card(asked - key, gpu):
                found = (found if len(key) == best else set()) | {gpu}
                best = len(key)
        if len(found) == 1:
            return self.gpus[found.pop()]
        nearest = sorted(found) or self.nearest(name)
        what = "ambiguous" if found else "unknown"
        raise UnknownName(
            f"{what} GPU {name!r}; nearest known: {', '.join(nearest) or 'none'}; "
            f"name one of them or {HOW_TO_ADD}"
        )

    def _same_card(self, added: frozenset[str], gpu: str) -> bool:
        """Whether words ``added`` to a name of ``gpu`` still name that card (module docstring)."""
        if added & VARIANTS:
            return False
        sizes = [float(m.group(1)) for w in added if (m := MEMORY_WORD.fullmatch(w))]
        return all(round(size) == round(self.gpus[gpu].memory_gb) for size in sizes)

    def nearest(self, name: str, count: int = 3) -> list[str]:
        """Known GPUs closest to ``name``: those sharing the most of its words first, then the
        closest in spelling."""
        asked = words(name)
        spelled = " ".join(sorted(asked))

        def closeness(key: frozenset[str]) -> tuple[int, float]:
            ratio = difflib.SequenceMatcher(None, spelled, " ".join(sorted(key))).ratio()
            return len(asked & key), ratio

        ordered = sorted(self._keys, key=lambda entry: closeness(entry[0]), reverse=True)
        return list(dict.fromkeys(gpu for _, gpu in ordered))[:count]


def _figure(entry: dict, key: str, where: str) -> float:
    value = entry.get(key)
    if not isinstance(value, (int, float)) or value <= 0:
        raise InputFileError(f"{where}: {key} must be a positive number, got {value!r}")
    return float(value)


def _gpu(entry: dict, sources: dict, where: str) -> GPU:
    """One checked entry of a catalogue file."""
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise InputFileError(f"{where}: every GPU needs a name")
    where = f"{where}, GPU {name!r}"
    rates = entry.get("peak_tflops") or {}
    if set(rates) != set(PRECISION_RATES):
        raise InputFileError(
            f"{where}: peak_tflops must give {', '.join(PRECISION_RATES)} (null where absent)"
        )
    for key, value in rates.items():
        if value is not None and (not isinstance(value, (int, float)) or value <= 0):
            raise InputFileError(f"{where}: peak_tflops.{key} must be positive or null")
    if rates["fp32"] is None:
        raise InputFileError(f"{where}: peak_tflops.fp32 is needed")
    cited = entry.get("sources") or {}
    missing = [g for g in FIGURE_GROUPS if cited.get(g) not in sources]
    if missing:
        raise InputFileError(
            f"{where}: sources must name, for {', '.join(missing)}, a key of the file's sources"
        )
    link = entry.get("link") or {}
    return GPU(
        name=name,
        vendor=str(entry.get("vendor", "")),
        aliases=tuple(str(a) for a in entry.get("aliases", [])),
        peak_tflops={k: None if v is None else float(v) for k, v in rates.items()},
        memory_gb=_figure(entry, "memory_gb", where),
        memory_bandwidth_gbs=_figure(entry, "memory_bandwidth_gbs", where),
        link_name=str(link.get("name", "")),
        link_bandwidth_gbs=_figure(link, "bandwidth_gbs", f"{where}, link"),
        sources={g: str(cited[g]) for g in FIGURE_GROUPS},
        notes=str(entry.get("notes", "")),
    )


def parse(text: str, where: str) -> tuple[dict[str, GPU], dict[str, dict]]:
    """The GPUs and sources of one catalogue file's text."""
    # Imported here: the models import this module, and the GPU check (scripts/gpu-check.sh)
    # loads the models on machines that have PyTorch but not PyYAML.
    import yaml

    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise InputFileError(
            f"{where}: not YAML ({exc.__class__.__name__}); fix its syntax"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("gpus"), list):
        raise InputFileError(f"{where}: needs a list under 'gpus' (see docs/hardware.md)")
    sources = data.get("sources") or {}
    bad = [k for k, s in sources.items() if not isinstance(s, dict) or not s.get("title")]
    if bad:
        raise InputFileError(f"{where}: sources {', '.join(map(str, bad))} need a title")
    gpus = {}
    for entry in data["gpus"]:
        gpu = _gpu(entry if isinstance(entry, dict) else {}, sources, where)
        gpus[gpu.name] = gpu
    return gpus, sources


@lru_cache(maxsize=1)
def _shipped() -> tuple[dict[str, GPU], dict[str, dict]]:
    text = resources.files("dlperf.hardware").joinpath("catalogue.yaml").read_text()
    return parse(text, "the shipped GPU catalogue")


@lru_cache(maxsize=8)
def _parsed(text: str, where: str) -> tuple[dict[str, GPU], dict[str, dict]]:
    """:func:`parse`, once per text: the models read the catalogue at every fit and
    prediction, and a user's file costs a YAML parse each time (tens of milliseconds)."""
    return parse(text, where)


def load(user_file: str | Path | None = None) -> Catalogue:
    """The shipped catalogue, with a user's file's GPUs added (a GPU of the same name, in any
    spelling of its words, replaced)."""
    gpus, sources = _shipped()
    gpus, sources = dict(gpus), dict(sources)
    if user_file is not None:
        path = Path(user_file)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InputFileError(
                f"hardware file {path} not found; give an existing YAML file"
            ) from None
        except (IsADirectoryError, PermissionError) as exc:
            raise InputFileError(f"hardware file {unopenable(path, exc)}") from None
        except UnicodeDecodeError:
            raise InputFileError(
                f"hardware file {path} is not UTF-8 text; save it as UTF-8"
            ) from None
        extra, extra_sources = _parsed(text, f"hardware file {path}")
        sources.update(extra_sources)
        # A GPU named as a shipped one (same words, any spelling) replaces it, never doubles it.
        replaced = {words(name) for name in extra}
        gpus = {name: gpu for name, gpu in gpus.items() if words(name) not in replaced}
        gpus.update(extra)
    return Catalogue(gpus, sources)
