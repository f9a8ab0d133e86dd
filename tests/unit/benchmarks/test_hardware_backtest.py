"""benchmarks/hardware_backtest.py: published rows as points, one held-out GPU type scored for
the answer and each model, and the published tables it reads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarkscripts import load_benchmark
from dlperf.models.prior_hw import one_gpu_type_interval, two_gpu_types_interval

ROOT = Path(__file__).resolve().parents[3]
SHARED = ROOT / ".." / "shared" / "data"

backtest = load_benchmark("hardware_backtest")


def test_throughput_becomes_an_epoch_of_fixed_iterations():
    raw = pd.DataFrame(
        {
            "network": ["n"],
            "gpu": ["A10"],
            "precision": ["AMP/FP16"],
            "nodes": [1],
            "procs": [2],
            "batch_size": [32],
            "throughput": [640.0],
        }
    )
    points = backtest.points(raw)
    assert points.loc[0, "precision"] == "amp_fp16"
    assert points.loc[0, "epoch_time_s"] == pytest.approx(backtest.ITERATIONS * 64 / 640.0)


def test_every_gpu_type_is_held_out_and_scored():
    table = backtest.synthetic_table()
    series = table[(table["network"] == "net0") & (table["precision"] == "fp32")]
    found = backtest.run(series.head(16))  # four GPU types
    assert set(found["gpu"]) == set(series.head(16)["gpu"])
    summary = backtest.summarise(found).set_index("model")
    assert {"answer (weighted)", "lattuada_hw", "generic_hw", "anchored_hw", "prior_hw"} <= set(
        summary.index
    )
    assert summary.loc["generic_hw", "MAPE %"] < 10  # the law is generic_hw's own
    assert np.isfinite(summary.loc["answer (weighted)", "90 % coverage %"])


@pytest.mark.skipif(not SHARED.exists(), reason="../shared/data is not present")
def test_the_published_tables_become_points_of_every_gpu_type():
    lam, csc = backtest.lambda_points(SHARED), backtest.csc_points(SHARED)
    assert lam["gpu"].nunique() == 12 and csc["gpu"].nunique() == 3
    assert set(lam["precision"]) == set(csc["precision"]) == {"fp32", "amp_fp16"}
    assert (lam["epoch_time_s"] > 0).all() and (csc["epoch_time_s"] > 0).all()
    mxnet = backtest.mxnet_points(SHARED)
    # Five generations, each from its own datasheet: the K80's two campaigns are one GPU type.
    assert sorted(backtest.catalogue_names(mxnet["gpu"]).unique()) == [
        "K80",
        "M40",
        "M60",
        "P100-PCIe-16GB",
        "V100-SXM2-16GB",
    ]
    assert set(mxnet["precision"]) == {"fp32"} and (mxnet["epoch_time_s"] > 0).all()
    assert [
        gpu
        for _, test in backtest.fastest(mxnet[mxnet["network"] == "Resnet 50"])
        for gpu in test["gpu"].unique()
    ] == ["V100"]
    grid = backtest.grid_points(SHARED)
    # A network's tables on its GPU types meet in one series: NCF in PyTorch on four.
    ncf = grid[(grid["network"] == "PyTorch: NCF") & (grid["precision"] == "amp_fp16")]
    assert sorted(backtest.catalogue_names(ncf["gpu"]).unique()) == [
        "A100-SXM4-40GB",
        "V100-SXM2-16GB",
        "V100-SXM2-32GB",
        "V100-SXM3-32GB",
    ]
    # PyTorch Transformer-XL's tables are named by model size, not by system.
    assert {"PyTorch: Transformer-XL Base model", "PyTorch: Transformer-XL Large model"} <= set(
        grid["network"]
    )
    assert (grid["epoch_time_s"] > 0).all() and grid["batch_size"].nunique() > 10


def test_the_breakdown_finds_an_error_carried_by_one_gpu_type():
    # Every point 10 % too slow on A10, exact elsewhere: per network the error is shared, and
    # removing the mean log error per GPU type in hindsight leaves nothing.
    found = pd.DataFrame(
        {
            "model": "answer (weighted)",
            "gpu": ["A10", "A10", "V100", "V100"],
            "procs": 1,
            "batch_size": 32,
            "network": ["a", "b", "a", "b"],
            "precision": "fp32",
            "measured": 1.0,
            "predicted": [1.1, 1.1, 1.0, 1.0],
        }
    )
    table = backtest.breakdown(found).set_index("what")["MAPE %"]
    assert table["all points"] == pytest.approx(5.0)
    assert table["a alone"] == pytest.approx(5.0)
    assert table["A10 held out"] == pytest.approx(10.0)
    assert table["V100 held out"] == pytest.approx(0.0)
    assert table["mean log error per gpu removed (hindsight)"] == pytest.approx(0.0, abs=1e-9)
    assert table["mean log error per network x precision removed (hindsight)"] > 1.0


def answer_on_one_series(procs, measured, predicted) -> pd.DataFrame:
    """The answer's held-out rows for network a in fp32 on an A10 at batch 32."""
    return pd.DataFrame(
        {
            "model": "answer (weighted)",
            "gpu": "A10",
            "procs": procs,
            "batch_size": 32,
            "network": "a",
            "precision": "fp32",
            "measured": measured,
            "predicted": predicted,
        }
    )


