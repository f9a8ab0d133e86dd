"""Does the answer hold on a GPU type never measured? (docs/hardware.md)

On Lambda's PyTorch table (12 GPU types, 10 networks, FP32 and mixed precision, 1-8 GPUs),
CSC's (V100, A100, MI250X GCDs, one ResNet-50 / language-model benchmark per row group) and
MXNet's performance FAQ (K80, M40, M60, P100, V100; three convolutional networks in FP32 on one
GPU at several batch sizes; never used to choose a model or rule), each
series (a network at a precision) is cut by GPU type: every GPU type in turn is held out, the
models across hardware are fitted and backtested on the other types
(:func:`dlperf.models.hardware_answer.backtest`) and asked for every configuration of the one
held out; on Lambda's also forward in time, the GPU types of 2022-2023 (Ada, Hopper) asked
from the older ones alone, and on MXNet's the V100 asked from the four older generations.
For the answer (each combination) and each model alone: MAPE,
coverage of the 90 % interval, its median width (hi - lo over the prediction) and the mean
interval score (Gneiting and Raftery 2007, relative to the measured time: width + 2/alpha x
the miss).
Series of the Lambda table (a network on a GPU type at a precision, all hosts) whose scaling
is implausible between worker counts are left out (``published.plausible_series``). Then the
fit time: the five models fitted and backtested on a synthetic table of 12 GPU types x 10
networks x 2 precisions x 4 worker counts. ``--timings FILE ...`` judges a user's own
external-timings files with gpu and precision columns instead: each leave one GPU type out and
the fastest GPU type asked from the others; ``--hardware FILE`` adds GPU types of a user's
catalogue file (docs/hardware.md) for them. ``--from-few N`` asks each GPU type of a series
from N of its others drawn at random (a study that measured few GPU types; N = 2 scores the
interval published for two);
``--campaign FILE`` compares another measurement campaign of Lambda's table with it at the
cells both measured, beside the answer's error there. ``--one-gpu-type`` asks each GPU type of
a series from each other one measured alone (prior_hw, anchored on it), beside the time
measured there unscaled and scaled by the matrix peak rate or the memory bandwidth.

    .venv/bin/python benchmarks/hardware_backtest.py --write docs/hardware.md
    .venv/bin/python benchmarks/hardware_backtest.py --timings mine/*.csv [--hardware my-gpus.yaml]
    .venv/bin/python benchmarks/hardware_backtest.py --from-few 2 [--timings mine/*.csv]
    .venv/bin/python benchmarks/hardware_backtest.py --campaign older.csv [--hardware extra.yaml]
    .venv/bin/python benchmarks/hardware_backtest.py --one-gpu-type [--timings mine/*.csv]
"""

from __future__ import annotations

import argparse
import functools
import itertools
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from common import add_timings_argument, report, timed, weight_grid, write_between_markers
from published import DLE_GRID, LAMBDA, MXNET_FAQ, SHARED, plausible_series, series_names

from dlperf.hardware import load, precision_name, rates
from dlperf.measurements.external import read_external
from dlperf.models import InsufficientData, make_model
from dlperf.models.generic_hw import GenericHardwareModel
from dlperf.models.hardware_answer import (
    ANSWER_MODELS,
    COMBINATIONS,
    Backtest,
    HardwareAnswer,
    answer,
    answer_from,
    backtest,
)
from dlperf.models.hardware_features import hardware_frame
from dlperf.models.prior_hw import learn_slopes, shipped_interval

MODELS = ("lattuada_hw", "powerlaw_hw", "generic_hw", "anchored_hw", "prior_hw")
# The answer's models before prior_hw replaced anchored_hw, both, and neither (docs/hardware.md).
CANDIDATES = {
    "anchored_hw for prior_hw": ("powerlaw_hw", "generic_hw", "anchored_hw"),
    "with anchored_hw": ("powerlaw_hw", "generic_hw", "prior_hw", "anchored_hw"),
    "without prior_hw": ("powerlaw_hw", "generic_hw"),
}
LEVEL = 0.9
# Lambda's GPU types of the generations released from 2022 on (Ada Lovelace, Hopper), asked
# from those released up to 2021 (Volta, Turing, Ampere): a GPU bought later asked from the
# older ones measured, the question a team that plans an upgrade asks.
NEWER = ("RTX 4090", "RTX 6000 Ada", "H100 80GB PCIe Gen5", "H100 80GB SXM5")
# The answer from one GPU type at a configuration (workers, nodes, batch) it did not measure,
# where no measured time can be scaled: a batch its memory did not fit, or one not swept.
NOT_MEASURED_THERE = "answer, at a configuration not measured on the one GPU type"
ITERATIONS = 100  # iterations per epoch the points are given (throughput -> epoch time)
# One measured configuration: the key of the hosts' floor and of the campaign comparison.
CELL = ["network", "gpu", "precision", "procs", "batch_size"]
# The columns of the published tables in ../shared/data (Lambda's, MXNet's) as points' names.
PUBLISHED_COLUMNS = {
    "model": "network",
    "gpu_type": "gpu",
    "num_nodes": "nodes",
    "num_gpus": "procs",
}


def points(raw: pd.DataFrame) -> pd.DataFrame:
    """Published rows (network, gpu, precision, procs, nodes, batch_size, throughput) as
    measured points: an epoch of ITERATIONS iterations at the printed throughput."""
    global_batch = raw["procs"] * raw["batch_size"]
    return pd.DataFrame(
        {
            "network": raw["network"],
            "gpu": raw["gpu"],
            "precision": [precision_name(p) for p in raw["precision"]],
            "nodes": raw["nodes"],
            "procs": raw["procs"],
            "batch_size": raw["batch_size"],
            "data_size": global_batch * ITERATIONS,
            "epoch_time_s": ITERATIONS * global_batch / raw["throughput"],
        }
    ).reset_index(drop=True)


