"""What the workflow reads of an adaptive sweep while it plans: a round's file and the run
records of the runs a round chose. Standard library only (with dlperf.config): the Snakefile
imports it, and importing the models (SciPy, scikit-learn) there cost seconds of every plan."""

from __future__ import annotations

import os
from collections.abc import Sequence

from dlperf.config import run_configs
from dlperf.io import read_json
from dlperf.layout import WORKFLOW

#: What identifies a configuration of the sweep (a run is a configuration and a repetition).
CONFIGURATION = ["framework", "network", "device", "nodes", "procs", "batch_size", "data_size"]


def record_paths(config: dict, chosen: Sequence[dict]) -> list[str]:
    """Run records of the chosen runs (a configuration and its repetition each)."""
    wanted = {(*(row[c] for c in CONFIGURATION), row["rep"]) for row in chosen}
    return [
        WORKFLOW.record_of(run)
        for run in run_configs(config)
        if (*(vars(run)[c] for c in CONFIGURATION), run.rep) in wanted
    ]


def read_round(path: str | os.PathLike) -> dict:
    return read_json(path)