def test_the_breakdown_separates_a_gpu_types_scaling_from_its_level():
    # A10 held out: predicted 10 % slow at one worker (its level) and, as it scales worse than
    # predicted, 0.8 of that at eight (12 % fast). Known scaling leaves the level's 10 %.
    found = answer_on_one_series(procs=[1, 1, 8], measured=1.0, predicted=[1.1, 1.1, 0.88])
    table = backtest.breakdown(found).set_index("what")["MAPE %"]
    assert table["at 1 worker"] == pytest.approx(10.0)
    assert table["at 8 workers"] == pytest.approx(12.0)
    known = table[
        "each GPU type's scaling over workers known: its error at its fewest workers at every "
        "count (hindsight)"
    ]
    assert known == pytest.approx(10.0)


def test_the_breakdown_separates_batches_no_other_gpu_type_measured():
    # A10 and V100 both measured batch 32 (exact there); the V100 alone measured 8 at two
    # workers (20 % fast), and the A10 alone 32 at eight workers, which another GPU type
    # measured only at other worker counts (10 % slow).
    found = pd.DataFrame(
        {
            "model": "answer (weighted)",
            "gpu": ["A10", "V100", "V100", "A10"],
            "procs": [1, 1, 2, 8],
            "batch_size": [32, 32, 8, 32],
            "network": "a",
            "precision": "fp32",
            "measured": 1.0,
            "predicted": [1.0, 1.0, 0.8, 1.1],
        }
    )
    table = backtest.breakdown(found).set_index("what")
    seen = table.loc["at a batch another GPU type of the series measured at those workers"]
    unseen = table.loc["at a batch no other GPU type of the series measured at those workers"]
    assert (seen["points"], seen["MAPE %"]) == (2, pytest.approx(0.0, abs=1e-9))
    assert (unseen["points"], unseen["MAPE %"]) == (2, pytest.approx(15.0))


def test_no_answer_goes_below_the_hosts_own_disagreement():
    # Two hosts measured one configuration at 1.0 and 1.5, a third configuration once: the best
    # single number for the pair is 1.0 (|1/1.5 - 1| = 1/3 on one point), over three points.
    found = answer_on_one_series(procs=[1, 1, 2], measured=[1.0, 1.5, 2.0], predicted=1.2)
    table = backtest.breakdown(found).set_index("what")["MAPE %"]
    floor = table[
        "one number per configuration, best in hindsight: the hosts' own disagreement, "
        "which no answer goes below"
    ]
    assert floor == pytest.approx(100 / 9)
    assert floor < table["all points"]


def test_weights_in_hindsight_per_network_recover_what_one_set_cannot():
    # powerlaw_hw exact on network a and 2x slow on b, generic_hw the other way round,
    # prior_hw 3x slow on both: one weighting for both networks errs, one per network not.
    predicted = {
        "answer (weighted)": [1.4, 1.4],
        "powerlaw_hw": [1.0, 2.0],
        "generic_hw": [2.0, 1.0],
        "prior_hw": [3.0, 3.0],
    }
    found = pd.concat(
        pd.DataFrame(
            {
                "model": model,
                "gpu": "A10",
                "procs": 1,
                "batch_size": 32,
                "network": ["a", "b"],
                "precision": "fp32",
                "measured": 1.0,
                "predicted": values,
            }
        )
        for model, values in predicted.items()
    )
    table = backtest.breakdown(found).set_index("what")["MAPE %"]
    one = table["the answer's models, weights in hindsight: one set for all points"]
    # The best single weighting: the geometric mean of the two, sqrt(2) on both networks.
    assert one == pytest.approx((np.sqrt(2) - 1) * 100, rel=1e-9)
    assert table["the answer's models, weights in hindsight: one per network"] == 0.0
    assert backtest.hindsight_weighting(found, ["network", "precision"]) == 0.0


