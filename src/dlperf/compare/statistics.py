"""The statistics of `dlperf compare`, on the repetitions: each repetition is a fresh process,
the independent unit; the iterations of one run are not (a run on a busy node is slow
throughout), so each repetition is summarised by the log of its median iteration time.

Per configuration the candidate's and the baseline's repetitions are compared by a *moderated*
t-test (empirical Bayes, Smyth 2004, as in limma): with three repetitions a study's own
variance rests on two degrees of freedom, so every configuration's variance is shrunk towards
a prior fitted to the variances of all configurations compared. The prior's scale follows the
configuration's within-run variance (iterations nested in repetitions: a median of few noisy
iterations varies more from run to run), and it adds its degrees of freedom to each test.
The ratio's interval comes from the same t distribution. Why this test and not Welch's or a
bootstrap: docs/compare.md (measured by benchmarks/compare_methods.py).

The overall ratio of a group of configurations (a framework, a network) is the geometric mean
of their ratios; its standard error sums the configurations' (independent repetitions), its
degrees of freedom by Welch-Satterthwaite.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

MAX_REPETITIONS = 100  # a power estimate beyond this says "more than 100"


def log_medians(reps: list[np.ndarray]) -> np.ndarray:
    """One value per repetition: the log of its median iteration time."""
    return np.log([float(np.median(r)) for r in reps])


def _trigamma_inverse(x: float) -> float:
    """y with trigamma(y) = x (Newton's method, as limma's trigammaInverse)."""
    if x > 1e7:
        return 1.0 / math.sqrt(x)
    if x < 1e-6:
        return 1.0 / x
    y = 0.5 + 1.0 / x
    for _ in range(50):
        tri = float(special.polygamma(1, y))
        step = tri * (1.0 - tri / x) / float(special.polygamma(2, y))
        y += step
        if -step / y < 1e-8:
            break
    return y


@dataclass(frozen=True)
class Prior:
    """What the other configurations say of one configuration's variance: scale
    ``variance`` with ``df`` degrees of freedom."""

    variance: float
    df: float


def within_run_variance(reps: list[np.ndarray]) -> float:
    """How much of a repetition's log median is chance within its run: the sampling variance
    of a median of n iterations, (pi/2) sd^2 / n, sd of the log iteration times from their
    median absolute deviation; the mean over ``reps``."""
    variances = []
    for times in reps:
        logs = np.log(times)
        sd = 1.4826 * float(np.median(np.abs(logs - np.median(logs))))
        variances.append(math.pi / 2 * sd**2 / logs.size)
    return float(np.mean(variances))


def fit_priors(variances: np.ndarray, dfs: np.ndarray, covariate: np.ndarray) -> list[Prior] | None:
    """Each configuration's prior: the scaled inverse-chi-square of the sample variances
    (limma's fitFDist by the moments of their logs) whose scale follows ``covariate`` (a
    straight line in it, as limma-trend: here the log within-run variance, so a configuration
    with many quiet iterations is not shrunk towards noisy ones); one degrees of freedom for
    all, at most the variances' together. None when fewer than two have degrees of freedom."""
    usable = (dfs > 0) & np.isfinite(variances)
    s2, d = variances[usable], dfs[usable]
    if s2.size < 2:
        return None
    # A variance of 0 (identical repetitions) has no log; keep it as a small one.
    floor = 1e-5 * float(np.median(s2)) if np.median(s2) > 0 else 1e-12
    e = np.log(np.maximum(s2, floor)) - special.digamma(d / 2) + np.log(d / 2)
    trend = np.column_stack([np.ones(variances.size), covariate])
    if s2.size < 4 or not np.ptp(covariate[usable]) > 0:
        trend = trend[:, :1]  # too few, or nothing to follow: one scale for all
    coef, *_ = np.linalg.lstsq(trend[usable], e, rcond=None)
    residual = e - trend[usable] @ coef
    spread = float(residual @ residual) / (s2.size - trend.shape[1])
    excess = spread - float(np.mean(special.polygamma(1, d / 2)))
    # The prior knows no more than every variance together: its degrees of freedom are at
    # most theirs (limma lets them be infinite, which with a few dozen variances makes the
    # tests' tails too light).
    most = float(d.sum())
    df0 = min(2.0 * _trigamma_inverse(excess), most) if excess > 0 else most
    scale = np.exp(trend @ coef + special.digamma(df0 / 2) - math.log(df0 / 2))
    return [Prior(float(v), df0) for v in scale]


@dataclass(frozen=True)
class Tested:
    """One configuration's comparison: log ratio (candidate / baseline) of the mean log
    median, its standard error and degrees of freedom, moderated standard deviation of one
    repetition, one-sided p-value of "the candidate is slower" (that of "faster" is
    1 - p_slower) and the ratio's two-sided interval."""

    log_ratio: float
    se: float
    df: float
    sd: float
    p_slower: float
    lo: float
    hi: float

    @property
    def p_faster(self) -> float:
        return 1.0 - self.p_slower


