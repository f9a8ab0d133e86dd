"""Which library code each workflow stage runs, as a digest the rules pass as a param.

Snakemake re-runs a job when its params change, so a stage re-runs exactly when the
code it runs changes -- and only then. The digest is taken over each module's syntax
tree with docstrings removed, so comments, docstrings and formatting never trigger a
re-run; a change of behaviour always does. Standard library only.
"""

from __future__ import annotations

import ast
import hashlib
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent

# Stage -> the parts of the package it executes (directories include every module in them).
# bench covers the harness that runs inside the framework environments: changing how we
# measure re-measures. The analysis stages cover what they import.
STAGE_SOURCES: dict[str, tuple[str, ...]] = {
    "bench": ("bench", "io.py"),
    "aggregate": ("tables.py", "io.py"),
    "fit": ("models", "folds.py", "tables.py", "io.py"),
    "validate": ("validate", "models", "folds.py", "tables.py", "io.py"),
    "report": ("report", "models", "tables.py", "io.py"),
    "adaptive": ("adaptive", "models", "folds.py", "tables.py", "io.py", "config.py"),
}


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
    tree = _strip_docstrings(ast.parse(source, filename=filename))
    return hashlib.sha256(ast.dump(tree, include_attributes=False).encode()).hexdigest()


def _modules(part: str) -> list[Path]:
    target = PACKAGE / part
    if target.is_dir():
        return sorted(target.rglob("*.py"))
    if target.exists():
        return [target]
    raise FileNotFoundError(f"stage source {part} is not part of {PACKAGE}")


@cache
def code_digest(stage: str) -> str:
    """A short digest of every module ``stage`` runs; changes only when their code does."""
    try:
        parts = STAGE_SOURCES[stage]
    except KeyError:
        raise ValueError(
            f"unknown stage {stage!r}; choose from {', '.join(STAGE_SOURCES)}"
        ) from None
    digest = hashlib.sha256()
    for module in sorted({m for part in parts for m in _modules(part)}):
        digest.update(module.relative_to(PACKAGE).as_posix().encode())
        digest.update(module_digest(module).encode())
    return digest.hexdigest()[:16]
