"""The study's paths: named once in dlperf.layout, and the same names the workflow writes."""

import re
from pathlib import Path

import pytest

from dlperf import config as cfg
from dlperf import layout
from dlperf.layout import RELATIVE, WORKFLOW, StudyLayout

REPO = Path(__file__).resolve().parents[2]


def test_the_workflow_paths_are_the_documented_ones():
    assert WORKFLOW.timings == "results/timings.csv"
    assert WORKFLOW.timings_parquet == "results/timings.parquet"
    assert WORKFLOW.failures == "results/failures.csv"
    assert WORKFLOW.env("mxnet") == "results/envs/mxnet.json"
    assert WORKFLOW.model("pytorch") == "results/models/pytorch.json"
    assert WORKFLOW.validation_points("pytorch") == "results/validation/pytorch.csv"
    assert WORKFLOW.validation_summary_of("pytorch") == "results/validation/pytorch.summary.csv"
    assert WORKFLOW.validation_summary == "results/validation/summary.csv"
    assert WORKFLOW.report == "results/report/index.html"
    assert WORKFLOW.figures == "results/report/figures"
    assert WORKFLOW.adaptive_round(2) == "results/adaptive/round2.json"
    assert WORKFLOW.config == "results/config.json"
    assert WORKFLOW.archive == "results/dlperf-archive.tar.gz"
    assert WORKFLOW.retired == "results/history/retired"
    assert RELATIVE.model("tensorflow") == "models/tensorflow.json"
    assert StudyLayout("/tmp/study/results").failures == "/tmp/study/results/failures.csv"


def test_run_records_and_their_logs_share_one_name():
    config = cfg.validated({"batch_sizes": [8], "data_sizes": [64], "accumulation_steps": [1, 4]})
    plain, accumulated = [r for r in cfg.run_configs(config) if r.procs == 2 and r.rep == 0]
    assert WORKFLOW.record_of(plain) == "results/runs/pytorch/lenet/n1_p2_b8_d64_r0.json"
    assert WORKFLOW.record_of(accumulated).endswith("/n1_p2_b8_d64_r0_a4.json")
    assert layout.accumulation_from_suffix("_a4") == 4 and layout.accumulation_from_suffix("") == 1
    # The bench rule's output and log: the same name with its wildcards.
    assert WORKFLOW.run_record_wildcards == (
        "results/runs/{framework}/{network}/n{nodes}_p{procs}_b{batch}_d{data}_r{rep}{accum}.json"
    )
    assert layout.bench_log() == (
        "logs/bench/{framework}/{network}/n{nodes}_p{procs}_b{batch}_d{data}_r{rep}{accum}.log"
    )
    # The name read back is the name written.
    for run in (plain, accumulated):
        match = layout.RUN_RECORD_NAME_PATTERN.fullmatch(Path(WORKFLOW.record_of(run)).name)
        assert match and int(match["batch_size"]) == run.batch_size
        assert int(match["grad_accum_steps"] or 1) == run.grad_accum_steps


@pytest.mark.parametrize(
    ("path", "framework"),
    [
        ("results/models/pytorch.json", "pytorch"),
        ("results/models/pytorch.csv", None),
        ("results/models/sub/pytorch.json", None),
        ("results/validation/pytorch.csv", None),
        ("models/pytorch.json", None),
    ],
)
def test_framework_of_model(path, framework):
    assert WORKFLOW.framework_of_model(path) == framework


def test_relative_is_the_inverse_of_path():
    assert WORKFLOW.relative(WORKFLOW.timings) == "timings.csv"
    assert WORKFLOW.relative("resultsx/timings.csv") is None
    assert RELATIVE.relative("timings.csv") == "timings.csv"


def test_logs():
    assert layout.log("aggregate") == "logs/aggregate.log"
    assert layout.log("fit", "{framework}") == "logs/fit/{framework}.log"


RULE_FILES = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]


def _rule_lines_matching(pattern: str) -> list[str]:
    """Lines of the rule files (comments aside) where ``pattern`` matches, named."""
    found = re.compile(pattern)
    return [
        f"{path.name}:{number}: {line.strip()}"
        for path in RULE_FILES
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if found.search(line) and not line.lstrip().startswith("#")
    ]


def test_the_rules_spell_no_path_of_a_study():
    """Every path of a study in the rules comes from dlperf.layout (LAYOUT in common.smk)."""
    assert not _rule_lines_matching(r"[\"'](results|logs)/")


def test_every_shell_path_of_the_rules_is_quoted():
    """Each {input...}, {output...}, {log...} in a rule's shell command carries :q."""
    assert not _rule_lines_matching(r"\{(input|output|log)(\.[a-z_]+)?\}")


def test_the_snakefile_is_a_table_of_contents():
    text = (REPO / "Snakefile").read_text()
    assert len(text.splitlines()) <= 60
    assert "def " not in text
