"""Speed-up and efficiency from comparable work (samples per second), so brought-in timings
without data_size get a true Summary; implausible speed-ups are warned about."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from dlperf import config as cfg
from dlperf import stages
from dlperf.measurements import tables
from dlperf.measurements.external import read_external
from dlperf.report.scaling import implausible, largest_scale, measured_speedup
from dlperf.report.study import ReportSources
from dlperf.report.summary import scaling_line

SSD300 = Path(__file__).resolve().parents[3] / ".." / "shared" / "data"
SSD300 = SSD300 / "nvidia_dle_pytorch_ssd300_benchmark_baselines.csv"
# img/s of a detector on 1, 4 and 8 GPUs per per-GPU batch size, shaped like NVIDIA's SSD300
# mixed-precision baselines: at 8 GPUs, batch 32 gives 454.3 / 185.7 = 2.45x.
SYNTHETIC = {
    2: (40.7, 40.8, 61.3),
    8: (121.4, 142.6, 231.7),
    16: (159.6, 256.1, 430.5),
    32: (185.7, 300.9, 454.3),
}


def synthetic_csv(path: Path) -> Path:
    rows = [
        {
            "framework": "pytorch",
            "network": "ssd300",
            "procs": p,
            "batch_size": b,
            "samples_per_s": v,
        }
        for b, values in SYNTHETIC.items()
        for p, v in zip((1, 4, 8), values, strict=True)
    ]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def shared_table_csv(path: Path) -> Path:
    """The SSD300 table as a user brings it in: 18.08 mixed precision, GPUs as workers, img/s
    as samples per second, no data size (the `# source` line dropped)."""
    table = pd.read_csv(SSD300, comment=None, skiprows=1)
    rows = table[
        table["container_or_version"].str.startswith("pytorch 18.08")
        & (table["precision"] == "AMP")
    ]
    pd.DataFrame(
        {
            "framework": "pytorch",
            "network": "ssd300",
            "nodes": rows["num_nodes"],
            "procs": rows["num_gpus"],
            "batch_size": rows["batch_size_per_gpu"],
            "samples_per_s": rows["throughput"],
        }
    ).to_csv(path, index=False)
    return path


def test_timings_without_data_size_scale_by_their_throughput(tmp_path):
    points = read_external(synthetic_csv(tmp_path / "ssd.csv"))
    assert points.groupby("procs")["data_size"].nunique().min() > 1  # no shared data size
    scales = {s.batch_size: s for s in largest_scale(points)}
    assert set(scales) == set(SYNTHETIC) and all(s.procs == 8 for s in scales.values())
    assert scales[32].speedup == pytest.approx(454.3 / 185.7)
    assert scales[32].efficiency == pytest.approx(454.3 / 185.7 / 8)
    line = scaling_line(largest_scale(points))
    assert "speed-up 2.45× (efficiency 31%) with batch 32" in line, line
    assert line.startswith("at 8 workers") and "speed-up 2.70×" in line
    speedups = measured_speedup(points)
    at_one = speedups[speedups["procs"] == 1]
    assert list(at_one["speedup"]) == pytest.approx([1.0] * len(at_one))


def test_at_one_data_size_the_speedup_is_the_ratio_of_epoch_times():
    points = pd.DataFrame(
        {
            "procs": [1, 2, 1, 2],
            "batch_size": [8] * 4,
            "data_size": [64, 64, 128, 128],
            "epoch_time_s": [4.0, 2.5, 8.0, 4.5],
        }
    )
    (scale,) = largest_scale(points)
    assert scale.data_size == 128 and scale.speedup == pytest.approx(8.0 / 4.5)


def test_efficiency_above_100_percent_and_workers_beyond_the_cores_are_warned():
    points = pd.DataFrame(
        {"procs": [1, 4], "batch_size": [8, 8], "data_size": [64, 64], "epoch_time_s": [7.8, 1.0]}
    )
    timings = pd.DataFrame(
        [
            {"device": "cpu", "nodes": 1, "procs": p, "cores_per_node": 2, "gpu_names": None}
            for p in (1, 4)
        ],
        columns=tables.TIMING_COLUMNS,
    )
    first, second = implausible(largest_scale(points), timings)
    assert "speed-up 7.80× at 4 workers (batch 8) is an efficiency of 195%, above 100 %" in first
    assert "1 of 2 runs put more workers on a node than it had cores (up to 4 workers on 2" in (
        second
    )
    gpus = timings.assign(device="cuda", gpu_names="V100;V100", cores_per_node=64)
    (only,) = implausible([], gpus)
    assert "up to 4 workers on 2 GPUs" in only


@pytest.mark.skipif(not SSD300.exists(), reason="the shared SSD300 table is not here")
def test_the_ssd300_summary_states_the_measured_speedup(tmp_path):
    csv = shared_table_csv(tmp_path / "ssd300.csv")
    config = cfg.validated(
        {
            "frameworks": [],
            "batch_sizes": [1],
            "data_sizes": [1],
            "external_timings": str(csv),
            "models": {"ernest": {}, "loglin": {}},
            "validation": {"protocols": {"kfold": {"k": 3}}, "bootstrap": 50},
        }
    )
    out = tmp_path / "results"
    stages.fit(csv, "pytorch", config["models"], 0, out / "models" / "pytorch.json", refits=5)
    stages.validate(
        csv,
        "pytorch",
        config["models"],
        config["validation"]["protocols"],
        0,
        out / "validation" / "pytorch.csv",
        out / "validation" / "pytorch.summary.csv",
        n_boot=50,
    )
    stages.combine([out / "validation" / "pytorch.summary.csv"], out / "validation" / "summary.csv")
    html = out / "report" / "index.html"
    sources = ReportSources(
        timings=csv,
        failures=None,
        models=[out / "models" / "pytorch.json"],
        summary=out / "validation" / "summary.csv",
        predictions=[out / "validation" / "pytorch.csv"],
        config=config,
    )
    stages.report(sources, html)
    page = re.sub(r"\s+", " ", html.read_text())
    scaling = page[page.index("<b>Scaling:</b>") :][:800]
    assert "at 8 workers" in scaling and "than with 1" in scaling
    assert "speed-up 2.45× (efficiency 31%) with batch 32" in scaling, scaling
    assert "only one worker count was measured" not in page
