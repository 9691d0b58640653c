"""The `window-harness` command line: exit codes, bad input, output formats; the
package's shape (only harness/cli knows argparse, shared options built once)
and the one progress display."""

from __future__ import annotations

import argparse
import ast
import io
import json
import sys
import textwrap
from pathlib import Path

import pytest

import harness
from harness.cli import options
from harness.cli.main import COMMANDS, main, parser
from harness.cli.progress import ProgressLine, progress_text
from harness.results.store import Progress

GOOD_CASE = """\
description: row_number over a unique key
tags: [row_number]
tables:
  t:
    columns: {id: bigint, v: integer}
    rows: [[1, 10], [2, 20]]
sql: SELECT id, row_number() OVER (ORDER BY v DESC NULLS LAST) AS rn FROM t
expected:
  columns: [id, rn]
  rows: [[1, 2], [2, 1]]
"""


def _write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_run_json_shape(tmp_path, capsys):
    path = _write(tmp_path, "good.yaml", GOOD_CASE)
    code = main(["run", str(path), "--engines", "reference,duckdb", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert set(doc) == {"engines", "results", "summary"}
    assert set(doc["engines"]) == {"reference", "duckdb"}
    assert {(r["case"], r["engine"], r["verdict"]) for r in doc["results"]} == {
        ("good", "reference", "match"),
        ("good", "duckdb", "match"),
    }
    assert doc["summary"]["passed"] is True


def test_wrong_expected_rows_fail_with_exit_1(tmp_path, capsys):
    path = _write(tmp_path, "bad_rows.yaml", GOOD_CASE.replace("[[1, 2], [2, 1]]", "[[1, 1], [2, 2]]"))
    assert main(["run", str(path), "--engines", "reference"]) == 1
    out = capsys.readouterr().out
    assert "bad_rows" in out and "mismatch" in out


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (GOOD_CASE.replace("bigint", "bignum"), "tables.t.columns.id"),
        (GOOD_CASE.replace("sql: SELECT id,", "sql: SELECT id"), "sql"),
        (GOOD_CASE.replace("description: row_number over a unique key\n", ""), "description"),
        (GOOD_CASE.replace("[[1, 10], [2, 20]]", "[[1, 10], [2]]"), "rows[1]"),
        (GOOD_CASE.replace("row_number()", "row_numbr()"), "row_numbr"),
        ("just text", "mapping"),
    ],
)
def test_malformed_case_names_file_and_field(tmp_path, capsys, text, field):
    path = _write(tmp_path, "broken.yaml", text)
    assert main(["run", str(path), "--engines", "reference"]) == 2
    err = capsys.readouterr().err
    assert "broken.yaml" in err and field in err


def test_unknown_engine_is_bad_input(tmp_path, capsys):
    path = _write(tmp_path, "good.yaml", GOOD_CASE)
    assert main(["run", str(path), "--engines", "reference,oracle9"]) == 2
    err = capsys.readouterr().err
    assert "oracle9" in err and "duckdb" in err


# An engine's library "not installed": None in sys.modules makes `import NAME` raise
# ImportError and importlib's find_spec answer None, as for an absent package. (A fresh
# virtualenv without the extras shows the same; this keeps it in the suite.)
@pytest.mark.parametrize(("engine", "library"), [
    ("duckdb", "duckdb"), ("datafusion", "datafusion"), ("spark", "pyspark"), ("postgres", "psycopg"),
])
def test_an_engine_not_installed_is_bad_input_naming_its_extra(tmp_path, capsys, monkeypatch,
                                                               engine, library):
    monkeypatch.setitem(sys.modules, library, None)
    path = _write(tmp_path, "good.yaml", GOOD_CASE)
    assert main(["run", str(path), "--engines", f"reference,{engine}",
                 "--postgres-dsn", "host=localhost"]) == 2
    err = capsys.readouterr().err
    assert f"engine {engine!r} is not available" in err
    assert f"pip install 'window-harness[{engine}]'" in err


