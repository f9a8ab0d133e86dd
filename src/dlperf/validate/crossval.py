"""Run every protocol for every model on one framework's points.

Splits depend only on the points, so each protocol is planned once per network and shared by
all models; a model fitted on a training set is cached, because protocols often repeat one
(the default extrapolation split is also a leave-one-level-out fold). Because every model of a
(network, protocol) group is tested on the same splits, the models can be compared pairwise on
the same held-out units (:mod:`dlperf.validate.comparison`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dlperf.errors import UnknownName
from dlperf.folds import configuration_groups
from dlperf.models import MODELS, InsufficientData, ModelUnavailable, capabilities_of, make_model
from dlperf.models.base import FEATURES, TARGET
from dlperf.models.series import as_series, base_networks

from .comparison import VS_BEST_COLUMNS, compare_with_best
from .metrics import METRICS, ape, noise_floor, summarise
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
    "ci_unit",  # what the confidence intervals resample: fold, level or configuration
    "n_units",
    *[f"{m}{suffix}" for m in METRICS for suffix in ("", "_lo", "_hi")],
    "noise_ape",  # spread of the held-out points' repetitions: a perfect model's score
    *VS_BEST_COLUMNS,
]
# Summary statuses: ok; not_run (the points cannot support the protocol); not_applicable (the
# model cannot do what the protocol asks); insufficient_data (the data cannot inform: no fold had
# enough points for the model, or the training set holds a single level of the column the
# protocol extrapolates in); unavailable (the model's package is not installed here);
# fit_error (every fold's fit raised an error).
STATUSES = ("ok", "not_run", "not_applicable", "insufficient_data", "unavailable", "fit_error")


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
            except (InsufficientData, ModelUnavailable) as exc:
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
    """Held-out predictions of one model under one plan, and its summary row.

    The predictions carry, beside POINT_COLUMNS, the frame row of each point (``row``) and its
    resampling unit (``unit``), which the paired comparison matches models on."""
    if split_plan.reason:
        return None, {**base, "status": split_plan.status, "reason": split_plan.reason}
    frames, skipped, errors = [], [], []
    measured_all = frame[TARGET].to_numpy(float)
    configurations = configuration_groups(frame)
    for number, split in enumerate(split_plan.splits):
        model = fits.get(base["model"], settings, scope, frame, split.train)
        if isinstance(model, ModelUnavailable):
            # Not a matter of data: no fold can run, and the reason names the install.
            return None, {**base, "status": "unavailable", "reason": str(model)}
        if isinstance(model, InsufficientData):
            skipped.append(f"{split.fold}: {model}")
            continue
        if isinstance(model, Exception):
            errors.append(f"{split.fold}: {model}")
            continue
        test = frame.iloc[split.test]
        unit = configurations[split.test] if split_plan.unit == "configuration" else number
        predicted = np.asarray(model.predict(test), dtype=float)
        frames.append(_held_out(base, split, test, measured_all[split.test], predicted, unit))
    problems = skipped + errors
    if not frames:
        status = "fit_error" if errors else "insufficient_data"
        return None, {**base, "status": status, "reason": "; ".join(problems)}
    held_out = pd.concat(frames, ignore_index=True)
    notes = []
    if problems:
        notes.append(
            f"{len(problems)} of {len(split_plan.splits)} folds skipped: " + "; ".join(problems)
        )
    n_units = held_out["unit"].nunique()
    if n_units < 2:
        notes.append(f"one held-out {split_plan.unit}: no confidence intervals")
    rows = frame.iloc[held_out["row"].to_numpy()]
    row = {
        **base,
        "status": "ok",
        "reason": "; ".join(notes) or None,
        "n_folds": len(frames),
        "n_points": len(held_out),
        "ci_unit": split_plan.unit,
        "n_units": n_units,
        **summarise(
            held_out["measured_s"].to_numpy(),
            held_out["predicted_s"].to_numpy(),
            held_out["unit"].to_numpy(),
            n_boot,
            seed,
        ),
        # Frames without repetition data (not from points.to_points) have no noise floor.
        "noise_ape": noise_floor(rows["rep_ape"], rows["n_reps"])
        if {"rep_ape", "n_reps"} <= set(frame.columns)
        else float("nan"),
    }
    return held_out, row


def _held_out(base: dict, split, test: pd.DataFrame, measured, predicted, unit) -> pd.DataFrame:
    """One fold's held-out points in POINT_COLUMNS, with their frame ``row`` and ``unit``."""
    return pd.DataFrame(
        {
            **base,
            "network": test["network"].to_numpy(),
            "fold": split.fold,
            **{k: test[k].to_numpy(int) for k in FEATURES},
            "measured_s": measured,
            "predicted_s": predicted,
            "ape": ape(measured, predicted),
            "row": split.test,
            "unit": unit,
        },
        columns=[*POINT_COLUMNS, "row", "unit"],
    )


