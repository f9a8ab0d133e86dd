"""Which of a fitted generic model's constants the data identify (docs/model.md, identifiability).

The artifact entry's bootstrap refits (``entry["interval"]["refits"]``, each a refit's
``to_dict()`` on resampled configurations) give every term's constant a percentile interval and
an inclusion frequency: the share of refits in which the term is on (not inactive, not driven to
zero by the penalty). A constant whose interval reaches zero is *not identified*: the data are as
consistent with the term being absent, so its share of the time is not a fact to print. The
exponent's interval comes from the same refits; when it was not fitted, the reason is given.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .identify import MIN_BATCH_LEVELS_FOR_EXPONENT
from .terms import TERMS

DEFAULT_LEVEL = 0.95
# Fewer refits than this give no interval worth the name: identified is then None, with why.
MIN_REFITS = 10
METHOD = (
    "percentile intervals of each constant over the bootstrap refits on resampled "
    "configurations (interval.refits); a constant is identified when its interval excludes zero"
)


def _on(term: dict) -> bool:
    return term["state"] == "on"


def _quantiles(values: np.ndarray, level: float) -> tuple[float, float]:
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(values, [tail, 1.0 - tail])
    return float(lo), float(hi)


def _exponent_reason(entry: dict, points: pd.DataFrame) -> str | None:
    """Why the exponent a is fixed at 1 (None when it was fitted)."""
    if entry["exponent"]["fitted"]:
        return None
    active = [t["name"] for t in entry["terms"] if t["state"] != "inactive"]
    if not any(TERMS[t].uses_exponent for t in active):
        return "no active term carries b^a"
    levels = int(points["batch_size"].nunique())
    if levels < MIN_BATCH_LEVELS_FOR_EXPONENT:
        return (
            f"{levels} batch-size level(s) measured; fitting a needs "
            f"{MIN_BATCH_LEVELS_FOR_EXPONENT} or more, so a = 1 (compute proportional to the batch)"
        )
    return (
        f"{len(points)} measured points leave no residual degree of freedom for a; a = 1 "
        "(compute proportional to the batch)"
    )


def identifiability_block(entry: dict, points: pd.DataFrame, level: float = DEFAULT_LEVEL) -> dict:
    """The ``identifiability`` block of a generic model's artifact entry.

    ``terms[name]``: the fitted ``value``, the interval ``lo``/``hi`` over the refits, the
    ``inclusion`` frequency, ``identified`` (True, False, or None when there are too few refits)
    and ``reason`` when it is not True. ``exponent``: the same for a, plus ``fitted`` and, when
    fixed, the ``reason``."""
    refits = (entry.get("interval") or {}).get("refits") or []
    enough = len(refits) >= MIN_REFITS
    too_few = (
        f"only {len(refits)} bootstrap refits (at least {MIN_REFITS} are needed); raise the "
        "number of interval refits in the fit settings"
    )
    terms = {}
    for position, term in enumerate(entry["terms"]):
        name = term["name"]
        # Refits keep the fitted model's term list, so the same position holds the same term.
        values = np.array([r["terms"][position]["value"] for r in refits], float)
        inclusion = float(np.mean([_on(r["terms"][position]) for r in refits])) if refits else None
        lo, hi = _quantiles(values, level) if refits else (None, None)
        if term["state"] == "inactive":
            identified, reason = False, term["note"]
        elif not enough:
            identified, reason = None, too_few
        else:
            tiny = 1e-6 * max(abs(term["scale"] or 0.0), 1e-300)
            identified = lo > tiny
            reason = None if identified else "its interval includes zero"
        terms[name] = {
            "value": term["value"],
            "lo": lo,
            "hi": hi,
            "inclusion": inclusion,
            "identified": identified,
            "reason": reason,
        }
    exponents = np.array([r["exponent"]["value"] for r in refits], float)
    lo_a, hi_a = _quantiles(exponents, level) if refits else (None, None)
    return {
        "method": METHOD,
        "level": level,
        "refits": len(refits),
        "terms": terms,
        "exponent": {
            "value": entry["exponent"]["value"],
            "lo": lo_a,
            "hi": hi_a,
            "fitted": bool(entry["exponent"]["fitted"]),
            "reason": _exponent_reason(entry, points),
        },
    }
