"""Send a stage's output to its log file."""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def to_file(path: str | os.PathLike) -> Iterator[None]:
    """Redirect stdout and stderr into ``path``; an exception is logged there and re-raised."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with (
        open(path, "w", encoding="utf-8") as fh,
        contextlib.redirect_stdout(fh),
        contextlib.redirect_stderr(fh),
    ):
        try:
            yield
        except BaseException:
            traceback.print_exc(file=fh)
            raise
        finally:
            fh.flush()
            sys.stdout.flush()