def _run_group(
    base: dict,
    split_plan: Plan,
    frame: pd.DataFrame,
    models: dict[str, dict],
    fits: _Fits,
    scope: str,
    n_boot: int,
    seed: int,
) -> tuple[list[pd.DataFrame], list[dict]]:
    """Every model of one (network, protocol) group on the same splits, compared with the best."""
    rows, held_out = [], {}
    for name, model_settings in models.items():
        base_row = {**base, "model": name}
        if _across_hardware(name) and base["protocol"] != "cross_hardware":
            continue  # the models across hardware are judged by their own protocol only
        if base["protocol"] == "cross_hardware" and not _across_hardware(name):
            reason = f"{name} sees no hardware, so it cannot predict a GPU type not trained on"
            rows.append({**base_row, "status": "not_applicable", "reason": reason})
            continue
        if (
            base["protocol"] in ACROSS_NETWORKS
            and not split_plan.reason
            and not capabilities_of(MODELS[name]).uses_network_features
        ):
            rows.append(
                {
                    **base_row,
                    "status": "not_applicable",
                    "reason": f"{name} uses no network features (parameter count, FLOPs), "
                    "so it cannot predict a network it was not trained on",
                }
            )
            continue
        points, row = _run_plan(
            base_row, split_plan, frame, model_settings or {}, fits, scope, n_boot, seed
        )
        if points is not None:
            held_out[name] = points
        rows.append(row)
    compare_with_best(rows, held_out, n_boot, seed)
    return [points[POINT_COLUMNS] for points in held_out.values()], rows


def _across_hardware(name: str) -> bool:
    return capabilities_of(MODELS[name]).across_hardware


def _with_hardware_models(
    models: dict[str, dict], protocols: dict, hardware: str | None
) -> dict[str, dict]:
    """The configured models, plus the models across hardware when cross_hardware is asked and
    none is configured (they are fitted only on timings of several GPU types); those read the
    user's catalogue ``hardware`` where one is given and their settings name none."""
    if "cross_hardware" in protocols and not any(_across_hardware(n) for n in models):
        models = {**models, **{n: {} for n in MODELS if _across_hardware(n)}}
    if hardware is None:
        return models
    return {
        name: {"hardware": hardware, **(settings or {})} if _across_hardware(name) else settings
        for name, settings in models.items()
    }


def cross_validate(
    points: pd.DataFrame,
    framework: str,
    models: dict[str, dict],
    protocols: dict[str, dict],
    seed: int = 0,
    n_boot: int = 1000,
    hardware: str | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per-point held-out predictions, summary) for every network x model x protocol; the
    models across hardware read the user's GPU catalogue ``hardware`` (docs/hardware.md)."""
    unknown = [p for p in protocols if p not in PROTOCOLS]
    if unknown:
        raise UnknownName(
            f"unknown validation protocol(s) {', '.join(unknown)}; "
            f"choose from {', '.join(PROTOCOLS)}"
        )
    # A network measured on several GPU types or precisions: one series each (as_series),
    # except for cross_hardware, which holds out each GPU type of the network trained.
    selected = as_series(points[points["framework"] == framework].reset_index(drop=True))
    models = _with_hardware_models(models, protocols, hardware)
    fits = _Fits(seed)
    held_out, summary = [], []
    groups = [
        (network, group, protocol, settings)
        for protocol, settings in protocols.items()
        if protocol not in ACROSS_NETWORKS
        for network, group in selected.groupby(
            base_networks(selected) if protocol == "cross_hardware" else selected["network"],
            sort=True,
        )
    ]
    for network, group, protocol, settings in sorted(groups, key=lambda g: g[0]):
        group = group.reset_index(drop=True)
        split_plan = plan(group, protocol, settings or {}, seed)
        base = {"framework": framework, "network": network, "protocol": protocol}
        frames, rows = _run_group(base, split_plan, group, models, fits, network, n_boot, seed)
        held_out += frames
        summary += rows
    if "cross_network" in protocols:
        for network, split_plan in plan_cross_network(selected).items():
            base = {"framework": framework, "network": network, "protocol": "cross_network"}
            frames, rows = _run_group(base, split_plan, selected, models, fits, "*", n_boot, seed)
            held_out += frames
            summary += rows
    predictions = (
        pd.concat(held_out, ignore_index=True) if held_out else pd.DataFrame(columns=POINT_COLUMNS)
    )
    return predictions, pd.DataFrame(summary, columns=SUMMARY_COLUMNS)
