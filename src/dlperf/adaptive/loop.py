"""The rounds of an adaptive sweep: which runs to measure next, and when to stop.

The unit of cost is the run: one repetition of one configuration. A chosen configuration is
measured once; its further repetitions are spent only when every configuration of its series has
been measured (repetitions sharpen a point the models already have; a new configuration may show
what they lack). One function, :func:`next_round`, serves the workflow (whose checkpoint calls it
after each round's measurements) and the replay (which "measures" by reading a finished table).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .design import (
    coordinates,
    coverage_levels,
    maximin,
    nearest_distance,
    series_keys,
)
from .rounds import CONFIGURATION
from .scoring import score_series


@dataclass(frozen=True)
class AdaptiveSettings:
    """The config section ``adaptive`` (docs/adaptive.md)."""

    initial: int = 4  # configurations per series in round 0 (a space-filling design)
    per_round: int = 4  # runs per later round, over all series
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
    """The runs chosen for one round (a configuration and its repetition each), why, and
    whether the sweep stops (chosen is then empty)."""

    chosen: pd.DataFrame  # candidate rows with columns rep, reason and score
    widest: float  # widest relative interval over the unmeasured grid before this round
    stop: str | None


def _key_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in CONFIGURATION if c in frame.columns]


def measured_reps(candidates: pd.DataFrame, measured: pd.DataFrame) -> np.ndarray:
    """Repetitions measured so far of each candidate configuration (``measured`` holds one row per
    measured configuration with ``n_reps``, as :func:`dlperf.measurements.points.to_points`
    gives)."""
    if measured.empty:
        return np.zeros(len(candidates), int)
    keys = _key_columns(candidates)
    counts = measured.set_index(keys)["n_reps"] if "n_reps" in measured else None
    index = pd.MultiIndex.from_frame(candidates[keys])
    if counts is None:
        done = set(map(tuple, measured[keys].itertuples(index=False, name=None)))
        return np.array([tuple(row) in done for row in index], int)
    return counts.reindex(index).fillna(0).to_numpy(int)


def available_reps(candidates: pd.DataFrame) -> np.ndarray:
    """Repetitions a configuration can have (its ``n_reps`` in the grid; one when not given)."""
    if "n_reps" in candidates.columns:
        return candidates["n_reps"].to_numpy(int)
    return np.ones(len(candidates), int)


def _initial(candidates: pd.DataFrame, settings: AdaptiveSettings) -> pd.DataFrame:
    per_series = [
        [
            series.index[pick]
            for pick in maximin(coordinates(series), settings.initial, coverage_levels(series))
        ]
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
    chosen["rep"] = 0
    chosen["reason"] = "initial space-filling design"
    chosen["score"] = np.nan
    return chosen


def _describe(width: float, disagreement: float, new_levels: str, repeat: bool) -> str:
    parts = ["another repetition (every configuration of its series is measured)"] if repeat else []
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
    """Every candidate run of the next round with its score parts, series by series: the
    configurations not yet measured, or, in a series where every one is, their next repetitions."""
    keys = series_keys(candidates)
    parts = []
    have = measured_reps(candidates, measured)
    can = available_reps(candidates)
    for _, series in candidates.groupby(keys, sort=True):
        rows = candidates.index.get_indexer(series.index)
        done_reps, max_reps = have[rows], can[rows]
        is_measured = done_reps > 0
        repeat = bool(is_measured.all())
        todo_mask = (done_reps < max_reps) if repeat else ~is_measured
        if not todo_mask.any():
            continue
        todo = series[todo_mask]
        points = measured.merge(series[_key_columns(series)], on=_key_columns(series))
        scores = score_series(
            points.reset_index(drop=True),
            todo,
            settings.model,
            settings.model_settings,
            settings.compare_models,
            settings.n_boot,
            settings.level,
            settings.seed,
        )
        coords = coordinates(series)
        frame = todo.copy()
        frame["rep"] = done_reps[todo_mask]
        frame["repeat"] = repeat
        frame["relative_width"] = scores.relative_width
        frame["disagreement"] = scores.disagreement
        frame["novelty"] = scores.novelty
        frame["score"] = scores.total
        frame["new_levels"] = scores.new_levels
        # Near a measured configuration a new one teaches less: scale by the distance to the
        # nearest measured one, relative to the grid's spacing (repetitions are not discounted).
        distance = nearest_distance(coords, is_measured)[todo_mask]
        frame["spread"] = 1.0 if repeat else np.minimum(1.0, distance / _spacing(coords))
        frame["coords"] = list(coords[todo_mask])
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


def next_round(
    candidates: pd.DataFrame,
    measured: pd.DataFrame,
    settings: AdaptiveSettings,
    runs_used: int = 0,
) -> Round:
    """The next runs to measure. ``candidates`` is the grid (one row per configuration, ``n_reps``
    the repetitions it can have), ``measured`` the points measured so far (``n_reps`` each)."""
    candidates = candidates.reset_index(drop=True)
    budget = settings.budget_runs
    left = None if budget is None else max(budget - runs_used, 0)
    if measured.empty:
        chosen = _initial(candidates, settings)
        chosen = chosen if left is None else chosen.iloc[:left]
        stop = None if not chosen.empty else "the budget does not cover one run"
        return Round(chosen, np.inf, stop)
    if left == 0:
        return Round(candidates.iloc[0:0], np.nan, "the budget is spent")
    scored = _scored(candidates, measured, settings)
    if scored.empty:
        return Round(scored, 0.0, "every run of the grid is measured")
    fresh = ~scored["repeat"].to_numpy(bool)
    widths = scored["relative_width"].to_numpy(float)
    widest = float(np.max(widths[fresh])) if fresh.any() else float(np.max(widths))
    if settings.max_width is not None and widest <= settings.max_width:
        return Round(scored.iloc[0:0], widest, f"widest interval {widest:.1%} <= max_width")
    value = scored["score"].to_numpy(float)
    spread = scored["spread"].to_numpy(float).copy()
    coords = np.vstack(scored["coords"].to_numpy())
    series = scored[series_keys(scored)].astype(str).agg("|".join, axis=1).to_numpy()
    spacing = _spacing(coords)
    picks: list[int] = []
    for _ in range(min(settings.per_round, len(scored), left if left is not None else len(scored))):
        gain = value * spread
        gain[picks] = -np.inf
        pick = int(np.argmax(gain))
        picks.append(pick)
        # Spread the round out: new configurations of the same series near this pick lose value.
        near = np.sqrt(((coords - coords[pick]) ** 2).sum(axis=1)) / spacing
        dampen = (series == series[pick]) & fresh
        spread = np.where(dampen, np.minimum(spread, np.minimum(1.0, near)), spread)
    chosen = scored.iloc[picks].copy()
    chosen["reason"] = [
        _describe(w, d, n, r)
        for w, d, n, r in zip(
            chosen["relative_width"],
            chosen["disagreement"],
            chosen["new_levels"],
            chosen["repeat"],
            strict=True,
        )
    ]
    return Round(chosen.drop(columns=["coords", "spread"]), widest, None)
