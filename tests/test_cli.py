"""The `window-harness` command line: exit codes, bad input, output formats."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from harness.cli.main import main

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
