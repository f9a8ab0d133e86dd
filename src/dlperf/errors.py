"""Error types of dlperf's own that a user's input can cause, apart from the ones that belong
to one module (``config.ConfigError``, ``archive.ArchiveError``, ...). The ``dlperf`` command
prints these in one line (exit status 2); any other exception is a bug and shows its traceback.
"""

from __future__ import annotations


class UnknownName(ValueError):
    """A name the user chose (a framework, a network, a model) that the data at hand do not
    hold. The message names the ones they hold and how to choose one."""


class UsageError(ValueError):
    """A command line whose values each pass their check but that asks for something
    impossible together (options that exclude or need each other, too few inputs)."""
