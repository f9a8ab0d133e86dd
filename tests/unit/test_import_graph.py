"""The layers of src/dlperf (README, "Layout"): no import cycle, counting the imports inside
functions too, and no import pointing back up (the command line on top, the stages under it, the
benchmark side apart from the analysis)."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in SRC.rglob("*.py")}


def imported(module: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The dlperf modules one import statement loads (the closest module of each name)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module.split(".")
            if MODULES[module].name != "__init__.py":
                package = package[:-1]
            package = package[: len(package) - node.level + 1]
            base = ".".join([*package, base] if base else package)
        names = [f"{base}.{alias.name}" for alias in node.names]
    found = set()
    for name in names:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name.startswith("dlperf"):
            found.add(name)
    return found


def import_graph() -> dict[str, set[str]]:
    """Each module's dlperf imports, anywhere in it; a package's own __init__ (loaded first by
    Python whatever the order) is left out of its modules' edges."""
    graph = {}
    for module, path in MODULES.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges |= imported(module, node)
        graph[module] = {m for m in edges if m != module and not module.startswith(m + ".")}
    return graph


GRAPH = import_graph()


def importers(prefix: str) -> set[str]:
    return {
        m
        for m, edges in GRAPH.items()
        if not m.startswith(prefix)
        and any(e == prefix or e.startswith(prefix + ".") for e in edges)
    }


def test_the_graph_is_read():
    assert "dlperf.stages" in GRAPH["dlperf.cli.modelling"]
    assert "dlperf.io" in GRAPH["dlperf.study.archive"]


def test_no_import_cycle():
    try:
        TopologicalSorter(GRAPH).prepare()
    except CycleError as exc:
        raise AssertionError(f"import cycle: {' -> '.join(exc.args[1])}") from None


def test_nothing_imports_the_command_line():
    assert importers("dlperf.cli") == {"dlperf.__main__"}


def test_only_the_command_line_and_the_re_run_call_the_stages():
    callers = {m for m in importers("dlperf.stages") if not m.startswith("dlperf.cli.")}
    assert callers == {"dlperf.rerun"}


def test_the_benchmark_side_imports_nothing_of_the_analysis():
    outside = {e for m, edges in GRAPH.items() if m.startswith("dlperf.bench") for e in edges} - {
        m for m in MODULES if m.startswith("dlperf.bench")
    }
    assert outside <= {"dlperf", "dlperf.io", "dlperf.errors", "dlperf.limits"}, outside
