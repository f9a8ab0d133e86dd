"""The run record as the benchmark writes it (results/runs/.../*.json): its format version and
the record of a run before it has finished. Standard library only, because it runs inside the
framework environments; checking and reading a record is :mod:`dlperf.measurements.records`'s
job, against this :data:`VERSION`."""

from __future__ import annotations

#: The run record's format version (its ``schema_version``); a reader of another refuses it.
VERSION = 1


def new_record(config: dict, environment: dict, network_features: dict) -> dict:
    """The record of a run that has not finished: failed, with no error yet, until the runner
    fills in its timings and says ok, or says what went wrong."""
    return {
        "schema_version": VERSION,
        "config": config,
        "status": "failed",
        "error": None,
        "environment": environment,
        # What the network costs at the run's input size, from the analytic table (the same
        # in every framework).
        "network_features": network_features,
    }
