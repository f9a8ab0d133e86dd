"""What the artifact, `dlperf predict` and the report say of the answer
(:mod:`dlperf.models.answer`): per extrapolation ratio its models, weights and backtest scores,
why they were chosen, and what the answer could not check."""

from __future__ import annotations

import pandas as pd

from . import answer
from .answer import PRIOR_LOG_ERROR_PER_DOUBLING, untested_nodes
from .answer_weights import (
    INDISTINCT,
    WITHIN_BEST,
    fitted_models,
    records_of,
    scores,
    weights_from,
)

# Extrapolation ratios the artifact's answer block describes (the answer itself is computed at
# whatever ratio is asked).
DESCRIBED_RATIOS = (1, 2, 4, 8, 16)


def answer_block(artifact: dict, network: str) -> dict:
    """What the artifact says of a network's answer: per extrapolation ratio, the models, their
    weights and backtest scores (mean |log error|), and why."""
    fitted = fitted_models(artifact, network)
    records = records_of(artifact, network, fitted)
    own = any(((artifact["networks"][network].get("backtest") or {}).get("models") or {}).values())
    if not fitted:
        why = "no model could be fitted: there is no answer"
    elif records.empty:
        why = (
            "no backtest was possible (fewer than 3 measured worker counts in every series): "
            "the answer is the median of the collective models (all-reduce cost models) whose "
            f"training error is within {WITHIN_BEST:g}x of the best, its interval their spread "
            f"plus {PRIOR_LOG_ERROR_PER_DOUBLING:g} in log time per doubling beyond the range"
        )
    else:
        why = (
            "models weighted by score^-2, the score being the mean |log error| when refitted on "
            "fewer worker counts and asked beyond them at a comparable ratio; only models that a "
            "paired comparison over the backtest cannot tell from the best take part (chance "
            f"of scoring no worse than the best >= {INDISTINCT:g}; inside the measured range the "
            f"score is the training error and models within {WITHIN_BEST:g}x of the best take "
            "part), combined by weighted median; a model the backtest could not refit takes part "
            "only if it is a collective model (all-reduce cost model)"
            + (
                ""
                if records.crossed_nodes
                else "; no record crossed to more nodes than trained on, so a row on more nodes "
                "than measured is answered as without a backtest"
            )
            + (
                ""
                if own
                else " (this network's own series could not be backtested: other networks' records)"
            )
        )
    by_ratio = []
    for ratio in DESCRIBED_RATIOS:
        found = scores(records, float(ratio))
        by_ratio.append(
            {
                "ratio": ratio,
                "weights": weights_from(records, float(ratio), fitted) if fitted else {},
                "scores": {m: round(v, 6) for m, v in sorted(found.items())},
            }
        )
    method = answer.__doc__.split("\n\n")[1].replace("\n", " ")
    return {"method": method, "why": why, "by_ratio": by_ratio}


def answer_warnings(artifact: dict, network: str, rows: pd.DataFrame | None = None) -> list[str]:
    """What the answer could not check for this network: no backtest of its own series, a
    single batch size measured; with ``rows``, the rows on more nodes than any backtest record
    crossed to."""
    info = artifact.get("networks", {}).get(network) or {}
    found = []
    fitted = fitted_models(artifact, network)
    if rows is not None and fitted:
        records = records_of(artifact, network, fitted)
        unseen = untested_nodes(artifact, network, rows, records)
        if unseen.any():
            nodes = sorted({int(n) for n in rows["nodes"].to_numpy(int)[unseen]})
            found.append(
                f"{', '.join(map(str, nodes))} nodes: no backtest record asked for more nodes "
                "than it was trained on, so nothing ranks the models there; the answer is the "
                "median of the collective models, with the interval of an answer without a "
                "backtest"
            )
    reason = (info.get("backtest") or {}).get("reason")
    if reason:
        found.append(
            f"the answer for {network} was not backtested on its own series ({reason}); "
            "its interval is wider for it"
        )
    measured = info.get("measured") or {}
    if len(measured.get("batch_size") or []) == 1:
        found.append(
            f"one batch size was measured ({measured['batch_size'][0]}): how time grows with "
            "the batch was not measured"
        )
    return found
