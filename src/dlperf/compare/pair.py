"""Is a new study slower than an old one? Configuration by configuration, framework by
framework, on the repetitions.

For each configuration both studies measured (framework, network, device, nodes, workers,
batch, data size), each repetition (a fresh process: the independent unit) is summarised by the
log of its median iteration time, and the two studies' repetitions are compared by a moderated
t-test (``dlperf.compare.statistics``): the ratio (candidate / baseline, of the geometric means of
the repetitions' medians) with its interval and a p-value, corrected for the number of
configurations compared (Benjamini-Hochberg, scipy.stats.false_discovery_control).
Repetitions during which other programs used much of the host's CPU (the run record's
``noise.foreign_cpu_fraction``, tested as the timings table tests it) measure the neighbours,
not the code: they are left out of the test (counted in ``disturbed_runs``) unless
``keep_disturbed``.

A configuration is *slower* (*faster*) when its one-sided p-value, corrected within that
direction, is below ``alpha``; a slower one whose ratio exceeds 1 + ``threshold`` is a
*regression*. One whose ratio exceeds
1 + ``threshold`` without a significant test is *inconclusive*, with the repetitions per
study that would settle it (``reps_needed``). Each framework (and each framework's network,
when it has several) gets the geometric mean of its configurations' ratios, tested and judged
the same way (``groups``): a small slowdown of everything shows there. A regression of either
kind is exit status 1 of `dlperf compare`.

The candidate's runs are also checked against the baseline's fitted model
(``dlperf.compare.against_model``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from dlperf.compare import statistics as compare_stats
from dlperf.compare.against_model import MODEL_COLUMNS, check_against_model
from dlperf.errors import NotComparable
from dlperf.measurements.configuration import CONFIG_KEYS, as_dict, label
from dlperf.measurements.records import RunRecord
from dlperf.measurements.tables import disturbed
from dlperf.study.files import StudyFiles

# A configuration is also what one sample is and how it is trained (image size, sequence
# length, precision, accumulation): an fp32 run is not the baseline of a bf16 one.

COLUMNS = CONFIG_KEYS + [
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
    "rep_sd",
    "df",
    "disturbed_runs",
    "p_slower",
    "p_adjusted",
    "verdict",
    "regression",
    "inconclusive",
    "reps_needed",
]
GROUP_COLUMNS = [
    "group",
    "framework",
    "network",
    "configurations",
    "ratio",
    "ratio_lo",
    "ratio_hi",
    "df",
    "p_slower",
    "p_adjusted",
    "verdict",
    "regression",
]
ALL_NETWORKS = ""  # the network of a framework's overall group


@dataclass
class Settings:
    """What `dlperf compare` tests with; its command line checks each value (the types
    FRACTION, RATE and POWER of dlperf.cli.arguments)."""

    threshold: float = 0.05  # a slowdown beyond this fraction is a regression
    alpha: float = 0.05  # false discovery rate over the configurations (and groups) compared
    confidence: float = 0.95  # of the ratio's interval
    power: float = 0.8  # chance to detect asked of the repetitions an inconclusive one needs
    keep_disturbed: bool = False  # test disturbed repetitions too
    model: str = "generic"  # the baseline model whose interval the candidate is checked against
    level: float = 0.99  # of that prediction interval


@dataclass
class Comparison:
    baseline: str
    candidate: str
    settings: Settings
    rows: pd.DataFrame  # one per configuration both studies measured, columns COLUMNS
    groups: pd.DataFrame  # one per framework (and framework/network), columns GROUP_COLUMNS
    only_baseline: list[str] = field(default_factory=list)
    only_candidate: list[str] = field(default_factory=list)
    not_tested: list[str] = field(default_factory=list)  # why some configurations were not
    prior_df: float = math.nan  # degrees of freedom the shared variance adds to each test
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
    def inconclusive(self) -> pd.DataFrame:
        return self.rows[self.rows["inconclusive"]]

    @property
    def group_regressions(self) -> pd.DataFrame:
        return self.groups[self.groups["regression"]]

    @property
    def failed(self) -> bool:
        """A regression of a configuration or of a group: exit status 1."""
        return not (self.regressions.empty and self.group_regressions.empty)

    @property
    def reports_nothing(self) -> bool:
        changed = self.rows["verdict"] != "same"
        groups_changed = self.groups["verdict"] != "same"
        return not (
            changed.any()
            or groups_changed.any()
            or self.rows["inconclusive"].any()
            or not self.model_flags.empty
        )


@dataclass
class Repetitions:
    """A configuration's successful runs in one study: iteration times of each repetition
    and whether other programs disturbed it."""

    times: list[np.ndarray] = field(default_factory=list)
    disturbed: list[bool] = field(default_factory=list)

    def tested(self, keep_disturbed: bool) -> list[np.ndarray]:
        return [
            t for t, d in zip(self.times, self.disturbed, strict=True) if keep_disturbed or not d
        ]


def repetitions_by_configuration(records: list[RunRecord]) -> dict[tuple, Repetitions]:
    """Successful runs grouped by configuration, each flagged as the timings table flags it
    (dlperf.measurements.tables.disturbed: one test of a disturbed run)."""
    ok = [r for r in records if r.ok]
    shares = [r.foreign_cpu_fraction for r in ok]
    flags = disturbed(pd.DataFrame({"foreign_cpu_fraction": shares}, dtype=float))
    grouped: dict[tuple, Repetitions] = {}
    for record, flag in zip(ok, flags, strict=True):
        reps = grouped.setdefault(record.key, Repetitions())
        reps.times.append(np.asarray(record.iter_times_s, float))
        reps.disturbed.append(bool(flag))
    return grouped


def run_spread(reps: list[np.ndarray]) -> float:
    """How far apart the repetitions of one study are: the largest ratio of two repetitions'
    median iteration times, less 1 (0 with one repetition)."""
    medians = [float(np.median(r)) for r in reps]
    return max(medians) / min(medians) - 1.0


def _describe(base: list[np.ndarray], cand: list[np.ndarray]) -> dict:
    return {
        "baseline_reps": len(base),
        "candidate_reps": len(cand),
        "baseline_iters": int(sum(r.size for r in base)),
        "candidate_iters": int(sum(r.size for r in cand)),
        "baseline_median_s": float(np.exp(compare_stats.log_medians(base).mean())),
        "candidate_median_s": float(np.exp(compare_stats.log_medians(cand).mean())),
        "run_spread": max(run_spread(base), run_spread(cand)),
    }


def _tested_columns(tested: compare_stats.Tested) -> dict:
    return {
        "ratio": math.exp(tested.log_ratio),
        "ratio_lo": tested.lo,
        "ratio_hi": tested.hi,
        "rep_sd": tested.sd,
        "df": tested.df,
        "p_slower": tested.p_slower,
    }


def _adjusted(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg over the known p-values."""
    adjusted = np.full(p.shape, np.nan)
    known = ~np.isnan(p)
    if known.any():
        adjusted[known] = stats.false_discovery_control(p[known], method="bh")
    return adjusted