def lambda_points(shared: Path = SHARED) -> pd.DataFrame:
    raw = pd.read_csv(shared / LAMBDA, comment="#")
    raw = raw[raw["throughput"] > 0].copy()
    # Plausible scaling is judged per GPU type over all its hosts (medians per worker count),
    # so a host measured at 8 GPUs only is held against the others' 1 GPU.
    raw["series"] = series_names(raw, ["model", "gpu_type", "precision"])
    raw = raw[plausible_series(raw)]
    return points(
        raw.rename(columns=PUBLISHED_COLUMNS | {"batch_size_per_gpu_derived": "batch_size"})
    )


def csc_points(shared: Path = SHARED) -> pd.DataFrame:
    raw = pd.read_csv(shared / "csc_ml_benchmarks_pytorch_scaling.csv", comment="#")
    # Its ``network`` column is the interconnect; the benchmark is what a series trains.
    raw = raw[raw["throughput"] > 0].drop(columns=["network"])
    return points(
        raw.rename(
            columns={
                "benchmark_as_printed": "network",
                "gpu_type": "gpu",
                "gpus": "procs",
                "batch_per_gpu": "batch_size",
            }
        )
    )


def mxnet_points(shared: Path = SHARED) -> pd.DataFrame:
    raw = pd.read_csv(shared / MXNET_FAQ, comment="#")
    # Two campaigns (cuDNN 5.1 and 7.0.5) both measured the K80: its hosts, as Lambda's.
    raw = raw[raw["throughput"] > 0]
    return points(raw.rename(columns=PUBLISHED_COLUMNS | {"batch_size_per_gpu": "batch_size"}))


def grid_points(shared: Path = SHARED) -> pd.DataFrame:
    """NVIDIA's DeepLearningExamples tables of GPUs x batch (V100s, A100s): a network is its
    framework, model, printed setting and model size (PyTorch Transformer-XL's tables are named
    by it), so that the series of one network on its GPU types meet."""
    raw = pd.read_csv(shared / DLE_GRID, comment="#")
    raw = raw[raw["throughput"] > 0].copy()
    size = raw["source_table"].str.extract(r"^L\d+:\s*((?:Base|Large) model)$")[0].fillna("")
    setting = raw["extra_config"].fillna("")
    name = raw["framework"] + ": " + raw["model"] + " " + setting + " " + size
    raw["model"] = name.str.split().str.join(" ")
    return points(raw.rename(columns=PUBLISHED_COLUMNS | {"batch_size_per_gpu": "batch_size"}))


def timings_points(path: Path) -> pd.DataFrame:
    """A user's external-timings file (docs/external-timings.md) with ``gpu`` and ``precision``
    columns as points: each framework's network is one network here."""
    found = read_external(path)
    found["network"] = found["framework"] + ": " + found["network"]
    return found[
        ["network", "gpu", "precision", "nodes", "procs", "batch_size", "data_size"]
    ].assign(epoch_time_s=found["epoch_time_s"])


def prior_slopes(
    prior_from: pd.DataFrame | None, unseen: set[str], hardware: Path | None = None
) -> dict | None:
    """prior_hw's slopes learned on ``prior_from`` (Lambda's points) without the GPU types
    ``unseen`` (catalogue names), so that no GPU type asked was seen by the prior either; None
    (the shipped slopes) without a table."""
    if prior_from is None:
        return None
    return learn_slopes(prior_from[~catalogue_names(prior_from["gpu"], hardware).isin(unseen)])


def catalogue_names(gpus: pd.Series, hardware: Path | None = None) -> pd.Series:
    """Each row's GPU by its catalogue name (each spelling matched once), the shipped
    catalogue's with ``hardware``'s GPU types (a user's catalogue file)."""
    catalogue = load(hardware)
    return gpus.map({g: catalogue.match(g).name for g in set(gpus)})


def held_out(
    train: pd.DataFrame,
    test: pd.DataFrame,
    slopes: dict | None = None,
    hardware: Path | None = None,
) -> pd.DataFrame:
    """Every combination's and model's prediction and interval at the rows of ``test``, from
    a backtest on the GPU types of ``train`` (prior_hw with ``slopes``; None: the shipped),
    the GPU types' figures from the shipped catalogue and ``hardware`` (a user's file)."""
    user = {} if hardware is None else {"hardware": str(hardware)}
    settings = {"prior_hw": {"slopes": slopes}}
    models = [make_model(m, settings.get(m, {}) | user) for m in MODELS]
    tested = backtest(models, train, user.get("hardware"))
    combined = [m for m in ANSWER_MODELS if m in tested.fitted]
    variants = [(f"answer ({c})", combined, c, "symmetric") for c in COMBINATIONS]
    if "lattuada_hw" in tested.fitted:
        with_lattuada = [*combined, "lattuada_hw"]
        variants += [
            ("answer (weighted, with lattuada_hw)", with_lattuada, "weighted", "symmetric")
        ]
    for label, names in CANDIDATES.items():
        if all(n in tested.fitted for n in names):
            variants += [(f"answer (weighted, {label})", list(names), "weighted", "symmetric")]
    variants += [("answer (weighted, asymmetric)", combined, "weighted", "asymmetric")]
    variants += [(m, [m], "weighted", "symmetric") for m in tested.fitted]
    rows = []
    for label, names, combine, shape in variants:
        alone = Backtest(
            tested.frame,
            {n: tested.fitted[n] for n in names},
            None if tested.errors is None else tested.errors[names],
        )
        found = answer_from(alone, test, LEVEL, combine, user.get("hardware"), shape)
        lo, hi = with_shipped_interval(found, names, train["gpu"].nunique())
        rows.append(prediction_rows(label, test, found.predicted, lo, hi))
    return pd.concat(rows, ignore_index=True)