def test_a_users_timings_file_is_judged_with_the_fastest_gpu_type_asked_from_the_others(tmp_path):
    # Four GPU types of one network from the generic_hw law, written as a user's CSV.
    table = backtest.synthetic_table()
    four = ["Tesla V100-SXM2-16GB", "A10", "A100-SXM4-80GB", "H100-SXM5-80GB"]
    rows = table[(table["network"] == "net0") & (table["precision"] == "amp_fp16")]
    rows = rows[rows["gpu"].isin(backtest.load().match(g).name for g in four)]
    path = tmp_path / "mine.csv"
    rows.assign(framework="pytorch").to_csv(path, index=False)

    frame = backtest.timings_points(path)
    assert set(frame["network"]) == {"pytorch: net0"} and frame["gpu"].nunique() == 4
    (train, test), *rest = backtest.fastest(frame)
    assert not rest and set(test["gpu"]) == {backtest.load().match("H100-SXM5-80GB").name}
    assert test["gpu"].iloc[0] not in set(train["gpu"])

    assert backtest.main(["--timings", str(path)]) == 0


def test_gpu_types_of_a_users_catalogue_file_are_judged_too(tmp_path, capsys):
    # A GPU type the shipped catalogue lacks: the H100's figures under a name of its own.
    h100 = backtest.load().match("H100-SXM5-80GB")
    (tmp_path / "mine.yaml").write_text(
        "sources:\n  mine: {title: 'made up for the test', url: 'https://example.org'}\n"
        "gpus:\n  - name: Z9000\n    vendor: Example\n"
        f"    peak_tflops: {h100.peak_tflops}\n"
        f"    memory_gb: {h100.memory_gb}\n"
        f"    memory_bandwidth_gbs: {h100.memory_bandwidth_gbs}\n"
        f"    link: {{name: NVLink, bandwidth_gbs: {h100.link_bandwidth_gbs}}}\n"
        "    sources: {peak_tflops: mine, memory: mine, link: mine}\n"
    )
    table = backtest.synthetic_table()
    four = ["V100-SXM2-16GB", "A10", "A100-SXM4-80GB", "H100-SXM5-80GB"]
    rows = table[(table["network"] == "net0") & (table["precision"] == "amp_fp16")]
    rows = rows[rows["gpu"].isin(backtest.load().match(g).name for g in four)]
    rows = rows.assign(framework="pytorch", gpu=rows["gpu"].replace(h100.name, "Z9000"))
    rows.to_csv(tmp_path / "mine.csv", index=False)
    argv = ["--timings", str(tmp_path / "mine.csv"), "--hardware", str(tmp_path / "mine.yaml")]
    assert backtest.main([*argv, "--shared", str(tmp_path / "absent")]) == 0
    printed = capsys.readouterr().out
    assert "**mine, fastest**" in printed and "**mine, leave one GPU type out**" in printed
    (train, test), *rest = backtest.fastest(
        backtest.timings_points(tmp_path / "mine.csv"), tmp_path / "mine.yaml"
    )
    assert not rest and set(test["gpu"]) == {"Z9000"}
    with pytest.raises(SystemExit):
        backtest.main(["--hardware", str(tmp_path / "mine.yaml")])
    assert "give those files too" in capsys.readouterr().err


def test_each_variant_is_counted_per_table_against_the_shipped_answer():
    def rows(table, model, predicted, width):
        return pd.DataFrame(
            {
                "model": model,
                "table": table,
                "gpu": "A10",
                "measured": [1.0, 1.0],
                "predicted": predicted,
                "lo": np.nan if width is None else predicted / width,
                "hi": np.nan if width is None else predicted * width,
            }
        )

    found = pd.concat(
        [
            rows("x", "answer (weighted)", 1.1, 1.5),
            rows("y", "answer (weighted)", 1.1, None),
            rows("x", "powerlaw_hw", 1.2, 1.3),  # errs more, narrower: scores lower
            rows("y", "powerlaw_hw", 1.05, None),  # errs less, no interval to score
        ],
        ignore_index=True,
    )
    per_table = {table: backtest.summarise(rows) for table, rows in found.groupby("table")}
    table = backtest.against_shipped(per_table).set_index("model")
    assert table.loc["powerlaw_hw", "tables MAPE lower / higher"] == "1 / 1 of 2"
    assert table.loc["powerlaw_hw", "tables score lower / higher"] == "1 / 0 of 1"


