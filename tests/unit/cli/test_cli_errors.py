"""What the `dlperf` command calls a user error: only the project's own types (DlperfError and
those derived from it) print one line and exit 2; anything else, a plain ValueError from NumPy
or pandas included, is a bug and shows its traceback."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from clirun import assert_refused, run

import dlperf
from dlperf import stages
from dlperf.errors import DlperfError

SRC = Path(dlperf.__file__).parent


@pytest.mark.parametrize(
    "bug", [ValueError("a bug"), KeyError("a bug"), pd.errors.ParserError("a bug")]
)
def test_an_error_not_of_the_project_is_let_through(monkeypatch, tmp_path, bug):
    def fails(*args, **kwargs):
        raise bug

    monkeypatch.setattr(stages, "combine", fails)
    with pytest.raises(type(bug), match="a bug"):
        run(["combine", str(tmp_path / "a.csv"), "--out", str(tmp_path / "b.csv")])


def test_a_plain_value_error_shows_its_traceback(tmp_path):
    """The whole way, as a user sees it: the traceback on stderr, exit status 1 (not 2)."""
    program = (
        "import sys\n"
        "from dlperf import stages\n"
        "from dlperf.cli import main\n"
        "def combine(*args, **kwargs):\n"
        "    raise ValueError('not a user error')\n"
        "stages.combine = combine\n"
        f"sys.exit(main(['combine', 'a.csv', '--out', {str(tmp_path / 'b.csv')!r}]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" in done.stderr and "ValueError: not a user error" in done.stderr


def test_every_error_type_of_the_project_is_a_dlperf_error():
    """A new error class deriving from ValueError straight away would be a traceback for the
    user: it must derive from DlperfError (or a type derived from it)."""
    direct = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = {ast.unparse(base) for base in node.bases}
                if "ValueError" in bases and node.name != DlperfError.__name__:
                    direct.append(f"{path.relative_to(SRC)}:{node.name}")
    assert direct == []


def test_a_bad_config_is_one_line(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("seed: -1\n")
    assert_refused(["check-config", str(config)], "check-config", "seed")


def test_an_unknown_name_is_one_line(study):
    assert_refused(
        ["fit", "--timings", study["timings"], "--framework", "nosuch", "--out", "o.json"],
        "unknown framework 'nosuch'",
    )


@pytest.mark.parametrize(
    "text",
    ['a,b\n1,2,3\n"unclosed\n', "", "\xff\xfe\x00 not text"],
    ids=["quote", "empty", "bytes"],
)
def test_a_malformed_csv_is_one_line_naming_the_file(tmp_path, text):
    table = tmp_path / "summary.csv"
    table.write_bytes(text.encode("latin-1"))
    err = assert_refused(["combine", str(table), "--out", str(tmp_path / "o.csv")])
    assert "summary.csv is not a readable CSV table" in err


def test_a_timings_table_without_a_column_is_one_line(study, tmp_path):
    broken = tmp_path / "timings.csv"
    pd.read_csv(study["timings"]).drop(columns=["procs"]).to_csv(broken, index=False)
    assert_refused(
        ["fit", "--timings", str(broken), "--framework", "pytorch", "--out", "o.json"],
        "timings.csv",
        "missing required column(s) procs",
    )


def test_a_malformed_json_file_is_one_line_naming_the_file(tmp_path):
    rounds = tmp_path / "round1.json"
    rounds.write_text('{"round": ')
    err = assert_refused(["adaptive-round", str(rounds), "--round", "1", "--out", "o.json"])
    assert "round1.json is not valid JSON" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["combine", "{missing}", "--out", "o.csv"],
        ["fit", "--timings", "{missing}", "--framework", "pytorch", "--out", "o.json"],
        [
            "predict",
            "--model",
            "{missing}",
            "--procs",
            "1",
            "--batch-size",
            "8",
            "--data-size",
            "80",
        ],
        ["aggregate", "{missing}", "--timings", "t.csv", "--failures", "f.csv"],
        ["forget-disturbed", "--timings", "{missing}"],
    ],
    ids=lambda argv: argv[0],
)
def test_a_missing_file_is_one_line_naming_it(tmp_path, argv):
    missing = str(tmp_path / "gone.file")
    err = assert_refused([word.format(missing=missing) for word in argv], "gone.file")
    assert "does not exist" in err


def test_insufficient_data_is_one_line(tmp_path):
    timings = tmp_path / "tiny.csv"
    timings.write_text(
        "framework,procs,batch_size,iter_time_s\npytorch,1,8,0.1\npytorch,2,8,0.06\n"
    )
    artifact = tmp_path / "tiny.json"
    assert (
        run(["fit", "--timings", str(timings), "--framework", "pytorch", "--out", str(artifact)])[0]
        == 0
    )
    assert (
        json.loads(artifact.read_text())["networks"]["external"]["models"]["generic"]["status"]
        == "insufficient_data"
    )
    argv = ["predict", "--model", str(artifact), "--model-name", "generic", "--procs", "4"]
    assert_refused(
        argv + ["--batch-size", "8", "--data-size", "80"], "was not fitted", "at least 3"
    )
