"""The re-run behind ``dlperf verify-archive --rerun``: check an archive as
:func:`dlperf.study.archive.verify` does, then fit, validate and render the report again from the
study's archived timings and configuration, into fresh files compared byte for byte with the
archived ones.

The members are extracted below a root as they are named in the archive (``results/...``,
``external/...``, ``config.json``): the same layout as a study's directory.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from dlperf.layout import (
    ADAPTIVE_ROUND,
    ARCHIVE_CONFIG,
    ARCHIVE_EXTERNAL,
    ARCHIVE_HARDWARE,
    RESULTS,
    WORKFLOW,
    StudyLayout,
    hardware_member,
)
from dlperf.study import archive


def verify(path: str | os.PathLike) -> archive.Verification:
    """Check ``path`` as :func:`dlperf.study.archive.verify` does and, when it is intact,
    re-run fit, validate and report from its members: each fresh file must have the archived
    checksum."""
    path = Path(path)
    with tempfile.TemporaryDirectory(prefix="dlperf-verify-") as tmp:
        root = Path(tmp)
        checked = archive.check(path, root, needed)
        result = checked.verification
        if result.ok:
            compared = rerun(root, checked.config, report=WORKFLOW.report in checked.parts)
            for name, fresh_path in sorted(compared.items()):
                if name not in checked.parts:
                    result.problems.append(f"{name}: not in the archive, cannot compare")
                elif not archive.same_bytes(fresh_path, checked.parts[name]):
                    result.problems.append(f"{name}: re-running gives different bytes")
                else:
                    result.reproduced.append(name)
    return result


def needed(name: str) -> bool:
    """Whether the archive member ``name`` is an input of the re-run (extracted for it)."""
    return name == ARCHIVE_CONFIG or name.startswith(
        (
            WORKFLOW.timings,
            WORKFLOW.failures,
            f"{WORKFLOW.models}/",
            f"{WORKFLOW.validation}/",
            f"{ARCHIVE_EXTERNAL}/",
            f"{ARCHIVE_HARDWARE}/",
        )
    )


def rerun(root: Path, config: dict, report: bool) -> dict[str, Path]:
    """Fit and validate every archived framework again, and render the report when ``report``,
    from the members extracted below ``root``; the fresh files by the member they reproduce."""
    from dlperf import stages
    from dlperf.report.study import ReportSources

    names = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    own = [n for n in (WORKFLOW.timings,) if n in names]
    external = sorted(n for n in names if n.startswith(f"{ARCHIVE_EXTERNAL}/"))
    timings = [root / n for n in own + external]
    fresh = StudyLayout(str(root / "fresh"))
    frameworks = sorted(f for n in names if (f := WORKFLOW.framework_of_model(n)) is not None)
    # The study's own GPU catalogue, as archived: the path the config names may not exist here.
    hardware = str(root / hardware_member(config["hardware"])) if config.get("hardware") else None
    compared = {}
    for framework in frameworks:
        out = Path(fresh.model(framework))
        stages.fit(timings, framework, config["models"], config["seed"], out, hardware=hardware)
        compared[WORKFLOW.model(framework)] = out
    validation = config.get("validation", {})
    for framework in frameworks:
        points = Path(fresh.validation_points(framework))
        summary = Path(fresh.validation_summary_of(framework))
        stages.validate(
            timings,
            framework,
            config["models"],
            validation.get("protocols", {}),
            config["seed"],
            points,
            summary,
            n_boot=validation.get("bootstrap", 1000),
            hardware=hardware,
        )
        compared[WORKFLOW.validation_points(framework)] = points
        compared[WORKFLOW.validation_summary_of(framework)] = summary
    if report:
        # The report, rendered again from the archived tables, models and validation results.
        archived = StudyLayout(str(root / RESULTS))
        failures = Path(archived.failures)
        html = Path(fresh.report)
        sources = ReportSources(
            timings=timings,
            failures=failures if failures.exists() else None,
            models=[Path(archived.model(f)) for f in frameworks],
            summary=Path(archived.validation_summary),
            predictions=[Path(archived.validation_points(f)) for f in frameworks],
            config=config,
            hardware=hardware,
            results_dir=Path(archived.root),
            adaptive_rounds=sorted(Path(archived.adaptive).glob(ADAPTIVE_ROUND.format("*"))),
        )
        stages.report(sources, html, Path(fresh.figures))
        compared[WORKFLOW.report] = html
    return compared