def test_two_campaigns_are_compared_at_the_cells_both_measured(tmp_path):
    # The other campaign 10 % slower on the A10, alike on the V100 (spelled two ways), and one
    # cell only it measured: 5 % apart, nothing once each GPU type's shift is removed.
    def campaign(gpus, times):
        return pd.DataFrame(
            {
                "network": ["a", "b", "a", "b"][: len(gpus)],
                "gpu": gpus,
                "precision": "fp32",
                "nodes": 1,
                "procs": 1,
                "batch_size": 32,
                "data_size": 3200,
                "epoch_time_s": times,
            }
        )

    reference = campaign(["A10", "A10", "V100 16GB", "V100 16GB"], [1.0, 2.0, 3.0, 4.0])
    other = pd.concat(
        [
            campaign(["A10", "A10", "Tesla V100-SXM2-16GB", "V100-SXM2-16GB"], [1.1, 2.2, 3, 4]),
            campaign(["H100-SXM5-80GB"], [0.5]),
        ]
    )
    answer = reference.assign(measured=reference["epoch_time_s"])
    answer = answer.assign(predicted=answer["measured"] * 1.2)
    table = backtest.campaigns(reference, other, answer).set_index("what")
    assert (table["cells"] == 4).all() and (table["GPU types"] == 2).all()
    assert table.loc["the other campaign's time as the prediction", "MAPE %"] == pytest.approx(5.0)
    assert table.loc["... per GPU type removed", "MAPE %"] == pytest.approx(0.0, abs=1e-9)
    assert table.loc["... per series removed", "MAPE %"] > 1.0
    assert table.loc["the answer, GPU type not measured (leave one out)", "MAPE %"] == (
        pytest.approx(20.0)
    )
    with pytest.raises(SystemExit, match="share no cell"):
        backtest.campaigns(reference, other[other["gpu"] == "H100-SXM5-80GB"])
    # A campaign file is read as external timings; only its PyTorch rows are Lambda's.
    other.assign(framework="pytorch").to_csv(tmp_path / "old.csv", index=False)
    read = backtest.campaign_points(tmp_path / "old.csv")
    assert len(read) == 5 and set(read["network"]) == {"a", "b"}
    other.assign(framework="tensorflow").to_csv(tmp_path / "tf.csv", index=False)
    with pytest.raises(SystemExit, match="no pytorch rows"):
        backtest.campaign_points(tmp_path / "tf.csv")


def test_each_gpu_type_is_asked_from_a_few_others_drawn_at_random():
    table = backtest.synthetic_table()
    series = table[(table["network"] == "net0") & (table["precision"] == "fp32")]
    gpus = sorted(series["gpu"].unique())
    cuts = list(backtest.from_few(series, 3))
    assert [set(test["gpu"]) for _, test in cuts] == [{g} for g in gpus]
    for train, test in cuts:
        assert train["gpu"].nunique() == 3 and test["gpu"].iloc[0] not in set(train["gpu"])
    again = [set(train["gpu"]) for train, _ in backtest.from_few(series, 3)]
    assert again == [set(train["gpu"]) for train, _ in cuts]  # one draw per seed
    assert not list(backtest.from_few(series, len(gpus)))


def test_each_gpu_type_is_asked_beyond_the_workers_the_others_measured(tmp_path, capsys):
    table = backtest.synthetic_table()
    series = table[(table["network"] == "net0") & (table["precision"] == "fp32")]
    cuts = list(backtest.beyond_workers(series, 2))
    assert [test["gpu"].iloc[0] for _, test in cuts] == sorted(series["gpu"].unique())
    for train, test in cuts:
        assert set(train["procs"]) == {1, 2} and set(test["procs"]) == {4, 8}
        assert test["gpu"].iloc[0] not in set(train["gpu"])
    assert not list(backtest.beyond_workers(series, 8))
    path = tmp_path / "mine.csv"
    series.assign(framework="pytorch").to_csv(path, index=False)
    assert backtest.main(["--beyond-workers", "2", "--timings", str(path)]) == 0
    out = capsys.readouterr().out
    assert "each GPU type asked above 2 workers from the others at 2 or fewer" in out


