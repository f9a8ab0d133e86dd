"""Leave-one-table-out for the answer (benchmarks/answer_loto.py) and the stress series it
scores (benchmarks/stress_series.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchmarkscripts import load_benchmark


def test_the_interval_score_is_width_plus_the_miss_over_alpha():
    loto = load_benchmark("answer_loto")
    e = np.e
    # Inside: the log width alone. Above by one log unit at 90 %: width + 2 / 0.1 * 1.
    score = loto.interval_score(np.array([1.0, e**2]), np.array([1 / e, 1 / e]), np.array([e, e]))
    assert np.allclose(score, [2.0, 2.0 + 20.0])


def test_a_rule_is_chosen_on_the_other_tables_only():
    loto = load_benchmark("answer_loto")

    def row(covered, score):
        return pd.Series({"covered": covered, "points": 10.0, "score": score, "ape": 0.0})

    # Setting "a" is best on table x, "b" on y and z; left out, x gets b and y gets b.
    per_setting = {
        ("a",): {"x": row(10, 1.0), "y": row(10, 9.0), "z": row(10, 9.0)},
        ("b",): {"x": row(10, 5.0), "y": row(10, 2.0), "z": row(10, 2.0)},
        # Sharper still, but covers too little: never chosen while another covers enough.
        ("c",): {"x": row(1, 0.1), "y": row(1, 0.1), "z": row(1, 0.1)},
    }
    assert loto.choose(per_setting, "x") == ("b",)
    assert loto.choose(per_setting, "y") == ("b",)


def test_the_stress_series_are_what_they_say():
    stress = load_benchmark("stress_series")
    topology = stress.topology_step(levels=(1, 2, 4, 8, 16, 32, 64, 128, 256))
    for _, series in topology.groupby("network"):
        t = series.set_index("procs")["epoch_time_s"]
        assert t[16] / t[8] > 1.25  # the step inside the node
        assert (np.abs(t[t.index > 16] / t[16] - 1) <= 0.03).all()  # flat across nodes
    accumulation = stress.accumulation()
    for _, series in accumulation.groupby("network"):
        g = series.set_index("procs")["grad_accum_steps"]
        # A fixed global batch: g halves as the nodes double, one node's g on its single GPU.
        assert g.to_dict() == {1: 32, 8: 32, 16: 16, 32: 8, 64: 4, 128: 2, 256: 1}
        t = series.set_index("procs")["epoch_time_s"]
        # Near-perfect scaling: 256 GPUs at g = 1 within 88-97 % of the best per-GPU rate.
        assert 0.88 <= t.min() / t[256] <= 0.97
    two = stress.two_counts()
    assert sorted(two["procs"].unique()) == [8, 16, 64]
    for make in stress.STRESS.values():
        points = make()
        assert (points["epoch_time_s"] > 0).all() and points["network"].nunique() == stress.SERIES


def test_a_users_timings_file_is_one_table_of_one_series_per_gpu_type(tmp_path):
    answer_backtest = load_benchmark("answer_backtest")
    path = tmp_path / "mine.csv"
    rows = [
        f"pytorch,rn,{gpu},amp_fp16,{p},64,{rate * p * 0.95 ** np.log2(p):.1f}"
        for gpu, rate in (("V100 16GB", 1000.0), ("A100 80GB SXM4", 2500.0))
        for p in (1, 2, 4, 8)
    ]
    path.write_text(
        "framework,network,gpu,precision,procs,batch_size,samples_per_s\n" + "\n".join(rows)
    )
    tables = answer_backtest.timings_tables([path])
    assert list(tables) == ["mine (timings)"]
    points = tables["mine (timings)"](None)
    assert points.groupby("network")["procs"].nunique().to_dict() == {
        "rn (V100 16GB, amp_fp16)": 4,
        "rn (A100 80GB SXM4, amp_fp16)": 4,
    }
    train, test = answer_backtest.split(points, 2)
    assert sorted(test["procs"]) == [8, 8] and train["procs"].max() == 4
    # Without ../shared/data a user's own tables are judged beside the stress series.
    none = tmp_path / "no-shared"
    argv = ["--shared", str(none), "--timings", str(path), "--only", "mine", "--divisors", "2"]
    assert answer_backtest.main(argv) == 0


def test_each_rule_is_counted_per_table_where_it_lowers_and_raises_score_and_error():
    answer_backtest = load_benchmark("answer_backtest")

    def points(error, width):
        # Two held-out points at 1 s: predicted 1 + error, the interval that wide in log time.
        predicted = np.full(2, 1.0 + error)
        return pd.DataFrame(
            {
                "measured": np.ones(2),
                "predicted": predicted,
                "lo": predicted * np.exp(-width / 2),
                "hi": predicted * np.exp(width / 2),
            }
        )

    shipped = (("rule", "a"),)
    changed = (("rule", "b"),)
    evaluated = {
        shipped: {
            ("x", 2): points(0.1, 0.5),
            ("y", 2): points(0.1, 0.5),
            ("z", 2): points(0.1, 0.5),
        },
        # Sharper on x and y; on y and z it errs less, on x more.
        changed: {
            ("x", 2): points(0.2, 0.45),
            ("y", 2): points(0.05, 0.4),
            ("z", 2): points(0.0, 0.9),
        },
    }
    rows = answer_backtest.rule_effects(evaluated).splitlines()
    assert rows[2].endswith("| 0 / 0 of 3 | 0 / 0 of 3 |")
    assert rows[3].startswith("| rule | b |") and rows[3].endswith("| 2 / 1 of 3 | 2 / 1 of 3 |")
    # Over some tables alone: y only, where the change lowers both.
    alone = answer_backtest.rule_effects(evaluated, {"y"}).splitlines()
    assert alone[3].endswith("| 1 / 0 of 1 | 1 / 0 of 1 |")