def with_shipped_interval(found: HardwareAnswer, names: list[str], gpu_count: int) -> tuple:
    """The answer's interval, or where the library gives none only because prior_hw's slopes
    were learned here (the table behind the shipped radius never scored them), the one shipped
    for that answer from ``gpu_count`` GPU types (:func:`shipped_interval`), not widened beyond
    its reach; (None, None) where none is shipped either."""
    if found.lo is not None:
        return found.lo, found.hi
    shipped = shipped_interval(names, gpu_count, LEVEL)
    if shipped is None:
        return None, None
    spread = np.exp(shipped[0])
    return found.predicted / spread, found.predicted * spread


def prediction_rows(label: str, test: pd.DataFrame, predicted, lo, hi) -> pd.DataFrame:
    """One row per row of ``test``: the model or answer ``label``, the row's GPU type and
    configuration, the time measured, the prediction and its interval (NaN where None)."""
    return pd.DataFrame(
        {
            "model": label,
            "gpu": test["gpu"].to_numpy(),
            "procs": test["procs"].to_numpy(int),
            "batch_size": test["batch_size"].to_numpy(int),
            "measured": test["epoch_time_s"].to_numpy(float),
            "predicted": np.asarray(predicted, float),
            "lo": np.nan if lo is None else lo,
            "hi": np.nan if hi is None else hi,
        }
    )


def leave_one_out(series: pd.DataFrame):
    """(train, test): each GPU type of a series of three or more held out from the others."""
    if series["gpu"].nunique() < 3:
        return
    for gpu in sorted(series["gpu"].unique()):
        yield series[series["gpu"] != gpu], series[series["gpu"] == gpu]


def forward(series: pd.DataFrame, newer: tuple[str, ...] = NEWER):
    """(train, test): each GPU type of the ``newer`` generations asked from the series' older
    ones alone (three or more)."""
    old = series[~series["gpu"].isin(newer)]
    if old["gpu"].nunique() < 3:
        return
    for gpu in sorted(set(series["gpu"]) & set(newer)):
        yield old, series[series["gpu"] == gpu]


def fastest(series: pd.DataFrame, hardware: Path | None = None):
    """(train, test): the series' GPU type of the highest matrix peak rate at its precision
    asked from the others (three or more): an upgrade asked from what was measured, for tables
    without release dates (figures from the shipped catalogue and ``hardware``)."""
    catalogue = load(hardware)
    precision = series["precision"].iloc[0]
    gpus = sorted(series["gpu"].unique())
    if len(gpus) < 4:
        return
    top = max(gpus, key=lambda gpu: rates(catalogue.match(gpu), precision)[0])
    yield series[series["gpu"] != top], series[series["gpu"] == top]


def from_few(series: pd.DataFrame, count: int, seed: int = 0):
    """(train, test): each GPU type of a series asked from ``count`` of its others drawn at
    random (one draw per seed): a study that measured few GPU types."""
    gpus = sorted(series["gpu"].unique())
    if len(gpus) <= count:
        return
    rng = np.random.default_rng(seed)
    for gpu in gpus:
        drawn = rng.choice([g for g in gpus if g != gpu], size=count, replace=False)
        yield series[series["gpu"].isin(drawn)], series[series["gpu"] == gpu]


def beyond_workers(series: pd.DataFrame, fewest: int):
    """(train, test): each GPU type of a series asked at more than ``fewest`` workers from the
    other GPU types' timings at ``fewest`` or fewer: what ``plan --gpus`` asks where the fewest
    GPUs that meet a deadline lie beyond the workers measured."""
    for gpu in sorted(series["gpu"].unique()):
        train = series[(series["gpu"] != gpu) & (series["procs"] <= fewest)]
        test = series[(series["gpu"] == gpu) & (series["procs"] > fewest)]
        if not train.empty and not test.empty:
            yield train, test


def from_each_one(series: pd.DataFrame):
    """(train, test): each GPU type of a series asked from each other one measured alone (a
    study of one GPU type: "we measured on V100s; how long on an H100?")."""
    gpus = sorted(series["gpu"].unique())
    for asked, measured in itertools.permutations(gpus, 2):
        yield series[series["gpu"] == measured], series[series["gpu"] == asked]


