"""The README's Layout names every package of src/dlperf and every module at its top, each with
its one job, so a newcomer finds each concern by its noun."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "dlperf"


def layout_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]


def test_the_layout_names_every_package_and_top_level_module():
    layout = layout_section()
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    named = set(re.findall(r"^\s+([a-z_]+)/\s+\S", layout, flags=re.MULTILINE))
    assert packages <= named, packages - named
    modules = {p.name for p in PACKAGE.glob("*.py")} - {"__init__.py", "__main__.py"}
    missing = {m for m in modules if not re.search(rf"\b{re.escape(m)}\b", layout)}
    assert not missing, missing
