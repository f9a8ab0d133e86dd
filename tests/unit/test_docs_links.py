"""Every documentation page the code and the configs point at exists in the repository."""

from __future__ import annotations

import re

DOC_REFERENCE = re.compile(r"\bdocs/[\w./-]+\.md\b")


def test_code_and_configs_point_at_docs_that_exist(repo):
    sources = [*(repo / "src").rglob("*.py"), *(repo / "src").rglob("*.yaml")]
    sources += [*(repo / "config").glob("*.yaml"), *(repo / "workflow").rglob("*.smk")]
    sources += [repo / "Snakefile"]
    seen = 0
    for path in sources:
        text = path.read_text(encoding="utf-8")
        # DESIGN.md is the team's design page, not shipped with the repository.
        assert "DESIGN.md" not in text, f"{path} points at DESIGN.md; point at docs/ instead"
        for reference in DOC_REFERENCE.findall(text):
            seen += 1
            assert (repo / reference).is_file(), f"{path} points at {reference}, which is missing"
    assert seen > 5