def one_gpu_type_rows(
    train: pd.DataFrame,
    test: pd.DataFrame,
    slopes: dict | None = None,
    hardware: Path | None = None,
) -> pd.DataFrame:
    """The answer from the one GPU type of ``train`` at the rows of ``test`` (prior_hw with
    ``slopes``; None: the shipped), its interval the shipped one whatever the slopes (with
    slopes learned here the library gives none: the table behind the shipped radius never
    scored them). At the configurations (workers, nodes, batch) measured on ``train``, beside
    three scalings of the time measured there: none, by the matrix peak rate at the precision,
    by the memory bandwidth; at the others, alone (:data:`NOT_MEASURED_THERE`)."""
    key = ["procs", "nodes", "batch_size"]
    measured_at = train.groupby(key, as_index=False)[["epoch_time_s", "data_size"]].mean()
    test = test.merge(measured_at, on=key, how="left", suffixes=("", "_measured"))
    user = {} if hardware is None else {"hardware": str(hardware)}
    model = make_model("prior_hw", {"slopes": slopes} | user)
    found = answer([model], train, test, LEVEL, hardware=user.get("hardware"))
    lo, hi = with_shipped_interval(found, [model.name], 1)
    seen = test["epoch_time_s_measured"].notna().to_numpy()
    same = test["epoch_time_s_measured"] * test["data_size"] / test["data_size_measured"]
    ratio = (
        hardware_frame(train.iloc[:1], user.get("hardware")).iloc[0]
        / hardware_frame(test.iloc[:1], user.get("hardware")).iloc[0]
    )
    predictions = {
        "answer (prior_hw from the one GPU type)": (found.predicted, lo, hi),
        "the time measured, unscaled": (same, None, None),
        "scaled by the matrix peak rate": (same * ratio["matrix_tflops"], None, None),
        "scaled by the memory bandwidth": (same * ratio["memory_tbs"], None, None),
    }
    rows = [
        prediction_rows(label, test[seen], *(at_rows(g, seen) for g in given))
        for label, given in predictions.items()
    ]
    rows.append(
        prediction_rows(
            NOT_MEASURED_THERE, test[~seen], *(at_rows(g, ~seen) for g in (found.predicted, lo, hi))
        )
    )
    return pd.concat(rows, ignore_index=True).assign(measured_on=train["gpu"].iloc[0])


def at_rows(values, rows: np.ndarray):
    """``values`` (an array, a Series or None) at the rows selected by ``rows``."""
    return None if values is None else np.asarray(values, float)[rows]


def one_gpu_type(
    frame: pd.DataFrame, prior_from: pd.DataFrame | None = None, hardware: Path | None = None
) -> pd.DataFrame:
    """:func:`one_gpu_type_rows` of every series of ``frame`` cut by :func:`from_each_one`,
    prior_hw's slopes learned on ``prior_from`` without the GPU type asked
    (:func:`prior_slopes`)."""
    found, learned = [], {}
    for (network, precision), series in frame.groupby(["network", "precision"], sort=True):
        for train, test in from_each_one(series):
            hidden = frozenset(catalogue_names(test["gpu"].drop_duplicates(), hardware))
            if hidden not in learned:
                learned[hidden] = prior_slopes(prior_from, set(hidden), hardware)
            rows = one_gpu_type_rows(train, test, learned[hidden], hardware)
            found.append(rows.assign(network=network, precision=precision))
    return unscalable_last(pd.concat(found, ignore_index=True)) if found else pd.DataFrame()


def unscalable_last(found: pd.DataFrame) -> pd.DataFrame:
    """``found``'s rows with those of :data:`NOT_MEASURED_THERE` last, whichever series or
    file came first, so that the summary's rows keep one order."""
    last = np.argsort((found["model"] == NOT_MEASURED_THERE).to_numpy(), kind="stable")
    return found.iloc[last].reset_index(drop=True)


def run(
    frame: pd.DataFrame,
    cut=leave_one_out,
    prior_from: pd.DataFrame | None = None,
    unseen: tuple[str, ...] = (),
    hardware: Path | None = None,
    skip_unfitted: bool = False,
) -> pd.DataFrame:
    """Every series of ``frame`` cut by ``cut`` (:func:`leave_one_out`, :func:`forward`,
    :func:`fastest`, :func:`from_few`); empty where no series can be cut so. prior_hw's slopes
    are learned on ``prior_from`` without the GPU types asked and ``unseen``
    (:func:`prior_slopes`). GPU types beyond the shipped catalogue come from ``hardware`` (a
    user's catalogue file). With ``skip_unfitted``, a cut whose training GPU types no model can
    be fitted on (too few points) is left out and counted in ``attrs["skipped"]``."""
    found, learned, skipped = [], {}, 0
    for (network, precision), series in frame.groupby(["network", "precision"], sort=True):
        for train, test in cut(series):
            asked = pd.concat([test["gpu"], pd.Series(unseen, dtype=object)])
            hidden = frozenset(catalogue_names(asked, hardware))
            if hidden not in learned:
                learned[hidden] = prior_slopes(prior_from, set(hidden), hardware)
            try:
                rows = held_out(train, test, learned[hidden], hardware)
            except InsufficientData:
                if not skip_unfitted:
                    raise
                skipped += 1
                continue
            found.append(rows.assign(network=network, precision=precision))
    result = pd.concat(found, ignore_index=True) if found else pd.DataFrame()
    result.attrs["skipped"] = skipped
    return result


def mape(log_errors) -> float:
    """MAPE % of predictions whose log errors (log predicted / measured) are given."""
    return float(np.abs(np.expm1(log_errors)).mean() * 100)


