"""benchmarks/compare_detection.py on a small synthetic study: it runs, plants what it says,
and its A/A rows count nothing on a study compared with itself."""

from __future__ import annotations

from benchmarkscripts import load_benchmark
from recordmaker import study_records, write_study


def test_detection_benchmark_finds_planted_slowdowns_and_no_self_alarms(tmp_path, capsys):
    detection = load_benchmark("compare_detection")
    study = write_study(tmp_path / "a", study_records(seed=3))
    assert detection.main([str(study)]) == 0
    out = capsys.readouterr().out
    assert "6 configurations, 18 successful runs, 0 disturbed" in out
    rows = {line.split(" | ")[0]: line for line in out.splitlines() if line.startswith("| ")}
    assert "| study with itself | 6 | 0 | 0 | 0 | 0 | 0 |" in out
    # A 25 % slowdown of the one framework is caught on these quiet synthetic repetitions.
    assert any("| copy | 25% |" in line and line.endswith("| 1 / 1 |") for line in rows.values())
