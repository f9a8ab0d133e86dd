"""What the artifact, `dlperf predict` and the report say of the answer
(:mod:`dlperf.models.answer`): which models it combines, how its interval grows, and what it
could not check."""

from __future__ import annotations

import pandas as pd

from . import answer
from .answer import CALIBRATED_LEVEL, RULES, candidates, distance, fitted_models, per_doubling
from .base import accumulation_steps


def answer_block(artifact: dict, network: str) -> dict:
    """What the artifact says of a network's answer: its models, the interval's growth per
    doubling of distance, and why."""
    names = candidates(artifact, network) if fitted_models(artifact, network) else []
    growth = per_doubling(artifact, RULES, CALIBRATED_LEVEL)
    if not names:
        why = "no model could be fitted: there is no answer"
    else:
        why = (
            f"the median in log time of {', '.join(names)} (the fitted models that cost the "
            "all-reduce, else every fitted model); interval: the models' training scatter "
            f"and {growth:.3g} in log time times log2(1 + D), D the doublings beyond the "
            "measured workers, nodes and batch sizes, combined in quadrature at 90 % "
            f"({_growth_source(artifact)}); never faster than perfect "
            "scaling of the best per-worker throughput measured"
        )
    method = answer.__doc__.split("\n\n")[1].replace("\n", " ")
    return {
        "method": method,
        "why": why,
        "models": names,
        "log_error_per_doubling": growth,
    }


def _growth_source(artifact: dict) -> str:
    if RULES.measured_growth and artifact.get("answer_growth_scores"):
        return "measured on the fit's backtest"
    return "a prior chosen on published tables: no backtest record in this fit"


def answer_warnings(artifact: dict, network: str, rows: pd.DataFrame | None = None) -> list[str]:
    """What the answer could not check for this network: a single batch size measured; with
    ``rows``, the rows beyond the measured range, whose interval is a prior growth with
    distance rather than a measurement of this series, and the rows with fewer accumulation
    steps than measured."""
    info = artifact.get("networks", {}).get(network) or {}
    measured = info.get("measured") or {}
    found = []
    if rows is not None and measured:
        far = distance(measured, rows, RULES.distance, RULES.accumulation)
        if (far > 0).any():
            found.append(
                f"{int((far > 0).sum())} of the rows lie beyond the measured workers, nodes or "
                f"batch sizes (up to {far.max():.1f} doublings): the answer's interval grows by "
                f"{per_doubling(artifact, RULES, CALIBRATED_LEVEL):.3g} in log time times "
                "log2(1 + doublings) "
                f"({_growth_source(artifact)}), not by measurements there"
            )
    least = min(measured.get("grad_accum_steps") or [1])
    if rows is not None and least > 1:
        steps = accumulation_steps(rows)
        if (steps < least).any():
            found.append(
                f"{int((steps < least).sum())} of the rows ask for fewer gradient-accumulation "
                f"steps than measured (down to {int(steps.min())}; least measured {least}): the "
                f"all-reduce the measurements saw once per {least} micro-batches is carried to "
                'fewer, so their scatter there grows with it (docs/model.md, "A fixed global '
                'batch carried to g = 1")'
            )
    if len(measured.get("batch_size") or []) == 1:
        found.append(
            f"one batch size was measured ({measured['batch_size'][0]}): how time grows with "
            "the batch was not measured"
        )
    return found