def residual_variance(base: np.ndarray, cand: np.ndarray) -> tuple[float, int]:
    """Pooled within-study variance of the log medians and its degrees of freedom."""
    df = base.size + cand.size - 2
    if df <= 0:
        return math.nan, 0
    squares = np.sum((base - base.mean()) ** 2) + np.sum((cand - cand.mean()) ** 2)
    return float(squares / df), df


def _t_interval(estimate: float, se: float, df: float, confidence: float) -> tuple[float, float]:
    half = float(stats.t.ppf(0.5 + confidence / 2, df)) * se
    return math.exp(estimate - half), math.exp(estimate + half)


def _p_slower(estimate: float, se: float, df: float) -> float:
    """One-sided p-value of a positive log ratio; with no spread at all, 0, 1/2 or 1."""
    if se == 0.0:
        return 0.0 if estimate > 0 else 1.0 if estimate < 0 else 0.5
    return float(stats.t.sf(estimate / se, df))


def moderated_test(
    base: np.ndarray, cand: np.ndarray, prior: Prior | None, confidence: float
) -> Tested:
    """The moderated t-test of two studies' log medians of one configuration."""
    s2, df = residual_variance(base, cand)
    if prior is None and df == 0:
        nan = math.nan
        return Tested(float(cand.mean() - base.mean()), nan, 0.0, nan, nan, nan, nan)
    if prior is None:
        var, total_df = s2, float(df)
    else:
        var = (prior.df * prior.variance + (df * s2 if df else 0.0)) / (prior.df + df)
        total_df = prior.df + df
    estimate = float(cand.mean() - base.mean())
    se = math.sqrt(var * (1.0 / base.size + 1.0 / cand.size))
    lo, hi = _t_interval(estimate, se, total_df, confidence)
    p = _p_slower(estimate, se, total_df)
    return Tested(estimate, se, total_df, math.sqrt(var), p, lo, hi)


def compare_all(
    pairs: list[tuple[np.ndarray, np.ndarray]], within: np.ndarray, confidence: float
) -> tuple[list[Tested], float]:
    """Moderated tests of every configuration (baseline, candidate log medians; ``within``
    their within-run variances), with priors fitted to all of them; and the priors' degrees
    of freedom (0 without a prior)."""
    fitted = [residual_variance(b, c) for b, c in pairs]
    variances = np.array([v for v, _ in fitted], float)
    dfs = np.array([d for _, d in fitted], float)
    covariate = np.log(np.maximum(np.asarray(within, float), 1e-300))
    priors = fit_priors(variances, dfs, covariate)
    if priors is None:
        return [moderated_test(b, c, None, confidence) for b, c in pairs], 0.0
    tests = [moderated_test(b, c, p, confidence) for (b, c), p in zip(pairs, priors, strict=True)]
    return tests, priors[0].df


def combine(tests: list[Tested], confidence: float) -> Tested:
    """The geometric mean of several configurations' ratios: mean log ratio, standard error
    from theirs (independent repetitions), Welch-Satterthwaite degrees of freedom."""
    estimates = np.array([t.log_ratio for t in tests])
    variances = np.array([t.se**2 for t in tests])
    k = len(tests)
    estimate = float(estimates.mean())
    if not np.isfinite(variances).all():
        nan = math.nan
        return Tested(estimate, nan, 0.0, nan, nan, nan, nan)
    se = math.sqrt(float(variances.sum())) / k
    dfs = np.array([t.df for t in tests])
    weighted = variances**2 / dfs
    df = float(variances.sum() ** 2 / weighted.sum()) if weighted.sum() > 0 else math.inf
    lo, hi = _t_interval(estimate, se, df, confidence)
    return Tested(estimate, se, df, math.nan, _p_slower(estimate, se, df), lo, hi)


_CHI_GRID = (np.arange(400) + 0.5) / 400  # quantiles the power's average runs over


def power(log_ratio: float, sd: float, reps: int, prior_df: float, level: float) -> float:
    """Chance that the one-sided moderated t-test at ``level``, with ``reps`` repetitions in
    each study, finds a true log ratio ``log_ratio`` (its direction) when one repetition's sd
    is ``sd``: the normal power averaged over the estimated variance (chi-square quantiles;
    scipy's noncentral t fails for large shifts)."""
    df = 2 * reps - 2 + prior_df
    shift = abs(log_ratio) / (sd * math.sqrt(2.0 / reps))
    crit = float(stats.t.ppf(1 - level, df))
    scale = np.sqrt(stats.chi2.ppf(_CHI_GRID, df) / df)
    return float(stats.norm.cdf(shift - crit * scale).mean())


def repetitions_needed(
    log_ratio: float, sd: float, prior_df: float, level: float, target: float
) -> int | None:
    """Fewest repetitions per study that find ``log_ratio`` with chance ``target`` at
    ``level``; None when more than MAX_REPETITIONS would be needed or nothing is known."""
    if not (math.isfinite(sd) and sd > 0 and log_ratio != 0):
        return None
    for reps in range(2, MAX_REPETITIONS + 1):
        if power(log_ratio, sd, reps, prior_df, level) >= target:
            return reps
    return None