def breakdown(found: pd.DataFrame, model: str = "answer (weighted)") -> pd.DataFrame:
    """Where ``model``'s MAPE comes from: per network, without each network, per GPU type held
    out, per worker count, at batches another GPU type measured or not (:func:`batch_seen`), and
    with the mean log error of each group removed in hindsight (what
    a correction per GPU type, per series or per GPU type within a series could at best
    recover), or with each held-out GPU type's own scaling over workers known."""
    rows = found[found["model"] == model]
    log_error = np.log(rows["predicted"] / rows["measured"])

    out = [{"what": "all points", "points": len(rows), "MAPE %": mape(log_error)}]
    for network in sorted(rows["network"].unique()):
        at = (rows["network"] == network).to_numpy()
        out.append(
            {"what": f"{network} alone", "points": int(at.sum()), "MAPE %": mape(log_error[at])}
        )
        out.append(
            {
                "what": f"without {network}",
                "points": int((~at).sum()),
                "MAPE %": mape(log_error[~at]),
            }
        )
    for gpu, errors in log_error.groupby(rows["gpu"], sort=True):
        out.append({"what": f"{gpu} held out", "points": len(errors), "MAPE %": mape(errors)})
    for procs, errors in log_error.groupby(rows["procs"], sort=True):
        what = f"at {procs} worker{'s' if procs != 1 else ''}"
        out.append({"what": what, "points": len(errors), "MAPE %": mape(errors)})
    seen = batch_seen(rows)
    for at, which in ((seen, "another"), (~seen, "no other")):
        out.append(
            {
                "what": f"at a batch {which} GPU type of the series measured at those workers",
                "points": int(at.sum()),
                "MAPE %": mape(log_error[at]),
            }
        )
    out.append(
        {
            "what": "each GPU type's scaling over workers known: its error at its fewest "
            "workers at every count (hindsight)",
            "points": len(rows),
            "MAPE %": mape(scaling_known(rows, log_error)),
        }
    )
    for keys in (
        ["gpu"],
        ["gpu", "precision"],
        ["network", "precision"],
        ["gpu", "network", "precision"],
    ):
        removed = log_error - log_error.groupby([rows[k] for k in keys]).transform("mean")
        what = f"mean log error per {' x '.join(keys)} removed (hindsight)"
        out.append({"what": what, "points": len(rows), "MAPE %": mape(removed)})
    out.append(
        {
            "what": "one number per configuration, best in hindsight: the hosts' own "
            "disagreement, which no answer goes below",
            "points": len(rows),
            "MAPE %": one_number_floor(rows),
        }
    )
    if set(ANSWER_MODELS) <= set(found["model"]):
        for keys in ([], ["network"], ["network", "precision"]):
            per = f"one per {' x '.join(keys)}" if keys else "one set for all points"
            what = f"the answer's models, weights in hindsight: {per}"
            out.append(
                {"what": what, "points": len(rows), "MAPE %": hindsight_weighting(found, keys)}
            )
    return pd.DataFrame(out)


def batch_seen(rows: pd.DataFrame) -> np.ndarray:
    """Per held-out row, whether another GPU type of its series (network and precision) was
    measured at its workers and batch, read from the rows of a leave-one-out cut, where every
    GPU type of a series is asked. Where none was, how the time follows the batch is not
    measured on any GPU type: in Lambda's table no GPU type measured two batches of one series
    at one worker count (each card's batch is chosen by its memory)."""
    keys = [rows[k] for k in ("network", "precision", "procs", "batch_size")]
    return (rows["gpu"].groupby(keys).transform("nunique") > 1).to_numpy()


def scaling_known(rows: pd.DataFrame, log_error: pd.Series) -> pd.Series:
    """``log_error`` with each series' held-out GPU type erring at every worker count as it
    does (mean over hosts) at its fewest: what is left when the scaling over workers of a GPU
    type not measured were known, and only its level had to be predicted."""
    series = [rows["network"], rows["precision"], rows["gpu"]]
    fewest = rows["procs"] == rows["procs"].groupby(series).transform("min")
    level = log_error.where(fewest).groupby(series).transform("mean")
    return log_error.where(fewest, level)


def one_number_floor(rows: pd.DataFrame) -> float:
    """The least MAPE % that one predicted number per configuration (``CELL``) can reach on
    ``rows``' measured times: where hosts measured one configuration apart, no answer meets
    them all. Per configuration the best number is the median of the times weighted by 1/time,
    which minimises the sum of |c/t - 1|."""
    total = 0.0
    for _, measured in rows.groupby(CELL)["measured"]:
        times = np.sort(measured.to_numpy(float))
        cumulative = np.cumsum(1 / times)
        best = times[np.searchsorted(cumulative, cumulative[-1] / 2)]
        total += np.abs(best / times - 1).sum()
    return float(total / len(rows) * 100)


def hindsight_weighting(found: pd.DataFrame, keys: list[str], step: float = 0.1) -> float:
    """MAPE of the log-weighted mean of the answer's models with weights (a grid of ``step``)
    chosen in hindsight on the held-out points themselves: one set for every point, or one
    per group of ``keys``. The most a better weighting of today's models could recover."""
    per_model = [found[found["model"] == m].reset_index(drop=True) for m in ANSWER_MODELS]
    first = per_model[0]
    if any(not f["measured"].equals(first["measured"]) for f in per_model):
        raise ValueError("the models' held-out rows are not the same points in the same order")
    measured = first["measured"].to_numpy(float)
    logs = np.log(np.column_stack([f["predicted"].to_numpy(float) for f in per_model]))
    weights = np.array(weight_grid(len(per_model), step)).T
    errors = np.abs(np.exp(logs @ weights) / measured[:, None] - 1)  # points x weightings
    groups = first.groupby(keys, sort=False).ngroup().to_numpy() if keys else np.zeros(len(first))
    total = sum(errors[groups == g].sum(axis=0).min() for g in np.unique(groups))
    return float(total / len(first) * 100)


def campaign_points(path: Path) -> pd.DataFrame:
    """Another measurement campaign of Lambda's PyTorch table (an external-timings file of the
    same networks, docs/external-timings.md) as points: its PyTorch rows, networks by name."""
    found = read_external(path)
    found = found[found["framework"] == "pytorch"]
    if found.empty:
        raise SystemExit(f"{path} has no pytorch rows; give a campaign of Lambda's PyTorch table")
    return found[
        ["network", "gpu", "precision", "nodes", "procs", "batch_size", "data_size"]
    ].assign(epoch_time_s=found["epoch_time_s"])


