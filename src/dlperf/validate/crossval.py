"""Run every protocol for every model on one framework's points.

Splits depend only on the points, so each protocol is planned once per network and shared by
all models; a model fitted on a training set is cached, because protocols often repeat one
(the default extrapolation split is also a leave-one-level-out fold).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dlperf.models import MODELS, InsufficientData, capabilities_of, make_model
from dlperf.models.base import FEATURES, TARGET

from .metrics import METRICS, ape, summarise
from .protocols import ACROSS_NETWORKS, PROTOCOLS, Plan, plan, plan_cross_network

POINT_COLUMNS = (
    ["framework", "network", "model", "protocol", "fold"]
    + FEATURES
    + [
        "measured_s",
        "predicted_s",
        "ape",
    ]
)
SUMMARY_COLUMNS = [
    "framework",
    "network",
    "model",
    "protocol",
    "status",
    "reason",
    "n_folds",
    "n_points",
] + [f"{m}{suffix}" for m in METRICS for suffix in ("", "_lo", "_hi")]
# Summary statuses: ok; not_run (the points cannot support the protocol); not_applicable (the
# model cannot do what the protocol asks); insufficient_data (no fold had enough points for the
# model); fit_error (every fold's fit raised an error).
STATUSES = ("ok", "not_run", "not_applicable", "insufficient_data", "fit_error")


class _Fits:
    """Fitted models by (model, scope, training rows): each training set is fitted once."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._cache: dict[tuple, object] = {}

    def get(self, name: str, settings: dict, scope: str, frame: pd.DataFrame, train: np.ndarray):
        key = (name, scope, train.tobytes())
        if key not in self._cache:
            try:
                model = make_model(name, settings, self.seed)
                self._cache[key] = model.fit(frame.iloc[train])
            except InsufficientData as exc:
                self._cache[key] = exc
            except Exception as exc:  # noqa: BLE001 - one failing fit must not hide the others
                self._cache[key] = RuntimeError(f"{type(exc).__name__}: {exc}")
        return self._cache[key]


def _run_plan(
    base: dict,
    split_plan: Plan,
    frame: pd.DataFrame,
    settings: dict,
    fits: _Fits,
    scope: str,
    n_boot: int,
    seed: int,
) -> tuple[pd.DataFrame | None, dict]:
    """Held-out predictions of one model under one plan, and its summary row."""
    if split_plan.reason:
        return None, {**base, "status": "not_run", "reason": split_plan.reason}
    frames, skipped, errors = [], [], []
    measured_all = frame[TARGET].to_numpy(float)
    for split in split_plan.splits:
        model = fits.get(base["model"], settings, scope, frame, split.train)
        if isinstance(model, InsufficientData):
            skipped.append(f"{split.fold}: {model}")
            continue
        if isinstance(model, Exception):
            errors.append(f"{split.fold}: {model}")
            continue
        test = frame.iloc[split.test]
        measured = measured_all[split.test]
        predicted = np.asarray(model.predict(test), dtype=float)
        frames.append(
            pd.DataFrame(
                {
                    **base,
                    "network": test["network"].to_numpy(),
                    "fold": split.fold,
                    **{k: test[k].to_numpy(int) for k in FEATURES},
                    "measured_s": measured,
                    "predicted_s": predicted,
                    "ape": ape(measured, predicted),
                },
                columns=POINT_COLUMNS,
            )
        )
    problems = skipped + errors
    if not frames:
        status = "fit_error" if errors else "insufficient_data"
        return None, {**base, "status": status, "reason": "; ".join(problems)}
    held_out = pd.concat(frames, ignore_index=True)
    reason = None
    if problems:
        reason = f"{len(problems)} of {len(split_plan.splits)} folds skipped: " + "; ".join(
            problems
        )
    row = {
        **base,
        "status": "ok",
        "reason": reason,
        "n_folds": len(frames),
        "n_points": len(held_out),
        **summarise(
            held_out["measured_s"].to_numpy(), held_out["predicted_s"].to_numpy(), n_boot, seed
        ),
    }
    return held_out, row


def cross_validate(
    points: pd.DataFrame,
    framework: str,
    models: dict[str, dict],
    protocols: dict[str, dict],
    seed: int = 0,
    n_boot: int = 1000,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per-point held-out predictions, summary) for every network x model x protocol."""
    unknown = [p for p in protocols if p not in PROTOCOLS]
    if unknown:
        raise ValueError(
            f"unknown validation protocol(s) {', '.join(unknown)}; "
            f"choose from {', '.join(PROTOCOLS)}"
        )
    selected = points[points["framework"] == framework].reset_index(drop=True)
    fits = _Fits(seed)
    held_out, summary = [], []

    def record(result: tuple[pd.DataFrame | None, dict]) -> None:
        if result[0] is not None:
            held_out.append(result[0])
        summary.append(result[1])

    for network, group in selected.groupby("network", sort=True):
        group = group.reset_index(drop=True)
        for protocol, settings in protocols.items():
            if protocol in ACROSS_NETWORKS:
                continue
            split_plan = plan(group, protocol, settings or {}, seed)
            for name, model_settings in models.items():
                base = {
                    "framework": framework,
                    "network": network,
                    "model": name,
                    "protocol": protocol,
                }
                record(
                    _run_plan(
                        base, split_plan, group, model_settings or {}, fits, network, n_boot, seed
                    )
                )
    if "cross_network" in protocols:
        for network, split_plan in plan_cross_network(selected).items():
            for name, model_settings in models.items():
                base = {
                    "framework": framework,
                    "network": network,
                    "model": name,
                    "protocol": "cross_network",
                }
                if (
                    not split_plan.reason
                    and not capabilities_of(MODELS[name]).uses_network_features
                ):
                    summary.append(
                        {
                            **base,
                            "status": "not_applicable",
                            "reason": f"{name} uses no network features (parameter count, FLOPs), "
                            "so it cannot predict a network it was not trained on",
                        }
                    )
                    continue
                record(
                    _run_plan(
                        base, split_plan, selected, model_settings or {}, fits, "*", n_boot, seed
                    )
                )
    predictions = (
        pd.concat(held_out, ignore_index=True) if held_out else pd.DataFrame(columns=POINT_COLUMNS)
    )
    return predictions, pd.DataFrame(summary, columns=SUMMARY_COLUMNS)
