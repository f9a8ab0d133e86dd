"""Atomic file output: every file a stage writes appears whole or not at all.

Standard library only, because the benchmark harness (which runs inside the
framework environments) uses it too.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from dlperf.errors import InputFileError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` on success.

    On an exception the temporary file is removed and ``path`` is left as it was,
    so a crash never leaves a truncated output behind.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    # mkstemp makes the file private (0600); outputs get the permissions of any new file.
    os.fchmod(fd, 0o666 & ~_umask())
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def dumps_json(obj: object) -> str:
    """Canonical JSON: sorted keys and a trailing newline, so equal content gives equal bytes."""
    return json.dumps(obj, indent=2, sort_keys=True, allow_nan=False) + "\n"


def atomic_write_json(path: str | os.PathLike, obj: object) -> None:
    atomic_write_text(path, dumps_json(obj))


def unopenable(path: str | os.PathLike, exc: OSError) -> InputFileError:
    """The one-line refusal of an input file that is there but cannot be opened."""
    if isinstance(exc, IsADirectoryError):
        return InputFileError(f"{path} is a directory; name a file in it")
    return InputFileError(f"{path} cannot be opened ({exc.strerror}); check its permissions")


def read_json(path: str | os.PathLike) -> object:
    """A JSON file; a missing, truncated or malformed one is an error naming the file."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        raise InputFileError(f"{path} does not exist; check the path") from None
    except (IsADirectoryError, PermissionError) as exc:
        raise unopenable(path, exc) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputFileError(
            f"{path} is not valid JSON ({exc}); write it again with the command that made it"
        ) from exc
