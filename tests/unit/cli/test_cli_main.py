"""The `dlperf` command as a whole: every command's help, the entry points, one-line refusals
for what argparse rejects, and a bug that shows its traceback instead of a user error."""

from __future__ import annotations

import subprocess
import sys

import pytest
from clirun import assert_refused, run

from dlperf import stages
from dlperf.cli import build_parser, main

COMMANDS = list(build_parser()._subparsers._group_actions[0].choices)


def test_the_commands_are_the_documented_ones():
    assert COMMANDS == [
        "env",
        "bench",
        "aggregate",
        "fit",
        "validate",
        "combine",
        "report",
        "predict",
        "plan",
        "write-config",
        "forget-disturbed",
        "check-config",
        "plan-sweep",
        "preflight",
        "archive",
        "verify-archive",
        "adaptive-replay",
        "adaptive-round",
        "compare",
        "compare-frameworks",
    ]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_its_help(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: dlperf {command} ")


def test_the_entry_points_run(workflow_bin):
    for argv in ([str(workflow_bin / "dlperf")], [sys.executable, "-m", "dlperf"]):
        done = subprocess.run([*argv, "--help"], capture_output=True, text=True, check=True)
        assert all(command in done.stdout for command in COMMANDS)
    done = subprocess.run(
        [sys.executable, "-m", "dlperf.cli", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout.startswith("dlperf ")


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["nosuch"], ["invalid choice: 'nosuch'"]),
        (["combine", "a.csv", "--out", "b.csv", "--bogus"], ["unrecognized arguments: --bogus"]),
        (["combine", "a.csv"], ["--out"]),
        (["fit", "--timings", "t.csv", "--framework", "x", "--out", "o", "--seed"], ["--seed"]),
    ],
)
def test_what_argparse_refuses_is_one_line(argv, words):
    assert_refused(argv, *words)


def test_a_missing_input_is_a_user_error(tmp_path):
    err = assert_refused(["combine", str(tmp_path / "none.csv"), "--out", str(tmp_path / "o")])
    assert err.startswith("dlperf combine: error: ") and "none.csv" in err


def test_a_bug_shows_its_traceback(monkeypatch, tmp_path):
    """A KeyError (or any exception not of a user error's type) is a bug: main lets it through,
    so the traceback says where it happened."""

    def reads_a_missing_key(*args, **kwargs):
        return {}["missing"]

    monkeypatch.setattr(stages, "combine", reads_a_missing_key)
    with pytest.raises(KeyError, match="missing"):
        run(["combine", str(tmp_path / "a.csv"), "--out", str(tmp_path / "b.csv")])


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_refuses_an_unknown_option_in_one_line(command):
    assert_refused([command, "--no-such-option", "1"])


def test_an_unknown_option_after_a_valid_call_names_its_command(tmp_path):
    """argparse leaves options it does not know to the top parser, which said only "dlperf"."""
    model = tmp_path / "m.json"
    argv = ["plan", "--model", str(model), "--batch-size", "8", "--deadline", "2h", "--json"]
    err = assert_refused(argv, "--json", "dlperf plan --help")
    assert err.startswith("dlperf plan: error: unrecognized arguments"), err


def _commands():
    import argparse

    from dlperf.cli import build_parser

    actions = build_parser()._actions
    return next(a for a in actions if isinstance(a, argparse._SubParsersAction)).choices


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_has_help_and_the_command_an_example(command):
    parser = _commands()[command]
    bare = [a.dest for a in parser._actions if not a.help]
    assert bare == [], bare
    assert parser.epilog.startswith("example: ")
    example = parser.epilog.removeprefix("example: ")
    if example.startswith("dlperf "):  # it is a command line dlperf reads
        from dlperf.cli import build_parser

        args = build_parser().parse_args(example.split()[1:])
        assert args.command == command


def test_an_option_group_several_commands_share_is_declared_once():
    """The sweep config and its defaults, the hardware of an answer across GPU types, and an
    answer's format and destination: each declared by its one owner in cli/arguments.py."""
    from pathlib import Path

    import dlperf.cli

    declared = {
        path.name: path.read_text(encoding="utf-8")
        for path in Path(dlperf.cli.__file__).parent.glob("*.py")
    }
    for option in ('"--defaults"', '"--format"', 'help=f"with {option}'):
        owners = [name for name, text in declared.items() if option in text]
        assert owners == ["arguments.py"], (option, owners)
    subcommands = build_parser()._subparsers._group_actions[0].choices
    for command, option in [("predict", "--gpu"), ("plan", "--gpus")]:
        actions = {a.dest: a for a in subcommands[command]._actions}
        assert actions["hardware"].help.startswith(f"with {option}: ")