def campaigns(
    reference: pd.DataFrame,
    other: pd.DataFrame,
    answer: pd.DataFrame | None = None,
    hardware: Path | None = None,
) -> pd.DataFrame:
    """How far two measurement campaigns of the same GPU types lie apart, at the cells both
    measured (network, GPU type by catalogue name, precision, workers, batch; the mean log
    time per sample over each cell's hosts): the MAPE of ``other``'s time taken as the
    prediction of ``reference``'s, and what is left with the mean log difference removed
    overall, per GPU type, per series and per both (least squares) in hindsight. With
    ``answer`` (``run``'s held-out rows of one model on ``reference``), that model's MAPE at
    the same cells, where it never saw the GPU type: the floor a prediction across hardware is
    judged against is the one the GPU type's own measurement in another campaign reaches."""

    def cells(frame: pd.DataFrame) -> pd.Series:
        keyed = frame.assign(gpu=catalogue_names(frame["gpu"], hardware))
        per_sample = np.log(keyed["epoch_time_s"] / keyed["data_size"])
        return per_sample.groupby([keyed[k] for k in CELL]).mean()

    both = pd.concat([cells(reference).rename("ref"), cells(other).rename("other")], axis=1)
    both = both.dropna().reset_index()
    if both.empty:
        raise SystemExit(
            "the two tables share no cell (network, GPU type, precision, workers, batch)"
        )
    difference = both["other"] - both["ref"]

    series = both["network"] + " | " + both["precision"]
    effects = pd.get_dummies(pd.DataFrame({"gpu": both["gpu"], "series": series}), dtype=float)
    fitted = effects.to_numpy() @ np.linalg.lstsq(effects.to_numpy(), difference, rcond=None)[0]
    found = [
        ("the other campaign's time as the prediction", difference),
        ("its mean log difference removed (hindsight)", difference - difference.mean()),
        (
            "... per GPU type removed",
            difference - difference.groupby(both["gpu"]).transform("mean"),
        ),
        ("... per series removed", difference - difference.groupby(series).transform("mean")),
        ("... per GPU type and per series removed (least squares)", difference - fitted),
    ]
    if answer is not None:
        # The answer's log error per cell (mean over hosts), at the cells of both campaigns.
        keyed = answer.assign(
            gpu=catalogue_names(answer["gpu"], hardware),
            log_error=np.log(answer["predicted"] / answer["measured"]),
        )
        per_cell = keyed.groupby(CELL)["log_error"].mean()
        at = both.set_index(CELL).index
        found.append(("the answer, GPU type not measured (leave one out)", per_cell.reindex(at)))
    gpus, networks = both["gpu"].nunique(), both["network"].nunique()
    return pd.DataFrame(
        [
            {
                "what": what,
                "cells": len(both),
                "GPU types": gpus,
                "networks": networks,
                "MAPE %": mape(np.asarray(errors, float)),
            }
            for what, errors in found
        ]
    )


def summarise(found: pd.DataFrame) -> pd.DataFrame:
    alpha = 1 - LEVEL
    out = []
    for name, rows in found.groupby("model", sort=False):
        y, lo, hi = rows["measured"], rows["lo"], rows["hi"]
        has = lo.notna()
        miss = (lo - y).clip(lower=0) + (y - hi).clip(lower=0)
        score = ((hi - lo) + 2 / alpha * miss) / y * 100
        out.append(
            {
                "model": name,
                "points": len(rows),
                "MAPE %": ((rows["predicted"] - y).abs() / y).mean() * 100,
                "median APE %": ((rows["predicted"] - y).abs() / y).median() * 100,
                "90 % coverage %": ((lo <= y) & (y <= hi))[has].mean() * 100
                if has.any()
                else np.nan,
                "median width %": ((hi - lo) / rows["predicted"])[has].median() * 100
                if has.any()
                else np.nan,
                "interval score %": score[has].mean() if has.any() else np.nan,
            }
        )
    return pd.DataFrame(out)


def against_shipped(
    per_table: dict[str, pd.DataFrame], shipped: str = "answer (weighted)"
) -> pd.DataFrame:
    """Per model and answer variant of ``per_table`` (each table's :func:`summarise`): on how
    many tables its MAPE and its interval score are lower and higher than the shipped answer's
    (the score only where both have intervals)."""
    tables = {table: summary.set_index("model") for table, summary in per_table.items()}
    models = dict.fromkeys(m for summary in tables.values() for m in summary.index)
    out = []
    for model in models:
        if model == shipped:
            continue
        counts = {}
        for column, name in (("MAPE %", "MAPE"), ("interval score %", "score")):
            change = pd.Series(
                {t: s.loc[model, column] - s.loc[shipped, column] for t, s in tables.items()}
            ).dropna()
            lower, higher = int((change < -1e-9).sum()), int((change > 1e-9).sum())
            counts[f"tables {name} lower / higher"] = f"{lower} / {higher} of {len(change)}"
        out.append({"model": model, **counts})
    return pd.DataFrame(out)


