"""The report's "Which hardware" section: there when a network was measured on two or more GPU
types or the config names GPU types in report.target.gpus, absent otherwise, and it shows what
the fit stored (from one GPU type measured, the prior's answer) and the target planned on the
GPU types named."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from dlperf.config import validated
from dlperf.errors import ConfigError
from dlperf.models.artifact import fit_framework
from dlperf.report.hardware_section import which_hardware
from gpupoints import gpu_points

TARGET = {"data_size": 640000, "epochs": 2, "deadline": "10m"}


def study(gpus, target=None) -> SimpleNamespace:
    points = gpu_points(gpus)
    artifact = fit_framework(points, "pytorch", {"usl": {}}, seed=0, refits=2)
    config = {"report": {"target": target}} if target else {}
    return SimpleNamespace(
        artifacts={"pytorch": artifact}, points=points, config=config, hardware=None
    )


def html_of(section) -> str:
    return "".join(str(block) for block in section.blocks)


def rows_of(html: str, ident: str) -> list[list[str]]:
    """The cells of each body row of the table ``ident``."""
    body = html.split(f'id="{ident}"', 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [
        [cell.rsplit(">", 1)[1] for cell in row.split("</td>")[:-1]]
        for row in body.split("</tr>")[:-1]
    ]


def test_the_section_shows_the_answer_across_hardware():
    gpus = ["V100-SXM2-16GB", "A100-SXM4-80GB", "A10"]
    (section,) = which_hardware(study(gpus))
    html = html_of(section)
    assert section.title == "Which hardware" and "A10, A100-SXM4-80GB, V100-SXM2-16GB" in html
    assert "powerlaw_hw" in html and "leave-one-GPU-type-out" in html
    assert "hardware-plan" not in html and "hardware-datasheets" not in html


def test_no_section_without_two_gpu_types_or_a_target_naming_gpus():
    one = study(["A10"])
    assert "across_hardware" in one.artifacts["pytorch"] and which_hardware(one) == []


def test_a_target_is_planned_on_the_gpu_types_measured():
    (section,) = which_hardware(study(["V100-SXM2-16GB", "A100-SXM4-80GB", "A10"], TARGET))
    html = html_of(section)
    plan = rows_of(html, "hardware-plan")
    assert [row[3] for row in plan] == ["A10", "A100-SXM4-80GB", "V100-SXM2-16GB"]
    assert {row[4] for row in plan} == {"yes"} and "within 10 min" in html


def test_target_gpus_restrict_the_plan_and_show_their_datasheets():
    target = {**TARGET, "gpus": ["NVIDIA H100 80GB HBM3", "A10"]}
    (section,) = which_hardware(study(["V100-SXM2-16GB", "A100-SXM4-80GB", "A10"], target))
    html = html_of(section)
    plan = rows_of(html, "hardware-plan")
    assert [row[3:5] for row in plan] == [["H100-SXM5-80GB", "no"], ["A10", "yes"]]
    assert float(plan[0][5]) > 1 and float(plan[1][5]) == 1  # reach
    sheets = rows_of(html, "hardware-datasheets")  # named, then the others measured
    assert [row[:2] for row in sheets] == [
        ["H100-SXM5-80GB", "no"], ["A10", "yes"], ["A100-SXM4-80GB", "yes"],
        ["V100-SXM2-16GB", "yes"],
    ]  # fmt: skip


def test_target_gpus_plan_from_one_gpu_type_measured_with_the_priors_answer():
    (section,) = which_hardware(study(["A10"], {**TARGET, "gpus": ["H100 80GB HBM3"]}))
    html = html_of(section)
    assert "hardware-unanswered" not in html
    (answered,) = rows_of(html, "hardware-table")
    assert answered[3:5] == ["A10", "prior_hw (1.00)"] and "one GPU type measured" in answered[6]
    (planned,) = rows_of(html, "hardware-plan")
    assert planned[3:5] == ["H100-SXM5-80GB", "no"] and planned[9] != "none"  # its interval
    sheets = rows_of(html, "hardware-datasheets")
    assert [row[:2] for row in sheets] == [["H100-SXM5-80GB", "no"], ["A10", "yes"]]


def test_target_gpus_without_timings_that_name_a_gpu_say_why_there_is_no_answer():
    on_cpu = study(["A10"], {**TARGET, "gpus": ["H100 80GB HBM3"]})
    on_cpu.artifacts = {"pytorch": {}}
    on_cpu.points = on_cpu.points.assign(gpu="")
    (section,) = which_hardware(on_cpu)
    html = html_of(section)
    assert 'id="hardware-unanswered"' in html and "name a GPU" in html
    assert "hardware-table" not in html and "hardware-plan" not in html
    sheets = rows_of(html, "hardware-datasheets")
    assert [row[:2] for row in sheets] == [["H100-SXM5-80GB", "no"]]


def test_the_config_refuses_target_gpus_the_catalogue_does_not_know():
    base = {"frameworks": [], "external_timings": "t.csv", "batch_sizes": [8],
            "data_sizes": [64]}  # fmt: skip
    ok = validated({**base, "report": {"target": {**TARGET, "gpus": ["A100 80GB SXM4"]}}})
    assert ok["report"]["target"]["gpus"] == ["A100 80GB SXM4"]
    with pytest.raises(ConfigError, match=r"report.target.gpus.*unknown GPU 'RTX 5090'"):
        validated({**base, "report": {"target": {**TARGET, "gpus": ["RTX 5090"]}}})
    with pytest.raises(ConfigError, match="gpus"):
        validated({**base, "report": {"target": {**TARGET, "gpus": []}}})
