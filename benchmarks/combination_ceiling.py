"""How near can any combination of the collective models come to the best single model in
hindsight? (docs/model.md, "How near the best single model? The combination ceiling")

Issue 35's first target puts the answer's MAPE within 1.1x of the best single model in
hindsight on every table cut. The answer's centre is a fixed combination of the collective
models (the geometric mean of generic and loglin, castello only where generic is not fitted).
On the same cuts as ``answer_backtest.py`` (train <= p_max/2 and <= p_max/4, the same fits),
this asks of every combination of the same kind, the log-weighted mean of generic, loglin and
castello with weights on a grid of step 0.1 (renormalised over the models fitted at a point,
and raised to the perfect-scaling bound as the answer is):

- on how many cuts it is within 1.1x of the best single model (of those answering every
  held-out point, as ``against_best``), and its mean MAPE over the cuts;
- the weights best by that count and by mean MAPE, chosen in hindsight on the cuts themselves;
- the ceiling: on how many cuts *some* weights of the grid are within 1.1x (a choice per cut,
  in hindsight: no fixed combination can do better);
- the data's own choice, per series the collective model whose backtest on the training points
  (``networks.<net>.backtest``) erred least (the answer where the fit has no backtest record).

With ``--timings`` the same is printed for the given tables apart, and the weights chosen in
hindsight on one set are scored on the other: a combination that holds should hold on both.

Then whether *any* method can meet each target, not only a combination: every cut has *twins*,
tables with the same training points (so the same fits, and the same answer from any method
that sees only them) whose held-out times are what generic, or loglin, predicts. The best
single model is exact on its own twin; no one answer can be near both the cut's truth and its
twin's where they differ by more than the target allows on the two (``twin_bounds``).

    .venv/bin/python benchmarks/combination_ceiling.py --write docs/model.md
    .venv/bin/python benchmarks/combination_ceiling.py --cache DIR --timings mine/*.csv
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import common
import numpy as np
import pandas as pd
from answer_backtest import DIVISORS, add_table_arguments, chosen_tables, cut_tables
from answer_loto import answer_points, interval_score
from common import measured_command, write_between_markers

from dlperf.config import default_models
from dlperf.models.answer import AnswerRules, fastest_epoch

COLLECTIVE = ("generic", "loglin", "castello")
STEP = 0.1
RATIO = 1.1
# The relaxed bar: within RATIO of the best single model's MAPE or this many points above it.
POINTS = 1.0
# The answer's centre models: each one's prediction is the truth of a twin table.
TWINS = ("generic", "loglin")


def held_out_points(cuts: dict, models: list[str]) -> pd.DataFrame:
    """Per held-out point of every cut: the measured time, the perfect-scaling bound, every
    model's prediction and 90 % interval (NaN where it gives no positive time; columns ``name``,
    ``name lo``, ``name hi``), the shipped answer's (``answer``, ``answer lo``, ``answer hi``),
    and each
    collective model's mean |log error| on the fit's own backtest (NaN without records)."""
    frames = []
    for (table, divisor), fits in cuts.items():
        answered = answer_points(fits, AnswerRules())
        answer, answer_lo, answer_hi = (
            answered[column].to_numpy(float) for column in ("predicted", "lo", "hi")
        )
        start = 0
        for artifact, tables, test in fits:
            for network, held in test.groupby("network", sort=True):
                held = held.reset_index(drop=True)
                info = artifact["networks"][network]
                frame = pd.DataFrame(
                    {
                        "table": table,
                        "divisor": divisor,
                        "network": network,
                        "measured": held["epoch_time_s"].to_numpy(float),
                        "bound": fastest_epoch(info["measured"], held),
                        "answer": answer[start : start + len(held)],
                        "answer lo": answer_lo[start : start + len(held)],
                        "answer hi": answer_hi[start : start + len(held)],
                    }
                )
                start += len(held)
                records = info.get("backtest", {}).get("models", {})
                for name in models:
                    predicted, lo, hi = (np.full(len(held), np.nan) for _ in range(3))
                    if (info["models"].get(name) or {}).get("status") == "ok":
                        found = tables(network, name, held)
                        predicted = found["epoch_time_s"].to_numpy(float)
                        lo = found["epoch_time_lo_s"].to_numpy(float)
                        hi = found["epoch_time_hi_s"].to_numpy(float)
                    usable = predicted > 0
                    frame[name] = np.where(usable, predicted, np.nan)
                    # Its interval, where it has one with a positive lower end.
                    usable &= (lo > 0) & (hi >= lo)
                    frame[f"{name} lo"] = np.where(usable, lo, np.nan)
                    frame[f"{name} hi"] = np.where(usable, hi, np.nan)
                for name in COLLECTIVE:
                    # A backtest point the model gave no time at counts as none (None).
                    errors = [
                        abs(r["log_error"])
                        for r in records.get(name, [])
                        if r["log_error"] is not None
                    ]
                    frame[f"backtest {name}"] = np.mean(errors) if errors else np.nan
                frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def weight_grid(step: float = STEP) -> list[tuple[float, ...]]:
    """Every weighting of the collective models on a grid of ``step`` that sums to 1."""
    return common.weight_grid(len(COLLECTIVE), step)


def combined(points: pd.DataFrame, weights: tuple[float, ...]) -> np.ndarray:
    """The log-weighted mean of the collective models at each point, the weights renormalised
    over those fitted there (NaN where none with weight is), no faster than the bound."""
    logs = np.log(points[list(COLLECTIVE)].to_numpy(float))
    w = np.where(np.isfinite(logs), np.asarray(weights, float), 0.0)
    total = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = np.exp(np.where(w > 0, logs * w, 0.0).sum(axis=1) / total)
    return np.where(total > 0, np.maximum(centre, points["bound"].to_numpy(float)), np.nan)


def backtest_pick(points: pd.DataFrame) -> np.ndarray:
    """Per point the collective model whose backtest erred least among those fitted there, no
    faster than the bound; the answer's where none has a backtest record."""
    predicted = points[list(COLLECTIVE)].to_numpy(float)
    errors = points[[f"backtest {name}" for name in COLLECTIVE]].to_numpy(float)
    errors = np.where(np.isfinite(predicted) & np.isfinite(errors), errors, np.inf)
    best = np.take_along_axis(predicted, errors.argmin(axis=1)[:, None], axis=1)[:, 0]
    picked = np.where(np.isfinite(errors).any(axis=1), best, points["answer"].to_numpy(float))
    return np.maximum(picked, points["bound"].to_numpy(float))