def synthetic_table(seed: int = 0) -> pd.DataFrame:
    """12 GPU types x 10 networks x 2 precisions x 4 worker counts from a generic_hw law."""
    catalogue = load()
    gpus = [
        "V100-SXM2-16GB", "A10", "A100-PCIe-40GB", "A100-SXM4-80GB", "H100-PCIe-80GB",
        "H100-SXM5-80GB", "RTX 3090", "RTX 4090", "RTX A6000", "RTX 6000 Ada",
        "Quadro RTX 8000", "L40S",
    ]  # fmt: skip
    rng = np.random.default_rng(seed)
    rows = []
    for net, precision, gpu, p in itertools.product(
        range(10), ("fp32", "amp_fp16"), gpus, (1, 2, 4, 8)
    ):
        rows.append(
            {
                "network": f"net{net}",
                "gpu": catalogue.match(gpu).name,
                "precision": precision,
                "nodes": 1,
                "procs": p,
                "batch_size": 64,
                "data_size": 64 * p * ITERATIONS,
            }
        )
    frame = pd.DataFrame(rows)
    law = GenericHardwareModel()
    law.constants_ = {"fixed": 0.01, "matrix": 0.02, "vector": 0.004, "memory": 0.001}
    law.constants_ |= {"ring": 0.5, "latency": 0.001}
    law.power_ = 1.0
    frame["epoch_time_s"] = law.predict(frame) * rng.lognormal(0, 0.03, len(frame))
    return frame


def fit_time() -> float:
    """CPU seconds to fit and backtest the models on every series of the synthetic table."""
    table = synthetic_table()
    models = [make_model(m) for m in MODELS]

    def fit_all() -> None:
        for _, series in table.groupby(["network", "precision"]):
            backtest(models, series)

    timing = timed(fit_all)
    report("fit + backtest, 12 GPUs x 10 nets x 2 prec x 4 p", timing.cpu_s, "s", 60, timing.wall_s)
    return timing.cpu_s


def markdown(summaries: dict[str, pd.DataFrame]) -> str:
    blocks = []
    for name, table in summaries.items():
        body = table.astype(object).where(table.notna(), None)
        body = body.to_markdown(index=False, floatfmt=".1f", missingval="-")
        blocks.append(f"**{name}**\n\n{body}")
    return "\n\n".join(blocks)


def asked_tables(args: argparse.Namespace, lambda_label: str) -> dict[str, pd.DataFrame] | None:
    """The tables a cut of ``--one-gpu-type`` or ``--from-few`` is judged on: each ``--timings``
    file, else Lambda's (named after ``lambda_label``), CSC's and MXNet's; None, said, where
    ../shared is not present to read them from."""
    if args.timings:
        return {path.stem: timings_points(path) for path in args.timings}
    if not args.shared.exists():
        print(f"{args.shared} is not present; nothing to measure", file=sys.stderr)
        return None
    return {
        f"Lambda ({lambda_label}; its slopes without the GPU type asked)": lambda_points(
            args.shared
        ),
        "CSC (V100, A100, MI250X GCD)": csc_points(args.shared),
        "MXNet's FAQ (K80, M40, M60, P100, V100)": mxnet_points(args.shared),
        "NVIDIA's GPUs x batch tables (V100s, A100s)": grid_points(args.shared),
    }


def asked_markdown(args: argparse.Namespace, found: dict[str, pd.DataFrame], how: str) -> str:
    """The summary of each table's rows ``found`` asked so (``how``), and with ``--timings``
    of every file together."""
    found = {name: rows for name, rows in found.items() if not rows.empty}
    if args.timings and found:
        found["every file"] = unscalable_last(pd.concat(found.values(), ignore_index=True))
    return markdown({f"{name}, {how}": summarise(rows) for name, rows in found.items()})


def one_gpu_type_tables(args: argparse.Namespace) -> int:
    """``--one-gpu-type``: :func:`one_gpu_type` on the published tables, or per ``--timings``
    file and over them all; prior_hw's slopes learned on Lambda's table without the GPU type
    asked where ../shared is present."""
    tables = asked_tables(args, "the table the prior was learned on")
    if tables is None:
        return 0
    prior_from = lambda_points(args.shared) if args.shared.exists() else None
    found = {name: one_gpu_type(frame, prior_from, args.hardware)
             for name, frame in tables.items()}  # fmt: skip
    text = asked_markdown(args, found, "each GPU type asked from each other one")
    print(text or "no series of two or more GPU types to cut")
    if args.write and not args.timings:
        command = "python benchmarks/hardware_backtest.py --one-gpu-type --write docs/hardware.md"
        write_between_markers(args.write, "hardware-one", f"Measured with `{command}`.\n\n{text}")
    return 0


def cut_tables(args: argparse.Namespace, cut, how: str, nothing: str) -> int:
    """Each series of the published tables, or of each ``--timings`` file and over them all,
    cut by ``cut`` (asked so: ``how``; ``nothing`` where no series can be); prior_hw's slopes
    learned on Lambda's table without the GPU type asked where ../shared is present."""
    tables = asked_tables(args, "the table the prior and the interval from two were learned on")
    if tables is None:
        return 0
    prior_from = lambda_points(args.shared) if args.shared.exists() else None
    found = {
        name: run(frame, cut, prior_from=prior_from, hardware=args.hardware, skip_unfitted=True)
        for name, frame in tables.items()
    }
    print(asked_markdown(args, found, how) or nothing)
    skipped = sum(rows.attrs["skipped"] for rows in found.values())
    print(f"\n{skipped} GPU types of a series not asked: no model could be fitted")
    return 0


def from_few_tables(args: argparse.Namespace) -> int:
    """``--from-few N``: each GPU type of a series asked from N of its others drawn at random
    (:func:`from_few`)."""
    count = args.from_few
    cut = functools.partial(from_few, count=count)
    how = f"each GPU type asked from {count} others"
    return cut_tables(args, cut, how, f"no series of more than {count} GPU types to cut")


