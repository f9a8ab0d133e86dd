"""A failed run ends with each failed job's own error line (read from Snakemake's log)."""

from __future__ import annotations

from dlperf.pipeline.failed_jobs import FailedJob, failed_jobs, print_summary

INPUTS = ", ".join(f"results/runs/pytorch/mlp/n1_p1_b8_d{d}_r0.json" for d in range(400))


def snakemake_log(tmp_path, aggregate_log: str) -> str:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "aggregate.log").write_text(
        "Traceback (most recent call last):\n  ...\n" + aggregate_log + "\n\n"
    )
    path = tmp_path / "snakemake.log"
    path.write_text(
        "Building DAG of jobs...\n"
        "Error in rule aggregate:\n"
        "    message: None\n"
        "    jobid: 3\n"
        f"    input: {INPUTS}\n"
        "    output: results/timings.csv\n"
        f"    log: {tmp_path}/logs/aggregate.log (check log file(s) for error details)\n"
        "    shell:\n"
        f"        dlperf aggregate {INPUTS.replace(', ', ' ')} > logs/aggregate.log 2>&1\n"
        "        (command exited with non-zero exit code)\n"
        "Error in rule report:\n"
        "    jobid: 5\n"
        "Shutting down, this might take some time.\n"
    )
    return str(path)


def test_each_failed_job_is_named_with_the_last_line_of_its_log(tmp_path, capsys):
    error = "dlperf aggregate: error: run record x.json is not valid JSON; delete it"
    path = snakemake_log(tmp_path, error)
    assert failed_jobs(path) == [
        FailedJob("aggregate", (f"{tmp_path}/logs/aggregate.log",)),
        FailedJob("report", ()),
    ]
    print_summary([path])
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "dlperf: 2 job(s) failed; the last line of each one's log:"
    assert lines[1] == f"  aggregate ({tmp_path}/logs/aggregate.log): {error}"
    assert lines[2] == "  report: no log (see the error above)"
    assert sum(len(line) for line in lines) < 1000


def test_a_run_without_failed_jobs_prints_nothing(tmp_path, capsys):
    path = tmp_path / "snakemake.log"
    path.write_text("Building DAG of jobs...\nNothing to be done.\n")
    print_summary([str(path), str(tmp_path / "absent.log")])
    assert capsys.readouterr().err == ""
