"""Which test should `dlperf compare` use? Five candidates on synthetic studies with known
effects, shaped like the default study (36 configurations, 3 repetitions, 8-128 iterations a
run):

- moderated t (dlperf.compare.statistics, chosen): repetitions' log medians, variances shrunk
  towards a prior fitted over the configurations whose scale follows the within-run
  variance of the median;
- moderated t without that trend (one scale for all configurations);
- Welch's t-test on the repetitions' log medians, each configuration on its own;
- hierarchical bootstrap: repetitions resampled, then iterations within each, ratio of the
  mean log medians; p-value from the bootstrap distribution (2000 resamples);
- before (issue 27): every iteration pooled, Mann-Whitney U, percentile bootstrap of the
  ratio of medians, flagged only beyond the largest ratio of two repetitions.

Each repetition's level is drawn around the configuration's (sd of a repetition: per
configuration, from a scaled inverse chi-square), iterations around it (--machine
SD:DF:ITER; a noisy machine 3 %, 8 df, iterations 10 %, and a quiet one 2 %, 20 df,
iterations 2 %). Benjamini-Hochberg at 0.05 over the 36 configurations for every method.
Reported: per A/A comparison the configurations flagged, the share of comparisons with any
flag, and the per-test false-alarm rate at p < 0.05 (one-sided p of "slower" for the
moderated t); the detection rate of a 10 % slowdown of
one configuration whose repetitions have sd 2.5 % (128 iterations a run: on the noisy
machine its repetitions spread 4.8 % on average, <= 5 % in 58 % of draws), and of every
configuration of one framework (12; overall ratio for the moderated t, else share flagged).

    .venv/bin/python benchmarks/compare_methods.py [--trials 200] [--machine 0.03:8 ...]
        [--write-docs]
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from dlperf.compare import statistics as compare_stats

CONFIGS, REPS, FRAMEWORK = 36, 3, 12
ITERATIONS = (8, 16, 32, 64, 128)
SLOWDOWN = math.log(1.10)
QUIET_SD = 0.025
ALPHA = 0.05
DOC = Path(__file__).resolve().parents[1] / "docs" / "compare.md"


def draw(rng, machine, effects: np.ndarray, one_sd: float | None):
    """Two studies' iteration times: per configuration a list of repetitions per study."""
    sds = np.sqrt(machine.prior_df * machine.sd**2 / rng.chisquare(machine.prior_df, CONFIGS))
    if one_sd is not None:
        sds[0] = one_sd
    iters = rng.choice(ITERATIONS, size=CONFIGS)
    if one_sd is not None:  # the quiet configuration: repetitions spread about 4 %
        iters[0] = max(ITERATIONS)
    studies = []
    for shift in (np.zeros(CONFIGS), effects):
        studies.append(
            [
                [
                    np.exp(rng.normal(shift[c] + rng.normal(0, sds[c]), machine.iter_sd, iters[c]))
                    for _ in range(REPS)
                ]
                for c in range(CONFIGS)
            ]
        )
    return studies


def moderated(base, cand, rng, trend: bool = True):
    pairs = [
        (compare_stats.log_medians(b), compare_stats.log_medians(c))
        for b, c in zip(base, cand, strict=True)
    ]
    within = [compare_stats.within_run_variance(b + c) for b, c in zip(base, cand, strict=True)]
    if not trend:
        within = np.ones(len(pairs))  # nothing to follow: one scale for all
    tests, _ = compare_stats.compare_all(pairs, np.array(within), 0.95)
    p = np.array([t.p_slower for t in tests])
    overall = compare_stats.combine(tests[:FRAMEWORK], 0.95)
    return p, np.array([t.log_ratio for t in tests]), overall


def moderated_flat(base, cand, rng):
    return moderated(base, cand, rng, trend=False)


def welch(base, cand, rng):
    p = np.array(
        [
            stats.ttest_ind(
                compare_stats.log_medians(c), compare_stats.log_medians(b), equal_var=False
            ).pvalue
            for b, c in zip(base, cand, strict=True)
        ]
    )
    ratios = np.array(
        [
            compare_stats.log_medians(c).mean() - compare_stats.log_medians(b).mean()
            for b, c in zip(base, cand, strict=True)
        ]
    )
    return p, ratios, None


def _boot_log_means(reps, rng, resamples):
    """Resampled mean log median: repetitions drawn with replacement, then iterations."""
    medians = np.stack(
        [np.median(rng.choice(r, size=(resamples, r.size)), axis=1) for r in reps], axis=1
    )
    chosen = rng.integers(0, len(reps), size=(resamples, len(reps)))
    return np.log(np.take_along_axis(medians, chosen, axis=1)).mean(axis=1)


def hierarchical_bootstrap(base, cand, rng, resamples=2000):
    p, ratios = [], []
    for b, c in zip(base, cand, strict=True):
        diff = _boot_log_means(c, rng, resamples) - _boot_log_means(b, rng, resamples)
        tail = min(np.mean(diff <= 0), np.mean(diff >= 0))
        p.append(min(1.0, 2 * max(tail, 1 / resamples)))
        ratios.append(compare_stats.log_medians(c).mean() - compare_stats.log_medians(b).mean())
    return np.array(p), np.array(ratios), None