def beyond_workers_tables(args: argparse.Namespace) -> int:
    """``--beyond-workers P``: each GPU type of a series asked above P workers from the others'
    timings at P or fewer (:func:`beyond_workers`)."""
    fewest = args.beyond_workers
    cut = functools.partial(beyond_workers, fewest=fewest)
    how = f"each GPU type asked above {fewest} workers from the others at {fewest} or fewer"
    return cut_tables(args, cut, how, f"no series measured above {fewest} workers to cut")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("--write", type=Path, help="write the tables into this Markdown file")
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="only where the answer's Lambda MAPE comes from: per network, GPU type held out "
        "and worker count, and what corrections in hindsight would leave",
    )
    parser.add_argument(
        "--campaign",
        type=Path,
        help="only how far another measurement campaign of Lambda's table (an external-timings "
        "file) lies from it at the cells both measured, against the answer there",
    )
    parser.add_argument(
        "--from-few",
        type=int,
        metavar="N",
        help="only each GPU type asked from N of its others drawn at random (a study that "
        "measured few GPU types), on Lambda's, CSC's and MXNet's tables or the --timings files",
    )
    parser.add_argument(
        "--beyond-workers",
        type=int,
        metavar="P",
        help="only each GPU type asked above P workers from the others' timings at P or fewer "
        "(the fewest GPUs plan --gpus finds beyond those measured), on Lambda's and CSC's "
        "tables or the --timings files",
    )
    parser.add_argument(
        "--one-gpu-type",
        action="store_true",
        help="only the answer from one GPU type measured: each GPU type of a series asked from "
        "each other one alone, beside three scalings of the time measured (Lambda's, CSC's and "
        "MXNet's tables, or the --timings files); with --write, into its own markers",
    )
    add_timings_argument(
        parser,
        "judge instead on these external-timings files with gpu and precision columns "
        "(docs/external-timings.md), each cut leave one GPU type out and fastest from the rest",
    )
    parser.add_argument(
        "--hardware",
        type=Path,
        help="with --timings: a catalogue file of your own GPU types (docs/hardware.md)",
    )
    args = parser.parse_args(argv)
    if args.hardware and not (args.timings or args.campaign):
        parser.error(
            "--hardware names GPU types of --timings or --campaign files; give those files too"
        )
    if args.one_gpu_type:
        return one_gpu_type_tables(args)
    if args.from_few:
        return from_few_tables(args)
    if args.beyond_workers:
        return beyond_workers_tables(args)
    if args.timings:
        # prior_hw's slopes learned on Lambda's table without the GPU types asked, where
        # ../shared is present (else the shipped ones, which saw every GPU type of Lambda's).
        prior_from = lambda_points(args.shared) if args.shared.exists() else None
        summaries, found_per_cut, per_file = {}, {}, {}
        for path in args.timings:
            frame = timings_points(path)
            cuts = (
                ("leave one GPU type out", leave_one_out),
                ("fastest", functools.partial(fastest, hardware=args.hardware)),
            )
            for label, cut in cuts:
                found = run(frame, cut, prior_from=prior_from, hardware=args.hardware)
                if not found.empty:
                    summary = summarise(found)
                    summaries[f"{path.stem}, {label}"] = summary
                    found_per_cut.setdefault(label, []).append(found)
                    per_file.setdefault(label, {})[path.stem] = summary
        for label, found in found_per_cut.items():
            summaries[f"every file, {label}"] = summarise(pd.concat(found, ignore_index=True))
            summaries[f"every file, {label}: against the answer as shipped"] = against_shipped(
                per_file[label]
            )
        print(markdown(summaries) or "no series of three or more GPU types to cut")
        return 0
    if not args.shared.exists():
        print(f"{args.shared} is not present; nothing to measure", file=sys.stderr)
        return 0
    if args.campaign:
        lambda_table = lambda_points(args.shared)
        found = run(lambda_table, prior_from=lambda_table)
        answer = found[found["model"] == "answer (weighted)"]
        other = campaign_points(args.campaign)
        table = campaigns(lambda_table, other, answer, args.hardware)
        print(table.to_markdown(index=False, floatfmt=".1f"))
        return 0
    if args.breakdown:
        lambda_table = lambda_points(args.shared)
        found = run(lambda_table, prior_from=lambda_table)
        print(breakdown(found).to_markdown(index=False, floatfmt=".1f"))
        return 0
    lambda_table = lambda_points(args.shared)
    summaries = {
        "Lambda, leave one GPU type out (12 types, per network and precision)": summarise(
            run(lambda_table, prior_from=lambda_table)
        ),
        "Lambda, the 2022-2023 GPU types (Ada, Hopper) asked from the 2017-2021 ones": summarise(
            run(lambda_table, forward, prior_from=lambda_table, unseen=NEWER)
        ),
        "CSC, leave one GPU type out (V100, A100, MI250X GCD)": summarise(
            run(csc_points(args.shared), prior_from=lambda_table)
        ),
    }
    mxnet_table = mxnet_points(args.shared)
    summaries |= {
        "MXNet's FAQ, leave one GPU type out (K80, M40, M60, P100, V100)": summarise(
            run(mxnet_table, prior_from=lambda_table)
        ),
        "MXNet's FAQ, the V100 asked from the K80, M40, M60 and P100": summarise(
            run(mxnet_table, fastest, prior_from=lambda_table)
        ),
    }
    text = markdown(summaries)
    print(text)
    seconds = fit_time()
    if args.write:
        command = "python benchmarks/hardware_backtest.py --write docs/hardware.md"
        body = f"Measured with `{command}`.\n\n{text}\n\nFit and backtest of the five models on "
        body += f"12 GPU types x 10 networks x 2 precisions x 4 worker counts: {seconds:.1f} s CPU."
        write_between_markers(args.write, "hardware", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