def mape(predicted: np.ndarray, measured: np.ndarray) -> float:
    """Percent; NaN unless every point is answered (a model that skips points is no answer)."""
    if not np.isfinite(predicted).all():
        return np.nan
    return float(np.mean(np.abs(predicted - measured) / measured) * 100)


def per_cut(points: pd.DataFrame, models: list[str]) -> pd.DataFrame:
    """One row per cut (table, divisor): the best single model's MAPE in hindsight, the
    answer's, the backtest pick's, and each weighting's (columns named by ``named``)."""
    rows = []
    for (table, divisor), cut in points.groupby(["table", "divisor"], sort=False):
        measured = cut["measured"].to_numpy(float)
        singles = [mape(cut[name].to_numpy(float), measured) for name in models]
        row = {
            "table": table,
            "divisor": divisor,
            "best single": np.nanmin(singles) if np.isfinite(singles).any() else np.nan,
            "answer": mape(cut["answer"].to_numpy(float), measured),
            "backtest pick": mape(backtest_pick(cut), measured),
            "loglin": mape(cut["loglin"].to_numpy(float), measured),
        }
        row |= {named(w): mape(combined(cut, w), measured) for w in weight_grid()}
        rows.append(row)
    return pd.DataFrame(rows).set_index(["table", "divisor"])


def twin_truths(cut: pd.DataFrame) -> dict[str, np.ndarray]:
    """The measured times of a cut's held-out points and, per centre model that answers every
    one, a *twin*'s: the same training points, so the same fits and the same answer from any
    method, whose held-out times are that model's predictions (no faster than the bound)."""
    truths = {"measured": cut["measured"].to_numpy(float)}
    for name in TWINS:
        predicted = cut[name].to_numpy(float)
        if np.isfinite(predicted).all():
            truths[f"{name}'s twin"] = np.maximum(predicted, cut["bound"].to_numpy(float))
    return truths


def scores_against(cut: pd.DataFrame, truth: np.ndarray, models: list[str]) -> dict:
    """Against ``truth``: the best single model's MAPE and mean interval score in hindsight
    (among the models answering, or giving an interval at, every point) and loglin's MAPE."""
    mapes, scores = {}, {}
    for name in models:
        mapes[name] = mape(cut[name].to_numpy(float), truth)
        lo, hi = cut[f"{name} lo"].to_numpy(float), cut[f"{name} hi"].to_numpy(float)
        whole = np.isfinite(lo).all() and np.isfinite(hi).all()
        scores[name] = float(np.mean(interval_score(truth, lo, hi))) if whole else np.nan

    def least(values) -> float:
        return min((v for v in values if np.isfinite(v)), default=np.nan)

    return {
        "best": least(mapes.values()),
        "score": least(scores.values()),
        "loglin": mapes.get("loglin", np.nan),
    }


