"""The archive's manifest, an RO-Crate (``ro-crate-metadata.json``), written and read with the
``rocrate`` package.

The crate's root dataset holds the study's provenance (frameworks, seed, workflow commit, dlperf
and Python versions); each member of the archive is a File entity with its SHA-256 and size.
The same study gives the same bytes: the crate carries no timestamp (``rocrate`` stamps the root
with the time it was built; that is taken out) and no generated id, and it is written as
canonical JSON (sorted keys).

Reading goes through ``rocrate`` too; what it cannot read (a node without an ``@id``, a graph
that is not a list) is named by its place in the ``@graph`` first, and every File entity without
a well-formed checksum or size is named, so ``dlperf verify`` reports each malformed part.
"""

from __future__ import annotations

import copy
import json
import platform
import re
import warnings
from pathlib import Path
from urllib.parse import unquote

from rocrate.model.metadata import BASENAME
from rocrate.rocrate import ROCrate

import dlperf
from dlperf.bench.envinfo import git_commit

MANIFEST = BASENAME  # ro-crate-metadata.json, as the RO-Crate specification names it
VERSION = "1.1"
SHA256 = re.compile(r"[0-9a-f]{64}")


def manifest(parts: dict[str, tuple[str, int]], config: dict) -> dict:
    """The crate of an archive whose members are ``parts`` (name -> (sha256, size)), for a
    study run with ``config``: the JSON-LD document to write as :data:`MANIFEST`."""
    crate = ROCrate(version=VERSION)
    root = crate.root_dataset
    # The build time would make two archives of one study differ; the study has no date of
    # its own that every input shares, so none is written (as before rocrate wrote it).
    del root["datePublished"]
    provenance = {
        "name": "dlperf study",
        "description": "Benchmark run records, timings, performance models, validation and report",
        "frameworks": config.get("frameworks"),
        "seed": config.get("seed"),
        "workflowCommit": git_commit(Path(__file__).resolve().parent),
        "dlperfVersion": dlperf.__version__,
        "python": platform.python_version(),
    }
    for key, value in provenance.items():
        root[key] = value
    for name, (sha, size) in sorted(parts.items()):
        crate.add_file(dest_path=name, properties={"contentSize": size, "sha256": sha})
    return crate.metadata.generate()


def _readable_nodes(document) -> tuple[dict[str, tuple[int, dict]], list[str]]:
    """The ``@graph`` nodes ``rocrate`` can read, by ``@id`` with their position, and a
    problem for each it cannot (named by position): it is left out, the rest still read."""
    graph = document.get("@graph") if isinstance(document, dict) else None
    if not isinstance(graph, list):
        return {}, [f"{MANIFEST}: has no @graph list"]
    nodes, problems = {}, []
    for i, node in enumerate(graph):
        where = f"{MANIFEST}: @graph[{i}]"
        if not isinstance(node, dict):
            problems.append(f"{where} is not an object")
        elif not isinstance(node.get("@id"), str) or not node["@id"]:
            problems.append(f"{where} has no @id")
        elif node["@id"] in nodes:
            problems.append(f"{where} ({node['@id']}) is listed twice")
        else:
            nodes[node["@id"]] = (i, node)
    return nodes, problems


def _file_problem(where: str, name: str, properties: dict) -> str | None:
    sha, size = properties.get("sha256"), properties.get("contentSize")
    if sha is None:
        return f"{where} ({name}) has no sha256"
    if not isinstance(sha, str) or not SHA256.fullmatch(sha):
        return f"{where} ({name}) has a malformed sha256 {sha!r}"
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        return f"{where} ({name}) has no valid contentSize"
    return None


def parts(data: bytes) -> tuple[dict[str, dict], list[str]]:
    """The File entities of a manifest by member name (their properties: ``sha256``,
    ``contentSize``, ...), and a problem for every malformed part, naming it."""
    try:
        document = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return {}, [f"{MANIFEST}: not valid JSON ({exc})"]
    nodes, problems = _readable_nodes(document)
    if not nodes:
        return {}, problems
    # rocrate consumes the nodes it reads: it gets copies.
    readable = {**document, "@graph": [copy.deepcopy(node) for _, node in nodes.values()]}
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            crate = ROCrate(readable)
    except (KeyError, ValueError, TypeError) as exc:
        return {}, [*problems, f"{MANIFEST}: not a readable RO-Crate ({exc})"]
    problems += [f"{MANIFEST}: {w.message}" for w in caught]
    if crate.root_dataset.id != "./":
        problems.append(f"{MANIFEST}: @graph has no root dataset './'")
    found = {}
    for entity in crate.data_entities:
        types = entity.type if isinstance(entity.type, list) else [entity.type]
        if "File" not in types:
            continue
        properties = entity.properties()
        problem = _file_problem(f"{MANIFEST}: @graph[{nodes[entity.id][0]}]", entity.id, properties)
        if problem:
            problems.append(problem)
        else:
            # Ids are URI paths (rocrate quotes a space as %20); members are plain names.
            found[unquote(entity.id)] = properties
    return found, problems
