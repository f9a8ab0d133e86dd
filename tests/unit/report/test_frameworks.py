"""Frameworks side by side on synthetic timings whose true ratios and splits are known: the
ratio table and its intervals, the split of an iteration, the sentence, the section."""

import json

import numpy as np
import pandas as pd
import pytest

from dlperf.errors import InputFileError
from dlperf.report.framework_section import as_json, as_text, ratio_frame
from dlperf.report.frameworks import compare_frameworks, ratio_table, split_table

THREE = ("pytorch", "tensorflow", "mxnet")


def _true_epoch(synthetic, framework: str, p: int, b: int, d: int) -> float:
    cost = synthetic.PROFILES[framework]
    t_iter = cost.overhead + cost.compute["lenet"] * b**0.9 + cost.allreduce * (p - 1) / p
    return 0.05 + np.ceil(d / (p * b)) * t_iter


def _true_ratio(synthetic, framework: str, fastest: str, p: int) -> float:
    """Geometric mean over the sweep's configurations of the noise-free throughput ratio."""
    logs = [
        np.log(
            _true_epoch(synthetic, fastest, p, b, d) / _true_epoch(synthetic, framework, p, b, d)
        )
        for b in (8, 16, 32)
        for d in (512, 1024)
    ]
    return float(np.exp(np.mean(logs)))


@pytest.fixture(scope="module")
def timings(report_synthetic):
    return report_synthetic.synthetic_timings(frameworks=THREE)


def test_only_networks_of_two_or_more_frameworks_are_compared(timings):
    (lenet,) = compare_frameworks(timings, {})  # mlp: pytorch only
    assert lenet.network == "lenet"
    assert lenet.frameworks == ("mxnet", "pytorch", "tensorflow")
    assert compare_frameworks(timings[timings["framework"] == "pytorch"], {}) == []


def test_each_ratio_is_near_the_true_one_and_its_interval_holds_it(timings, report_synthetic):
    table = ratio_table(timings[timings["network"] == "lenet"])
    assert sorted(table["procs"].unique()) == [1, 2, 4]
    for procs, at in table.groupby("procs"):
        (fastest,) = at.loc[at["fastest"], "framework"]
        assert fastest == "pytorch"  # the least overhead and communication
        assert at.loc[at["fastest"], "ratio"].item() == 1.0
        for row in at[~at["fastest"]].itertuples():
            truth = _true_ratio(report_synthetic, row.framework, fastest, procs)
            assert row.ratio == pytest.approx(truth, rel=0.03)
            assert row.ratio_lo < truth < row.ratio_hi
            assert row.ratio_hi - row.ratio_lo < 0.1  # 12 repetitions per ratio: narrow
            assert row.configurations == 6


def test_the_interval_narrows_with_less_noise_and_is_absent_without_repetitions(timings):
    lenet = timings[timings["network"] == "lenet"].copy()
    calm = lenet.copy()
    # The same runs with a tenth of the noise around each configuration's mean.
    keys = ["framework", "procs", "batch_size", "data_size"]
    mean = calm.groupby(keys)["samples_per_s"].transform("mean")
    calm["samples_per_s"] = mean + 0.1 * (calm["samples_per_s"] - mean)

    def width(frame):
        table = ratio_table(frame)
        return (table["ratio_hi"] - table["ratio_lo"]).dropna()

    assert (width(calm) < 0.2 * width(lenet).to_numpy()).all()
    single = ratio_table(lenet[lenet["rep"] == 0])
    assert single["ratio_lo"].isna().all() and single["ratio_hi"].isna().all()
    assert (single["ratio"] <= 1.0).all()


def test_a_scale_without_a_configuration_in_common_is_left_out(timings):
    lenet = timings[timings["network"] == "lenet"]
    apart = lenet[~((lenet["procs"] == 4) & (lenet["framework"] == "mxnet"))].copy()
    apart.loc[(apart["procs"] == 4) & (apart["framework"] == "tensorflow"), "batch_size"] = 64
    table = ratio_table(apart)
    assert 4 not in set(table["procs"])


def test_disturbed_runs_are_left_out(timings):
    slowed = timings.copy()
    hit = (slowed["framework"] == "pytorch") & (slowed["network"] == "lenet")
    hit &= (slowed["procs"] == 4) & (slowed["rep"] == 0)
    slowed.loc[hit, "samples_per_s"] /= 10.0
    slowed.loc[hit, "foreign_cpu_fraction"] = 0.5
    (clean,) = compare_frameworks(timings, {})
    (kept,) = compare_frameworks(slowed, {})
    pd.testing.assert_frame_equal(
        clean.ratios[clean.ratios["procs"] == 4].reset_index(drop=True),
        kept.ratios[kept.ratios["procs"] == 4].reset_index(drop=True),
        check_exact=False,
        rtol=0.05,
    )


