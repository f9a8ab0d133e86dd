"""The config a study remembers: the effective config its last run wrote (results/config.json).
A run given no config of its own (no ``--configfile``, no ``--config``) continues the study with
it instead of planning the default sweep; a run given one that differs says, before any job,
which keys change. The Snakefile calls :func:`continued` while it loads."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Collection, Mapping

from dlperf.errors import ConfigError
from dlperf.io import read_json

SHOWN_CHARS = 80  # a value longer than this is cut in the list of changes


def _shown(value: object) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def changes(remembered: Mapping, given: Mapping) -> list[str]:
    """``key: old -> new`` for every top-level key whose value differs, sorted by key."""
    keys = sorted(set(remembered) | set(given))
    return [
        f"{key}: {_shown(remembered.get(key))} -> {_shown(given.get(key))}"
        for key in keys
        if remembered.get(key) != given.get(key)
    ]


def continued(
    config: dict, overrides: Mapping, remembered_path: str | os.PathLike, stream=None
) -> dict:
    """The config this run uses: ``config`` (already validated) when the user gave one
    (``overrides`` not empty) or the study has none remembered, else the remembered one. Says
    on ``stream`` (stderr) which config it continues with, or what the given one changes."""
    stream = stream or sys.stderr
    if not os.path.exists(remembered_path):
        return config
    remembered = read_json(remembered_path)
    if not overrides:
        print(
            f"dlperf: continuing the study with the config its last run used "
            f"({remembered_path}); give --configfile to change it",
            file=stream,
        )
        return remembered
    changed = changes(remembered, config)
    if changed:
        print(
            f"dlperf: this config changes the study's ({remembered_path}): " + "; ".join(changed),
            file=stream,
        )
    return config


#: Targets that act on a study already run: asked for where none is (a mistyped directory),
#: they would first run the default sweep.
STUDY_TARGETS = ("archive", "remeasure_disturbed")


def check_study_is_there(
    arguments: Collection[str], overrides: Mapping, remembered_path: str | os.PathLike
) -> None:
    """Raise ConfigError when Snakemake's command-line ``arguments`` name a target of
    :data:`STUDY_TARGETS` in a directory with no study (no remembered config) and no config was
    given to start one."""
    asked = [t for t in STUDY_TARGETS if t in arguments]
    if asked and not overrides and not os.path.exists(remembered_path):
        raise ConfigError(
            f"no study here ({remembered_path} is missing): `{asked[0]}` acts on a study already "
            "run, and would first run the whole default sweep; check --directory (or STUDY=), "
            "or give --configfile to run a new study"
        )
