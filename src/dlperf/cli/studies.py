"""``dlperf archive``, ``verify-archive``, ``compare`` and ``forget-disturbed``: whole studies
kept, checked, compared with each other, and their disturbed runs measured again."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from dlperf.cli import arguments as arg
from dlperf.cli.output import deliver
from dlperf.errors import UsageError
from dlperf.layout import RESULTS, TIMINGS, archive_digest_of


def add_forget_disturbed(sub) -> None:
    p = sub.add_parser(
        "forget-disturbed",
        help="keep the records of the runs flagged disturbed in the history and remove them, "
        "so that the workflow measures exactly those again",
        parents=[arg.results_option()],
    )
    p.add_argument(
        "--timings", help="the study's timings table (default: timings.csv in --results)"
    )
    p.add_argument(
        "--out", type=arg.OUT_FILE, help="JSON file listing the removed records (optional)"
    )
    p.set_defaults(func=run_forget_disturbed)


def run_forget_disturbed(args: argparse.Namespace) -> int:
    from dlperf.study.disturbed_runs import forget_disturbed

    timings = args.timings or str(Path(args.results) / TIMINGS)
    results = _results_of(timings, args.results)
    records, removed = forget_disturbed(timings, results, args.out)
    before = len(records) - len(removed)
    earlier = f" ({before} had no record left: removed before)" if before else ""
    print(
        f"{len(removed)} disturbed run(s) kept in {Path(results) / 'history'} and removed"
        f"{earlier}; {_measure_again(results)} measures exactly them again"
    )
    return 0


def _measure_again(results: str) -> str:
    """The commands that run the study whose results folder is ``results`` (STUDY/results)."""
    study = Path(results).resolve().parent
    if study == Path.cwd().resolve():
        return "`make run` (or `snakemake`)"
    where = shlex.quote(str(study))
    return f"`make run STUDY={where}` (or `snakemake --directory {where}`)"


def _results_of(timings: str, results: str) -> str:
    """The results folder of the study whose timings table (``.../timings.csv``) is given: the
    table's own folder when --results was left at its default, else --results, which must
    then be the same folder (UsageError)."""
    folder = Path(timings).parent
    if Path(timings).name != TIMINGS or folder.resolve() == Path(results).resolve():
        return results
    if results == RESULTS:
        return str(folder)
    raise UsageError(
        f"--timings {timings} is the table of the study in {folder}, not of --results "
        f"{results}; give one study's two (--results {folder})"
    )


def add_archive(sub) -> None:
    p = sub.add_parser(
        "archive",
        help="write one file holding the whole study, with checksums",
        parents=[
            arg.results_option(),
            arg.config_options(
                "the workflow config file the study ran with (default: RESULTS/config.json, "
                "which the workflow writes)"
            ),
        ],
    )
    p.add_argument("--out", required=True, type=arg.OUT_FILE, help="archive to write (.tar.gz)")
    p.set_defaults(func=run_archive)


def run_archive(args: argparse.Namespace) -> int:
    from dlperf.study import archive
    from dlperf.study.files import study_config

    given = args.config or args.config_json
    config = arg.config_of(args) if given else study_config(args.results)
    manifest = archive.create(args.results, config, args.out)
    files = sum(1 for node in manifest["@graph"] if node.get("@type") == "File")
    print(f"{files} files with SHA-256 checksums -> {args.out}")
    # The manifest proves the members agree with it, not that nobody rewrote both: the
    # archive's own digest, recorded elsewhere, does (verify-archive --digest).
    digest = archive.write_digest(args.out)
    print(
        f"SHA-256 of the archive: {digest} (also in {archive_digest_of(args.out)}); record it "
        "elsewhere (a paper, a lab notebook) and check it with "
        f"`dlperf verify-archive {args.out} --digest {digest}`"
    )
    return 0


def add_verify_archive(sub) -> None:
    p = sub.add_parser("verify-archive", help="check an archive's checksums (and reproduce it)")
    p.add_argument("archive", help="the archive to verify (.tar.gz from `dlperf archive`)")
    p.add_argument(
        "--rerun",
        action="store_true",
        help="re-run fit, validate and report from the archived timings and compare byte for byte",
    )
    p.add_argument(
        "--digest",
        metavar="SHA256",
        help="the archive's SHA-256 as `dlperf archive` printed it and you recorded it elsewhere: "
        "the archive must have exactly this digest (a rewritten archive, manifest included, "
        "fails here)",
    )
    p.set_defaults(func=run_verify_archive)


def run_verify_archive(args: argparse.Namespace) -> int:
    from dlperf import rerun
    from dlperf.study import archive

    if args.digest is not None:
        problem = archive.check_digest(args.archive, args.digest)
        if problem:
            print(f"{args.archive}: NOT intact ({problem})")
            return 1
    result = rerun.verify(args.archive) if args.rerun else archive.verify(args.archive)
    for name in result.reproduced:
        print(f"reproduced: {name}")
    for problem in result.problems:
        print(f"problem: {problem}", file=sys.stderr)
    verdict = "intact" if result.ok else "NOT intact"
    print(
        f"{args.archive}: {verdict} ({result.files} files checked"
        + (f", {len(result.reproduced)} results reproduced byte for byte" if args.rerun else "")
        + (", the archive's SHA-256 is the recorded one" if args.digest is not None else "")
        + ")"
    )
    return 0 if result.ok else 1


def add_compare(sub) -> None:
    p = sub.add_parser(
        "compare",
        help="compare two studies configuration by configuration; exit 1 on a regression",
    )
    p.add_argument(
        "studies",
        nargs="+",
        metavar="STUDY",
        help="results directories or archives (.tar.gz), oldest first: a baseline and a "
        "candidate, or a history of studies (each compared with the one before)",
    )
    p.add_argument(
        "--threshold",
        type=arg.FRACTION,
        default=0.05,
        help="slowdown (fraction of the median iteration) that counts as a regression "
        "(default 0.05)",
    )
    p.add_argument(
        "--alpha",
        type=arg.RATE,
        default=0.05,
        help="false discovery rate of the tests (default 0.05)",
    )
    p.add_argument(
        "--power",
        type=arg.POWER,
        default=0.8,
        help="chance to detect that the repetitions an inconclusive slowdown needs are "
        "sized for (default 0.8)",
    )
    p.add_argument(
        "--keep-disturbed",
        action="store_true",
        help="test runs that other programs disturbed too (left out by default)",
    )
    p.add_argument(
        "--model-name",
        default="generic",
        help="baseline model whose prediction interval the candidate's runs are checked against",
    )
    arg.add_answer_output(p, ["markdown", "html"])
    p.set_defaults(func=run_compare)


def run_compare(args: argparse.Namespace) -> int:
    from dlperf.compare.command import compare_studies
    from dlperf.compare.pair import Settings

    settings = Settings(
        threshold=args.threshold,
        alpha=args.alpha,
        power=args.power,
        keep_disturbed=args.keep_disturbed,
        model=args.model_name,
    )
    failed, text = compare_studies(args.studies, settings, args.format)
    deliver(args.out, text, "regression" if failed else "no regression")
    return 1 if failed else 0
