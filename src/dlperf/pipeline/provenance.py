"""Which library code each workflow stage runs, as a digest the rules pass as a param.

Snakemake re-runs a job when its params change, so a stage re-runs exactly when the
code it runs changes -- and only then. What a stage runs is derived from the code: the
import closure of its entry points (every ``import dlperf...`` / ``from dlperf... import``
/ relative import, followed module by module with :mod:`ast`). Only the entry points are
declared here; the test suite checks each closure against the modules a real run imports.

The digest is taken over each module's syntax tree with docstrings removed, so comments,
docstrings and formatting never trigger a re-run; a change of behaviour always does.
Standard library only (the Snakefile computes the digests while it plans).
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
from functools import cache
from pathlib import Path

from dlperf.io import atomic_write_json

PACKAGE = Path(__file__).resolve().parents[1]  # src/dlperf
PACKAGE_NAME = PACKAGE.name
# Files a package may ship beside its modules that change what a stage computes.
DATA_SUFFIXES = (".yaml", ".csv", ".json")

#: Where each analysis stage starts: ``module:function`` runs that function (only the imports
#: at the top of the module and inside that function count), a bare module runs all of it.
#: ``dlperf.cli`` is no entry: it parses arguments and calls these functions, so changing an
#: option of one subcommand does not re-run every stage.
STAGE_ENTRIES: dict[str, tuple[str, ...]] = {
    "aggregate": ("dlperf.stages:aggregate",),
    "fit": ("dlperf.stages:fit",),
    "validate": ("dlperf.stages:validate",),
    "report": ("dlperf.stages:report",),
    "adaptive": ("dlperf.adaptive.sweep:choose_round",),
}

#: The benchmark of every framework: the driver (in the workflow's environment) and the worker
#: it starts with ``python -m dlperf.bench.worker`` (in the framework's environment).
BENCH_ENTRIES = ("dlperf.bench.runner", "dlperf.bench.worker")

#: Modules one framework's benchmark adds, started or imported by name rather than by an import
#: statement: its backend (``dlperf.bench.backends.BACKENDS``, imported with importlib) and,
#: for MXNet, the parameter server's processes (``python -m dlperf.bench.mx_service``).
FRAMEWORK_ENTRIES: dict[str, tuple[str, ...]] = {
    "pytorch": ("dlperf.bench.torch_backend",),
    "tensorflow": ("dlperf.bench.tf_backend",),
    "mxnet": ("dlperf.bench.mx_backend", "dlperf.bench.mx_service"),
}

STAGES = ("bench", *STAGE_ENTRIES)


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return tree


def module_digest(path: Path) -> str:
    """SHA-256 of a module's syntax tree without docstrings (comments never reach the tree)."""
    return _source_digest(path.read_text(encoding="utf-8"), str(path))


@cache  # stages share modules (models, tables, io): each source is parsed once
def _source_digest(source: str, filename: str) -> str:
    tree = _strip_docstrings(_parse(source, filename))
    return hashlib.sha256(ast.dump(tree, include_attributes=False).encode()).hexdigest()


@cache
def _parse(source: str, filename: str) -> ast.Module:
    return ast.parse(source, filename=filename)


def module_path(module: str) -> Path:
    """The source file of a ``dlperf`` module (a package's ``__init__.py``)."""
    parts = module.split(".")
    if parts[0] != PACKAGE_NAME:
        raise ValueError(f"{module} is not part of the {PACKAGE_NAME} package")
    base = PACKAGE.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    raise ValueError(f"module {module} has no source file under {PACKAGE}")


def _is_package(module: str) -> bool:
    return module_path(module).name == "__init__.py"


def _resolve(module: str, node: ast.ImportFrom) -> str:
    """The absolute name a (possibly relative) ``from ... import`` refers to."""
    if not node.level:
        return node.module or ""
    package = module if _is_package(module) else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def _exists(module: str) -> bool:
    try:
        module_path(module)
    except ValueError:
        return False
    return True


def _imported(module: str, nodes) -> set[str]:
    """The dlperf modules the import statements among ``nodes`` load."""
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, node)
            # `from dlperf import stages` imports a module, `from dlperf.io import x` a name.
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(n for n in names if n.split(".")[0] == PACKAGE_NAME and _exists(n))
    return found


def _statements(module: str, function: str | None):
    """The statements whose imports run: all of the module, or its top level plus one function."""
    path = module_path(module)
    tree = _parse(path.read_text(encoding="utf-8"), str(path))
    if function is None:
        return ast.walk(tree)
    top_level = [
        node
        for node in tree.body
        if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not _only_for_types(node)
    ]
    chosen = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function]
    if not chosen:
        raise ValueError(f"{module} has no function {function!r}")
    return [sub for node in top_level + chosen for sub in ast.walk(node)]


