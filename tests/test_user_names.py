"""Names a user brings that engines or the harness cannot take as they are
(issue 33, minor items): a NUL in a name, names told apart only by letter
case, and names like the harness's own hidden columns. Each is said for its
file and the run goes on; none becomes a false `error` or `mismatch`."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness.cli.main import main
from harness.core.errors import Unsupported
from harness.core.names import CASE_ONLY_NAMES

ENGINES = "reference,duckdb,datafusion,sqlite"
GOOD = """
CREATE TABLE g (x INTEGER, o INTEGER);
INSERT INTO g VALUES (1, 1), (2, 2);
SELECT x, sum(x) OVER (ORDER BY o) AS s FROM g;
"""
# Two columns told apart only by case: distinct names by the standard (quoted).
CASE_ONLY = """
CREATE TABLE t ("a" INTEGER, "A" INTEGER, o INTEGER);
INSERT INTO t VALUES (1, 10, 1), (2, 20, 2);
SELECT "a", "A", sum("A") OVER (ORDER BY o) AS s FROM t;
"""
NAME_ENGINES = [
    pytest.param("duckdb", id="duckdb"),
    pytest.param("datafusion", id="datafusion"),
    pytest.param("sqlite", id="sqlite"),
    pytest.param("spark", id="spark", marks=pytest.mark.spark),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _run(capsys, *argv: str) -> tuple[int, dict, str]:
    code = main(["run", *argv, "--format", "json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out.strip() else {}, captured.err


def _verdicts(doc: dict) -> dict[tuple[str, str], str]:
    return {(r["case"], r["engine"]): r["verdict"] for r in doc["results"]}


def _good_ran(doc: dict) -> bool:
    return {v for (case, _), v in _verdicts(doc).items() if case == "good/q1"} == {"match"}


# -- a NUL in a name -----------------------------------------------------------


def test_a_nul_in_a_quoted_name_is_said_at_its_place_and_never_reaches_an_engine(tmp_path, capsys):
    sql = _write(tmp_path, "nul.sql", 'CREATE TABLE t ("a\x00b" INTEGER, o INTEGER);\n'
                 'SELECT "a\x00b", sum(o) OVER (ORDER BY o) AS s FROM t;\n')
    code, doc, err = _run(capsys, str(sql), str(_write(tmp_path, "good.sql", GOOD)), "--engines", ENGINES)
    assert not any(case.startswith("nul/") for case, _ in _verdicts(doc))  # no false `error` verdicts
    assert f"{sql}:1:17" in err and "NUL character" in err
    assert _good_ran(doc)


def test_a_nul_in_a_case_files_column_name_is_an_invalid_case(tmp_path, capsys):
    case = _write(tmp_path, "nul.yaml", """
        description: a column name holding a NUL
        tables:
          t:
            columns: {"a\\0b": INTEGER}
            rows: [[1]]
        sql: SELECT 1 AS one
        expected:
          columns: [one]
          rows: [[1]]
        """)
    code, doc, err = _run(capsys, str(case), str(_write(tmp_path, "good.sql", GOOD)), "--engines", ENGINES)
    assert code == 2 and f"{case}: tables" in err and "NUL character" in err
    assert _good_ran(doc)


def test_a_nul_in_a_parquet_column_name_is_said_for_its_table(tmp_path, capsys):
    tables = tmp_path / "tables"
    tables.mkdir()
    pq.write_table(pa.table({"a\x00b": [1, 2], "o": [1, 2]}), tables / "t.parquet")
    sql = _write(tmp_path, "q.sql", "SELECT o, sum(o) OVER (ORDER BY o) AS s FROM t;\n")
    code, doc, err = _run(capsys, str(sql), "--tables", str(tables), "--engines", ENGINES)
    assert code == 2 and doc.get("results", []) == []
    assert f"{sql}:1:1" in err and "table 't': column name 'a\\x00b'" in err


# -- names told apart only by letter case -------------------------------------------


@pytest.mark.parametrize("name", NAME_ENGINES)
def test_names_told_apart_only_by_case_are_unsupported_where_the_dialect_says_so(name, engines, tmp_path,
                                                                                capsys):
    """Never a false mismatch or error: `unsupported` where the dialect lacks
    the feature, judged (and matching) where it has it."""
    engine = engines.get(name)
    sql = _write(tmp_path, "case.sql", CASE_ONLY)
    argv = [str(sql), "--engines", f"reference,{name}"]
    if name == "postgres":
        argv += ["--postgres-dsn", engines.postgres_dsn()]
    code, doc, _ = _run(capsys, *argv)
    expected = "unsupported" if CASE_ONLY_NAMES in engine.dialect.unrepresentable else "match"
    assert _verdicts(doc) == {("case/q1", "reference"): "match", ("case/q1", name): expected}
    assert code == 0


@pytest.mark.parametrize("name", ["duckdb", "sqlite"])
def test_an_engine_that_lacks_case_sensitive_names_cannot_tell_them_apart(name, engines):
    """What the dialects declare, measured: loaded as they are, "a" and "A" are
    one name (DuckDB answers "a" for "A"; SQLite refuses the table)."""
    engine = engines.get(name)
    tables = {"t": pa.table({"a": [1, 2], "A": [10, 20]})}
    with pytest.raises(Unsupported, match=CASE_ONLY_NAMES):
        engine.check_tables(tables)
    try:
        answer = engine.run(tables, 'SELECT "A" AS v FROM t ORDER BY v')
    except Exception:  # noqa: BLE001 (any refusal shows the engine cannot hold both)
        return
    assert answer.column("v").to_pylist() != [10, 20]


def test_tables_told_apart_only_by_case_are_a_clash_too(engines):
    with pytest.raises(Unsupported, match="tables 't' and 'T' differ only in letter case"):
        engines.get("duckdb").check_tables({"t": pa.table({"x": [1]}), "T": pa.table({"x": [2]})})
    engines.get("datafusion").check_tables({"t": pa.table({"x": [1]}), "T": pa.table({"x": [2]})})


# -- names like the harness's hidden columns ---------------------------------------------


@pytest.mark.parametrize("text, where", [
    ("CREATE TABLE t (__wh_rowid INTEGER, o INTEGER);\nINSERT INTO t VALUES (1, 1);\n"
     "SELECT o, sum(o) OVER (ORDER BY o) AS s FROM t;\n", "3:1"),
    ("CREATE TABLE t (x INTEGER, o INTEGER);\nINSERT INTO t VALUES (1, 1);\n"
     "SELECT o AS __WH_ROWID, sum(o) OVER (ORDER BY o) AS s FROM t;\n", "3:13"),
])
def test_a_name_like_the_harness_row_id_is_said_for_its_file_and_the_run_goes_on(text, where, tmp_path,
                                                                                 capsys):
    sql = _write(tmp_path, "rowid.sql", text)
    code, doc, err = _run(capsys, str(sql), str(_write(tmp_path, "good.sql", GOOD)), "--engines", ENGINES)
    assert code == 2 and f"{sql}:{where}" in err and "'__wh_'" in err
    assert _good_ran(doc) and "Traceback" not in err


def test_a_case_files_column_like_the_row_id_is_an_invalid_case(tmp_path, capsys):
    case = _write(tmp_path, "rowid.yaml", """
        description: a column named like the harness's row id
        tables:
          t:
            columns: {__wh_rowid: INTEGER, o: INTEGER}
            rows: [[1, 1]]
        sql: SELECT o, sum(o) OVER (ORDER BY o) AS s FROM t
        expected:
          columns: [o, s]
          rows: [[1, 1]]
        """)
    code, doc, err = _run(capsys, str(case), str(_write(tmp_path, "good.sql", GOOD)), "--engines", ENGINES)
    assert code == 2 and f"{case}: tables" in err and "column name '__wh_rowid'" in err
    assert _good_ran(doc)
