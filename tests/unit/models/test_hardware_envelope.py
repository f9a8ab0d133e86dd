"""models/hardware_envelope.py: what physics allows a GPU's time to be, from the GPU types
measured at the same configuration."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dlperf.models.hardware_envelope import envelope, envelope_points


def catalogue(path, scales: dict[str, float]) -> str:
    """A catalogue file of GPU types whose every figure is ``scale`` times the first's."""
    lines = ["sources:", "  mine: {title: 'made up for the test', url: 'https://example.org'}"]
    lines.append("gpus:")
    for name, scale in scales.items():
        lines += [
            f"  - name: {name}",
            "    vendor: Example",
            f"    peak_tflops: {{fp32: {20 * scale}, tf32: {80 * scale}, fp16: {160 * scale}, "
            f"bf16: {160 * scale}}}",
            "    memory_gb: 80",
            f"    memory_bandwidth_gbs: {1000 * scale}",
            f"    link: {{name: NVLink, bandwidth_gbs: {300 * scale}}}",
            "    sources: {peak_tflops: mine, memory: mine, link: mine}",
        ]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def rows(gpu: str, procs: int, batch: int, seconds: float | None = None) -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "gpu": [gpu],
            "precision": ["amp_fp16"],
            "procs": [procs],
            "nodes": [1],
            "batch_size": [batch],
            "data_size": [procs * batch * 100],  # 100 iterations an epoch
        }
    )
    return frame if seconds is None else frame.assign(epoch_time_s=seconds)


def test_a_gpu_twice_as_fast_in_every_figure_takes_half_to_all_of_the_time(tmp_path):
    hardware = catalogue(tmp_path / "gpus.yaml", {"X1": 1.0, "X2": 2.0, "X05": 0.5})
    points = envelope_points(pd.concat([rows("X1", 1, 32, 10.0), rows("X1", 1, 32, 12.0)]))
    assert points == [
        {
            "gpu": "X1",
            "precision": "amp_fp16",
            "procs": 1,
            "nodes": 1,
            "batch_size": 32,
            "per_sample_s": [pytest.approx(10 / 3200), pytest.approx(12 / 3200)],
        }
    ]
    asked = pd.concat([rows("X2", 1, 32), rows("X05", 1, 32), rows("X1", 1, 32)])
    low, high = envelope(points, asked, hardware)
    # Twice every figure: no slower than the slowest host, no faster than half the fastest (the
    # host's part gains nothing); half every figure: the other way round.
    np.testing.assert_allclose(low, [5.0, 10.0, 10.0])
    np.testing.assert_allclose(high, [12.0, 24.0, 12.0])


def test_a_larger_batch_widens_it_and_more_workers_than_measured_bound_it_below(tmp_path):
    hardware = catalogue(tmp_path / "gpus.yaml", {"X1": 1.0, "X2": 2.0})
    points = envelope_points(rows("X1", 2, 32, 10.0))
    asked = pd.concat([rows("X2", 2, 64), rows("X2", 4, 32), rows("X2", 1, 32)])
    low, high = envelope(points, asked, hardware)
    # Twice the batch: per sample no dearer, per iteration no cheaper; an epoch of the same
    # iterations holds twice the samples.
    assert low[0] == pytest.approx(10.0 / 2 / 2 * 2)
    assert high[0] == pytest.approx(10.0 * 2)
    # Four workers, measured at two only: an iteration no shorter than at two (perfect
    # scaling), no bound above. One worker: nothing measured at as few.
    assert low[1] == pytest.approx(10.0 / 2) and high[1] == np.inf
    assert low[2] == 0 and high[2] == np.inf


def test_each_gpu_type_measured_widens_the_envelope_never_empties_it(tmp_path):
    hardware = catalogue(tmp_path / "gpus.yaml", {"X1": 1.0, "X2": 2.0, "X4": 4.0})
    # Hosts that disagree with the assumptions: X4 measured slower than X1.
    measured = pd.concat([rows("X1", 1, 32, 10.0), rows("X4", 1, 32, 11.0)])
    low, high = envelope(envelope_points(measured), rows("X2", 1, 32), hardware)
    # From X1: 5 to 10; from X4: 11 to 22. Their union, not their (empty) intersection.
    assert (low[0], high[0]) == (pytest.approx(5.0), pytest.approx(22.0))
    assert envelope([], rows("X2", 1, 32), hardware)[1][0] == np.inf
