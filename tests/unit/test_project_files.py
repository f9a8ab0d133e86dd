"""The licence pyproject.toml declares is the one shipped, and the citation file names the
version being released."""

import re
from pathlib import Path

import yaml

import dlperf

REPO = Path(__file__).resolve().parents[2]


def test_the_license_file_is_the_declared_one():
    declared = re.search(r'^license = "(.+)"$', (REPO / "pyproject.toml").read_text(), re.M)
    assert declared and declared.group(1) == "MIT"
    assert (REPO / "LICENSE").read_text().startswith("MIT License\n")


def test_the_citation_file_names_this_version_and_licence():
    citation = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0"
    assert citation["version"] == dlperf.__version__
    assert citation["license"] == "MIT" and citation["authors"] and citation["title"]