def _verdicts(frame: pd.DataFrame, settings: Settings) -> pd.DataFrame:
    """Verdicts and regressions of configurations or groups. "Slower" and "faster" are two
    one-sided questions (a regression gate asks the first), each corrected on its own; the
    corrected p-value shown is that of the direction the ratio points to."""
    frame = frame.copy()
    p_slower = frame["p_slower"].to_numpy(float)
    slower_adjusted, faster_adjusted = _adjusted(p_slower), _adjusted(1.0 - p_slower)
    frame["p_adjusted"] = np.where(frame["ratio"] >= 1.0, slower_adjusted, faster_adjusted)
    slower = slower_adjusted < settings.alpha
    faster = faster_adjusted < settings.alpha
    frame["verdict"] = np.select([slower, faster], ["slower", "faster"], default="same")
    frame["regression"] = slower & (frame["ratio"] > 1.0 + settings.threshold)
    return frame


def _inconclusive(rows: pd.DataFrame, prior_df: float, settings: Settings) -> pd.DataFrame:
    """Slower beyond the threshold without a significant test, and the repetitions per study
    that would find such a slowdown with chance ``power`` at the level a lone finding among
    these configurations needs (alpha / configurations: Benjamini-Hochberg's first step,
    one-sided)."""
    rows = rows.copy()
    rows["inconclusive"] = (rows["ratio"] > 1.0 + settings.threshold) & ~rows["regression"]
    level = settings.alpha / max(len(rows), 1)
    rows["reps_needed"] = [
        compare_stats.repetitions_needed(
            math.log(row.ratio), row.rep_sd, prior_df, level, settings.power
        )
        if row.inconclusive
        else None
        for row in rows.itertuples(index=False)
    ]
    rows["reps_needed"] = rows["reps_needed"].astype("Int64")
    return rows