def test_from_two_gpu_types_the_answer_is_scored_with_the_interval_shipped_for_two(
    tmp_path, capsys
):
    """With slopes learned without the GPU type asked the library gives no interval; the
    benchmark scores the one shipped for two GPU types, on the answer's models alone."""
    table = backtest.synthetic_table()
    series = table[(table["network"] == "net0") & (table["precision"] == "fp32")].head(16)
    slopes = backtest.learn_slopes(table)
    train, test = next(backtest.from_few(series, 2))
    found = backtest.held_out(train, test, slopes).set_index("model")
    radius, _ = two_gpu_types_interval(backtest.LEVEL)
    answered = found.loc["answer (weighted)"]
    assert np.allclose(answered["hi"] / answered["predicted"], np.exp(radius))
    assert found.loc["prior_hw", "hi"].isna().all()  # a model alone was never scored so
    path = tmp_path / "mine.csv"
    series.assign(framework="pytorch").to_csv(path, index=False)
    assert backtest.main(["--from-few", "2", "--timings", str(path)]) == 0
    out = capsys.readouterr().out
    assert "every file, each GPU type asked from 2 others" in out


def test_each_gpu_type_is_asked_from_each_other_one_alone_beside_three_scalings(tmp_path, capsys):
    table = backtest.synthetic_table()
    series = table[(table["network"] == "net0") & (table["precision"] == "fp32")].head(12)
    gpus = sorted(series["gpu"].unique())  # three GPU types
    cuts = list(backtest.from_each_one(series))
    asked = [
        (train["gpu"].unique().tolist(), test["gpu"].unique().tolist()) for train, test in cuts
    ]
    assert len(cuts) == 6 and all(t != a for (t,), (a,) in asked)
    assert {(t, a) for (t,), (a,) in asked} == {(t, a) for t in gpus for a in gpus if t != a}
    found = backtest.one_gpu_type(series)
    summary = backtest.summarise(found).set_index("model")
    assert list(summary.index) == [
        "answer (prior_hw from the one GPU type)",
        "the time measured, unscaled",
        "scaled by the matrix peak rate",
        "scaled by the memory bandwidth",
    ]
    assert len(set(summary["points"])) == 1  # the same points for each
    # The answer's interval is the shipped one, whatever the slopes.
    answer = found[found["model"] == "answer (prior_hw from the one GPU type)"]
    radius, _ = one_gpu_type_interval(backtest.LEVEL)
    spread = answer["hi"] / answer["predicted"]
    assert np.all(spread <= np.exp(radius) * (1 + 1e-9))
    # Unscaled: the time measured on the other GPU type at the same configuration.
    unscaled = found[found["model"] == "the time measured, unscaled"]
    at = ["gpu", "procs", "batch_size"]
    measured = series.set_index(at)["epoch_time_s"]
    on = unscaled.set_index(["measured_on", "procs", "batch_size"]).index
    assert np.allclose(unscaled["predicted"].to_numpy(), measured.loc[on].to_numpy())
    # A batch the other GPU types did not measure is answered, apart, with no scaling.
    assert backtest.NOT_MEASURED_THERE not in summary.index
    wider = pd.concat([series, series[series["gpu"] == gpus[0]].assign(batch_size=512)])
    apart = backtest.one_gpu_type(wider)
    alone = apart[apart["model"] == backtest.NOT_MEASURED_THERE]
    assert len(alone) == 2 * (wider["batch_size"] == 512).sum()
    assert (alone["batch_size"] == 512).all() and (alone["gpu"] == gpus[0]).all()
    assert np.isfinite(alone[["predicted", "lo", "hi"]].to_numpy()).all()
    assert (apart[apart["model"] != backtest.NOT_MEASURED_THERE]["batch_size"] != 512).all()
    path = tmp_path / "mine.csv"
    series.assign(framework="pytorch").to_csv(path, index=False)
    assert backtest.main(["--one-gpu-type", "--timings", str(path)]) == 0
    out = capsys.readouterr().out
    assert "every file, each GPU type asked from each other one" in out