def _generic(synthetic, framework: str) -> dict:
    """A generic model entry whose breakdown is the synthetic profile's own terms."""
    cost = synthetic.PROFILES[framework]
    rows = []
    for p in (1, 2, 4):
        iters = np.ceil(1024 / (p * 32))
        seconds = {
            "fixed": 0.05,
            "overhead": iters * cost.overhead,
            "compute": iters * cost.compute["lenet"] * 32**0.9,
            "allreduce_bw": iters * cost.allreduce * (p - 1) / p,
        }
        rows.append(
            {"nodes": 1, "procs": p, "batch_size": 32, "data_size": 1024, "seconds": seconds}
        )
    return {"networks": {"lenet": {"models": {"generic": {"status": "ok", "breakdown": rows}}}}}


def test_the_split_adds_up_and_follows_the_terms(timings, report_synthetic):
    lenet = timings[timings["network"] == "lenet"]
    artifacts = {f: _generic(report_synthetic, f) for f in THREE}
    split = split_table(lenet, artifacts, "lenet", 32, 1024)
    parts = split[["compute_s", "overhead_s", "communication_s", "data_wait_s"]].sum(axis=1)
    np.testing.assert_allclose(parts, split["iteration_s"], rtol=1e-9)
    at = split.set_index(["framework", "procs"])
    # mxnet's gradient exchange is three times pytorch's; tensorflow's overhead four times.
    assert at.loc[("mxnet", 4), "communication_s"] > 2.5 * at.loc[("pytorch", 4), "communication_s"]
    assert at.loc[("tensorflow", 1), "overhead_s"] > 3 * at.loc[("pytorch", 1), "overhead_s"]
    assert (at.xs(1, level="procs")["communication_s"] == 0).all()
    assert at.loc[("tensorflow", 2), "data_wait_s"] == pytest.approx(
        0.04 * at.loc[("tensorflow", 2), "iteration_s"]
    )


def test_the_sentence_says_where_each_framework_loses_its_time(timings, report_synthetic):
    artifacts = {f: _generic(report_synthetic, f) for f in THREE}
    (lenet,) = compare_frameworks(timings, artifacts)
    assert (lenet.batch_size, lenet.data_size) == (32, 1024)
    text = lenet.sentence
    assert text.startswith("At 4 workers (b=32, d=1024) pytorch is fastest")
    # pytorch's own exchange (4 ms at full scale) outweighs its overhead (1 ms).
    assert "of it communication, most beside computation)" in text
    assert "tensorflow takes" in text and "its largest loss in framework overhead" in text
    assert "mxnet takes" in text and "its largest loss in communication" in text
    (unsplit,) = compare_frameworks(timings, {})
    assert "no generic model or data wait to split it by" in unsplit.sentence


def test_the_throughput_is_median_and_range_of_the_repetitions(timings):
    (lenet,) = compare_frameworks(timings, {})
    shown = lenet.throughput.set_index(["framework", "procs"])
    runs = timings[
        (timings["network"] == "lenet")
        & (timings["batch_size"] == 32)
        & (timings["data_size"] == 1024)
        & (timings["framework"] == "mxnet")
        & (timings["procs"] == 2)
    ]["samples_per_s"]
    row = shown.loc[("mxnet", 2)]
    assert (row["median"], row["low"], row["high"]) == (
        runs.median(),
        runs.min(),
        runs.max(),
    )
    assert len(lenet.throughput) == 9


def test_the_command_output_carries_the_table(timings, report_synthetic):
    comparisons = compare_frameworks(timings, {f: _generic(report_synthetic, f) for f in THREE})
    shown = ratio_frame(comparisons[0])
    assert list(shown.columns)[:5] == [
        "nodes",
        "workers",
        "framework",
        "samples/s (geometric mean)",
        "ratio to fastest",
    ]
    text = as_text(comparisons)
    assert text.startswith("lenet: mxnet, pytorch, tensorflow\n")
    assert "95% interval" in text and "its largest loss in communication" in text
    (entry,) = json.loads(as_json(comparisons))
    assert entry["network"] == "lenet" and len(entry["ratios"]) == 9
    fastest = [r for r in entry["ratios"] if r["fastest"]]
    assert all(r["ratio"] == 1.0 and r["ratio_lo"] is None for r in fastest)


def test_a_table_before_the_split_columns_still_compares(timings):
    old = timings.drop(columns=["iter_time_median_s", "data_wait_fraction"])
    (lenet,) = compare_frameworks(old, {})
    assert len(lenet.ratios) == 9
    assert lenet.split["iteration_s"].isna().all()
    assert lenet.sentence.startswith("No median iteration time was measured")
    with pytest.raises(InputFileError, match="samples_per_s"):
        compare_frameworks(timings.drop(columns=["samples_per_s"]), {})
