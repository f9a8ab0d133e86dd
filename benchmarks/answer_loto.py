"""Leave-one-table-out for the answer's choices (docs/model.md, "The answer").

Each table of ``answer_backtest.TABLES`` is cut (train <= p_max/2, <= p_max/4) and fitted once
(``fit_framework``, every default model); the fitted artifacts are kept in a cache directory, so
the answer can be evaluated under every candidate setting of its rules without fitting again.
For a table left out, each rule's setting is the one with the lowest mean interval score
(Gneiting and Raftery 2007, in log time; each table alike) on the *other* tables among the
settings whose 90 % interval covers >= 85 % of each of their held-out points (the lowest
score when none does); the left-out table is then scored with those settings.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd

from dlperf.io import atomic_write_text
from dlperf.models.answer import ANSWER, AnswerRules, answer_table, growth_scores
from dlperf.models.artifact import best_per_worker, fit_framework, measured_levels
from dlperf.models.prediction import prediction_table

LEVEL = 0.9
COVERAGE_GOAL = 0.85


def interval_score(measured, lo, hi, level: float = LEVEL) -> np.ndarray:
    """Gneiting and Raftery's interval score in log time: log(hi / lo) plus 2 / alpha times how
    far log(measured) falls outside [log lo, log hi] (lower is better)."""
    alpha = 1.0 - level
    y, lo, hi = np.log(measured), np.log(lo), np.log(hi)
    return (hi - lo) + 2.0 / alpha * (np.maximum(lo - y, 0) + np.maximum(y - hi, 0))


def cached_fits(
    name: str, train: pd.DataFrame, models: list[str], refits: int, cache: Path | None
) -> dict[str, dict]:
    """Per framework of ``train``: its fitted artifact (read from ``cache`` when the same
    points were fitted before)."""
    found = {}
    for framework, part in train.groupby("framework"):
        digest = hashlib.sha256(
            pd.util.hash_pandas_object(part, index=False).to_numpy().tobytes()
            + repr((sorted(models), refits)).encode()
        ).hexdigest()[:16]
        path = None if cache is None else cache / f"{framework}-{digest}.json"
        if path is not None and path.is_file():
            found[framework] = json.loads(path.read_text())
            continue
        artifact = fit_framework(part, framework, dict.fromkeys(models, {}), 0, refits)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, json.dumps(artifact))
        found[framework] = artifact
    return found


def totals(found: pd.DataFrame) -> pd.Series:
    """Over the held-out points of one table: (covered points, points, summed interval score,
    summed APE); unanswered points count as missed with an interval score of the widest
    answered one."""
    ok = found["predicted"].notna() & found["lo"].notna()
    covered = ok & (found["lo"] <= found["measured"]) & (found["measured"] <= found["hi"])
    score = interval_score(found["measured"], found["lo"], found["hi"]).where(ok)
    worst = score.max() if ok.any() else 100.0
    ape = ((found["predicted"] - found["measured"]).abs() / found["measured"]).where(ok, 1.0)
    return pd.Series(
        {
            "covered": float(covered.sum()),
            "points": float(len(found)),
            "score": float(score.fillna(worst).sum()),
            "ape": float(ape.sum()),
        }
    )


def choose(per_setting: dict[tuple, dict[str, pd.Series]], left_out: str) -> tuple:
    """The setting with the lowest mean over every table but ``left_out`` of the table's mean
    interval score (each table counts alike, however many points it has), among those covering
    >= :data:`COVERAGE_GOAL` of each of those tables' points, as the target asks of every table
    (every setting when none does)."""
    mean_score, coverage = {}, {}
    for setting, tables in per_setting.items():
        rows = [t for name, t in tables.items() if name != left_out]
        mean_score[setting] = float(np.mean([t["score"] / t["points"] for t in rows]))
        coverage[setting] = min(t["covered"] / t["points"] for t in rows)
    good = [s for s in per_setting if coverage[s] >= COVERAGE_GOAL]
    return min(good or per_setting, key=lambda s: (mean_score[s], s))


def one_at_a_time(options: dict[str, tuple]) -> list[dict]:
    """The shipped setting (each rule's first value) and every setting that differs from it in
    one rule: each rule's effect is measured with the others as shipped."""
    shipped = {rule: values[0] for rule, values in options.items()}
    found = [shipped]
    for rule, values in options.items():
        found += [{**shipped, rule: value} for value in values[1:]]
    return found


def with_best_rate(artifact: dict, train: pd.DataFrame) -> dict:
    """The artifact with each network's best per-worker throughput, its measured accumulation
    steps and the answer's growth scores (cached fits of an older dlperf lack them)."""
    if "answer_growth_scores" not in artifact:
        artifact["answer_growth_scores"] = growth_scores(artifact)
    for network, info in artifact["networks"].items():
        measured = info.setdefault("measured", {})
        points = train[train["network"] == network]
        if "best_samples_per_s_per_worker" not in measured:
            measured["best_samples_per_s_per_worker"] = best_per_worker(points)
        if "grad_accum_steps" not in measured:
            measured["grad_accum_steps"] = measured_levels(points)["grad_accum_steps"]
    return artifact


class ModelTables:
    """Each model's prediction table at a network's held-out rows, computed once (the answer is
    evaluated under many settings of its rules on the same fits)."""

    def __init__(self, artifact: dict):
        self.artifact = artifact
        self.found: dict[tuple, pd.DataFrame] = {}

    def __call__(self, network: str, name: str, rows: pd.DataFrame) -> pd.DataFrame:
        key = (network, name, len(rows))
        if key not in self.found:
            self.found[key] = prediction_table(self.artifact, network, name, rows, LEVEL)
        return self.found[key]


def answer_points(
    fits: list[tuple[dict, ModelTables, pd.DataFrame]], rules: AnswerRules
) -> pd.DataFrame:
    """The answer under ``rules`` at every held-out point of one table's cut (columns as
    ``answer_backtest.scores``)."""
    frames = []
    for artifact, tables, test in fits:
        # The growth per doubling as these rules' candidates measure it on the backtest.
        artifact = {**artifact, "answer_growth_scores": growth_scores(artifact, rules)}
        for network, held in test.groupby("network", sort=True):
            held = held.reset_index(drop=True)
            table = answer_table(
                artifact,
                network,
                held,
                LEVEL,
                0,
                lambda name, rows, n=network, t=tables: t(n, name, rows),
                rules,
            )
            frames.append(
                pd.DataFrame(
                    {
                        "model": ANSWER,
                        "network": network,
                        "measured": held["epoch_time_s"].to_numpy(float),
                        "predicted": table["epoch_time_s"].to_numpy(float),
                        "lo": table["epoch_time_lo_s"].to_numpy(float),
                        "hi": table["epoch_time_hi_s"].to_numpy(float),
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


def scored_rows(name: str, network: str, held: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """One model's predictions of the held-out rows beside the measured times, as scored
    (a prediction that is not a positive number counts as none)."""
    predicted = table["epoch_time_s"].to_numpy(float)
    usable = np.isfinite(predicted) & (predicted > 0)
    return pd.DataFrame(
        {
            "model": name,
            "network": network,
            "measured": held["epoch_time_s"].to_numpy(float),
            "predicted": np.where(usable, predicted, np.nan),
            "lo": table["epoch_time_lo_s"].to_numpy(float),
            "hi": table["epoch_time_hi_s"].to_numpy(float),
        }
    )


def single_points(fits, models: list[str]) -> pd.DataFrame:
    """Every single model's prediction and interval at every held-out point of one table's cut
    (NaN where it has none), and the plain geometric mean of generic and loglin (the bar: the
    one of them fitted where the other is not)."""
    frames = []
    for artifact, tables, test in fits:
        for network, held in test.groupby("network", sort=True):
            held = held.reset_index(drop=True)
            found = {}
            for name in models:
                entry = artifact["networks"][network]["models"].get(name) or {}
                if entry.get("status") != "ok":
                    continue
                table = tables(network, name, held)
                found[name] = table[["epoch_time_s", "epoch_time_lo_s", "epoch_time_hi_s"]]
            pair = [found[m] for m in ("generic", "loglin") if m in found]
            if pair:
                found[GEOMEAN] = np.exp(sum(np.log(f.clip(lower=1e-300)) for f in pair) / len(pair))
            for name, table in found.items():
                frames.append(scored_rows(name, network, held, table))
            for name in [*models, GEOMEAN]:
                if name not in found:
                    frames.append(
                        pd.DataFrame(
                            {"model": name, "network": network, "measured": held["epoch_time_s"]}
                        ).assign(predicted=np.nan, lo=np.nan, hi=np.nan)
                    )
    return pd.concat(frames, ignore_index=True)


GEOMEAN = "geomean(generic, loglin)"


def summary(found: pd.DataFrame) -> pd.DataFrame:
    """Per model: share answered, MAPE, 90 % coverage, median width (hi - lo over the
    prediction), mean interval score (log time; points without an interval left out)."""
    out = []
    for name, rows in found.groupby("model", sort=False):
        ok = rows[rows["predicted"].notna()]
        has = ok[ok["lo"].notna() & ok["hi"].notna()]
        covered = (has["lo"] <= has["measured"]) & (has["measured"] <= has["hi"])
        out.append(
            {
                "model": name,
                "answered": 100 * len(ok) / len(rows),
                "mape": 100
                * float(((ok["predicted"] - ok["measured"]).abs() / ok["measured"]).mean())
                if len(ok)
                else np.nan,
                "coverage": 100 * float(covered.mean()) if len(has) else np.nan,
                "width": 100 * float(((has["hi"] - has["lo"]) / has["predicted"]).median())
                if len(has)
                else np.nan,
                "score": float(interval_score(has["measured"], has["lo"], has["hi"]).mean())
                if len(has)
                else np.nan,
            }
        )
    return pd.DataFrame(out)


def evaluate(cuts: dict[tuple[str, int], list], options: dict[str, tuple]) -> dict:
    """The answer's held-out points under every setting of its rules: setting (a tuple of
    (rule, value)) -> cut (table, divisor) -> points."""
    found = {}
    for setting in one_at_a_time(options):
        print(f"answer under {setting}", flush=True)
        found[tuple(setting.items())] = {
            cut: answer_points(fits, AnswerRules(**setting)) for cut, fits in cuts.items()
        }
    return found


def leave_one_table_out(
    evaluated: dict, imposed: dict | None = None
) -> tuple[dict[str, dict], dict[tuple[str, int], pd.DataFrame]]:
    """Per table: the rules chosen on the other tables (among the settings that agree with
    ``imposed``), and per cut the answer's points under them."""
    per_setting: dict[tuple, dict[str, pd.Series]] = {}
    for key, found in evaluated.items():
        if imposed and any(dict(key)[rule] != value for rule, value in imposed.items()):
            continue
        per_table: dict[str, pd.Series] = {}
        for (table, _), points in found.items():
            part = totals(points)
            per_table[table] = per_table[table] + part if table in per_table else part
        per_setting[key] = per_table
    any_key = next(iter(per_setting))
    tables = {table for table, _ in evaluated[any_key]}
    chosen = {table: choose(per_setting, table) for table in sorted(tables)}
    held = {cut: evaluated[chosen[cut[0]]][cut] for cut in evaluated[any_key]}
    return {t: dict(s) for t, s in chosen.items()}, held
