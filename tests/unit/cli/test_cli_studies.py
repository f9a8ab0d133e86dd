"""`dlperf compare`, `archive` and `verify-archive` refuse a bad value in one line, exit 2,
before they read a study."""

from __future__ import annotations

import pytest
from clirun import assert_refused


@pytest.mark.parametrize(
    ("option", "words"),
    [
        (["--alpha", "nan"], ["--alpha", "'nan' is not a finite number", "false discovery rate"]),
        (["--alpha", "1"], ["--alpha", "below 1"]),
        (["--threshold", "-3"], ["--threshold", "-3 is out of range", "from 0"]),
        (["--threshold", "inf"], ["--threshold", "not a finite number"]),
        (["--power", "0"], ["--power", "above 0"]),
        # compare is deterministic (a moderated t-test, no random draw), so it takes no seed
        (["--seed", "-5"], ["unrecognized arguments: --seed -5"]),
        (["--format", "pdf"], ["--format", "markdown"]),
    ],
)
def test_compare_refuses_a_bad_option_before_reading_a_study(tmp_path, option, words):
    a, b = tmp_path / "A", tmp_path / "B"  # not there: the option is refused first
    assert_refused(["compare", str(a), str(b), *option], *words)


def test_compare_names_what_is_missing(tmp_path):
    assert_refused(["compare", str(tmp_path / "A")], "two or more studies")
    assert_refused(["compare", str(tmp_path / "A"), str(tmp_path / "B")], "does not exist")


def test_archive_and_verify_refuse_what_is_not_there(tmp_path):
    assert_refused(["verify-archive", str(tmp_path / "none.tar.gz")], "verify-archive")
    assert_refused(
        ["archive", "--results", str(tmp_path / "none"), "--out", str(tmp_path / "a.tar.gz")],
        "archive",
    )
    assert not (tmp_path / "a.tar.gz").exists()


def test_compare_names_a_json_file_that_is_no_model_artifact(tmp_path, record_factory):
    from dlperf.io import atomic_write_json

    for study in ("A", "B"):
        atomic_write_json(tmp_path / study / "runs" / "r.json", record_factory())
    atomic_write_json(tmp_path / "A" / "models" / "notes.json", {"about": "my notes"})
    assert_refused(
        ["compare", str(tmp_path / "A"), str(tmp_path / "B")],
        "notes.json is not a model artifact",
        "move it out",
    )
