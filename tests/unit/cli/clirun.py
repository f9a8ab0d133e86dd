"""Running ``dlperf`` in-process for the CLI tests: the exit status and stderr of a command,
the check that a refusal is one line, and hostile values for hypothesis."""

from __future__ import annotations

import contextlib
import io
import warnings

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from dlperf.cli import main

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def run(argv: list[str]) -> tuple[int, str]:
    """Exit status and stderr of ``dlperf ARGV``; every warning raised on the way is an error."""
    err = io.StringIO()
    with (
        contextlib.redirect_stderr(err),
        contextlib.redirect_stdout(io.StringIO()),
        warnings.catch_warnings(record=True) as caught,
        np.errstate(all="raise"),
    ):
        warnings.simplefilter("always")
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    assert not caught, [str(w.message) for w in caught]
    return code, err.getvalue()


def assert_refused(argv: list[str], *words: str) -> str:
    code, err = run(argv)
    assert code == 2, (argv, code, err)
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err and "usage:" not in err
    assert err.startswith("dlperf"), err
    for word in words:
        assert word in err, (word, err)
    return err


# Hostile values: zero and below, far too large, NaN and infinities, not numbers at all (text
# without digits, line breaks included), empty.
no_digits = st.characters(codec="utf-8", exclude_categories=("Nd",), exclude_characters="\x00")


hostile_numbers = (
    st.integers(max_value=0).map(str)
    | st.integers(min_value=10**22).map(str)
    | st.floats(max_value=0).map(repr)
    | st.floats(min_value=1e22, allow_infinity=True).map(repr)
    | st.sampled_from(["nan", "NaN", "inf", "-inf", "1e400", "-0", "0.0", "", " ", "1,5", "0x10"])
    | st.text(alphabet=no_digits, max_size=6)
)


hostile_names = st.text(alphabet=no_digits, min_size=1, max_size=12).filter(
    lambda s: s not in ("pytorch", "tensorflow", "mxnet", "mlp")
)


def with_value(argv: list[str], option: str, value: str) -> list[str]:
    # '--option=value' keeps a value that starts with '-' a value.
    return argv + [f"{option}={value}"]


def without(argv: list[str], option: str) -> list[str]:
    if option not in argv:
        return argv
    i = argv.index(option)
    return argv[:i] + argv[i + 2 :]
