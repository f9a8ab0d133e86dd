"""What a benchmark measures, as the bench rule's params: Snakemake re-runs a job whose
params changed, so these hold what changes a measurement and nothing else
(docs/reproducibility.md lists what re-runs what).

Not here on purpose: the analysis settings and their seed, paths, and ``timeout_s`` for a
run that finished within it. A record that timed out is measured again when ``timeout_s``
grows past the limit it ran with (:func:`timeout_param`).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping

from dlperf.layout import WORKFLOW

#: Study-level settings of what one sample is and how it is trained, with the values every
#: run had before they existed (`dlperf bench`'s defaults).
INPUT_DEFAULTS = {
    "image_size": 32,
    "seq_len": 128,
    "precision": "fp32",
    "compile": False,
    "cuda_graphs": False,
    "input": "device",
}


def measured_settings(config: Mapping) -> str:
    """``dlperf bench`` options that every run of the sweep shares and that change what it
    measures, shell-quoted (one param: a sweep's jobs differ only in their wildcards)."""
    options = [
        "--device",
        config["device"],
        "--dataset",
        config["dataset"],
        "--warmup-iters",
        str(config["warmup_iters"]),
    ]
    # Only when not the default: a study measured before these keys existed ran the default,
    # and its jobs' params (so its records) stay as they were.
    for key, default in INPUT_DEFAULTS.items():
        if config.get(key, default) != default:
            options += [f"--{key.replace('_', '-')}", str(config[key]).lower()]
    return shlex.join(options)


def _record_path(wildcards) -> str:
    return WORKFLOW.run_record(
        framework=wildcards.framework,
        network=wildcards.network,
        nodes=wildcards.nodes,
        procs=wildcards.procs,
        batch_size=wildcards.batch,
        data_size=wildcards.data,
        rep=wildcards.rep,
        accum=wildcards.accum,
    )


def applicable_timeout(record_path: str, timeout_s: float) -> float:
    """The time limit a run is (or was) measured with. A new run gets ``timeout_s``. An
    existing record keeps the limit it ran with, unless it timed out and ``timeout_s`` is now
    larger: then the new limit, which differs from the one Snakemake recorded and so
    re-measures it. The value for a finished record equals the one the job was planned with,
    so nothing else re-runs."""
    timeout_s = float(timeout_s)
    try:
        with open(record_path, encoding="utf-8") as fh:
            record = json.load(fh)
        ran_with = float(record["config"]["timeout_s"])
        status = record["status"]
    except FileNotFoundError:
        return timeout_s
    except (OSError, ValueError, KeyError, TypeError):
        # A damaged record: the aggregate stage refuses it, naming the file to delete
        # (a deleted record is measured again); the time limit cannot tell.
        return timeout_s
    if status == "timeout" and timeout_s > ran_with:
        return timeout_s
    return ran_with


def timeout_param(config: Mapping):
    """The bench rule's ``timeout`` param: ``f(wildcards) -> seconds`` (a function of the
    wildcards only, so Snakemake compares it; see :func:`applicable_timeout`)."""
    timeout_s = float(config["timeout_s"])

    def timeout(wildcards) -> float:
        return applicable_timeout(_record_path(wildcards), timeout_s)

    return timeout
