"""A run ends in a few short lines: the last job, `all`, names the study's tables, models and
report, not every run record (Snakemake prints a job's inputs and reason as it starts it)."""

from __future__ import annotations

from snakerun import snakemake


def job_block(text: str, rule: str) -> str:
    """The lines Snakemake printed for the last job of ``rule``, up to its resources."""
    start = max(text.rfind(f"\nrule {rule}:"), text.rfind(f"\nlocalrule {rule}:"))
    assert start >= 0, text[-3000:]
    return text[start : text.index("resources:", start)]


def test_the_last_job_lists_no_run_record(workflow_bin, repo, tmp_path):
    proc = snakemake(workflow_bin, repo, tmp_path, "-n", timeout=300)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text[-3000:]
    block = job_block(text, "all")
    assert "results/runs/" not in block and "results/report/index.html" in block, block
    # 12 records before: the input and reason lines listed each (1.6 KB of the block).
    assert len(block) < 600, block
