"""Values a user gave, as an error message quotes them: the way they are written in a config
file or on the command line, never Python's ``{'a': 1}`` or ``['fp8']``. Standard library only,
and apart from :mod:`dlperf.errors`: the benchmark side's code digest does not cover it, so a
message's wording never re-measures a study."""

from __future__ import annotations

#: The most characters of one value a message quotes: a whole file given where one value was
#: meant (a model artifact as a config) is cut, not printed in full.
LONGEST = 160


def shown(value: object) -> str:
    """A value a user gave, as a message quotes it: a word in quotes ('jax'), a number as
    written, a list as ``[a, b]`` and a mapping as ``{key=value, ...}`` -- never Python's
    ``{'a': 1}`` or ``['fp8']``."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, dict | list | tuple | set | frozenset):
        inner = listing(value)
        text = "{" + inner + "}" if isinstance(value, dict) else "[" + inner + "]"
    else:
        text = str(value)
    if len(text) > LONGEST:
        return f"{text[:LONGEST]}... ({len(text) - LONGEST:,} more characters)"
    return text


def listing(values: object) -> str:
    """Several values as a message lists them: ``a, b, c``, a mapping as ``key=value, ...``;
    a list or mapping inside one shown in brackets, as :func:`shown` shows it."""

    def item(value: object) -> str:
        return str(value) if isinstance(value, str) else shown(value)

    if isinstance(values, dict):
        return ", ".join(f"{key}={item(value)}" for key, value in values.items())
    return ", ".join(item(value) for value in values)
