"""The report's "Which hardware" section: for every network measured on two or more GPU types,
the answer across hardware the fit stored (docs/hardware.md), read from the artifacts only."""

from __future__ import annotations

import pandas as pd

from .markup import Section, introduced, table


def hardware_table(artifacts: dict[str, dict]) -> pd.DataFrame:
    """One row per framework, network and precision with an answer across hardware."""
    rows = []
    for framework, artifact in sorted(artifacts.items()):
        for network, by_precision in sorted(artifact.get("across_hardware", {}).items()):
            for precision, block in sorted(by_precision.items()):
                if block.get("status") != "ok":
                    rows.append(
                        {"framework": framework, "network": network, "precision": precision,
                         "GPU types measured": "", "models (weight)": "",
                         "90 % interval": "", "how": block.get("reason", "")}
                    )  # fmt: skip
                    continue
                factors = block.get("interval_factors")
                spread = (
                    f"-{(1 - factors[0]) * 100:.0f} % .. +{(factors[1] - 1) * 100:.0f} %"
                    if factors
                    else "none (fewer than 3 GPU types)"
                )
                weights = ", ".join(f"{n} ({w:.2f})" for n, w in block["weights"].items())
                rows.append(
                    {"framework": framework, "network": network, "precision": precision,
                     "GPU types measured": ", ".join(block["gpus"]),
                     "models (weight)": weights, "90 % interval": spread,
                     "how": block["method"]}
                )  # fmt: skip
    return pd.DataFrame(rows)


def which_hardware(study) -> list[Section]:
    """The section, when a study holds a network measured on two or more GPU types."""
    frame = hardware_table(study.artifacts)
    if frame.empty:
        return []
    section = introduced(
        "which-hardware",
        "Which hardware",
        (
            "Networks measured on two or more GPU types: the answer across hardware, which "
            "predicts any GPU of the catalogue from its datasheet figures. Ask it with "
            "`dlperf predict --gpu NAME --precision P` and choose among GPU types with "
            "`dlperf plan --gpus ... --prices prices.yaml` (docs/hardware.md). The interval "
            "is the answer's spread on GPU types left out of the fit."
        ),
    )
    section.blocks.append(
        table(frame, left=set(frame.columns) - {"90 % interval"}, ident="hardware-table")
    )
    return [section]
