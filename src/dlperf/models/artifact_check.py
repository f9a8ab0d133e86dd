"""Checks a model artifact when it is read: what predict, plan and the report trust."""

from __future__ import annotations

import math
import os

import dlperf
from dlperf.errors import DlperfError, InputFileError
from dlperf.io import read_json

from . import MODELS
from .terms import TERMS

#: The model artifact's format version (models/<framework>.json, its ``schema_version``);
#: an artifact of another version is refused with the fix, never half read. 2: the answer
#: across hardware stores its backtested reach and the weights of each form alike. 3: and the
#: measured times its physics envelope is drawn from (models/hardware_envelope.py). 4: and the
#: workers and nodes measured, beyond which the interval from its backtest widens.
VERSION = 4


class ArtifactError(DlperfError):
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


#: The JSON type of every field of a model entry that a model's ``from_dict``, the interval,
#: predict, the report or this check reads: one of another type is refused by name, never a
#: TypeError later. ``NULLABLE`` fields may also be null (no interval, a non-finite MAPE).
FIELD_TYPES: dict[str, str] = {
    **dict.fromkeys(("model", "status", "reason", "variant", "formula"), "a string"),
    **dict.fromkeys(
        ("intercept", "lambda", "train_mape", "flops_per_sample", "param_count"), "a number"
    ),
    "train_points": "an integer",
    "across_networks": "a boolean",
    **dict.fromkeys(("constants", "coefficients", "pooled", "exponent", "settings"), "an object"),
    **dict.fromkeys(
        ("interval", "inner_cv_mape", "network_features", "identifiability", "hardware"),
        "an object",
    ),
    **dict.fromkeys(
        ("terms", "procs_lines", "batch_lines", "functions", "selected_features", "breakdown"),
        "a list",
    ),
    "switched_off": "a list",
}
NULLABLE = ("interval", "train_mape", "flops_per_sample", "param_count")
#: The lists whose every item is a JSON object.
LISTS_OF_OBJECTS = ("terms", "procs_lines", "batch_lines", "functions", "breakdown")
_JSON_TYPES = {
    "a string": (str,),
    "a number": (int, float),
    "an integer": (int,),
    "a boolean": (bool,),
    "an object": (dict,),
    "a list": (list,),
}
_FIX = "; fit again (dlperf fit) or restore the file"


def _wrong_type(value: object, kind: str, path: str) -> ArtifactError:
    return ArtifactError(f"{path} must be {kind}, got {value!r}{_FIX}")


def _check_types(entry: dict, path: str) -> None:
    """Every field the entry's readers read has its JSON type (``FIELD_TYPES``)."""
    for key, kind in FIELD_TYPES.items():
        value = entry.get(key)
        if key not in entry or (key in NULLABLE and value is None):
            continue
        if isinstance(value, bool) != (kind == "a boolean") or not isinstance(
            value, _JSON_TYPES[kind]
        ):
            raise _wrong_type(value, kind, f"{path}.{key}")
    for key in LISTS_OF_OBJECTS:
        for i, item in enumerate(entry.get(key) or []):
            if not isinstance(item, dict):
                raise _wrong_type(item, "an object", f"{path}.{key}[{i}]")
    interval = entry.get("interval") or {}
    for key in ("refits", "relative_residuals"):
        if not isinstance(interval.get(key, []), list):
            raise _wrong_type(interval[key], "a list", f"{path}.interval.{key}")
    for i, value in enumerate(interval.get("relative_residuals", [])):
        _require_number(value, f"{path}.interval.relative_residuals[{i}]")


def _check_model_entry(name: str, entry: object, path: str) -> None:
    if not isinstance(entry, dict):
        raise ArtifactError(f"{path} is not a model entry (a JSON object)")
    _check_types(entry, path)
    if name not in MODELS:
        raise ArtifactError(
            f"{path} names an unknown model {name!r}; this dlperf knows {', '.join(MODELS)}"
        )
    if entry.get("status", "ok") == "ok" and entry.get("model") != name:
        raise ArtifactError(f"{path}.model is {entry.get('model')!r}, expected {name!r}")
    for i, term in enumerate(entry.get("terms") or []):
        term_name = term.get("name")
        if term_name not in TERMS:
            raise ArtifactError(
                f"{path}.terms[{i}].name is {term_name!r}, not a term of the generic model "
                f"({', '.join(TERMS)})"
            )
    found = non_finite_field(entry, path)
    if found:
        raise ArtifactError(found)
    _check_constants(entry, path)
    _check_generic_terms(entry, path)
    _check_loads(name, entry, path)
    for i, refit in enumerate((entry.get("interval") or {}).get("refits") or []):
        _check_model_entry(name, refit, f"{path}.interval.refits[{i}]")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _require_number(value: object, path: str) -> None:
    if not _is_number(value):
        raise ArtifactError(f"{path} is {value!r}, not a number{_FIX}")


