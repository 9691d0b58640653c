"""Bad option values are refused before any work, exit 2, naming the option:
every numeric option of every command (one argparse type per range, in
cli/options.py), and every output path that cannot be written."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from harness.cli import options
from harness.cli.main import main, parser

CASE = """\
description: row_number over a unique key
tables:
  t:
    columns: {id: bigint, v: integer}
    rows: [[1, 10], [2, 20]]
sql: SELECT id, row_number() OVER (ORDER BY v) AS rn FROM t
expected:
  columns: [id, rn]
  rows: [[1, 1], [2, 2]]
"""

# -- numbers ------------------------------------------------------------------------

# Every numeric option of every command, with a value out of its range; the
# completeness test below keeps this list in step with the parser.
OUT_OF_RANGE = [
    ("fuzz", "--minutes", "-1"), ("fuzz", "--minutes", "0"), ("fuzz", "--cases", "-1"),
    ("fuzz", "--seed", "-5"), ("fuzz", "--jobs", "0"), ("gate", "--jobs", "0"), ("fuzz", "--reduce-seconds", "0"),
    ("fuzz", "--timeout", "0"), ("fuzz", "--timeout", "nan"), ("fuzz", "--metamorphic-share", "1.5"),
    ("fuzz", "--batch-size", "0"), ("fuzz", "--unbatched-share", "-0.1"), ("fuzz", "--reruns", "-1"),
    ("fuzz", "--bare-share", "1.01"), ("fuzz", "--large-share", "-0.5"), ("fuzz", "--profile-share", "2"),
    ("fuzz", "--thread-share", "nan"),
    ("gate", "--budget-seconds", "-1"), ("gate", "--budget-cases", "-1"), ("gate", "--seed", "-1"),
    ("gate", "--timeout", "0"), ("gate", "--timeout", "inf"), ("gate", "--ab-reduce-seconds", "-1"),
    ("reduce", "--seconds", "0"), ("reduce", "--seconds", "-2"),
    ("run", "--spark-threads", "0"), ("gate", "--spark-threads", "-1"),
    ("spark-cluster", "--workers", "0"), ("spark-cluster", "--cores", "0"),
]

POSITIONALS = {"reduce": ["case.yaml"], "run": ["case.yaml"]}


def _numeric_options() -> set[tuple[str, str]]:
    """(command, option) of every option whose value is converted by a type that is
    not a path or text: each must be one of options.NUMBER_TYPES."""
    found = set()
    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    for command, p in sub.choices.items():
        for action in p._actions:
            if action.type not in (None, str, Path, *options.TEXT_TYPES):
                assert action.type in options.NUMBER_TYPES, (command, action.option_strings)
                found.add((command, action.option_strings[0]))
    return found


def test_every_numeric_option_has_a_range_and_an_out_of_range_test():
    assert _numeric_options() == {(c, o) for c, o, _ in OUT_OF_RANGE}


@pytest.mark.parametrize(("command", "option", "value"), OUT_OF_RANGE)
def test_an_out_of_range_number_exits_2_naming_the_option(capsys, command, option, value):
    with pytest.raises(SystemExit) as stop:  # refused as the options are read: no work starts
        parser().parse_args([command, *POSITIONALS.get(command, []), option, value])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}: must be " in err and repr(value) in err


@pytest.mark.parametrize(("kind", "good", "bad"), [
    (options.positive_int, ["1", "40"], ["0", "-1", "1.5", "x"]),
    (options.non_negative_int, ["0", "7"], ["-1", "2.0", ""]),
    (options.positive_float, ["0.001", "30"], ["0", "-1", "nan", "inf", "-inf"]),
    (options.non_negative_float, ["0", "2.5"], ["-0.5", "nan", "inf"]),
    (options.share, ["0", "0.5", "1"], ["-0.1", "1.01", "nan"]),
])
def test_the_number_types_accept_their_range_only(kind, good, bad):
    for text in good:
        assert kind(text) == float(text)
    for text in bad:
        with pytest.raises(argparse.ArgumentTypeError, match="must be"):
            kind(text)


# -- output paths -------------------------------------------------------------------


def _command(tmp_path: Path, kind: str, out: str) -> tuple[list[str], str]:
    """The argv of `kind` writing to `out`, and the option that names it."""
    case = tmp_path / "case.yaml"
    case.write_text(CASE, encoding="utf-8")
    one = ["--engines", "reference"]
    gate = ["gate", *one, "--corpus", str(case), "--budget-seconds", "0"]
    return {
        "run --out": (["run", str(case), *one, "--out", out], "--out"),
        "run --report": (["run", str(case), *one, "--report", out], "--report"),
        "fuzz --out": (["fuzz", *one, "--cases", "1", "--out", out], "--out"),
        "gate --out": ([*gate, "--out", out], "--out"),
        "gate --junit": ([*gate, "--out", str(tmp_path / "gate"), "--junit", out], "--junit"),
        "report --out": (["report", str(tmp_path), "--out", out], "--out"),
        "reduce --out": (["reduce", str(case), "--out", out], "--out"),
    }[kind]


LONG = "x" * 300  # a name longer than any file system takes
DIRECTORIES = ["run --out", "fuzz --out", "gate --out"]
FILES = ["run --report", "gate --junit", "report --out", "reduce --out"]


@pytest.mark.parametrize(("kind", "where"), [
    *[(kind, where) for kind in DIRECTORIES for where in ("a-file", "a-file/out", LONG)],
    *[(kind, where) for kind in FILES for where in ("a-dir.html", "a-file/out.html", LONG + ".html")],
], ids=lambda v: "a name too long" if v.startswith(LONG) else v)
def test_an_output_path_that_cannot_be_written_exits_2_naming_option_and_path(
        tmp_path, capsys, kind, where):
    (tmp_path / "a-file").write_text("not a directory")
    (tmp_path / "a-dir.html").mkdir()
    argv, option = _command(tmp_path, kind, str(tmp_path / where))
    assert main(argv) == 2  # no exception: a traceback would be one
    err = capsys.readouterr().err
    assert f"error: {option}: " in err and str(tmp_path / where.partition("/")[0]) in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-dir.html", "a-file", "case.yaml"]


def test_the_writability_probe_leaves_nothing_behind(tmp_path):
    options.check_out_dir(tmp_path / "new" / "dir")
    options.check_out_file(tmp_path / "x.html")
    assert list(tmp_path.iterdir()) == []
