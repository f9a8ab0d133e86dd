"""How near any combination of the collective models comes to the best single model in hindsight
(benchmarks/combination_ceiling.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchmarkscripts import load_benchmark


def points(**columns) -> pd.DataFrame:
    """Held-out points as ``held_out_points`` gives them; unset columns have no value."""
    ceiling = load_benchmark("combination_ceiling")
    n = len(next(iter(columns.values())))
    frame = pd.DataFrame({"measured": np.ones(n), "bound": np.zeros(n), "answer": np.ones(n)})
    for name in ceiling.COLLECTIVE:
        frame[name] = np.nan
        frame[f"backtest {name}"] = np.nan
    for name, values in columns.items():
        frame[name] = np.asarray(values, float)
    return frame


def test_the_weights_cover_the_simplex_of_the_collective_models():
    ceiling = load_benchmark("combination_ceiling")
    grid = ceiling.weight_grid()
    assert len(grid) == 66  # 11 * 12 / 2 at step 0.1 over three models
    assert all(abs(sum(w) - 1) < 1e-12 for w in grid)
    assert {(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)} <= set(grid)
    assert ceiling.named((0.7, 0.0, 0.3)) == "generic 0.7, castello 0.3"


def test_a_combination_renormalises_over_the_models_fitted_and_keeps_to_physics():
    ceiling = load_benchmark("combination_ceiling")
    found = points(generic=[2.0, 2.0], loglin=[8.0, 8.0], bound=[0.0, 5.0])
    # The geometric mean, then raised to the perfect-scaling bound where it is faster.
    assert np.allclose(ceiling.combined(found, (0.5, 0.5, 0.0)), [4.0, 5.0])
    # castello is not fitted: its weight goes to the models that are.
    assert np.allclose(ceiling.combined(found, (0.5, 0.0, 0.5)), [2.0, 5.0])
    # Only castello weighed: no answer at all.
    assert np.isnan(ceiling.combined(found, (0.0, 0.0, 1.0))).all()


def test_the_backtest_pick_takes_the_least_error_and_else_the_answer():
    ceiling = load_benchmark("combination_ceiling")
    found = points(
        generic=[2.0, 2.0, 2.0],
        loglin=[3.0, 3.0, 3.0],
        answer=[7.0, 7.0, 7.0],
        **{
            "backtest generic": [0.2, 0.1, np.nan],
            "backtest loglin": [0.1, 0.3, np.nan],
            "backtest castello": [0.0, 0.0, np.nan],  # least, but castello is not fitted
        },
    )
    assert np.allclose(ceiling.backtest_pick(found), [3.0, 2.0, 7.0])


def test_no_fixed_combination_reaches_what_a_choice_per_cut_in_hindsight_does():
    ceiling = load_benchmark("combination_ceiling")
    # Cut x: generic exact, loglin 50 % slow; cut y: the other way round. Any fixed weights
    # are within 1.1x of the best single model on one cut at most; a choice per cut on both.
    # castello, 3x slow on both, is the worst of the three.
    x = points(generic=[1.0], loglin=[1.5], castello=[3.0]).assign(table="x", divisor=2)
    y = points(generic=[1.5], loglin=[1.0], castello=[3.0]).assign(table="y", divisor=2)
    found = ceiling.per_cut(pd.concat([x, y], ignore_index=True), ["generic", "loglin"])
    assert found.loc[("x", 2), "best single"] == 0.0
    assert found.loc[("x", 2), "generic 1"] == 0.0 and found.loc[("y", 2), "generic 1"] == 50.0
    rows = {row.split(" | ")[1].split(":")[0]: row for row in ceiling.ceiling_rows(found, "t")}
    assert "| 1 of 2 |" in rows["most cuts within 1.1x, in hindsight"]
    assert "| 2 of 2 |" in rows["weights chosen per cut in hindsight (the ceiling)"]
    # The weights chosen on one set are scored on the other: generic alone fails on y.
    scored = ceiling.transfer_rows(found.loc[["x"]], found.loc[["y"]], ("x", "y"))
    assert "by count: generic 1 | 0 of 1 |" in scored[0]


def test_it_runs_on_a_users_timings_file(tmp_path, capsys):
    ceiling = load_benchmark("combination_ceiling")
    path = tmp_path / "mine.csv"
    rows = [
        f"pytorch,rn,{gpu},amp_fp16,{p},64,{rate * p * 0.95 ** np.log2(p):.1f}"
        for gpu, rate in (("V100 16GB", 1000.0), ("A100 80GB SXM4", 2500.0))
        for p in (1, 2, 4, 8, 16)
    ]
    path.write_text(
        "framework,network,gpu,precision,procs,batch_size,samples_per_s\n" + "\n".join(rows)
    )
    argv = ["--shared", str(tmp_path / "no-shared"), "--timings", str(path), "--only", "mine"]
    assert ceiling.main(argv) == 0
    printed = capsys.readouterr().out
    # Both cuts of the user's table, a set of its own; no development tables were asked for.
    assert "| --timings | the answer as shipped | " in printed
    assert "of 2 |" in printed and "| development |" not in printed
