"""Adaptive sweeps: the initial design, the choice of later rounds, the workflow's round step and
the replay on a measured grid, with the real models."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

from dlperf import cli
from dlperf import config as cfg
from dlperf.adaptive.design import coordinates, maximin
from dlperf.adaptive.loop import AdaptiveSettings, next_round
from dlperf.adaptive.replay import points_of, replay
from dlperf.adaptive.sweep import candidate_grid, choose_round, record_paths
from dlperf.io import atomic_write_json
from recordmaker import make_record

CHEAP_GENERIC = {"popsize": 6, "maxiter": 40, "lambdas": [0.0]}


def true_epoch(p, n, b, d, c):
    iters = np.ceil(d / (p * b))
    t = c[0] + c[1] * b**0.9 + c[2] * (p - 1) / p + c[3] * np.ceil(np.log2(p))
    return 0.5 + iters * (t + c[4] * (n > 1) * (p - 1) / p)


def runs(noise=0.02, seed=0, procs=(1, 2, 4, 8, 16), batches=(16, 32, 64, 128)):
    """Two frameworks' scaling grids from a known law, each configuration measured 3 times."""
    rng = np.random.default_rng(seed)
    laws = {"a": (2e-3, 3e-4, 1e-2, 3e-3, 2e-2), "b": (5e-3, 1e-4, 2e-2, 1e-3, 5e-2)}
    rows = []
    for fw, law in laws.items():
        for n, p, b, d in itertools.product((1, 2), procs, batches, (4096, 16384)):
            if p % n or p < n * 2 and n > 1:
                continue
            for rep in range(3):
                rows.append(
                    {
                        "framework": fw,
                        "network": "net",
                        "device": "cpu",
                        "nodes": n,
                        "procs": p,
                        "batch_size": b,
                        "data_size": d,
                        "rep": rep,
                        "epoch_time_s": true_epoch(p, n, b, d, law) * rng.lognormal(0, noise),
                        "samples_per_s": 1.0,
                    }
                )
    return pd.DataFrame(rows)


def grid(**kwargs):
    """The configurations of :func:`runs` (median over repetitions, n_reps each)."""
    return points_of(runs(**kwargs))


def test_maximin_starts_at_the_smallest_configuration_and_spreads_out():
    frame = grid()
    frame = frame[frame["framework"] == "a"].reset_index(drop=True)
    coords = coordinates(frame)
    picks = maximin(coords, 4)
    assert len(set(picks)) == 4
    first = frame.iloc[picks[0]]
    assert (first["procs"], first["batch_size"], first["data_size"]) == (1, 16, 4096)
    # The second pick is the far corner: the most workers, nodes, batch and data.
    second = frame.iloc[picks[1]]
    assert second["procs"] == 16 and second["nodes"] == 2 and second["batch_size"] == 128
    assert maximin(coords, 4) == picks  # deterministic


def test_round_zero_covers_every_series_even_when_the_budget_is_short():
    frame = grid()
    settings = AdaptiveSettings(initial=4, budget_runs=3)  # a run is one repetition
    first = next_round(frame, frame.iloc[0:0], settings)
    assert len(first.chosen) == 3 and (first.chosen["rep"] == 0).all()
    assert set(first.chosen["framework"]) == {"a", "b"}
    assert (first.chosen["reason"] == "initial space-filling design").all()


def test_later_rounds_choose_unmeasured_informative_configurations():
    frame = grid()
    settings = AdaptiveSettings(model_settings=CHEAP_GENERIC, per_round=3, n_boot=4)
    measured = frame.loc[next_round(frame, frame.iloc[0:0], settings).chosen.index]
    later = next_round(frame, measured, settings, runs_used=len(measured))
    assert len(later.chosen) == 3
    keys = ["framework", "nodes", "procs", "batch_size", "data_size"]
    done = set(map(tuple, measured[keys].to_numpy()))
    assert not any(tuple(row) in done for row in later.chosen[keys].to_numpy())
    assert later.chosen["reason"].str.len().gt(0).all()
    assert np.isfinite(later.widest) and later.widest > 0


def test_a_narrow_enough_grid_stops_the_sweep():
    frame = grid(noise=0.0)
    settings = AdaptiveSettings(model_settings=CHEAP_GENERIC, n_boot=4, max_width=0.05)
    # All but two configurations of each series measured, without noise: the intervals are narrow.
    measured = frame.groupby("framework").apply(lambda s: s.iloc[2:], include_groups=False)
    measured = frame.loc[measured.index.get_level_values(-1)]
    later = next_round(frame, measured, settings)
    assert later.chosen.empty and "max_width" in later.stop
    assert later.widest <= 0.05


