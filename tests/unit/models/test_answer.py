"""The answer (dlperf.models.answer): backtest in the artifact, weights, calibrated intervals,
an answer from two worker counts, gradient accumulation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarkscripts import load_benchmark
from dlperf.models.answer import ANSWER, distance, growth, half_width, weighted_quantile
from dlperf.models.answer_explained import answer_warnings
from dlperf.models.artifact import fit_framework
from dlperf.models.prediction import predict_rows, prediction_table

# Cheap models keep the calibration tests quick; the benchmark fits every default model.
MODELS = {"loglin": {}, "castello": {}, "usl": {}}
SHARED = Path(__file__).resolve().parents[3] / ".." / "shared" / "data"


def law(procs, overhead, comm, noise, rng, steps=None):
    """Epoch time of a known law: 100 iterations of overhead + comm * log2 p, noisy."""
    procs = np.asarray(procs, float)
    steps = np.ones_like(procs) if steps is None else np.asarray(steps, float)
    t_iter = overhead + comm * np.log2(procs) / steps
    return 100 * t_iter * rng.lognormal(0.0, noise, procs.size)


def series(networks: int, procs: list[int], noise: float, seed: int) -> pd.DataFrame:
    """Networks of a known law, t_iter = a + c log2 p with lognormal noise (the calibration
    benchmark's)."""
    return load_benchmark("answer_calibration").known_law(networks, noise, seed, procs)


def coverage(artifact: dict, test: pd.DataFrame) -> tuple[float, int]:
    hits, answered = [], 0
    for network, held in test.groupby("network"):
        table = predict_rows(artifact, network, ANSWER, held)
        answered += int(table["epoch_time_s"].notna().sum())
        measured = held["epoch_time_s"].to_numpy()
        hits += list(
            (table["epoch_time_lo_s"].to_numpy() <= measured)
            & (measured <= table["epoch_time_hi_s"].to_numpy())
        )
    return float(np.mean(hits)), answered


def test_the_artifact_stores_the_backtest_and_the_answers_models():
    points = series(2, [1, 2, 4, 8, 16], 0.01, seed=1)
    artifact = fit_framework(points, "pytorch", MODELS, seed=0, refits=5)
    info = artifact["networks"]["net0"]
    assert info["backtest"]["cutoffs"] == [2, 4, 8]
    # The collective models (all-reduce cost models) are the answer's; usl is not one.
    assert info["answer"]["models"] == ["castello", "loglin"]
    assert info["measured"]["best_samples_per_s_per_worker"] > 0
    table = predict_rows(artifact, "net0", ANSWER, points.iloc[[0]].assign(procs=64))
    assert table["ratio"].iloc[0] == 4.0
    assert table["models"].iloc[0] == "median of castello, loglin"
    assert table["epoch_time_lo_s"].iloc[0] < table["epoch_time_s"].iloc[0]
    assert table["epoch_time_s"].iloc[0] < table["epoch_time_hi_s"].iloc[0]


def test_the_interval_widens_beyond_the_measured_range():
    points = series(3, [1, 2, 4, 8], 0.02, seed=2)
    artifact = fit_framework(points, "pytorch", MODELS, seed=0, refits=5)
    rows = pd.DataFrame(
        {"nodes": 1, "procs": [8, 16, 64, 256], "batch_size": 32, "data_size": 100 * 32 * 8}
    )
    table = predict_rows(artifact, "net1", ANSWER, rows)
    width = np.log(table["epoch_time_hi_s"] / table["epoch_time_lo_s"]).to_numpy()
    assert np.all(np.diff(width) > 0), width


@pytest.mark.parametrize(("noise", "seed", "widest"), [(0.02, 3, 0.2), (0.05, 7, 0.4)])
def test_coverage_on_a_known_law_is_at_least_85_percent_and_sharp(noise, seed, widest):
    """Train on 1-8 workers of 40 series of a known law, ask 16 and 32 (80 held-out points).
    The growth per doubling is one constant chosen on the published tables left out, not fitted
    to this law, so coverage is held to the target (>= 85 %) and the interval to a width: the
    median half-width in log time at most ``widest`` (0.170 and 0.171 measured)."""
    points = series(40, [1, 2, 4, 8, 16, 32], noise, seed=seed)
    train, test = points[points["procs"] <= 8], points[points["procs"] > 8]
    artifact = fit_framework(train, "pytorch", MODELS, seed=0, refits=5)
    covered, answered = coverage(artifact, test)
    assert answered == len(test)
    assert covered >= 0.85, covered
    half = []
    for network, held in test.groupby("network"):
        half += list(log_width(predict_rows(artifact, network, ANSWER, held)) / 2)
    assert np.median(half) <= widest, np.median(half)


def test_the_form_uncertainty_is_carried_beyond_the_backtested_ratios():
    """A saturating law, t_iter = a + c (p-1)/p, trained on 1-8 workers and asked for 64: 8x
    beyond the measured range, 2x beyond the largest ratio the backtest saw (4)."""
    load = load_benchmark("answer_calibration").known_law
    points = load(30, 0.02, 3, [1, 2, 4, 8, 64], "saturating")
    train, test = points[points["procs"] <= 8], points[points["procs"] > 8]
    artifact = fit_framework(train, "pytorch", MODELS, seed=0, refits=5)
    covered, answered = coverage(artifact, test)
    assert answered == len(test)
    assert covered >= 0.8, covered


def test_two_worker_counts_still_give_an_answer_with_a_warning():
    points = series(1, [16, 64], 0.01, seed=4)
    artifact = fit_framework(points, "pytorch", {"generic": {}, **MODELS}, seed=0, refits=5)
    assert artifact["networks"]["net0"]["models"]["generic"]["status"] == "insufficient_data"
    rows = pd.DataFrame({"nodes": 1, "procs": [256, 512], "batch_size": 32, "data_size": 10**6})
    table = predict_rows(artifact, "net0", ANSWER, rows)
    assert table["epoch_time_s"].notna().all()
    assert table["models"].iloc[0].startswith("median of ")
    warnings = answer_warnings(artifact, "net0", rows)
    assert any("2 of the rows lie beyond" in w and "3.0 doublings" in w for w in warnings)
    assert any("one batch size was measured (32)" in w for w in warnings)


def test_the_conformal_quantile_corrects_for_few_records():
    values = np.arange(1.0, 11.0)
    # level 0.8 of 10 values: (n + 1) / n moves it to the 9th value.
    assert weighted_quantile(values, np.ones(10), 0.8) == 9.0
    assert weighted_quantile(values, np.ones(10), 0.99) > 10.0


def test_the_models_see_the_all_reduce_once_per_optimizer_step():
    from dlperf.models import make_model

    rng = np.random.default_rng(5)
    procs = np.array([1, 2, 4, 8, 16, 32, 8, 32])
    steps = np.array([1, 1, 1, 1, 1, 1, 8, 4])
    frame = pd.DataFrame(
        {
            "framework": "pytorch",
            "network": "bert",
            "device": "cuda",
            "nodes": 1,
            "procs": procs,
            "batch_size": 16,
            "grad_accum_steps": steps,
            "data_size": 100 * procs * 16,
            "epoch_time_s": law(procs, 0.1, 0.05, 0.0, rng, steps),
        }
    )
    for name in ("loglin", "generic", "linreg_sfs"):
        model = make_model(name, {}, 0).fit(frame)
        error = np.abs(model.predict(frame) / frame["epoch_time_s"] - 1)
        assert error.max() < 0.02, (name, error)
        # Without the column the same model cannot fit both step counts at 8 and 32 workers.
        blind = make_model(name, {}, 0).fit(frame.drop(columns="grad_accum_steps"))
        blind_error = np.abs(blind.predict(frame) / frame["epoch_time_s"] - 1)
        assert blind_error.max() > 0.1, (name, blind_error)


def test_external_timings_carry_grad_accum_steps(tmp_path):
    from dlperf.measurements.external import ExternalTimingsError, read_external

    csv = tmp_path / "t.csv"
    csv.write_text(
        "framework,procs,batch_size,grad_accum_steps,samples_per_s\n"
        "pytorch,8,256,32,4553\npytorch,16,256,16,9191\npytorch,32,256,,18119\n"
    )
    points = read_external(csv)
    assert points["grad_accum_steps"].tolist() == [32, 16, 1]
    csv.write_text("framework,procs,batch_size,grad_accum_steps,samples_per_s\npytorch,8,2,0,1\n")
    with pytest.raises(ExternalTimingsError, match="grad_accum_steps"):
        read_external(csv)


@pytest.mark.slow
@pytest.mark.skipif(not SHARED.is_dir(), reason="the published tables are not in ../shared/data")
def test_the_answer_holds_on_every_published_table():
    """Every published table: every held-out point answered, 90 % interval covering >= 80 %
    (the benchmark reports the full figures with every default model)."""
    answer_backtest = load_benchmark("answer_backtest")
    for name, load in answer_backtest.TABLES.items():
        points = load(SHARED)
        train, test = answer_backtest.split(points, 2)
        if train.empty:
            continue
        artifact = fit_framework(train, "pytorch", MODELS, seed=0, refits=5)
        covered, answered = coverage(artifact, test[test["framework"] == "pytorch"])
        assert answered == int((test["framework"] == "pytorch").sum()), name
        assert covered >= 0.8, (name, covered)


def test_published_accumulation_steps_are_read_as_printed():
    published = load_benchmark("published")
    printed = pd.Series([32.0, "64/gpus = 16", None, "8"])
    assert published.accumulation_steps(printed).tolist() == [32, 16, 1, 8]


def test_a_model_that_predicts_a_non_positive_time_leaves_the_answer_to_the_others():
    # Epoch time falling fast with the workers: loglin's fit crosses zero beyond 8 workers
    # while castello and usl stay positive. The answer must come from those (a tiny study's
    # report once failed here because the best-backtested model went non-positive).
    points = series(1, [1, 2, 4, 8], 0.02, seed=3)
    points = points.assign(epoch_time_s=points["epoch_time_s"] * (9 - points["procs"]) / 8)
    artifact = fit_framework(points, "pytorch", {"linreg_sfs": {}, **MODELS}, seed=0, refits=5)
    rows = points.iloc[[0]].assign(procs=16)
    loglin = prediction_table(artifact, "net0", "loglin", rows)["epoch_time_s"].iloc[0]
    assert loglin <= 0  # the situation this test is about
    table = predict_rows(artifact, "net0", ANSWER, rows)
    assert table["epoch_time_s"].iloc[0] > 0
    assert "loglin" not in table["models"].iloc[0]


def test_without_a_backtest_the_answer_takes_the_collective_models():
    # Two worker counts: USL (Amdahl here) fits them as well as loglin and castello, but its
    # contention term is a shape picked to fit, not an all-reduce's cost: it stays out.
    points = series(1, [16, 64], 0.01, seed=4)
    artifact = fit_framework(points, "pytorch", MODELS, seed=0, refits=5)
    assert artifact["networks"]["net0"]["models"]["usl"]["status"] == "ok"
    rows = pd.DataFrame({"nodes": 1, "procs": [256], "batch_size": 32, "data_size": 10**6})
    table = predict_rows(artifact, "net0", ANSWER, rows)
    # castello cannot tell its compute from its all-reduce on two worker counts of one batch
    # size without the latency term, which it leaves out there: it is not fitted.
    assert artifact["networks"]["net0"]["models"]["castello"]["status"] == "insufficient_data"
    assert table["models"].iloc[0] == "median of loglin"
    # With no collective model fitted, the answer still comes from those that are.
    alone = fit_framework(points, "pytorch", {"usl": {}}, seed=0, refits=5)
    assert predict_rows(alone, "net0", ANSWER, rows)["models"].iloc[0] == "median of usl"


def test_only_the_collective_models_take_part():
    # generic's all-reduce terms make it a candidate; Ernest's regressors and Extra-P's searched
    # PMNF are shapes chosen to fit the points and stay out.
    points = series(1, [1, 2, 4], 0.01, seed=6)
    models = {"generic": {}, "ernest": {}, "extrap": {}, **MODELS}
    artifact = fit_framework(points, "pytorch", models, seed=0, refits=5)
    fitted = artifact["networks"]["net0"]["models"]
    assert all(fitted[m]["status"] == "ok" for m in models), {
        m: fitted[m].get("reason") for m in models
    }
    rows = points.iloc[[0]].assign(procs=8)
    described = predict_rows(artifact, "net0", ANSWER, rows)["models"].iloc[0]
    # Of the three collective models castello joins only where it is needed to have two forms.
    assert described == "median of generic, loglin"


def log_width(table: pd.DataFrame) -> np.ndarray:
    return np.log(table["epoch_time_hi_s"] / table["epoch_time_lo_s"]).to_numpy()


def test_the_interval_widens_with_distance_in_nodes_and_batch_size():
    points = series(2, [1, 2, 4, 8], 0.02, seed=8)
    artifact = fit_framework(points, "pytorch", MODELS, seed=0, refits=5)
    row = points.iloc[[0]].assign(procs=16)
    nodes = predict_rows(
        artifact, "net0", ANSWER, pd.concat([row.assign(nodes=n) for n in (1, 2, 4)])
    )
    assert np.all(np.diff(log_width(nodes)) > 0), log_width(nodes)
    # Measured at batch 32 only: asking 64, 256, 2048 is ever farther from it.
    inside = points.iloc[[3]]
    batch = pd.concat([inside.assign(batch_size=b) for b in (32, 64, 256, 2048)])
    width = log_width(predict_rows(artifact, "net0", ANSWER, batch))
    assert np.all(np.diff(width) > 0), width
    assert any("beyond the measured" in w for w in answer_warnings(artifact, "net0", batch))


def test_nothing_is_faster_than_perfect_scaling_of_the_best_measured_worker():
    # Superlinear on 1-4 workers (a cache effect): every model carries the trend on; the answer
    # and its interval's lower end stop at perfect scaling of the best per-worker throughput.
    procs = np.array([1, 2, 4])
    frame = pd.DataFrame(
        {
            "framework": "pytorch",
            "network": "net0",
            "device": "cuda",
            "nodes": 1,
            "procs": procs,
            "batch_size": 32,
            "data_size": 32000,
            "epoch_time_s": 10.0 / procs**1.3,
        }
    )
    artifact = fit_framework(frame, "pytorch", MODELS, seed=0, refits=5)
    rows = frame.iloc[[0]].assign(procs=64, nodes=8)
    table = predict_rows(artifact, "net0", ANSWER, rows)
    best = (frame["data_size"] / frame["epoch_time_s"] / frame["procs"]).max()
    fastest = 32000 / (64 * best)
    assert table["epoch_time_s"].iloc[0] >= fastest * (1 - 1e-9)
    assert table["epoch_time_lo_s"].iloc[0] >= fastest * (1 - 1e-9)


def test_the_report_draws_within_physics():
    from dlperf.models.answer import within_physics

    table = pd.DataFrame(
        {
            "procs": [4, 4, 4],
            "data_size": 400,
            "epoch_time_s": [0.5, -2.0, 20.0],
            "epoch_time_lo_s": [0.1, -3.0, 10.0],
            "epoch_time_hi_s": [2.0, 1.0, 30.0],
        }
    )
    drawn = within_physics(table, {"best_samples_per_s_per_worker": 10.0})
    # Perfect scaling of 10 samples/s per worker: 400 samples on 4 workers take 10 s at best.
    assert drawn["epoch_time_s"].iloc[0] == 10.0 and np.isnan(drawn["epoch_time_s"].iloc[1])
    assert (drawn["samples_per_s"].dropna() <= 40.0).all()
    assert drawn["epoch_time_lo_s"].iloc[2] == 10.0


def test_a_topology_step_inside_the_node_is_not_carried_across_nodes():
    """Issue 35's first hidden table, as a stress series: weak scaling on 1-16 workers of one
    node, a sharp step at 16 (inside the node), asked for 32-256 workers on 2-16 nodes where the
    truth stays within 3 % of the 16-worker time; the answer within 15 % at 16x."""
    stress = load_benchmark("stress_series")
    points = stress.topology_step(levels=(1, 2, 4, 8, 16, 32, 64, 128, 256))
    train, test = points[points["procs"] <= 16], points[points["procs"] > 16]
    artifact = fit_framework(train, "pytorch", {"generic": {}, **MODELS}, seed=0, refits=5)
    for network, held in test.groupby("network"):
        table = predict_rows(artifact, network, ANSWER, held)
        error = table["epoch_time_s"].to_numpy() / held["epoch_time_s"].to_numpy() - 1
        assert abs(error[-1]) < 0.15, (network, error)


def test_castello_leaves_out_the_latency_it_cannot_tell_from_the_bandwidth():
    """Trained on 1 and 8 workers, the latency term 2 (p-1) alpha and the bandwidth term
    2 (p-1)/p 4W/B are one column apart by a constant: castello keeps the bandwidth term, which
    saturates, instead of a latency carried on linearly in p (NVIDIA's BART, issue 35)."""
    from dlperf.models import make_model

    frame = pd.DataFrame(
        {
            "framework": "pytorch",
            "network": "bart",
            "device": "cuda",
            "nodes": 1,
            "procs": [1, 8],
            "batch_size": 32,
            "data_size": [3200, 25600],
            "epoch_time_s": [1.0, 1.05],
        }
    )
    model = make_model("castello", {}, 0).fit(frame)
    assert model.latency_ == 0.0 and model.inv_bandwidth_ > 0
    far = frame.iloc[[1]].assign(procs=320, nodes=40, data_size=32 * 100 * 320)
    assert model.predict(far)[0] < 1.05 * 1.01


def test_the_width_grows_slower_than_the_distance_and_adds_in_quadrature():
    """log2(1 + D): one doubling counts fully, ten count 3.46 (the published tables' held-out
    errors barely grow with distance); the scatter and the growth add as independent errors."""
    far = np.array([0.0, 1.0, 3.0, 10.0])
    assert np.allclose(growth(far, 1.0, "doublings"), np.log2(1.0 + far))
    assert np.allclose(growth(far, 2.0, "relative"), np.log2(1.0 + far / 2.0))
    assert np.allclose(growth(far, 2.0, "linear"), far)
    assert np.allclose(half_width(0.03, np.array([0.0, 0.04]), "doublings"), [0.03, 0.05])
    assert np.allclose(half_width(0.03, np.array([0.0, 0.04]), "linear"), [0.03, 0.07])


def test_workers_and_nodes_doubled_together_are_one_diagonal_step():
    """D is the root of the sum of squares of the doublings in each dimension: 4x the workers
    on 4x the nodes is 2.83 doublings, not 4; one dimension alone is counted as it is."""
    measured = {"procs": [1, 2, 4, 8], "nodes": [1], "batch_size": [32]}
    rows = pd.DataFrame({"procs": [32, 32, 8], "nodes": [4, 1, 1], "batch_size": [32, 32, 128]})
    assert np.allclose(distance(measured, rows), [np.sqrt(8.0), 2.0, 2.0])
    assert np.allclose(distance(measured, rows, "sum"), [4.0, 2.0, 2.0])


def test_a_fixed_global_batch_reached_by_accumulation_is_answered_at_g_1():
    """The accumulation stress series (NVIDIA's multi-node BERT pattern: g = 32 on one node,
    halving as the nodes double): trained on 1-64 GPUs (g 4-32), asked for 256 GPUs at g = 1,
    where the all-reduce the points saw only through A / g is paid once per micro-batch; the
    answer within 6 % of the truth there, inside its 90 % interval."""
    stress = load_benchmark("stress_series")
    points = stress.accumulation()
    train, test = points[points["procs"] <= 64], points[points["procs"] == 256]
    assert set(test["grad_accum_steps"]) == {1} and min(train["grad_accum_steps"]) == 4
    artifact = fit_framework(train, "pytorch", {"generic": {}, **MODELS}, seed=0, refits=5)
    for network, held in test.groupby("network"):
        assert artifact["networks"][network]["measured"]["grad_accum_steps"] == [4, 8, 16, 32]
        table = predict_rows(artifact, network, ANSWER, held)
        truth = held["epoch_time_s"].to_numpy()
        assert abs(table["epoch_time_s"].to_numpy()[0] / truth[0] - 1) < 0.06, network
        assert table["epoch_time_lo_s"].iloc[0] <= truth[0] <= table["epoch_time_hi_s"].iloc[0]
        (warning,) = [w for w in answer_warnings(artifact, network, held) if "accumulation" in w]
        assert "1 of the rows ask for fewer" in warning and "least measured 4" in warning


def test_accumulation_below_the_measured_steps_is_a_fourth_dimension_of_the_distance():
    """With the ``accumulation`` rule, g halved twice below the least measured is two more
    doublings, combined with the others as a root of the sum of squares; without it (or where
    the artifact records no g), g is not a dimension."""
    measured = {"procs": [1, 8], "nodes": [1], "batch_size": [32], "grad_accum_steps": [16, 32]}
    rows = pd.DataFrame(
        {"procs": [8, 32], "nodes": [1, 4], "batch_size": 32, "grad_accum_steps": [4, 4]}
    )
    assert np.allclose(distance(measured, rows, accumulation=True), [2.0, np.sqrt(12.0)])
    assert np.allclose(distance(measured, rows), [0.0, np.sqrt(8.0)])
    unrecorded = {k: v for k, v in measured.items() if k != "grad_accum_steps"}
    assert np.allclose(distance(unrecorded, rows, accumulation=True), [0.0, np.sqrt(8.0)])
