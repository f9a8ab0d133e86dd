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
class Study:
    timings: pd.DataFrame  # one row per successful run of our own (tables.TIMING_COLUMNS)
    failures: pd.DataFrame  # one row per failed run (tables.FAILURE_COLUMNS)
    points: pd.DataFrame  # one row per measured configuration (points.to_points), ours and external
    artifacts: dict[str, dict]  # framework -> model artifact
    summary: pd.DataFrame  # validation summary (results/validation/summary.csv)
    predictions: pd.DataFrame  # held-out predictions (results/validation/<framework>.csv)
    config: dict  # the workflow configuration the study ran with
    # Run records measured again on purpose whose old version results/history keeps (None: the
    # report was not told where the study's results are).
    superseded_records: int | None = None
    # The rounds of an adaptive sweep (results/adaptive/round{r}.json), in order; empty otherwise.
    adaptive_rounds: tuple[dict, ...] = ()

    @classmethod
    def from_files(
        cls,
        timings_csv: PathLike | Sequence[PathLike],
        failures_csv: PathLike | None,
        model_files: Sequence[PathLike],
        summary_csv: PathLike,
        prediction_csvs: Sequence[PathLike],
        config: dict,
        results_dir: PathLike | None = None,
        adaptive_round_files: Sequence[PathLike] = (),
    ) -> Study:
        from dlperf.measurements.timings_files import columns_of, is_own_timings, load_all_points

        sources = (
            [timings_csv] if isinstance(timings_csv, (str, os.PathLike)) else list(timings_csv)
        )
        # Our own runs carry the environment the report shows; external CSVs only points.
        own = [s for s in sources if is_own_timings(columns_of(s))]
        timings = (
            pd.concat([tables.read_timings(s) for s in own], ignore_index=True)
            if own
            else pd.DataFrame(columns=tables.TIMING_COLUMNS)
        )
        failures = (
            tables.read_csv(failures_csv)
            if failures_csv
            else pd.DataFrame(columns=tables.FAILURE_COLUMNS)
        )
        artifacts = {}
        for path in model_files:
            artifact = load_artifact(path)  # refuses a damaged artifact, naming the field
            artifacts[artifact["framework"]] = artifact
        predictions = [tables.read_csv(p) for p in prediction_csvs]
        held_out = pd.concat(predictions, ignore_index=True) if predictions else pd.DataFrame()
        return cls(
            timings=timings,
            failures=failures,
            # One series per GPU type and precision of a network, as the fit keeps them.
            points=as_series(load_all_points(sources)),
            artifacts=artifacts,
            summary=tables.read_csv(summary_csv),
            predictions=held_out,
            config=config,
            superseded_records=count_superseded(results_dir) if results_dir else None,
            adaptive_rounds=tuple(
                sorted((read_json(p) for p in adaptive_round_files), key=lambda r: r["round"])
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