def _only_for_types(node: ast.stmt) -> bool:
    """``if TYPE_CHECKING:`` at the top level: its imports name types and never run."""
    return isinstance(node, ast.If) and ast.unparse(node.test) in (
        "TYPE_CHECKING",
        "typing.TYPE_CHECKING",
    )


def _with_parents(module: str) -> set[str]:
    """Importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first."""
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)}


def import_closure(entries: tuple[str, ...]) -> frozenset[str]:
    """Every dlperf module that running ``entries`` (``module`` or ``module:function``) loads."""
    return _closure(tuple(sorted(entries)))


@cache
def _closure(entries: tuple[str, ...]) -> frozenset[str]:
    loaded: set[str] = set()  # modules the entries load
    walked: set[str] = set()  # modules whose every import statement was followed
    todo: list[str] = []
    for entry in entries:
        module, _, function = entry.partition(":")
        loaded.add(module)
        todo.extend(_with_parents(module) - {module} if function else {module})
        if function:  # only the top level and this function run: the rest stays unwalked
            todo.extend(_imported(module, _statements(module, function)))
    while todo:
        module = todo.pop()
        if module in walked:
            continue
        walked.add(module)
        todo.extend(_with_parents(module) | _imported(module, _statements(module, None)))
    return frozenset(loaded | walked)


def stage_entries(stage: str, framework: str | None = None) -> tuple[str, ...]:
    """The entry points of ``stage``; the bench stage is per framework."""
    if stage == "bench":
        if framework not in FRAMEWORK_ENTRIES:
            raise ValueError(
                f"the bench stage's code depends on the framework: give one of "
                f"{', '.join(FRAMEWORK_ENTRIES)}, not {framework!r}"
            )
        return BENCH_ENTRIES + FRAMEWORK_ENTRIES[framework]
    try:
        return STAGE_ENTRIES[stage]
    except KeyError:
        raise ValueError(f"unknown stage {stage!r}; choose from {', '.join(STAGES)}") from None


@cache
def code_digest(stage: str, framework: str | None = None) -> str:
    """A short digest of every module ``stage`` runs (for ``bench``: that framework's
    benchmark); changes only when their code does."""
    digest = hashlib.sha256()
    modules = sorted(import_closure(stage_entries(stage, framework)))
    for module in modules:
        path = module_path(module)
        digest.update(path.relative_to(PACKAGE).as_posix().encode())
        digest.update(module_digest(path).encode())
    # The data a package ships beside its modules (the GPU catalogue): part of the code.
    for path in sorted({d for m in modules for d in package_data(module_path(m).parent)}):
        digest.update(path.relative_to(PACKAGE).as_posix().encode())
        digest.update(hashlib.sha256(path.read_bytes()).hexdigest().encode())
    return digest.hexdigest()[:16]


def package_data(folder: Path) -> list[Path]:
    """The data files a package keeps beside its modules (not in its sub-folders)."""
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in DATA_SUFFIXES)


def _source_tree_key() -> str:
    """A digest of every source file of the package: the code digests below change only
    when one of these does."""
    digest = hashlib.sha256()
    for path in sorted(p for p in PACKAGE.rglob("*") if p.suffix in (".py", *DATA_SUFFIXES)):
        digest.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def workflow_code_digests(frameworks: list[str], cache_file: Path | None = None) -> dict:
    """Every stage's code digest (``bench`` per framework: ``bench:<framework>``), as the
    Snakefile needs them. Kept in ``cache_file`` under the digest of the package's sources, so
    a workflow whose code did not change reads them instead of walking syntax trees (a third
    of a second of every plan); the cache is content-addressed, never stale."""
    cache_file = cache_file or default_cache_file()
    key = _source_tree_key()
    wanted = [*STAGE_ENTRIES, *(f"bench:{f}" for f in frameworks)]
    try:
        cached = json.loads(cache_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # no cache yet, or a damaged one: computed again below
        cached = {}
    known = cached.get(key, {}) if isinstance(cached, dict) else {}
    if all(name in known for name in wanted):
        return {name: known[name] for name in wanted}
    digests = {
        name: code_digest(*name.split(":")) if ":" in name else code_digest(name) for name in wanted
    }
    try:
        atomic_write_json(cache_file, {key: {**known, **digests}})
    except OSError:  # a read-only cache directory: the digests are still right, only slower
        pass
    return digests


def default_cache_file() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return cache / "dlperf" / "code-digests.json"