# Each target: its name, what it bounds (the MAPE or the interval score) and the most of that
# it allows against one truth, given the single models' scores there (``scores_against``).
TARGETS = {
    "strict": ("MAPE within 1.1x", "mape", lambda s: RATIO * s["best"]),
    "first": (
        "MAPE within 1.1x and no worse than loglin",
        "mape",
        lambda s: np.nanmin([RATIO * s["best"], s["loglin"]]),
    ),
    "relaxed": (
        "MAPE within 1.1x or 1 point",
        "mape",
        lambda s: max(RATIO * s["best"], s["best"] + POINTS),
    ),
    "score": ("interval score within 1.1x", "score", lambda s: RATIO * s["score"]),
}


def twin_bounds(points: pd.DataFrame, models: list[str]) -> pd.DataFrame:
    """Per cut and target, whether *any* method that sees only the training points can meet
    it on the cut and its twins (``twin_truths``). For two truths a and b of the same points,
    any one prediction f errs |f - a| / a + |f - b| / b >= |a - b| / max(a, b) at each point,
    and any one 90 % interval scores, in sum, >= 2 |log a - log b| (it spans both or pays
    2 / alpha = 20 per unit missed). Where that bound exceeds what the target allows on the two
    added (ratio > 1), whatever a method answers misses the target on one of the two. Beside
    it, whether the shipped answer meets each target on the cut itself (``key answer``)."""
    rows = []
    for (table, divisor), cut in points.groupby(["table", "divisor"], sort=False):
        truths = twin_truths(cut)
        against = {name: scores_against(cut, truth, models) for name, truth in truths.items()}
        row = {"table": table, "divisor": divisor} | {f"{key} ratio": 0.0 for key in TARGETS}
        measured = truths["measured"]
        lo, hi = (cut[f"answer {end}"].to_numpy(float) for end in ("lo", "hi"))
        shipped = {
            "mape": mape(cut["answer"].to_numpy(float), measured),
            "score": float(np.mean(interval_score(measured, lo, hi))),
        }
        for key, (_, measure, allows) in TARGETS.items():
            row[f"{key} answer"] = bool(shipped[measure] <= allows(against["measured"]) + 1e-9)
        for one, other in itertools.combinations(truths, 2):
            a, b = truths[one], truths[other]
            # The least that one answer's two MAPEs (or interval scores) can add to.
            least = {
                "mape": float(np.mean(np.abs(a - b) / np.maximum(a, b)) * 100),
                "score": float(np.mean(2 * np.abs(np.log(a / b)))),
            }
            for key, (_, measure, allows) in TARGETS.items():
                needed = least[measure]
                room = allows(against[one]) + allows(against[other])
                if np.isnan(room):  # no single model to measure the target by (no interval)
                    continue
                ratio = needed / room if room > 0 else (np.inf if needed > 0 else 0.0)
                if ratio > row[f"{key} ratio"]:
                    row[f"{key} ratio"], row[f"{key} pair"] = ratio, f"{one} / {other}"
        rows.append(row)
    return pd.DataFrame(rows).set_index(["table", "divisor"])


def within(found: pd.DataFrame, column) -> pd.Series:
    """Per cut: is ``column``'s MAPE within RATIO of the best single model's?"""
    return found[column] <= RATIO * found["best single"]


def no_worse_than_loglin(found: pd.DataFrame, column) -> int:
    """On how many cuts ``column`` errs no more than loglin (the issue's second bar)."""
    return int((found[column] <= found["loglin"] + 1e-9).sum())


def named(weights: tuple[float, ...]) -> str:
    """A weighting as a column name, e.g. 'generic 0.7, castello 0.3'."""
    return ", ".join(f"{name} {w:g}" for name, w in zip(COLLECTIVE, weights, strict=True) if w > 0)


def weighting_names() -> list[str]:
    """The columns of :func:`per_cut` that hold a weighting's MAPE, in the grid's order."""
    return [named(w) for w in weight_grid()]


def ceiling_rows(found: pd.DataFrame, label: str) -> list[str]:
    """Markdown rows for one set of cuts: the answer, the weights best in hindsight by each
    measure, the backtest pick and the ceiling of a choice per cut."""
    grid = weighting_names()
    counts = pd.Series({w: int(within(found, w).sum()) for w in grid})
    by_count, by_mape = counts.idxmax(), found[grid].mean().idxmin()
    n = len(found)

    def row(what: str, column) -> str:
        hits, beside = int(within(found, column).sum()), no_worse_than_loglin(found, column)
        return f"| {label} | {what} | {hits} of {n} | {beside} | {found[column].mean():.2f} |"

    ceiling = int(pd.concat([within(found, w) for w in grid], axis=1).any(axis=1).sum())
    least = found.assign(least=found[grid].min(axis=1))
    return [
        row("the answer as shipped", "answer"),
        row(f"most cuts within 1.1x, in hindsight: {by_count}", by_count),
        row(f"least mean MAPE, in hindsight: {by_mape}", by_mape),
        row("per series the collective model of least backtest error", "backtest pick"),
        f"| {label} | weights chosen per cut in hindsight (the ceiling) | {ceiling} of {n} | "
        f"{no_worse_than_loglin(least, 'least')} | {least['least'].mean():.2f} |",
        f"| {label} | the best single model in hindsight | {n} of {n} | "
        f"{no_worse_than_loglin(found, 'best single')} | {found['best single'].mean():.2f} |",
    ]


