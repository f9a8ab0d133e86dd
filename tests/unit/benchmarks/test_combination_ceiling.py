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
    frame = pd.DataFrame(
        {
            "measured": np.ones(n),
            "bound": np.zeros(n),
            "answer": np.ones(n),
            "answer lo": np.full(n, 0.5),
            "answer hi": np.full(n, 2.0),
        }
    )
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


def with_intervals(frame: pd.DataFrame, names, width: float) -> pd.DataFrame:
    """Each named model's interval: its prediction times and over exp(width / 2)."""
    for name in names:
        frame[f"{name} lo"] = frame[name] * np.exp(-width / 2)
        frame[f"{name} hi"] = frame[name] * np.exp(width / 2)
    return frame


def test_no_one_answer_is_near_two_truths_of_the_same_training_points():
    """The lemma behind the twin bound, on random truths, answers and intervals: one answer's
    errors against two truths add to at least |a - b| / max(a, b); one interval's scores to at
    least 2 |log a - log b|."""
    ceiling = load_benchmark("combination_ceiling")
    rng = np.random.default_rng(7)
    a, b = rng.lognormal(0, 1, 10_000), rng.lognormal(0, 1, 10_000)
    f = rng.lognormal(0, 1, 10_000)
    assert (np.abs(f - a) / a + np.abs(f - b) / b >= np.abs(a - b) / np.maximum(a, b) - 1e-12).all()
    # The bound is reached: answering the larger truth where a < b errs exactly that much.
    at = np.minimum(a, b)
    assert np.allclose(np.abs(at - a) / a + np.abs(at - b) / b, np.abs(a - b) / np.maximum(a, b))
    lo = rng.lognormal(0, 1, 10_000)
    hi = lo * rng.lognormal(0, 1, 10_000)
    both = ceiling.interval_score(a, lo, hi) + ceiling.interval_score(b, lo, hi)
    assert (both >= 2 * np.abs(np.log(a / b)) - 1e-12).all()


def test_twins_decide_which_targets_no_method_can_meet():
    ceiling = load_benchmark("combination_ceiling")
    models = ["generic", "loglin"]
    # generic says 1.0, loglin 1.2; measured 1.0: generic exact on the cut and on its twin,
    # loglin exact on its own twin. Any one answer errs on the cut or on loglin's twin.
    cut = points(measured=[1.0, 1.0], generic=[1.0, 1.0], loglin=[1.2, 1.2])
    cut = with_intervals(cut, models, width=0.5).assign(table="t", divisor=2)
    bounds = ceiling.twin_bounds(cut, models)
    row = bounds.loc[("t", 2)]
    # Both bars of 1.1x allow nothing (each truth has an exact model), the bound is 1/6.
    assert row["strict ratio"] == np.inf and row["first ratio"] == np.inf
    # Within 1.1x or 1 point: 2 points of room on the pair, 16.7 needed.
    assert np.isclose(row["relaxed ratio"], (0.2 / 1.2 * 100) / 2.0)
    # Intervals 0.5 wide in log each: 2 log(1.2) = 0.36 against 1.1 x (0.5 + 0.5).
    assert np.isclose(row["score ratio"], 2 * np.log(1.2) / 1.1)
    # The cut and generic's twin are the same table; the first pair that defeats it is kept.
    assert row["strict pair"] == "measured / loglin's twin"
    # The answer (1.0, from 0.5 to 2.0) is exact on the cut: within every MAPE bar, but its
    # interval scores log 4 = 1.39 against 1.1 x generic's 0.5 there.
    assert row["strict answer"] and row["first answer"] and row["relaxed answer"]
    assert not row["score answer"]
    text = ceiling.twin_markdown(bounds, set())
    assert "| development | 1 | no method can meet it | 1 | 1 | 1 | 0 |" in text
    assert "| development | 1 | the answer meets it | 1 | 1 | 1 | 0 |" in text
    assert "| t | p_max/2 | measured / loglin's twin, inf; the answer meets it |" in text


def test_where_the_models_agree_with_the_truth_every_target_can_be_met():
    ceiling = load_benchmark("combination_ceiling")
    models = ["generic", "loglin"]
    cut = points(measured=[2.0, 3.0], generic=[2.0, 3.0], loglin=[2.0, 3.0])
    cut = with_intervals(cut, models, width=0.2).assign(table="t", divisor=4)
    row = ceiling.twin_bounds(cut, models).loc[("t", 4)]
    assert all(row[f"{key} ratio"] == 0.0 for key in ceiling.TARGETS)
    # A model that answers no point leaves no twin: only the cut itself, no pair.
    cut["loglin"] = np.nan
    assert list(ceiling.twin_truths(cut)) == ["measured", "generic's twin"]
