"""Run every protocol for every model on one framework's points."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dlperf.models import InsufficientData, make_model
from dlperf.models.base import FEATURES, TARGET

from .metrics import ape, summarise
from .protocols import plan

POINT_COLUMNS = ["framework", "network", "model", "protocol", "fold"] + FEATURES + [
    "measured_s",
    "predicted_s",
    "ape",
]
SUMMARY_COLUMNS = [
    "framework",
    "network",
    "model",
    "protocol",
    "status",
    "reason",
    "n_folds",
    "n_points",
    "mape",
    "mape_lo",
    "mape_hi",
    "median_ape",
    "median_ape_lo",
    "median_ape_hi",
    "max_ape",
    "max_ape_lo",
    "max_ape_hi",
    "rmse",
    "rmse_lo",
    "rmse_hi",
    "r2",
    "r2_lo",
    "r2_hi",
]


def cross_validate(
    points: pd.DataFrame,
    framework: str,
    models: dict[str, dict],
    protocols: dict[str, dict],
    seed: int = 0,
    n_boot: int = 1000,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per-point predictions, summary) for every network x model x protocol."""
    point_rows, summary_rows = [], []
    selected = points[points["framework"] == framework]
    for network, group in selected.groupby("network", sort=True):
        group = group.reset_index(drop=True)
        for protocol, settings in protocols.items():
            split_plan = plan(group, protocol, settings or {}, seed)
            for name, model_settings in models.items():
                base = {"framework": framework, "network": network, "model": name, "protocol": protocol}
                if split_plan.reason:
                    summary_rows.append({**base, "status": "not_run", "reason": split_plan.reason})
                    continue
                rows, skipped = [], []
                for split in split_plan.splits:
                    train, test = group.iloc[split.train], group.iloc[split.test]
                    try:
                        model = make_model(name, model_settings or {}).fit(train, seed)
                    except InsufficientData as exc:
                        skipped.append(f"{split.fold}: {exc}")
                        continue
                    predicted = model.predict(test)
                    measured = test[TARGET].to_numpy(float)
                    for i, (_, row) in enumerate(test.iterrows()):
                        rows.append(
                            {
                                **base,
                                "fold": split.fold,
                                **{k: int(row[k]) for k in FEATURES},
                                "measured_s": measured[i],
                                "predicted_s": predicted[i],
                                "ape": float(ape(measured[i : i + 1], predicted[i : i + 1])[0]),
                            }
                        )
                point_rows.extend(rows)
                if not rows:
                    summary_rows.append(
                        {**base, "status": "insufficient_data", "reason": "; ".join(skipped)}
                    )
                    continue
                measured = np.array([r["measured_s"] for r in rows])
                predicted = np.array([r["predicted_s"] for r in rows])
                summary_rows.append(
                    {
                        **base,
                        "status": "ok",
                        "reason": "; ".join(skipped) or None,
                        "n_folds": len(split_plan.splits) - len(skipped),
                        "n_points": len(rows),
                        **summarise(measured, predicted, n_boot=n_boot, seed=seed),
                    }
                )
    return (
        pd.DataFrame(point_rows, columns=POINT_COLUMNS),
        pd.DataFrame(summary_rows, columns=SUMMARY_COLUMNS),
    )
