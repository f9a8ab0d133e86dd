"""Does `dlperf compare` catch planted slowdowns in a real study, and stay quiet on A/A?

On a measured study (default: results/):
- planted, one configuration: each configuration in turn, its candidate runs' iteration times
  scaled by 1.05, 1.10, 1.15, 1.25; detected when that configuration is a regression (exit 1,
  named). Rates over all configurations, and over those whose repetitions spread <= 5 %;
- planted, a framework: every configuration of one framework scaled; detected when the
  framework's overall ratio is a regression;
- A/A: the study with itself; its repetitions split into two pseudo-studies (repetition r
  against the others, for each r); and, given --second, two independent runs of the sweep.
  Counted: configurations flagged (slower or faster), regressions, frameworks flagged.

The candidate of a planted slowdown is either a copy of the study (`copy`: the slowed runs
are the baseline's own, scaled, as in issue 27) or, with --second, the second study
(`independent`: scaled runs of a different sweep; its own noise included).

    .venv/bin/python benchmarks/compare_detection.py results/ [--second other/results]
        [--keep-disturbed] [--write-docs]
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from dlperf.compare.pair import (
    CONFIG_KEYS,
    Repetitions,
    Settings,
    compare_configurations,
    repetitions_by_configuration,
)
from dlperf.study.files import load_study

FACTORS = (1.05, 1.10, 1.15, 1.25)
QUIET_SPREAD = 0.05  # the "repetitions spread <= 5 %"
DOC = Path(__file__).resolve().parents[1] / "docs" / "compare.md"


def _scaled(reps: dict, keys, factor: float) -> dict:
    out = dict(reps)
    for key in keys:
        out[key] = Repetitions([t * factor for t in reps[key].times], list(reps[key].disturbed))
    return out


def _spread(reps: Repetitions, settings: Settings) -> float:
    medians = [float(np.median(t)) for t in reps.tested(settings.keep_disturbed)]
    return max(medians) / min(medians) - 1.0 if len(medians) > 1 else np.nan


def _flags(base: dict, cand: dict, settings: Settings) -> dict:
    rows, groups, _, _ = compare_configurations(base, cand, settings)
    return {
        "configurations": len(rows),
        "flagged": int((rows["verdict"] != "same").sum()),
        "regressions": int(rows["regression"].sum()),
        "frameworks flagged": int((groups["verdict"] != "same").sum()),
        "framework regressions": int(groups["regression"].sum()),
        "inconclusive": int(rows["inconclusive"].sum()),
    }


def a_a(studies: dict[str, dict], settings: Settings) -> list[dict]:
    """False alarms: the study with itself, repetitions split, independent runs."""
    first = studies["study"]
    out = [{"comparison": "study with itself", **_flags(first, first, settings)}]
    reps = max(len(r.times) for r in first.values())
    for r in range(reps):
        one = {k: Repetitions(v.times[r : r + 1], v.disturbed[r : r + 1]) for k, v in first.items()}
        rest = {
            k: Repetitions(v.times[:r] + v.times[r + 1 :], v.disturbed[:r] + v.disturbed[r + 1 :])
            for k, v in first.items()
        }
        one = {k: v for k, v in one.items() if v.times}
        rest = {k: v for k, v in rest.items() if v.times}
        out.append({"comparison": f"repetition {r} vs the others", **_flags(one, rest, settings)})
    if "second" in studies:
        both = _flags(first, studies["second"], settings)
        out.append({"comparison": "two independent runs", **both})
    return out


def planted(studies: dict[str, dict], settings: Settings) -> list[dict]:
    """Detection of slowdowns planted in one configuration, and in one framework."""
    base = studies["study"]
    candidates = {"copy": base}
    if "second" in studies:
        candidates["independent"] = studies["second"]
    out = []
    for kind, cand in candidates.items():
        rows, _, _, _ = compare_configurations(base, cand, settings)
        keys = sorted(rows[CONFIG_KEYS].apply(tuple, axis=1))  # those that could be tested
        quiet = {k for k in keys if _spread(base[k], settings) <= QUIET_SPREAD}
        frameworks = sorted({k[0] for k in keys})
        for factor in FACTORS:
            found = {}
            for key in keys:
                rows, _, _, _ = compare_configurations(base, _scaled(cand, [key], factor), settings)
                hit = rows[rows[CONFIG_KEYS].apply(tuple, axis=1) == key]
                found[key] = bool(len(hit)) and bool(hit["regression"].iloc[0])
            caught = 0
            for framework in frameworks:
                slowed = _scaled(cand, [k for k in keys if k[0] == framework], factor)
                _, groups, _, _ = compare_configurations(base, slowed, settings)
                row = groups[groups["group"] == framework]
                caught += bool(len(row)) and bool(row["regression"].iloc[0])
            out.append(
                {
                    "candidate": kind,
                    "slowdown": f"{factor - 1:.0%}",
                    "one configuration: detected / tested": f"{sum(found.values())} / {len(found)}",
                    "of those whose repetitions spread <= 5 %": f"{sum(found[k] for k in quiet)} / "
                    f"{len(quiet)}",
                    "a framework: detected": f"{caught} / {len(frameworks)}",
                }
            )
    return out


def _markdown(frame: pd.DataFrame) -> str:
    header = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + " --- |" * len(frame.columns)
    rows = ["| " + " | ".join(str(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *rows])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study", help="results directory (or archive) of a measured study")
    parser.add_argument("--second", help="an independent run of the same sweep")
    parser.add_argument("--keep-disturbed", action="store_true")
    parser.add_argument("--write-docs", action="store_true", help=f"write the tables into {DOC}")
    args = parser.parse_args(argv)
    settings = Settings(keep_disturbed=args.keep_disturbed)
    studies = {"study": repetitions_by_configuration(load_study(args.study).records)}
    if args.second:
        studies["second"] = repetitions_by_configuration(load_study(args.second).records)
    disturbed = sum(sum(r.disturbed) for r in studies["study"].values())
    runs = sum(len(r.times) for r in studies["study"].values())
    text = (
        f"Study `{args.study}`{f', second `{args.second}`' if args.second else ''}: "
        f"{len(studies['study'])} configurations, {runs} successful runs, {disturbed} disturbed "
        f"({'kept' if args.keep_disturbed else 'left out'}).\n\n"
        + _markdown(pd.DataFrame(planted(copy.copy(studies), settings)))
        + "\n\n"
        + _markdown(pd.DataFrame(a_a(studies, settings)))
    )
    print(text)
    if args.write_docs:
        from common import write_between_markers

        name = "compare-detection" + ("-kept" if args.keep_disturbed else "")
        write_between_markers(DOC, name, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