def _groups(rows: pd.DataFrame, tests: list, settings: Settings) -> pd.DataFrame:
    """Each framework's (and each of its networks', when it has several) geometric mean of
    its configurations' ratios, with interval, test and verdict."""
    by_position = dict(zip(rows.index, tests, strict=True))
    groups = []
    for framework, of_framework in rows.groupby("framework", sort=True):
        networks = sorted(of_framework["network"].unique())
        parts = [(framework, ALL_NETWORKS, of_framework)]
        if len(networks) > 1:
            parts += [
                (f"{framework}/{n}", n, of_framework[of_framework["network"] == n])
                for n in networks
            ]
        for name, network, members in parts:
            combined = compare_stats.combine(
                [by_position[i] for i in members.index], settings.confidence
            )
            groups.append(
                {
                    "group": name,
                    "framework": framework,
                    "network": network,
                    "configurations": len(members),
                    **_tested_columns(combined),
                }
            )
    frame = pd.DataFrame(groups, columns=GROUP_COLUMNS[: GROUP_COLUMNS.index("p_slower") + 1])
    return _verdicts(frame, settings).reindex(columns=GROUP_COLUMNS)


def _not_tested(key: tuple, base: Repetitions, cand: Repetitions) -> str:
    empty = "baseline" if not base.tested(False) else "candidate"
    return (
        f"{label(as_dict(key))}: every run of the {empty} was "
        "disturbed by other programs (measure it again on a quiet machine, or compare with "
        "--keep-disturbed)"
    )


def compare_configurations(
    base: dict[tuple, Repetitions], cand: dict[tuple, Repetitions], settings: Settings
) -> tuple[pd.DataFrame, pd.DataFrame, list[str], float]:
    """Rows (COLUMNS) of the configurations both studies measured, the groups, the
    configurations that could not be tested and why, and the prior's degrees of freedom."""
    keep = settings.keep_disturbed
    described, pairs, within, not_tested = [], [], [], []
    for key in sorted(set(base) & set(cand)):
        b, c = base[key].tested(keep), cand[key].tested(keep)
        if not b or not c:
            not_tested.append(_not_tested(key, base[key], cand[key]))
            continue
        config = as_dict(key)
        disturbed = sum(base[key].disturbed) + sum(cand[key].disturbed)
        described.append(
            {
                **config,
                "configuration": label(config),
                **_describe(b, c),
                "disturbed_runs": disturbed,
            }
        )
        pairs.append((compare_stats.log_medians(b), compare_stats.log_medians(c)))
        within.append(compare_stats.within_run_variance(b + c))
    tests, prior_df = compare_stats.compare_all(pairs, np.array(within), settings.confidence)
    rows = pd.DataFrame(
        [{**d, **_tested_columns(t)} for d, t in zip(described, tests, strict=True)],
        columns=COLUMNS[: COLUMNS.index("p_slower") + 1],
    )
    rows = _inconclusive(_verdicts(rows, settings), prior_df, settings)
    return rows.reindex(columns=COLUMNS), _groups(rows, tests, settings), not_tested, prior_df


def compare(baseline: StudyFiles, candidate: StudyFiles, settings: Settings) -> Comparison:
    base = repetitions_by_configuration(baseline.records)
    cand = repetitions_by_configuration(candidate.records)
    if not base or not cand:
        empty = baseline.source if not base else candidate.source
        raise NotComparable(f"{empty} has no successful run to compare; check its failures.csv")
    rows, groups, not_tested, prior_df = compare_configurations(base, cand, settings)
    if rows.empty and not_tested:
        raise NotComparable(
            f"no configuration of {baseline.source} and {candidate.source} could be tested: "
            f"every one had all its runs in one study disturbed by other programs (e.g. "
            f"{not_tested[0].split(':')[0]}); measure again on a quiet machine, or compare "
            "with --keep-disturbed"
        )
    if rows.empty:
        # A gate must not pass what it could not judge.
        raise NotComparable(
            f"{baseline.source} and {candidate.source} share no configuration (e.g. "
            f"{label(as_dict(min(base)))} against "
            f"{label(as_dict(min(cand)))}); compare studies of the "
            "same sweep"
        )
    if rows["p_slower"].isna().all():
        # One repetition in each study: no spread to test by, so nothing was judged.
        raise NotComparable(
            f"no configuration of {baseline.source} and {candidate.source} could be tested: "
            "each has one repetition in each study, so there is no spread of repetitions to "
            "judge a change by (their ratios are in neither direction a verdict); measure "
            "with repeats: 2 or more"
        )
    flags, notes = check_against_model(baseline, candidate, settings.model, settings.level)
    return Comparison(
        baseline=baseline.source,
        candidate=candidate.source,
        settings=settings,
        rows=rows,
        groups=groups,
        only_baseline=[label(as_dict(k)) for k in sorted(set(base) - set(cand))],
        only_candidate=[label(as_dict(k)) for k in sorted(set(cand) - set(base))],
        not_tested=not_tested,
        prior_df=prior_df,
        model_flags=flags,
        model_notes=notes,
    )