def transfer_rows(chosen_on: pd.DataFrame, scored_on: pd.DataFrame, labels) -> list[str]:
    """The weights best in hindsight on one set of cuts, scored on the other."""
    grid = weighting_names()
    by_count = max(grid, key=lambda w: int(within(chosen_on, w).sum()))
    by_mape = min(grid, key=lambda w: chosen_on[w].mean())
    n = len(scored_on)
    return [
        f"| {labels[1]} | chosen on {labels[0]} by {how}: {w} | "
        f"{int(within(scored_on, w).sum())} of {n} | {no_worse_than_loglin(scored_on, w)} | "
        f"{scored_on[w].mean():.2f} |"
        for how, w in (("count", by_count), ("mean MAPE", by_mape))
    ]


def twin_markdown(bounds: pd.DataFrame, given: set[str]) -> str:
    """Per set of cuts, on how many no method can meet each target on the cut and its twins
    and on how many the answer as shipped meets it; then per cut the pair that decides it and
    its ratio (> 1: no method can)."""
    lines = [
        "| tables | cuts | | " + " | ".join(target[0] for target in TARGETS.values()) + " |",
        "|---|---:|---|" + "---:|" * len(TARGETS),
    ]
    for part, label in sets_of_cuts(bounds, given):
        if len(part):
            impossible = [str(int((part[f"{key} ratio"] > 1).sum())) for key in TARGETS]
            met = [str(int(part[f"{key} answer"].sum())) for key in TARGETS]
            lines += [
                f"| {label} | {len(part)} | no method can meet it | {' | '.join(impossible)} |",
                f"| {label} | {len(part)} | the answer meets it | {' | '.join(met)} |",
            ]
    lines += [
        "",
        "| table | cut | "
        + " | ".join(f"{target[0]}: the pair, its ratio" for target in TARGETS.values())
        + " |",
        "|---|---|" + "---|" * len(TARGETS),
    ]
    for (table, divisor), row in bounds.iterrows():
        cells = [
            (f"{row[f'{k} pair']}, {row[f'{k} ratio']:.2f}" if row[f"{k} ratio"] > 0 else "-")
            + ("; the answer meets it" if row[f"{k} answer"] else "")
            for k in TARGETS
        ]
        lines.append(f"| {table} | p_max/{divisor} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def sets_of_cuts(per_cut_rows: pd.DataFrame, given: set[str]) -> list[tuple[pd.DataFrame, str]]:
    """Rows indexed by (table, divisor) split into the development tables and the ``--timings``
    ones (named in ``given``), each with its label."""
    mine = per_cut_rows.index.get_level_values("table").isin(given)
    return [(per_cut_rows[~mine], "development"), (per_cut_rows[mine], "--timings")]


def markdown(found: pd.DataFrame, given: set[str]) -> str:
    sets = sets_of_cuts(found, given)
    (development, _), (mine, _) = sets
    lines = [
        "| tables | the centre | cuts within 1.1x of the best single model | cuts no worse "
        "than loglin | mean MAPE % |",
        "|---|---|---:|---:|---:|",
    ]
    for part, label in sets:
        if len(part):
            lines += ceiling_rows(part, label)
    if len(development) and len(mine):
        lines += transfer_rows(development, mine, ("development", "--timings"))
        lines += transfer_rows(mine, development, ("--timings", "development"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_table_arguments(parser, "external-timings files judged as a set of their own")
    parser.add_argument("--write", type=Path, default=None, help="Markdown file with markers")
    args = parser.parse_args(argv)
    tables, given = chosen_tables(args)
    models = default_models()
    cuts = cut_tables(tables, args.shared, args.only, args.refits, args.cache, DIVISORS)
    points = held_out_points(cuts, models)
    text = markdown(per_cut(points, models), set(given))
    twins = twin_markdown(twin_bounds(points, models), set(given))
    print(text, twins, sep="\n\n", flush=True)
    if args.write is not None:
        command = measured_command("combination_ceiling.py", argv)
        write_between_markers(args.write, "ceiling", f"Measured with `{command}`.\n\n{text}")
        write_between_markers(args.write, "twins", f"Measured with `{command}`.\n\n{twins}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
