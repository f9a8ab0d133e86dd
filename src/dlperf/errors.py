"""The error types a user's input can cause. Every one derives from :class:`DlperfError`, and
the ``dlperf`` command prints exactly these in one line (exit status 2); any other exception
(a plain ValueError or KeyError included) is a bug and shows its traceback.

Some modules keep an error of their own (``study.archive.ArchiveError``,
``measurements.records.RecordError``, ``models.base.InsufficientData``, ...), derived from
:class:`DlperfError` too. This module imports nothing but the standard library: the benchmark
side (:mod:`dlperf.bench`), which runs inside the framework environments, raises these as well.
"""

from __future__ import annotations


class DlperfError(ValueError):
    """Something a user asked or gave that dlperf cannot use; the message names the cause and
    the fix. A ValueError, so that code that checks a value with ``except ValueError`` keeps
    catching it."""


class UnknownName(DlperfError):
    """A name the user chose (a framework, a network, a model, a protocol) that the data at
    hand or dlperf do not hold. The message names the ones there are and how to choose one."""


class UsageError(DlperfError):
    """A command line that asks for something dlperf cannot do beyond what the argument types
    check: options that exclude or need each other, too few inputs, a deadline it cannot read."""


class ConfigError(DlperfError):
    """A configuration (a config file, ``--config-json``, a model's settings, one benchmark
    run's configuration) that breaks the schema or a rule the schema cannot express.
    :mod:`dlperf.config` raises it; the models and ``bench.spec.RunConfig`` raise it for values
    they cannot use, without importing the config machinery."""


class InputFileError(DlperfError):
    """A file or directory the user named that is not there, cannot be read (a malformed CSV or
    JSON file), or does not hold what the command needs (a missing column, no run records)."""


class UnusablePrediction(DlperfError):
    """A model that predicts an epoch time that cannot be used (not positive) at configurations
    the user asked for: they lie too far from the measured ones."""


class NotComparable(DlperfError):
    """Two studies that cannot be compared: no successful run, no configuration in common, or
    every shared one disturbed."""


class EnvironmentProblem(DlperfError):
    """A framework environment that cannot be built (pip failed) or, for one a site provides,
    cannot run the benchmarks; the message names what it lacks."""
