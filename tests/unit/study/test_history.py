"""Superseded run records are kept, counted, and never mistaken for current ones."""

from __future__ import annotations

from dlperf.io import atomic_write_json
from dlperf.study import superseded as history


def record_at(results, record_factory, **kwargs):
    path = results / "runs" / "pytorch" / "mlp" / "n1_p1_b8_d64_r0.json"
    atomic_write_json(path, record_factory(**kwargs))
    return path


def test_nothing_to_keep_for_a_new_run(tmp_path):
    assert history.keep_previous(tmp_path / "runs" / "pytorch" / "mlp" / "x.json") is None
    assert history.count_superseded(tmp_path) == 0


def test_previous_record_is_kept_beside_the_results(tmp_path, record_factory):
    results = tmp_path / "results"
    path = record_at(results, record_factory, iter_s=0.01)
    old = path.read_bytes()
    kept = history.keep_previous(path)
    assert kept.parent == results / "history" / "runs" / "pytorch" / "mlp"
    assert kept.name.startswith("n1_p1_b8_d64_r0.") and kept.read_bytes() == old
    assert path.read_bytes() == old  # the job replaces it when its new record is ready
    # Not superseded yet: the record kept is still the current one.
    assert history.count_superseded(results) == 0
    record_at(results, record_factory, iter_s=0.02)
    assert history.superseded_records(results) == [kept]
    # kept again after a stopped job: stored once
    assert history.keep_previous(path) != kept
    assert history.keep_previous(path) == history.keep_previous(path)
    record_at(results, record_factory, iter_s=0.03)
    assert history.count_superseded(results) == 2


def test_a_record_outside_a_runs_tree_keeps_its_history_beside_it(tmp_path, record_factory):
    path = tmp_path / "mine.json"
    atomic_write_json(path, record_factory())
    kept = history.keep_previous(path)
    assert kept.parent == tmp_path / "history" and kept.read_bytes() == path.read_bytes()


def test_a_dry_run_says_the_bench_jobs_it_lists_are_restores(tmp_path, monkeypatch, capsys):
    from dlperf import config as cfg
    from dlperf.study import outputs

    back = {f"runs/pytorch/mlp/n1_p1_b8_d64_r{r}.json": tmp_path / str(r) for r in range(4)}
    monkeypatch.setattr(outputs, "retired_records", lambda results, produced: back)
    outputs.restore_for_workflow(str(tmp_path), cfg.load("config/config.yaml"), dry_run=True)
    said = capsys.readouterr().out
    assert "would restore 4 retired run record(s) the configuration asks for again, not " in said
    assert "counts them as 4 bench jobs" in said
