"""The archive's RO-Crate manifest, written and read through rocrate."""

from __future__ import annotations

import json

from rocrate.rocrate import ROCrate

from dlperf.io import dumps_json
from dlperf.study import crate

SHA_A, SHA_B = "a" * 64, "b" * 64
PARTS = {"results/timings.csv": (SHA_A, 10), "external/my timings.csv": (SHA_B, 3)}
CONFIG = {"frameworks": ["pytorch"], "seed": 4}


def _bytes(document) -> bytes:
    return dumps_json(document).encode()


def test_the_manifest_is_the_same_for_the_same_study():
    first, second = crate.manifest(PARTS, CONFIG), crate.manifest(PARTS, CONFIG)
    assert _bytes(first) == _bytes(second)
    text = _bytes(first).decode()
    # No build time and no generated (#uuid) id: the bytes depend on the study alone.
    assert "datePublished" not in text and '"#' not in text


def test_the_manifest_is_a_valid_crate_with_every_member():
    document = crate.manifest(PARTS, CONFIG)
    read = ROCrate(json.loads(_bytes(document)))
    assert read.version == "1.1" and read.root_dataset.id == "./"
    assert read.root_dataset["seed"] == 4 and read.root_dataset["frameworks"] == ["pytorch"]
    assert {e.id for e in read.data_entities} == {
        "results/timings.csv",
        "external/my%20timings.csv",
    }
    found, problems = crate.parts(_bytes(document))
    assert problems == []
    assert {name: (p["sha256"], p["contentSize"]) for name, p in found.items()} == PARTS


def test_a_manifest_written_before_rocrate_still_reads():
    """The hand-written manifests of earlier archives: descriptor first, plain member names."""
    files = [{"@id": "results/timings.csv", "@type": "File", "contentSize": 10, "sha256": SHA_A}]
    document = {
        "@context": "https://w3id.org/ro/crate/1.1/context",
        "@graph": [
            {
                "@id": "ro-crate-metadata.json",
                "@type": "CreativeWork",
                "about": {"@id": "./"},
                "conformsTo": {"@id": "https://w3id.org/ro/crate/1.1"},
            },
            {"@id": "./", "@type": "Dataset", "hasPart": [{"@id": "results/timings.csv"}]},
            *files,
        ],
    }
    found, problems = crate.parts(_bytes(document))
    assert problems == [] and found["results/timings.csv"]["sha256"] == SHA_A


def test_every_malformed_part_is_named():
    document = crate.manifest(PARTS, CONFIG)
    graph = document["@graph"]
    graph.append(dict(graph[-1]))  # the same member twice
    graph.append({"@type": "File"})  # no @id
    graph.append({"@id": "stray.csv", "@type": "File", "contentSize": 1, "sha256": SHA_A})
    del graph[2]["sha256"]
    found, problems = crate.parts(_bytes(document))
    name = graph[2]["@id"]
    assert f"ro-crate-metadata.json: @graph[2] ({name}) has no sha256" in problems
    assert any("is listed twice" in p for p in problems)
    assert f"ro-crate-metadata.json: @graph[{len(graph) - 2}] has no @id" in problems
    # A File the root dataset does not list is not a part of the crate: rocrate says so.
    assert any("stray.csv" in p for p in problems) and "stray.csv" not in found
    assert name not in found and len(found) == 1
