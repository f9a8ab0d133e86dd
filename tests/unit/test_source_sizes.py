"""Small modules with one job each: no module of src/dlperf over 450 lines, no function over 80
(issue 29's limits, kept by this test)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "dlperf"
SOURCES = sorted(PACKAGE.rglob("*.py"))
MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 80


def test_the_package_is_found():
    assert len(SOURCES) > 50


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_and_function_sizes(path):
    text = path.read_text()
    assert len(text.splitlines()) <= MAX_MODULE_LINES, "split the module by job"
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(ast.parse(text))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"
