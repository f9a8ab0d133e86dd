"""The layers of src/dlperf (README, "Layout"): no import cycle, counting the imports inside
functions too, and no import pointing back up (the command line on top, the stages under it, the
benchmark side apart from the analysis); each package loads only the packages below it, and the
picture of packages stays low."""

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


def loaded(prefix: str) -> set[str]:
    """Every dlperf module that the modules of ``prefix`` load, directly or through others."""
    seen: set[str] = set()
    todo = [m for m in GRAPH if m == prefix or m.startswith(prefix + ".")]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(GRAPH[module])
    return seen


def reached(prefix: str, others: tuple[str, ...]) -> set[str]:
    return {m for m in loaded(prefix) if any(m == o or m.startswith(o + ".") for o in others)}


def test_the_graph_is_read():
    assert "dlperf.stages" in GRAPH["dlperf.cli.modelling"]
    assert "dlperf.io" in GRAPH["dlperf.study.archive"]
    assert "dlperf.models.prediction" in loaded("dlperf.compare")


def test_compare_loads_no_report_stage_re_run_validation_or_adaptive_sweep():
    banned = ("dlperf.report", "dlperf.stages", "dlperf.rerun", "dlperf.validate")
    banned += ("dlperf.adaptive",)
    assert reached("dlperf.compare", banned) == set()


def test_a_study_loads_no_stage_re_run_report_or_comparison():
    banned = ("dlperf.stages", "dlperf.rerun", "dlperf.report", "dlperf.compare")
    assert reached("dlperf.study", banned) == set()


def test_measurements_load_no_study_model_report_or_comparison():
    banned = ("dlperf.study", "dlperf.models", "dlperf.report", "dlperf.compare")
    assert reached("dlperf.measurements", banned) == set()


def test_only_the_command_line_runs_the_re_run():
    assert {m for m in importers("dlperf.rerun") if not m.startswith("dlperf.cli.")} == set()


def package_of(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_the_picture_of_packages_has_at_most_ten_floors():
    """A package (or top-level module) stands one floor above the highest it imports;
    `dlperf.__main__`, Python's two-line entry shim for `python -m dlperf`, is no floor."""
    below: dict[str, set[str]] = {}
    for module, edges in GRAPH.items():
        if module == "dlperf.__main__":
            continue
        node = package_of(module)
        below.setdefault(node, set()).update(
            package_of(e) for e in edges if package_of(e) not in (node, "dlperf")
        )
    floors: dict[str, int] = {}
    for node in TopologicalSorter(below).static_order():
        floors[node] = 1 + max((floors[b] for b in below.get(node, ())), default=0)
    assert max(floors.values()) <= 10, floors


def test_only_the_leaves_the_facade_and_the_re_run_sit_at_the_top():
    top = {p.stem for p in (SRC / "dlperf").glob("*.py")}
    leaves = {"errors", "io", "limits", "durations", "folds", "layout", "config", "figures"}
    leaves.add("quoting")
    assert top <= leaves | {"__init__", "__main__", "stages", "rerun"}, top - leaves


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