def before(base, cand, rng, resamples=500):
    """Pooled iterations; flagged values get p = 0, others 1 (its spread rule is no p-value)."""
    flags, ratios = [], []
    for b, c in zip(base, cand, strict=True):
        pb, pc = np.concatenate(b), np.concatenate(c)
        p = stats.mannwhitneyu(pb, pc).pvalue
        ratio = np.median(pc) / np.median(pb)
        boot = np.median(rng.choice(pc, (resamples, pc.size)), 1) / np.median(
            rng.choice(pb, (resamples, pb.size)), 1
        )
        lo, hi = np.quantile(boot, [0.025, 0.975])
        spread = max(
            max(np.median(r) for r in reps) / min(np.median(r) for r in reps) - 1 for reps in (b, c)
        )
        flags.append((p, lo > 1 + spread or hi < 1 / (1 + spread)))
        ratios.append(math.log(ratio))
    p = np.array([f[0] for f in flags])
    adjusted = stats.false_discovery_control(p)
    beyond = np.array([f[1] for f in flags])
    return np.where((adjusted < ALPHA) & beyond, 0.0, 1.0), np.array(ratios), None


ONE_SIDED = {"moderated t (chosen)", "moderated t, one scale"}  # p of "slower"
METHODS = {
    "moderated t (chosen)": moderated,
    "moderated t, one scale": moderated_flat,
    "Welch t": welch,
    "hierarchical bootstrap": hierarchical_bootstrap,
    "before (pooled iterations + spread)": before,
}


def _flagged(p: np.ndarray) -> np.ndarray:
    return stats.false_discovery_control(p) < ALPHA


def _flagged_either_way(p: np.ndarray, one_sided: bool) -> np.ndarray:
    """Slower or faster: a one-sided method (p of "slower") asks both questions, each
    corrected on its own."""
    return _flagged(p) | _flagged(1.0 - p) if one_sided else _flagged(p)


@dataclass(frozen=True)
class Machine:
    sd: float  # typical sd of a repetition's log median
    prior_df: float  # how little it varies over configurations
    iter_sd: float  # sd of one iteration's log time around its repetition's level

    @classmethod
    def parse(cls, text: str) -> Machine:
        return cls(*(float(v) for v in text.split(":")))

    def __str__(self) -> str:
        return f"{self.sd:.0%} ({self.prior_df:g}), iterations {self.iter_sd:.0%}"


def evaluate(method, one_sided: bool, trials: int, machine: Machine, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    a_a, any_flag, raw, one, group, group_share = [], [], [], [], [], []
    for _ in range(trials):
        base, cand = draw(rng, machine, np.zeros(CONFIGS), None)
        p, _, _ = method(base, cand, rng)
        flagged = _flagged_either_way(p, one_sided)
        a_a.append(flagged.sum())
        any_flag.append(flagged.any())
        raw.append(np.mean(p < 0.05))
        effects = np.zeros(CONFIGS)
        effects[0] = SLOWDOWN
        base, cand = draw(rng, machine, effects, QUIET_SD)
        p, ratios, _ = method(base, cand, rng)
        one.append(_flagged(p)[0] and ratios[0] > math.log(1.05))
        effects = np.zeros(CONFIGS)
        effects[:FRAMEWORK] = SLOWDOWN
        base, cand = draw(rng, machine, effects, None)
        p, ratios, overall = method(base, cand, rng)
        group_share.append(np.mean(_flagged(p)[:FRAMEWORK]))
        if overall is not None:
            group.append(overall.p_slower < ALPHA / 3 and overall.log_ratio > math.log(1.05))
    return {
        "A/A: configurations flagged (mean of 36)": f"{np.mean(a_a):.2f}",
        "A/A: comparisons with a flag": f"{np.mean(any_flag):.0%}",
        "A/A: p < 0.05 per test (promised 5 %)": f"{np.mean(raw):.1%}",
        "10 % on one configuration (sd 2.5 %): detected": f"{np.mean(one):.0%}",
        "10 % on a framework: its configurations flagged": f"{np.mean(group_share):.0%}",
        "10 % on a framework: framework flagged": f"{np.mean(group):.0%}" if group else "–",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument(
        "--machine",
        action="append",
        help="SD:DF:ITER, typical sd of a repetition, its spread over configurations (prior "
        "degrees of freedom) and the sd of an iteration; default 0.03:8:0.1 (noisy) and "
        "0.02:20:0.02 (quiet)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--write-docs", action="store_true", help=f"write the table into {DOC}")
    args = parser.parse_args(argv)
    rows = []
    for text in args.machine or ["0.03:8:0.1", "0.02:20:0.02"]:
        machine = Machine.parse(text)
        for name, method in METHODS.items():
            # the bootstraps are slow: a quarter of the trials
            trials = args.trials if name in ONE_SIDED | {"Welch t"} else args.trials // 4
            result = evaluate(method, name in ONE_SIDED, trials, machine, args.seed)
            if method is before:  # flags, no p-values
                result["A/A: p < 0.05 per test (promised 5 %)"] = "–"
            rows.append(
                {
                    "sd of a repetition (prior df), of an iteration": str(machine),
                    "method": name,
                    "trials": trials,
                    **result,
                }
            )
            print(rows[-1], file=sys.stderr, flush=True)
    frame = pd.DataFrame(rows)
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + " --- |" * len(frame.columns)]
    lines += [
        "| " + " | ".join(str(v) for v in row) + " |" for row in frame.itertuples(index=False)
    ]
    text = (
        f"`benchmarks/compare_methods.py --trials {args.trials} --seed {args.seed}`:\n\n"
        + "\n".join(lines)
    )
    print(text)
    if args.write_docs:
        from common import write_between_markers

        write_between_markers(DOC, "compare-methods", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
