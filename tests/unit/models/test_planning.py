"""The one orchestration of a plan (dlperf.models.planning.planned) that `dlperf plan` and the
report's planning answer share."""

from __future__ import annotations

import pandas as pd

from dlperf.models import planning


def test_the_fastest_of_equally_fast_layouts_has_the_fewest_workers(monkeypatch):
    table = pd.DataFrame(
        {"nodes": [1, 1, 2], "procs": [4, 2, 8], "total_time_s": [5.0, 5.0, 6.0]},
        index=[2, 1, 3],
    )
    monkeypatch.setattr(planning, "plan", lambda *args, **kwargs: (table, None))
    asked = []
    monkeypatch.setattr(
        planning, "extrapolation_warnings", lambda a, n, layout: asked.append(layout) or ["far"]
    )
    found = planning.planned({}, "lenet", "generic", 32, data_size=64, epochs=1.0)
    assert found.choice is None and found.fastest["procs"] == 2
    assert found.answer == found.fastest and found.extrapolated == ["far"]
    assert asked[0].to_dict("records") == [{"nodes": 1, "procs": 2, "batch_size": 32}]
