"""Everything the report is made from, in one object every section takes."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import pandas as pd

from dlperf.io import read_json
from dlperf.measurements import tables
from dlperf.models.artifact_check import load_artifact
from dlperf.models.series import as_series
from dlperf.study.superseded import count_superseded

PathLike = str | os.PathLike


@dataclass(frozen=True)
class ReportSources:
    """The files a report is made from, as the workflow's report rule names them."""

    timings: PathLike | Sequence[PathLike]  # our timings table and any external ones
    failures: PathLike | None  # the failures table (None: no failed run is shown)
    models: Sequence[PathLike]  # one model artifact per framework
    summary: PathLike  # the validation summary
    predictions: Sequence[PathLike]  # held-out predictions, one table per framework
    config: dict  # the workflow configuration the study ran with
    hardware: PathLike | None = None  # the user's GPU catalogue (config key hardware), if any
    results_dir: PathLike | None = None  # the study's results, for its superseded records
    adaptive_rounds: Sequence[PathLike] = ()  # round files of an adaptive sweep


@dataclass(frozen=True)
class Study:
    timings: pd.DataFrame  # one row per successful run of our own (tables.TIMING_COLUMNS)
    failures: pd.DataFrame  # one row per failed run (tables.FAILURE_COLUMNS)
    points: pd.DataFrame  # one row per measured configuration (points.to_points), ours and external
    artifacts: dict[str, dict]  # framework -> model artifact
    summary: pd.DataFrame  # validation summary (results/validation/summary.csv)
    predictions: pd.DataFrame  # held-out predictions (results/validation/<framework>.csv)
    config: dict  # the workflow configuration the study ran with
    hardware: str | None = None  # the user's GPU catalogue beside the shipped one, if any
    # Run records measured again on purpose whose old version results/history keeps (None: the
    # report was not told where the study's results are).
    superseded_records: int | None = None
    # The rounds of an adaptive sweep (results/adaptive/round{r}.json), in order; empty otherwise.
    adaptive_rounds: tuple[dict, ...] = ()

    @classmethod
    def from_files(cls, sources: ReportSources) -> Study:
        from dlperf.measurements.timings_files import columns_of, is_own_timings, load_all_points

        timings_csv = sources.timings
        tables_in = (
            [timings_csv] if isinstance(timings_csv, (str, os.PathLike)) else list(timings_csv)
        )
        # Our own runs carry the environment the report shows; external CSVs only points.
        own = [s for s in tables_in if is_own_timings(columns_of(s))]
        timings = (
            pd.concat([tables.read_timings(s) for s in own], ignore_index=True)
            if own
            else pd.DataFrame(columns=tables.TIMING_COLUMNS)
        )
        failures = (
            tables.read_csv(sources.failures)
            if sources.failures
            else pd.DataFrame(columns=tables.FAILURE_COLUMNS)
        )
        artifacts = {}
        for path in sources.models:
            artifact = load_artifact(path)  # refuses a damaged artifact, naming the field
            artifacts[artifact["framework"]] = artifact
        predictions = [tables.read_csv(p) for p in sources.predictions]
        held_out = pd.concat(predictions, ignore_index=True) if predictions else pd.DataFrame()
        return cls(
            timings=timings,
            failures=failures,
            # One series per GPU type and precision of a network, as the fit keeps them.
            points=as_series(load_all_points(tables_in)),
            artifacts=artifacts,
            summary=tables.read_csv(sources.summary),
            predictions=held_out,
            config=sources.config,
            hardware=None if sources.hardware is None else str(sources.hardware),
            superseded_records=(
                count_superseded(sources.results_dir) if sources.results_dir else None
            ),
            adaptive_rounds=tuple(
                sorted((read_json(p) for p in sources.adaptive_rounds), key=lambda r: r["round"])
            ),
        )

    def networks(self) -> list[tuple[str, str]]:
        """(framework, network) of every modelled network, sorted."""
        return sorted(
            (framework, network)
            for framework, artifact in self.artifacts.items()
            for network in artifact["networks"]
        )

    def points_of(self, framework: str, network: str) -> pd.DataFrame:
        return _select(self.points, framework, network)

    def timings_of(self, framework: str, network: str) -> pd.DataFrame:
        return _select(self.timings, framework, network)

    def failures_of(self, framework: str, network: str) -> pd.DataFrame:
        return _select(self.failures, framework, network)

    def summary_of(self, framework: str, network: str) -> pd.DataFrame:
        return _select(self.summary, framework, network)

    def predictions_of(self, framework: str, network: str) -> pd.DataFrame:
        return _select(self.predictions, framework, network)

    @cached_property
    def model_names(self) -> list[str]:
        fitted = {
            m for a in self.artifacts.values() for n in a["networks"].values() for m in n["models"]
        }
        validated = set(self.summary.get("model", pd.Series(dtype=str)).dropna())
        return sorted(fitted | validated)

    @cached_property
    def frameworks_without_runs(self) -> list[str]:
        failed = set(self.failures.get("framework", pd.Series(dtype=str)).dropna())
        return sorted(failed - set(self.timings["framework"]))


def _select(frame: pd.DataFrame, framework: str, network: str) -> pd.DataFrame:
    if frame.empty or "framework" not in frame or "network" not in frame:
        return frame.iloc[0:0]
    chosen = (frame["framework"] == framework) & (frame["network"] == network)
    return frame[chosen].reset_index(drop=True)