def test_the_default_engines_are_those_installed_and_say_which_are_left_out(
        tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "duckdb", None)
    monkeypatch.setitem(sys.modules, "pyspark", None)
    monkeypatch.delenv("WINDOW_HARNESS_POSTGRES_DSN", raising=False)
    path = _write(tmp_path, "good.yaml", GOOD_CASE)
    assert main(["run", str(path), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert list(json.loads(captured.out)["engines"]) == ["reference", "datafusion", "sqlite"]
    assert ("leaving out duckdb, spark, not installed "
            "(pip install 'window-harness[duckdb,spark]')") in captured.err


def test_missing_path_is_bad_input(tmp_path, capsys):
    assert main(["run", str(tmp_path / "nope")]) == 2
    assert "nope" in capsys.readouterr().err


# -- the package: only harness/cli knows the command line ----------------------------


def _imports(path: Path) -> set[str]:
    """Every module `path` imports, at any depth (a function's imports too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_no_module_outside_cli_imports_argparse_or_the_cli():
    package = Path(harness.__file__).parent
    offenders = {}
    for path in sorted(package.rglob("*.py")):
        if path.is_relative_to(package / "cli") or path == package / "__main__.py":
            continue  # `python -m harness` is the command line's own entry
        bad = {n for n in _imports(path) if n == "argparse" or n == "harness.cli" or n.startswith("harness.cli.")}
        if bad:
            offenders[str(path.relative_to(package))] = sorted(bad)
    assert offenders == {}


def test_the_scan_sees_a_function_level_import(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("def f():\n    from harness.cli.options import ENGINES\n    import argparse\n")
    assert {"argparse", "harness.cli.options"} <= _imports(path)


def test_one_module_per_command():
    """Named alike: a hyphen of the command is an underscore of its module (spark-cluster);
    a command that is a Python keyword ends its module's name with one (import_, PEP 8)."""
    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == [m.__name__.rsplit(".", 1)[1].rstrip("_").replace("_", "-") for m in COMMANDS]


@pytest.mark.parametrize(("parent", "dest", "commands"), [
    (options.ENGINES, "engines", ["run", "fuzz", "gate"]),
    (options.ENGINE_PYTHON, "engine_python", ["run", "fuzz", "gate"]),
    (options.POSTGRES, "postgres_dsn", ["run", "fuzz", "gate", "reduce", "replay"]),
    (options.FORMAT, "format", ["run", "cases", "fuzz", "gate", "replay"]),
    (options.REPORT, "report", ["run", "fuzz", "gate"]),
])
def test_shared_options_are_built_once(parent, dest, commands):
    """Each command's option is the parent's very action, not a copy written again."""
    shared = next(a for a in parent._actions if a.dest == dest)
    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    for command in commands:
        assert any(a is shared for a in sub.choices[command]._actions), command


# -- the one progress display --------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_rewrites_one_line():
    stream = _Terminal()
    line = ProgressLine(stream)
    progress = line.cases("corpus ")
    progress(0, 2, "a/first")
    progress(1, 2, "b/" + "x" * 300)
    line.clear()
    frames = stream.getvalue().split("\r\033[K")
    assert frames == ["", "corpus [1/2] a/first", ("corpus [2/2] b/" + "x" * 300)[:200], ""]


def test_the_gates_corpus_and_fuzz_share_the_line_and_each_logs_its_own():
    """The gate's two parts report at once (the campaign from a thread): on a
    terminal the line shows both while the corpus runs, the fuzz alone after its
    last case; in a log, each part keeps its own pace."""
    progress = Progress()
    progress.add_case({"index": 0, "seed": "1/0", "shape": "1/0", "verdicts": {"duckdb": "match"}, "cells": []})
    fuzz = progress_text(progress, 1.0)
    stream = _Terminal()
    line = ProgressLine(stream)
    corpus = line.cases("corpus ")
    corpus(0, 2, "a")
    line.campaign(progress, 1.0)
    corpus(1, 2, "b")  # the last case: the corpus part ends
    line.campaign(progress, 2.0)
    frames = stream.getvalue().split("\r\033[K")
    assert frames[1:4] == ["corpus [1/2] a", f"corpus [1/2] a | {fuzz}", f"corpus [2/2] b | {fuzz}"]
    log = io.StringIO()
    line = ProgressLine(log)
    line.cases("", lambda i, n: f"corpus {i}/{n}")(0, 3, "a")
    line.campaign(progress, 1.0)  # its own first line, though the corpus just logged
    line.cases("", lambda i, n: f"corpus {i}/{n}")(1, 3, "b")  # within 15 s of its own: skipped
    assert log.getvalue() == f"corpus 1/3\n{fuzz}\n"


def test_progress_in_a_log_writes_a_line_now_and_then():
    stream = io.StringIO()
    line = ProgressLine(stream)
    for done in range(3):
        line.cases("corpus ", lambda i, n: f"gate: corpus: {i}/{n} cases")(done, 3, "c")
    assert stream.getvalue() == "gate: corpus: 1/3 cases\n"  # the next within 15 s is skipped
    line.clear()  # something else was printed: the next update shows at once
    line.cases(log=lambda i, n: f"{i}/{n}")(2, 3, "c")
    assert stream.getvalue() == "gate: corpus: 1/3 cases\n3/3\n"


def test_progress_of_run_in_a_log_is_silent():
    stream = io.StringIO()
    ProgressLine(stream).cases()(0, 1, "c")
    assert stream.getvalue() == ""


def test_progress_of_a_campaign():
    progress = Progress()
    for index, verdicts in enumerate([{"duckdb": "match"}, {"duckdb": "mismatch"}]):
        progress.add_case({"index": index, "seed": f"1/{index}", "shape": "1/0", "verdicts": verdicts,
                           "cells": ["frame|rank|none|none|none|none|any|any|any", "not|a|cell"]})
    text = "2 cases 1.0/s, 1 shapes 30/min, 1 cells 30/min | duckdb 1ok 1x | findings 0"
    assert progress_text(progress, 2.0) == text
    stream = io.StringIO()
    line = ProgressLine(stream)
    line.campaign(progress, 2.0)
    line.campaign(progress, 2.1)
    assert stream.getvalue() == text + "\n"
