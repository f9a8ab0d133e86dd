"""Is a new study slower than an old one? Configuration by configuration, on every iteration.

For each configuration both studies measured (framework, network, device, nodes, workers,
batch, data size) the per-iteration times of all repetitions are pooled:
- the ratio of medians (candidate / baseline) with a bootstrap confidence interval
  (scipy.stats.bootstrap, each study's iterations resampled on its own);
- a Mann-Whitney U test of the two sets of iteration times, its p-values corrected for the
  number of configurations compared (Benjamini-Hochberg, scipy.stats.false_discovery_control).
Iterations of one run are not independent samples of the configuration: a run on a busy or slow
node is slow throughout. So the noise a change must exceed is also the spread between the
repetitions of each study (``run_spread``: the largest ratio of two repetitions' median
iteration times, in either study). A configuration is *slower* (*faster*) *beyond the noise* when
its corrected p-value is below ``alpha`` and the whole interval of the ratio lies above
1 + run_spread (below 1 / (1 + run_spread)); a slower one whose ratio exceeds 1 + ``threshold``
is a *regression* (exit status 1 of `dlperf compare`).

Besides, the candidate's configurations (median epoch time over repetitions) are checked
against the baseline's fitted model: one outside the model's prediction interval is flagged,
unless the baseline's own measurement there lies outside too (then the model, not the new
study, is off).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from dlperf.models import InsufficientData
from dlperf.models.prediction import predict_rows
from dlperf.study_files import StudyFiles
from dlperf.tables import NOISY_FOREIGN_CPU, POINT_KEYS

COLUMNS = POINT_KEYS + [
    "configuration",
    "baseline_reps",
    "candidate_reps",
    "baseline_iters",
    "candidate_iters",
    "baseline_median_s",
    "candidate_median_s",
    "ratio",
    "ratio_lo",
    "ratio_hi",
    "run_spread",
    "disturbed_runs",
    "p_value",
    "p_adjusted",
    "verdict",
    "regression",
]
MODEL_COLUMNS = POINT_KEYS + [
    "configuration",
    "candidate_epoch_s",
    "predicted_s",
    "predicted_lo_s",
    "predicted_hi_s",
    "baseline_epoch_s",
    "baseline_inside",
]


@dataclass
class Settings:
    threshold: float = 0.05  # a slowdown beyond this fraction is a regression
    alpha: float = 0.05  # false discovery rate over the configurations compared
    confidence: float = 0.95  # of the ratio's interval
    model: str = "generic"  # the baseline model whose interval the candidate is checked against
    level: float = 0.99  # of that prediction interval
    n_resamples: int = 2000
    seed: int = 0


@dataclass
class Comparison:
    baseline: str
    candidate: str
    settings: Settings
    rows: pd.DataFrame  # one per configuration both studies measured, columns COLUMNS
    only_baseline: list[str] = field(default_factory=list)
    only_candidate: list[str] = field(default_factory=list)
    model_flags: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=MODEL_COLUMNS))
    model_notes: list[str] = field(default_factory=list)  # why some runs could not be checked

    @property
    def slower(self) -> pd.DataFrame:
        return self.rows[self.rows["verdict"] == "slower"]

    @property
    def faster(self) -> pd.DataFrame:
        return self.rows[self.rows["verdict"] == "faster"]

    @property
    def regressions(self) -> pd.DataFrame:
        return self.rows[self.rows["regression"]]

    @property
    def reports_nothing(self) -> bool:
        return self.slower.empty and self.faster.empty and self.model_flags.empty


def label(config: dict) -> str:
    """A configuration as people name it: 'pytorch/resnet18 cpu n1 p4 b32 d4096'."""
    return (
        f"{config['framework']}/{config['network']} {config['device']} n{config['nodes']} "
        f"p{config['procs']} b{config['batch_size']} d{config['data_size']}"
    )


def _key(record: dict) -> tuple:
    return tuple(record["config"][k] for k in POINT_KEYS)


def iterations_by_configuration(records: list[dict]) -> dict[tuple, list[np.ndarray]]:
    """Successful runs' iteration times, one array per repetition, grouped by configuration."""
    grouped: dict[tuple, list[np.ndarray]] = {}
    for record in records:
        if record["status"] == "ok":
            grouped.setdefault(_key(record), []).append(np.asarray(record["iter_times_s"], float))
    return grouped


