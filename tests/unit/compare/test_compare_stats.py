"""The statistics of `dlperf compare` on synthetic repetitions with known effects: false-alarm
and detection rates, interval coverage and the prior, against what the method promises."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dlperf.compare import statistics as compare_stats

CONFIGS = 36  # the default study's configurations
REPS = 3
PRIOR = compare_stats.Prior(variance=0.03**2, df=8.0)  # sd of a repetition about 3%
FLAT = np.ones(CONFIGS)  # every configuration's within-run variance alike


def _sds(rng, k=CONFIGS):
    """Each configuration's true sd of a repetition, drawn from PRIOR (scaled inverse chi2)."""
    return np.sqrt(PRIOR.df * PRIOR.variance / rng.chisquare(PRIOR.df, size=k))


def _trial(rng, effects):
    """Log medians of every configuration in two studies; ``effects`` the true log ratios."""
    sds = _sds(rng)
    base = rng.normal(0.0, sds[:, None], size=(CONFIGS, REPS))
    cand = rng.normal(effects[:, None], sds[:, None], size=(CONFIGS, REPS))
    return list(zip(base, cand, strict=True))


def test_the_prior_is_recovered_from_many_variances():
    rng = np.random.default_rng(0)
    df = np.full(4000, 4.0)
    true = PRIOR.df * PRIOR.variance / rng.chisquare(PRIOR.df, size=df.size)
    sample = true * rng.chisquare(df) / df
    flat = np.zeros(df.size)
    prior = compare_stats.fit_priors(sample, df, flat)[0]
    assert prior.variance == pytest.approx(PRIOR.variance, rel=0.1)
    assert prior.df == pytest.approx(PRIOR.df, rel=0.3)
    same = np.full(4000, PRIOR.variance) * rng.chisquare(df) / df
    one = compare_stats.fit_priors(same, df, flat)[0]  # no excess spread: all the df
    assert one.df == df.sum() and one.variance == pytest.approx(PRIOR.variance, rel=0.05)


def test_false_alarms_and_interval_coverage_are_what_the_level_promises():
    rng = np.random.default_rng(1)
    p_values, covered, group_covered = [], [], []
    for _ in range(300):
        tests, _ = compare_stats.compare_all(_trial(rng, np.zeros(CONFIGS)), FLAT, 0.95)
        p_values += [t.p_slower for t in tests]
        covered += [t.lo <= 1.0 <= t.hi for t in tests]
        overall = compare_stats.combine(tests[:12], 0.95)
        group_covered.append(overall.lo <= 1.0 <= overall.hi)
    p_values = np.array(p_values)
    assert np.mean(p_values < 0.05) == pytest.approx(0.05, abs=0.012)
    assert np.mean(p_values < 0.01) == pytest.approx(0.01, abs=0.006)
    assert np.mean(covered) == pytest.approx(0.95, abs=0.012)
    assert np.mean(group_covered) == pytest.approx(0.95, abs=0.04)


def test_detection_rate_is_what_the_power_estimate_promises():
    rng = np.random.default_rng(2)
    effect, sd = math.log(1.10), 0.03
    found = []
    for _ in range(400):
        pairs = _trial(rng, np.zeros(CONFIGS))
        pairs[0] = (rng.normal(0, sd, REPS), rng.normal(effect, sd, REPS))
        tests, _ = compare_stats.compare_all(pairs, FLAT, 0.95)
        found.append(tests[0].p_slower < 0.05)
    promised = compare_stats.power(effect, sd, REPS, PRIOR.df, 0.05)
    assert 0.6 < promised < 0.99  # a case where the rate says something
    assert np.mean(found) == pytest.approx(promised, abs=0.06)


def test_repetitions_needed_reach_the_asked_power():
    sd, level = 0.05, 0.05 / 36
    needed = compare_stats.repetitions_needed(math.log(1.08), sd, 8.0, level, 0.8)
    assert compare_stats.power(math.log(1.08), sd, needed, 8.0, level) >= 0.8
    assert compare_stats.power(math.log(1.08), sd, needed - 1, 8.0, level) < 0.8
    assert compare_stats.repetitions_needed(math.log(1.001), 0.5, 8.0, level, 0.8) is None


def test_a_slowdown_of_every_configuration_shows_in_the_geometric_mean():
    """5 % on each of 12 configurations: rarely significant alone, nearly always together."""
    rng = np.random.default_rng(3)
    alone, together = [], []
    for _ in range(100):
        effects = np.zeros(CONFIGS)
        effects[:12] = math.log(1.05)
        tests, _ = compare_stats.compare_all(_trial(rng, effects), FLAT, 0.95)
        alone.append(np.mean([t.p_slower < 0.05 / CONFIGS for t in tests[:12]]))
        overall = compare_stats.combine(tests[:12], 0.95)
        together.append(overall.p_slower < 0.05 / 3 and overall.lo > 1.0)
    assert np.mean(alone) < 0.2
    assert np.mean(together) > 0.9


def test_identical_studies_give_ratio_1_and_p_1():
    base = np.log([0.010, 0.011, 0.0105])
    tests, _ = compare_stats.compare_all(
        [(base, base.copy()), (base + 0.01, base + 0.01)], np.ones(2), 0.95
    )
    assert all(t.log_ratio == 0.0 and t.p_slower == 0.5 for t in tests)
    overall = compare_stats.combine(tests, 0.95)
    assert overall.log_ratio == 0.0 and overall.p_slower == 0.5


def test_the_prior_follows_the_within_run_variance():
    """Half the configurations have medians of few noisy iterations (within-run variance 4x):
    their prior is larger, that of the quiet ones smaller than one scale for all."""
    rng = np.random.default_rng(4)
    within = np.repeat([0.01**2, 0.04**2], 100)
    true = PRIOR.variance + within
    df = np.full(within.size, 4.0)
    sample = true * rng.chisquare(df) / df
    priors = compare_stats.fit_priors(sample, df, np.log(within))
    quiet, noisy = priors[0].variance, priors[-1].variance
    one_scale = compare_stats.fit_priors(sample, df, np.zeros(within.size))[0].variance
    assert quiet < one_scale < noisy
    assert quiet == pytest.approx(true[0], rel=0.25) and noisy == pytest.approx(true[-1], rel=0.25)


def test_within_run_variance_is_that_of_a_median():
    rng = np.random.default_rng(5)
    reps = [np.exp(rng.normal(0.0, 0.1, 64)) for _ in range(400)]
    medians = np.log([np.median(r) for r in reps])
    estimate = compare_stats.within_run_variance(reps)
    assert estimate == pytest.approx(np.var(medians), rel=0.2)
