"""The rounds of an adaptive sweep: which configurations to measure next, and when to stop.

One function, :func:`next_round`, serves the workflow (whose checkpoint calls it after each
round's measurements) and the replay (which "measures" by reading a finished table) alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .design import AXES, coordinates, maximin, nearest_distance, series_keys
from .scoring import score_series


@dataclass(frozen=True)
class AdaptiveSettings:
    """The config section ``adaptive`` (docs/adaptive.md)."""

    initial: int = 4  # configurations per series in round 0 (a space-filling design)
    per_round: int = 4  # configurations per later round, over all series
    budget_runs: int | None = None  # stop before the measured runs would pass this
    max_width: float | None = None  # stop when the widest relative interval is below this
    model: str = "generic"
    model_settings: dict = field(default_factory=dict)
    compare_models: tuple[str, ...] = ("usl", "ernest")
    n_boot: int = 10
    level: float = 0.9
    seed: int = 0

    @classmethod
    def from_config(cls, section: dict) -> AdaptiveSettings:
        """Settings from the config's ``adaptive`` section (keys as in the schema)."""
        known = {k: v for k, v in section.items() if k in cls.__dataclass_fields__}
        if "compare_models" in known:
            known["compare_models"] = tuple(known["compare_models"])
        return cls(**known)


@dataclass
class Round:
    """The configurations chosen for one round, why, and whether the sweep should stop."""

    chosen: pd.DataFrame  # candidate rows with columns reason and score
    widest: float  # widest relative interval over the unmeasured grid before this round
    stop: str | None  # why the sweep stops here (chosen is then empty)


def _cost(frame: pd.DataFrame) -> np.ndarray:
    """Runs a configuration costs: its repetitions (one when the grid does not say)."""
    if "n_reps" in frame.columns:
        return frame["n_reps"].to_numpy(int)
    return np.ones(len(frame), int)


def _initial(candidates: pd.DataFrame, settings: AdaptiveSettings) -> pd.DataFrame:
    per_series = [
        [series.index[pick] for pick in maximin(coordinates(series), settings.initial)]
        for _, series in candidates.groupby(series_keys(candidates), sort=True)
    ]
    # Round-robin over the series, so a budget smaller than the design still covers every series.
    rows = [
        picks[i]
        for i in range(max(map(len, per_series), default=0))
        for picks in per_series
        if i < len(picks)
    ]
    chosen = candidates.loc[rows].copy()
    chosen["reason"] = "initial space-filling design"
    chosen["score"] = np.nan
    return chosen


def _describe(width: float, disagreement: float, new_levels: str) -> str:
    parts = []
    if new_levels:
        parts.append(f"never measured: {new_levels}")
    if np.isfinite(width):
        parts.append(f"interval width {width:.0%} of the prediction")
    else:
        parts.append("the model cannot be fitted yet")
    if disagreement > 0:
        parts.append(f"models disagree by {disagreement:.0%}")
    return "; ".join(parts)


