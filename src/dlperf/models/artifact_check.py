"""Checks a model artifact when it is read: what predict, plan and the report trust."""

from __future__ import annotations

import json
import math
import os

from dlperf.io import SCHEMA_VERSION, read_json

from . import MODELS
from .terms import TERMS


class ArtifactError(ValueError):
    """A model artifact that cannot be trusted: wrong version, unknown model or term, or a
    constant that is not a finite number. The message names the file and the field."""


def non_finite_field(value: object, path: str) -> str | None:
    """'<path> is NaN' for the first number in a JSON-like value that is not finite (NaN, inf),
    or None when every number is finite."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{path} is {'NaN' if math.isnan(value) else value}"
    if isinstance(value, dict):
        for key, item in value.items():
            found = non_finite_field(item, f"{path}.{key}")
            if found:
                return found
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = non_finite_field(item, f"{path}[{i}]")
            if found:
                return found
    return None


def _check_model_entry(name: str, entry: object, path: str) -> None:
    if not isinstance(entry, dict):
        raise ArtifactError(f"{path} is not a model entry (a JSON object)")
    if name not in MODELS:
        raise ArtifactError(
            f"{path} names an unknown model {name!r}; this dlperf knows {', '.join(MODELS)}"
        )
    if entry.get("status", "ok") == "ok" and entry.get("model") != name:
        raise ArtifactError(f"{path}.model is {entry.get('model')!r}, expected {name!r}")
    for i, term in enumerate(entry.get("terms") or []):
        term_name = term.get("name") if isinstance(term, dict) else None
        if term_name not in TERMS:
            raise ArtifactError(
                f"{path}.terms[{i}].name is {term_name!r}, not a term of the generic model "
                f"({', '.join(TERMS)})"
            )
    found = non_finite_field(entry, path)
    if found:
        raise ArtifactError(found)
    for i, refit in enumerate((entry.get("interval") or {}).get("refits") or []):
        _check_model_entry(name, refit, f"{path}.interval.refits[{i}]")


def check_artifact(artifact: object, source: str) -> dict:
    """The artifact itself when it is one this dlperf can trust; otherwise an ArtifactError
    naming the field, e.g. ``networks.lenet.models.generic.terms[2].value is NaN``."""
    if not isinstance(artifact, dict) or not isinstance(artifact.get("networks"), dict):
        raise ArtifactError(f"{source} is not a model artifact; write one with `dlperf fit`")
    version = artifact.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ArtifactError(
            f"{source}: schema_version is {version!r}, this dlperf reads {SCHEMA_VERSION}; "
            "fit the models again with `dlperf fit` (or `snakemake`)"
        )
    groups = [(f"networks.{n}", info) for n, info in artifact["networks"].items()]
    if "all_networks" in artifact:
        groups.append(("all_networks", artifact["all_networks"]))
    try:
        for path, info in groups:
            models = info.get("models") if isinstance(info, dict) else None
            if not isinstance(models, dict):
                raise ArtifactError(f"{path}.models is missing or not a JSON object")
            for name, entry in models.items():
                _check_model_entry(name, entry, f"{path}.models.{name}")
    except ArtifactError as exc:
        raise ArtifactError(f"{source}: {exc}") from None
    return artifact


def load_artifact(path: str | os.PathLike) -> dict:
    """Read and check a model artifact (what predict, plan and the report read)."""
    try:
        artifact = read_json(path)
    except json.JSONDecodeError as exc:
        raise ArtifactError(
            f"{path} is not a model artifact (invalid JSON: {exc}); write one with `dlperf fit`"
        ) from None
    return check_artifact(artifact, str(path))