def _check_constants(entry: dict, path: str) -> None:
    """Every fitted constant a number, named by its field when not."""
    for key in ("constants", "coefficients"):
        for name, value in (entry.get(key) or {}).items():
            _require_number(value, f"{path}.{key}.{name}")
    if "intercept" in entry:
        _require_number(entry["intercept"], f"{path}.intercept")


def _check_generic_terms(entry: dict, path: str) -> None:
    """The generic model's terms: the ones its settings list, none deleted or added, each
    constant a number within the bounds it was fitted in (an edited value is not a fit)."""
    terms = entry.get("terms")
    configured = (entry.get("settings") or {}).get("terms")
    if not isinstance(terms, list) or configured is None:
        return
    if not isinstance(configured, list):
        raise _wrong_type(configured, "a list", f"{path}.settings.terms")
    named = [t.get("name") for t in terms]
    if named != list(configured):
        gone = sorted(set(configured) - set(named))
        added = sorted(set(named) - set(configured))
        raise ArtifactError(
            f"{path}.terms lists {', '.join(map(str, named))}, but the model was fitted with "
            f"{', '.join(configured)} (settings.terms)"
            + (f": {', '.join(gone)} deleted" if gone else "")
            + (f": {', '.join(map(str, added))} added" if added else "")
            + "; fit the models again with `dlperf fit` (or `snakemake`)"
        )
    fields = [(f"{path}.terms[{i}]", t) for i, t in enumerate(terms)]
    if isinstance(entry.get("exponent"), dict):
        fields.append((f"{path}.exponent", entry["exponent"]))
    for where, term in fields:
        value, bounds = term.get("value"), term.get("bounds")
        _require_number(value, f"{where}.value")
        if not (isinstance(bounds, list) and len(bounds) == 2 and all(map(_is_number, bounds))):
            raise ArtifactError(f"{where}.bounds is {bounds!r}, not [lower, upper]")
        low, high = bounds
        slack = 1e-9 * max(1.0, abs(low), abs(high))  # the optimiser's rounding at a bound
        if not low - slack <= value <= high + slack:
            raise ArtifactError(
                f"{where}.value is {value:g}, outside the bounds it was fitted in "
                f"[{low:g}, {high:g}]: the artifact was edited; fit the models again with "
                "`dlperf fit`"
            )


def _check_loads(name: str, entry: dict, path: str) -> None:
    """A fitted entry the model can be made from: every field its ``from_dict`` reads is
    there (a deleted ``terms`` is named, not a KeyError at predict time)."""
    if entry.get("status", "ok") != "ok":
        return
    try:
        MODELS[name].from_dict(entry)
    except KeyError as exc:
        raise ArtifactError(
            f"{path}.{exc.args[0]} is missing; fit the models again with `dlperf fit`"
        ) from None
    except (TypeError, ValueError, AttributeError) as exc:  # a field inside of the wrong type
        raise ArtifactError(f"{path} cannot be read ({exc}){_FIX}") from None


def check_artifact(artifact: object, source: str) -> dict:
    """The artifact itself when it is one this dlperf can trust; otherwise an ArtifactError
    naming the field, e.g. ``networks.lenet.models.generic.terms[2].value is NaN``."""
    if not isinstance(artifact, dict) or not isinstance(artifact.get("networks"), dict):
        raise ArtifactError(f"{source} is not a model artifact; write one with `dlperf fit`")
    version = artifact.get("schema_version")
    if version != VERSION:
        raise ArtifactError(
            f"{source}: schema_version is {version!r}, this dlperf reads {VERSION}; "
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
    except InputFileError as exc:  # missing, or not JSON
        raise ArtifactError(f"{exc} (a model artifact is written by `dlperf fit`)") from None
    return check_artifact(artifact, str(path))


def version_warnings(artifact: dict) -> list[str]:
    """A warning when another dlperf version fitted the artifact: its models may differ from
    this version's (the schema is the same, or it would have been refused)."""
    fitted_by = artifact.get("dlperf_version")
    if fitted_by == dlperf.__version__:
        return []
    return [
        f"the artifact was fitted by dlperf {fitted_by or 'of an unknown version'}, this is "
        f"dlperf {dlperf.__version__}; fit it again with `dlperf fit` to get this version's "
        "models"
    ]
