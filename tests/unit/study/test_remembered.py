"""A study remembers its config: a run without one continues it, a run with a different one
says what changes."""

import io

from dlperf.io import atomic_write_json
from dlperf.study.remembered import changes, continued

STUDY = {"procs": [1, 2], "batch_sizes": [8], "seed": 1}
DEFAULT = {"procs": [1, 2, 4, 8], "batch_sizes": [8, 16, 32], "seed": 1}


def test_a_run_without_a_config_continues_the_study(tmp_path):
    path = tmp_path / "config.json"
    atomic_write_json(path, STUDY)
    said = io.StringIO()
    assert continued(DEFAULT, {}, path, said) == STUDY
    assert "continuing the study with the config its last run used" in said.getvalue()


def test_a_different_config_says_what_it_changes_first(tmp_path):
    path = tmp_path / "config.json"
    atomic_write_json(path, STUDY)
    said = io.StringIO()
    given = {**STUDY, "procs": [1, 2, 4]}
    assert continued(given, {"procs": [1, 2, 4]}, path, said) == given
    assert said.getvalue() == (
        f"dlperf: this config changes the study's ({path}): procs: [1, 2] -> [1, 2, 4]\n"
    )
    said = io.StringIO()
    assert continued(STUDY, {"procs": [1, 2]}, path, said) == STUDY and said.getvalue() == ""


def test_a_new_study_runs_the_config_it_is_given(tmp_path):
    said = io.StringIO()
    assert continued(DEFAULT, {}, tmp_path / "none.json", said) == DEFAULT
    assert said.getvalue() == ""


def test_changes_name_added_and_removed_keys():
    assert changes({"a": 1}, {"b": 2}) == ["a: 1 -> null", "b: null -> 2"]