def test_replay_spends_at_most_its_budget_and_beats_random_subsets():
    table = runs(procs=(1, 2, 4, 8), batches=(16, 64, 128))
    settings = AdaptiveSettings(model_settings=CHEAP_GENERIC, n_boot=4, per_round=4)
    rounds, summary = replay(table, 0.35, settings)
    assert summary["runs_total"] == len(table)
    assert summary["runs_used"] <= 0.35 * summary["runs_total"]
    assert summary["runs_used"] == len(rounds)
    # Repetitions are spent in a series only once every configuration of it has been measured.
    sizes = points_of(table).groupby("framework").size()
    for framework, chosen in rounds.groupby("framework"):
        first, again = chosen[chosen["rep"] == 0], chosen[chosen["rep"] > 0]
        if len(again):
            assert len(first) == sizes[framework]
            assert again.index.min() > first.index.max()
    assert (rounds["rep"] > 0).any()
    assert summary["mape_adaptive"] <= 1.25 * summary["mape_full"]
    assert summary["mape_adaptive"] < summary["mape_random"]
    assert rounds["round"].iloc[0] == 0 and rounds["round"].max() == summary["rounds"] - 1


def test_replay_refuses_a_budget_outside_0_1():
    with pytest.raises(ValueError, match="fraction"):
        replay(runs(), 1.5, AdaptiveSettings())


def test_adaptive_replay_command_writes_rounds_and_summary(tmp_path):
    frame = runs(procs=(1, 2, 4), batches=(16, 64, 128)).drop(columns=["samples_per_s"])
    csv = tmp_path / "grid.csv"
    frame.to_csv(csv, index=False)
    out = tmp_path / "replay"
    status = cli.main(
        [
            "adaptive-replay",
            "--timings",
            str(csv),
            "--budget",
            "0.5",
            "--out",
            str(out),
            "--model-name",
            "ernest",
        ]
    )
    assert status == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["model"] == "ernest" and summary["runs_used"] <= summary["runs_total"] / 2
    rounds = pd.read_csv(out / "rounds.csv")
    assert len(rounds) == summary["runs_used"]


def test_adaptive_replay_with_a_budget_too_small_to_fit_says_so(tmp_path, capsys):
    frame = runs(procs=(1, 2, 4), batches=(16, 64, 128)).drop(columns=["samples_per_s"])
    csv = tmp_path / "grid.csv"
    frame.to_csv(csv, index=False)
    argv = ["adaptive-replay", "--timings", str(csv), "--budget", "0.01"]
    status = cli.main(argv + ["--out", str(tmp_path / "replay"), "--model-name", "ernest"])
    out, err = capsys.readouterr()
    assert status == 0
    assert "MAPE undefined adaptive" in out
    assert "too few to fit the ernest model" in err and "raise --budget" in err


def sweep_config(**adaptive):
    return cfg.validated(
        {
            "frameworks": ["pytorch"],
            "networks": ["mlp"],
            "procs": [1, 2],
            "batch_sizes": [8, 16, 32],
            "data_sizes": [64],
            "repeats": 2,
            "adaptive": {"enabled": True, "initial": 3, "per_round": 2, **adaptive},
        }
    )


def test_workflow_round_zero_measures_the_first_repetition_of_its_choice(tmp_path):
    config = sweep_config()
    grid_of = candidate_grid(config)
    assert len(grid_of) == 6 and (grid_of["n_reps"] == 2).all()
    result = choose_round(config, [], 0, tmp_path / "round0.json")
    assert len(result["chosen"]) == 3 and result["stop"] is None
    paths = record_paths(config, result["chosen"])
    assert len(paths) == 3 and all(p.endswith("_r0.json") for p in paths)


def test_a_failed_configuration_is_never_chosen_again(tmp_path):
    config = sweep_config(model="ernest", compare_models=[])
    records = []
    for procs, batch, status in [(1, 8, "ok"), (2, 32, "ok"), (1, 32, "ok"), (2, 8, "oom")]:
        for rep in range(2):
            path = tmp_path / f"p{procs}_b{batch}_r{rep}.json"
            atomic_write_json(
                path,
                make_record(
                    procs=procs,
                    batch=batch,
                    rep=rep,
                    status=status,
                    iter_s=0.01 * procs * batch / 8,
                ),
            )
            records.append(path)
    result = choose_round(config, records, 1, tmp_path / "round1.json")
    chosen = {(row["procs"], row["batch_size"]) for row in result["chosen"]}
    assert (2, 8) not in chosen
    assert chosen <= {(1, 16), (2, 16)} and chosen