def _scored(candidates: pd.DataFrame, measured: pd.DataFrame, settings: AdaptiveSettings):
    """Every unmeasured candidate with its score parts, series by series."""
    keys = series_keys(candidates)
    parts = []
    for key, series in candidates.groupby(keys, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        done = measured
        for column, value in zip(keys, key, strict=True):
            done = done[done[column] == value]
        coords = coordinates(series)
        is_measured = _is_measured(series, done)
        todo = series[~is_measured]
        if todo.empty:
            continue
        scores = score_series(
            done.reset_index(drop=True),
            todo,
            settings.model,
            settings.model_settings,
            settings.compare_models,
            settings.n_boot,
            settings.level,
            settings.seed,
        )
        # Near a measured configuration a candidate teaches less: scale by the distance to the
        # nearest measured one, relative to the grid's spacing.
        distance = nearest_distance(coords, is_measured)[~is_measured]
        spacing = _spacing(coords)
        frame = todo.copy()
        frame["relative_width"] = scores.relative_width
        frame["disagreement"] = scores.disagreement
        frame["novelty"] = scores.novelty
        frame["new_levels"] = scores.new_levels
        frame["spread"] = np.minimum(1.0, distance / spacing)
        frame["coords"] = list(coords[~is_measured])
        parts.append(frame)
    return pd.concat(parts) if parts else candidates.iloc[0:0]


def _spacing(coords: np.ndarray) -> float:
    """Median distance from a configuration to its nearest neighbour."""
    if len(coords) < 2:
        return 1.0
    diff = coords[:, None, :] - coords[None, :, :]
    distance = np.sqrt((diff**2).sum(axis=-1))
    np.fill_diagonal(distance, np.inf)
    nearest = distance.min(axis=1)
    return float(np.median(nearest[np.isfinite(nearest)])) or 1.0


def _is_measured(candidates: pd.DataFrame, measured: pd.DataFrame) -> np.ndarray:
    if measured.empty:
        return np.zeros(len(candidates), bool)
    keys = series_keys(candidates) + list(AXES)
    done = set(map(tuple, measured[keys].itertuples(index=False, name=None)))
    return np.array([tuple(row) in done for row in candidates[keys].itertuples(index=False)])


def next_round(
    candidates: pd.DataFrame,
    measured: pd.DataFrame,
    settings: AdaptiveSettings,
    runs_used: int = 0,
) -> Round:
    """The next configurations to measure. ``candidates`` is the grid (one row per configuration,
    ``n_reps`` its cost in runs), ``measured`` the points measured so far."""
    candidates = candidates.reset_index(drop=True)
    budget = settings.budget_runs
    if measured.empty:
        chosen = _affordable(_initial(candidates, settings), runs_used, budget)
        stop = None if not chosen.empty else "the budget does not cover the initial design"
        return Round(chosen, np.inf, stop)
    scored = _scored(candidates, measured, settings)
    if scored.empty:
        return Round(scored, 0.0, "every configuration of the grid is measured")
    widest = float(scored["relative_width"].max())
    if settings.max_width is not None and widest <= settings.max_width:
        return Round(scored.iloc[0:0], widest, f"widest interval {widest:.1%} <= max_width")
    picks: list = []
    spread = scored["spread"].to_numpy(float).copy()
    value = (
        np.where(np.isfinite(scored["relative_width"]), scored["relative_width"], 1.0)
        + scored["disagreement"].to_numpy(float)
        + scored["novelty"].to_numpy(float)
    )
    coords = np.vstack(scored["coords"].to_numpy())
    series = scored[series_keys(scored)].astype(str).agg("|".join, axis=1).to_numpy()
    spacing = _spacing(coords)
    cost = _cost(scored)
    spent = runs_used
    for _ in range(min(settings.per_round, len(scored))):
        gain = np.where(np.isin(np.arange(len(scored)), picks), -np.inf, value * spread)
        if budget is not None:
            gain = np.where(spent + cost > budget, -np.inf, gain)
        if not np.isfinite(gain).any():
            break
        pick = int(np.argmax(gain))
        picks.append(pick)
        spent += int(cost[pick])
        # Spread the round out: candidates of the same series near this pick lose value.
        same = series == series[pick]
        near = np.sqrt(((coords - coords[pick]) ** 2).sum(axis=1)) / spacing
        spread = np.where(same, np.minimum(spread, np.minimum(1.0, near)), spread)
    if not picks:
        return Round(scored.iloc[0:0], widest, "the budget is spent")
    chosen = scored.iloc[picks].copy()
    chosen["score"] = value[picks]
    chosen["reason"] = [
        _describe(w, d, n)
        for w, d, n in zip(
            chosen["relative_width"], chosen["disagreement"], chosen["new_levels"], strict=True
        )
    ]
    return Round(chosen.drop(columns=["coords", "spread"]), widest, None)


def _affordable(chosen: pd.DataFrame, runs_used: int, budget: int | None) -> pd.DataFrame:
    if budget is None:
        return chosen
    within = runs_used + np.cumsum(_cost(chosen)) <= budget
    return chosen[within]
