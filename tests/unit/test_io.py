import json

import pytest

from dlperf.errors import InputFileError
from dlperf.io import atomic_path, atomic_write_json, dumps_json, read_json


def test_atomic_write_json_is_canonical(tmp_path):
    target = tmp_path / "sub" / "a.json"
    atomic_write_json(target, {"b": 1, "a": [1.5, 2]})
    assert target.read_text() == dumps_json({"a": [1.5, 2], "b": 1})
    assert json.loads(target.read_text()) == {"a": [1.5, 2], "b": 1}
    assert [p.name for p in target.parent.iterdir()] == ["a.json"]


def test_failed_write_keeps_old_file_and_leaves_no_temp(tmp_path):
    target = tmp_path / "a.json"
    atomic_write_json(target, {"v": 1})
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("crash mid-write")
    assert json.loads(target.read_text()) == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_nan_is_refused(tmp_path):
    with pytest.raises(ValueError):
        atomic_write_json(tmp_path / "a.json", {"v": float("nan")})
    assert not (tmp_path / "a.json").exists()


def test_outputs_get_ordinary_permissions(tmp_path):
    import os

    mask = os.umask(0o022)
    try:
        atomic_write_json(tmp_path / "a.json", {"v": 1})
    finally:
        os.umask(mask)
    assert (tmp_path / "a.json").stat().st_mode & 0o777 == 0o644


def test_a_missing_or_malformed_json_file_is_an_input_error_naming_it(tmp_path):
    with pytest.raises(InputFileError, match="gone.json does not exist"):
        read_json(tmp_path / "gone.json")
    (tmp_path / "cut.json").write_text('{"a": ')
    with pytest.raises(InputFileError, match="cut.json is not valid JSON"):
        read_json(tmp_path / "cut.json")
    (tmp_path / "bytes.json").write_bytes(b"\xff\xfe")
    with pytest.raises(InputFileError, match="bytes.json is not valid JSON"):
        read_json(tmp_path / "bytes.json")
