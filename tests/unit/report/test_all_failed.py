"""A study whose every run failed still gets its report: the figures directory (an output of
the report rule), the failures' reasons first in the Summary, and the workflow's last line."""

import io

import pandas as pd

from dlperf.measurements import tables
from dlperf.report import failure_reasons
from dlperf.report.page import build_report
from dlperf.report.study import Study

NO_NODE = "nodes=2 needs a cluster: this run is local\nTraceback (most recent call last): ..."


def _failures() -> pd.DataFrame:
    rows = [
        {"framework": "pytorch", "network": "mlp", "status": "failed", "error": NO_NODE},
        {"framework": "pytorch", "network": "mlp", "status": "failed", "error": NO_NODE},
        {"framework": "pytorch", "network": "mlp", "status": "oom", "error": "CUDA out of memory"},
    ]
    return pd.DataFrame(rows).reindex(columns=tables.FAILURE_COLUMNS)


def _study() -> Study:
    return Study(
        timings=pd.DataFrame(columns=tables.TIMING_COLUMNS),
        failures=_failures(),
        points=pd.DataFrame(),
        artifacts={},
        summary=pd.DataFrame(),
        predictions=pd.DataFrame(),
        config={"frameworks": ["pytorch"]},
    )


def test_every_run_failed_still_writes_the_report_and_says_why(tmp_path):
    out = tmp_path / "report" / "index.html"
    written = build_report(_study(), out, tmp_path / "report" / "figures")
    assert written == [] and (tmp_path / "report" / "figures").is_dir()
    page = out.read_text()
    summary = page[page.index('id="summary"') : page.index('id="failed-runs"')]
    assert "Every one of the 3 benchmark runs failed" in summary
    assert "2 runs: <code>failed: nodes=2 needs a cluster: this run is local</code>" in summary
    assert "1 run: <code>oom: CUDA out of memory</code>" in summary
    assert "Traceback" not in summary  # the first line of each error, not the whole


def test_the_workflow_ends_naming_the_most_frequent_reason(tmp_path):
    failures, timings = tmp_path / "failures.csv", tmp_path / "timings.csv"
    _failures().to_csv(failures, index=False)
    pd.DataFrame(columns=tables.TIMING_COLUMNS).to_csv(timings, index=False)
    stream = io.StringIO()
    failure_reasons.print_when_all_failed(failures, timings, stream)
    assert stream.getvalue() == (
        "dlperf: all 3 benchmark run(s) failed, 2 with failed: nodes=2 needs a cluster: this "
        "run is local; 1 other reason(s). The report's Summary lists every reason.\n"
    )


def test_nothing_is_said_when_a_run_succeeded(tmp_path):
    failures, timings = tmp_path / "failures.csv", tmp_path / "timings.csv"
    _failures().to_csv(failures, index=False)
    timings.write_text("framework\npytorch\n")
    assert failure_reasons.all_failed_line(failures, timings) == ""
    assert failure_reasons.all_failed_line(tmp_path / "none.csv", timings) == ""


def test_the_resources_section_gives_the_true_reason_it_is_empty():
    from dlperf.report.sections import resources

    (section,) = resources(_study())
    said = " ".join(str(block) for block in section.blocks)
    assert "No run succeeded, so no resources were measured (see Failed runs)." in said
    assert "before resource capture" not in said
