"""The Summary's headline and the page's header say when the data cannot carry them: runs
mostly disturbed, an efficiency above 100 %."""

import pandas as pd

from dlperf.measurements import tables
from dlperf.report.page import render_page
from dlperf.report.scaling import Scaling, headline_caveat
from dlperf.report.study import Study

SUPERLINEAR = Scaling(8, 1, 32, 1024, speedup=16.39, efficiency=8.19 / 4)
PLAIN = Scaling(8, 1, 32, 1024, speedup=6.0, efficiency=0.75)


def _timings(n: int, disturbed: int) -> pd.DataFrame:
    share = [0.9] * disturbed + [0.0] * (n - disturbed)
    return pd.DataFrame({"foreign_cpu_fraction": share})


def test_a_headline_on_mostly_disturbed_implausible_runs_is_marked():
    said = headline_caveat(SUPERLINEAR, _timings(108, 99))
    assert said.startswith("NOT TO BE QUOTED (99 of the 108 runs of this network were disturbed")
    assert "an efficiency of 205 %" in said.replace("205%", "205 %")


def test_a_headline_on_clean_plausible_runs_is_not_marked():
    assert headline_caveat(PLAIN, _timings(10, 2)) == ""
    assert headline_caveat(PLAIN, _timings(10, 6)).startswith("NOT TO BE QUOTED (6 of the 10")


def test_the_header_counts_the_disturbed_runs():
    timings = pd.DataFrame({"foreign_cpu_fraction": [0.9, 0.9, 0.0]}).reindex(
        columns=tables.TIMING_COLUMNS
    )
    timings["foreign_cpu_fraction"] = [0.9, 0.9, 0.0]
    study = Study(
        timings=timings,
        failures=pd.DataFrame(columns=tables.FAILURE_COLUMNS),
        points=pd.DataFrame(),
        artifacts={},
        summary=pd.DataFrame(),
        predictions=pd.DataFrame(),
        config={},
    )
    page = " ".join(render_page(study, [], "figures").split())
    assert "3 successful runs (2 of them disturbed by other programs, see Warnings) and" in page


def test_the_default_answer_stays_on_the_measured_node_count():
    from dlperf.report.answer_summary import target_row

    one_node = pd.DataFrame({"nodes": [1, 1], "procs": [1, 2], "node_capacity": [8, 8]})
    at = pd.Series({"batch_size": 32, "data_size": 1024})
    assert target_row(one_node, at, None) == {
        "nodes": 1, "procs": 8, "batch_size": 32, "data_size": 1024
    }  # fmt: skip
    two_nodes = pd.DataFrame({"nodes": [1, 2], "procs": [1, 6], "node_capacity": [16, 16]})
    assert target_row(two_nodes, at, None)["nodes"] == 2
    assert target_row(two_nodes, at, None)["procs"] == 24


def test_the_default_answer_puts_no_more_workers_on_a_node_than_it_holds():
    """A 2-core node measured with 1 and 2 workers: 8 workers need 4 such nodes; a table of
    up to 8 GPUs on a node without their count (brought in): 32 workers on 4 nodes."""
    from dlperf.report.answer_summary import target_row

    at = pd.Series({"batch_size": 32, "data_size": 1024})
    two_cores = pd.DataFrame({"nodes": [1, 1], "procs": [1, 2], "node_capacity": [2, 2]})
    assert target_row(two_cores, at, None) == {
        "nodes": 4, "procs": 8, "batch_size": 32, "data_size": 1024
    }  # fmt: skip
    brought_in = pd.DataFrame({"nodes": [1, 1, 1], "procs": [1, 4, 8]})
    assert target_row(brought_in, at, None)["nodes"] == 4
    assert target_row(brought_in, at, None)["procs"] == 32


def test_an_answer_on_mostly_disturbed_runs_is_marked():
    from dlperf.report.answer_summary import AnswerAt, answer_line
    from dlperf.report.scaling import disturbed_caveat

    found = AnswerAt({"nodes": 1, "procs": 8, "batch_size": 32, "data_size": 1024}, 0.058,
                     0.04, 0.07, 4.0, "castello", "why", [])  # fmt: skip
    marked, _ = answer_line(found, None, "", disturbed_caveat(_timings(10, 6)))
    assert marked.startswith("NOT TO BE QUOTED (6 of the 10 runs of this network were disturbed")
    assert marked.endswith("an epoch takes 0.058 s, 90% interval 0.04–0.07 s.")
    clean, _ = answer_line(found, None, "", disturbed_caveat(_timings(10, 5)))
    assert clean.startswith("at 8 workers on 1 node (b=32")


def test_an_external_only_report_does_not_count_zero_runs():
    study = Study(
        timings=pd.DataFrame(columns=tables.TIMING_COLUMNS),
        failures=pd.DataFrame(columns=tables.FAILURE_COLUMNS),
        points=pd.DataFrame({"framework": ["pytorch"]}),
        artifacts={},
        summary=pd.DataFrame(),
        predictions=pd.DataFrame(),
        config={},
    )
    page = " ".join(render_page(study, [], "figures").split())
    assert "<p>No benchmark run of this study's own (brought-in timings only); 1 measured" in page
    assert "0 successful runs" not in page
