import pytest

from dlperf import provenance


def test_digest_ignores_comments_docstrings_and_layout(tmp_path):
    a = tmp_path / "a.py"
    a.write_text('"""Doc."""\nx = 1  # one\n\n\ndef f():\n    """Doc."""\n    return x\n')
    b = tmp_path / "b.py"
    b.write_text("# header\nx = 1\ndef f():\n    return x\n")
    assert provenance.module_digest(a) == provenance.module_digest(b)
    b.write_text("x = 2\ndef f():\n    return x\n")
    assert provenance.module_digest(a) != provenance.module_digest(b)


def test_every_stage_has_a_distinct_stable_digest():
    digests = {stage: provenance.code_digest(stage) for stage in provenance.STAGE_SOURCES}
    assert len(set(digests.values())) == len(digests)
    assert all(len(d) == 16 for d in digests.values())
    assert provenance.code_digest("fit") == digests["fit"]


def test_unknown_stage_is_named():
    with pytest.raises(ValueError, match="unknown stage 'plot'"):
        provenance.code_digest("plot")