def disturbed_by_configuration(records: list[dict]) -> dict[tuple, int]:
    """Successful runs during whose epoch other programs used much of the host's CPU."""
    counts: dict[tuple, int] = {}
    for record in records:
        share = (record.get("noise") or {}).get("foreign_cpu_fraction")
        if record["status"] == "ok" and share is not None and share > NOISY_FOREIGN_CPU:
            counts[_key(record)] = counts.get(_key(record), 0) + 1
    return counts


def _median_ratio(base: np.ndarray, cand: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.median(cand, axis=axis) / np.median(base, axis=axis)


def _ratio_interval(base: np.ndarray, cand: np.ndarray, settings: Settings) -> tuple[float, float]:
    if base.size < 2 or cand.size < 2:
        return float("nan"), float("nan")
    result = stats.bootstrap(
        (base, cand),
        _median_ratio,
        n_resamples=settings.n_resamples,
        confidence_level=settings.confidence,
        method="percentile",  # BCa's jackknife is quadratic in thousands of iterations
        vectorized=True,
        batch=200,
        rng=np.random.default_rng(settings.seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def run_spread(reps: list[np.ndarray]) -> float:
    """How far apart the repetitions of one study are: the largest ratio of two repetitions'
    median iteration times, less 1 (0 with one repetition)."""
    medians = [float(np.median(r)) for r in reps]
    return max(medians) / min(medians) - 1.0


def _compare_one(base_reps: list[np.ndarray], cand_reps: list[np.ndarray], settings: Settings):
    base, cand = np.concatenate(base_reps), np.concatenate(cand_reps)
    ratio = float(_median_ratio(base, cand))
    lo, hi = _ratio_interval(base, cand, settings)
    p_value = float(stats.mannwhitneyu(base, cand, alternative="two-sided").pvalue)
    return {
        "baseline_reps": len(base_reps),
        "candidate_reps": len(cand_reps),
        "baseline_iters": int(base.size),
        "candidate_iters": int(cand.size),
        "baseline_median_s": float(np.median(base)),
        "candidate_median_s": float(np.median(cand)),
        "ratio": ratio,
        "ratio_lo": lo,
        "ratio_hi": hi,
        "run_spread": max(run_spread(base_reps), run_spread(cand_reps)),
        "p_value": p_value,
    }


def _verdicts(rows: pd.DataFrame, settings: Settings) -> pd.DataFrame:
    rows = rows.copy()
    if rows.empty:
        rows["p_adjusted"] = pd.Series(dtype=float)
        rows["verdict"] = pd.Series(dtype=str)
        rows["regression"] = pd.Series(dtype=bool)
        return rows
    rows["p_adjusted"] = stats.false_discovery_control(rows["p_value"].to_numpy(), method="bh")
    significant = rows["p_adjusted"] < settings.alpha
    noise = 1.0 + rows["run_spread"]
    slower = significant & (rows["ratio_lo"] > noise)
    faster = significant & (rows["ratio_hi"] < 1.0 / noise)
    rows["verdict"] = np.select([slower, faster], ["slower", "faster"], default="same")
    rows["regression"] = slower & (rows["ratio"] > 1.0 + settings.threshold)
    return rows


def _epoch_medians(records: list[dict]) -> pd.DataFrame:
    ok = [r for r in records if r["status"] == "ok"]
    frame = pd.DataFrame(
        [
            {**{k: r["config"][k] for k in POINT_KEYS}, "epoch_time_s": r["epoch_time_s"]}
            for r in ok
        ],
        columns=POINT_KEYS + ["epoch_time_s"],
    )
    return frame.groupby(POINT_KEYS, sort=True, as_index=False)["epoch_time_s"].median()


def check_against_model(
    baseline: StudyFiles, candidate: StudyFiles, settings: Settings
) -> tuple[pd.DataFrame, list[str]]:
    """Candidate configurations outside the baseline model's prediction interval, and notes on
    what could not be checked (no artifact, no interval, model not fitted)."""
    cand = _epoch_medians(candidate.records)
    base = _epoch_medians(baseline.records).rename(columns={"epoch_time_s": "baseline_epoch_s"})
    merged = cand.merge(base, on=POINT_KEYS, how="left")
    flags, notes = [], []
    for (framework, network), group in merged.groupby(["framework", "network"], sort=True):
        artifact = baseline.artifacts.get(framework)
        if artifact is None:
            notes.append(
                f"{framework}: the baseline has no model artifact (models/{framework}.json), "
                "so its runs were not checked against a model"
            )
            continue
        group = group.reset_index(drop=True)
        try:
            predicted = predict_rows(artifact, network, settings.model, group, level=settings.level)
        except (InsufficientData, KeyError, ValueError) as exc:
            message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
            notes.append(f"{framework}/{network}: not checked against the model ({message})")
            continue
        lo, hi = predicted["epoch_time_lo_s"], predicted["epoch_time_hi_s"]
        if lo.isna().any():
            notes.append(
                f"{framework}/{network}: the baseline's {settings.model} model stores no "
                "prediction interval, so runs were not checked against it (fit it again with "
                "a dlperf that writes intervals)"
            )
            continue
        measured, base_epoch = group["epoch_time_s"], group["baseline_epoch_s"]
        outside = (measured < lo) | (measured > hi)
        base_inside = base_epoch.between(lo, hi) | base_epoch.isna()
        for i in np.flatnonzero(outside & base_inside):
            row = group.iloc[i]
            flags.append(
                {
                    **{k: row[k] for k in POINT_KEYS},
                    "configuration": label(row),
                    "candidate_epoch_s": float(measured.iloc[i]),
                    "predicted_s": float(predicted["epoch_time_s"].iloc[i]),
                    "predicted_lo_s": float(lo.iloc[i]),
                    "predicted_hi_s": float(hi.iloc[i]),
                    "baseline_epoch_s": float(base_epoch.iloc[i]),
                    "baseline_inside": bool(pd.notna(base_epoch.iloc[i])),
                }
            )
    return pd.DataFrame(flags, columns=MODEL_COLUMNS), notes


def compare(baseline: StudyFiles, candidate: StudyFiles, settings: Settings) -> Comparison:
    if not 0.0 <= settings.threshold:
        raise ValueError(f"--threshold must be a non-negative fraction, got {settings.threshold}")
    if not 0.0 < settings.alpha < 1.0:
        raise ValueError(f"--alpha must lie between 0 and 1, got {settings.alpha}")
    base = iterations_by_configuration(baseline.records)
    cand = iterations_by_configuration(candidate.records)
    if not base or not cand:
        empty = baseline.source if not base else candidate.source
        raise ValueError(f"{empty} has no successful run to compare; check its failures.csv")
    disturbed = [disturbed_by_configuration(s.records) for s in (baseline, candidate)]
    rows = []
    for key in sorted(set(base) & set(cand)):
        config = dict(zip(POINT_KEYS, key, strict=True))
        rows.append(
            {
                **config,
                "configuration": label(config),
                **_compare_one(base[key], cand[key], settings),
                "disturbed_runs": sum(d.get(key, 0) for d in disturbed),
            }
        )
    frame = _verdicts(pd.DataFrame(rows, columns=COLUMNS[: COLUMNS.index("p_value") + 1]), settings)
    flags, notes = check_against_model(baseline, candidate, settings)
    return Comparison(
        baseline=baseline.source,
        candidate=candidate.source,
        settings=settings,
        rows=frame.reindex(columns=COLUMNS),
        only_baseline=[
            label(dict(zip(POINT_KEYS, k, strict=True))) for k in sorted(set(base) - set(cand))
        ],
        only_candidate=[
            label(dict(zip(POINT_KEYS, k, strict=True))) for k in sorted(set(cand) - set(base))
        ],
        model_flags=flags,
        model_notes=notes,
    )
