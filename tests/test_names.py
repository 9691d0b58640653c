"""Names the harness refuses at load time (issue 33, minor items): a control
character in an identifier, output names of a subquery that differ only in
case, and a name with the harness's hidden-column prefix `__wh_`. Each is the file's
error, naming the file and the name (and the table), and the run goes on
with the other files; no engine sees it, so no false `error` or `mismatch`."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness.cases.case import load_case
from harness.cases.tablefiles import read_table_file
from harness.cli.main import main
from harness.core.errors import InvalidCase, InvalidInput

GOOD = "CREATE TABLE g (a integer);\nINSERT INTO g VALUES (1);\nSELECT a, row_number() OVER (ORDER BY a) AS r FROM g;\n"
ENGINES = "reference,duckdb,sqlite,datafusion"


def _run(paths: list[Path], capsys) -> tuple[int, set[tuple[str, str, str]], str]:
    code = main(["run", *map(str, paths), "--engines", ENGINES, "--format", "json"])
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    return code, {(r["case"], r["engine"], r["verdict"]) for r in doc["results"]}, captured.err


def _good_verdicts() -> set[tuple[str, str, str]]:
    return {("good/q1", e, "match") for e in ENGINES.split(",")}


def _case_file(path: Path, columns: dict[str, str], sql: str) -> Path:
    path.write_text(json.dumps({
        "description": "names", "sql": sql, "expected": {"columns": ["x"], "rows": [[1]]},
        "tables": {"t": {"columns": columns, "rows": [[1] * len(columns)]}}}))
    return path


# -- control characters -----------------------------------------------------------------

CONTROLS = ["\x00", "\x01", "\t", "\n", "\x1f", "\x7f"]


@pytest.mark.parametrize("control", CONTROLS, ids=lambda c: f"U+{ord(c):04X}")
def test_a_control_character_in_a_quoted_name_is_the_files_error(control: str, tmp_path: Path, capsys) -> None:
    name = f"a{control}b"
    bad = tmp_path / "bad.sql"
    bad.write_text(f'CREATE TABLE t ("{name}" integer);\nINSERT INTO t VALUES (1);\n'
                   f'SELECT "{name}", row_number() OVER () AS r FROM t;\n')
    (tmp_path / "good.sql").write_text(GOOD)
    code, verdicts, err = _run([tmp_path], capsys)
    assert code == 2 and verdicts == _good_verdicts()
    assert f"invalid case: {bad}:1:1: table 't': the name {name!r} holds a control character" in err


def test_a_nul_in_a_case_files_column_is_an_invalid_case(tmp_path: Path) -> None:
    path = _case_file(tmp_path / "nul.yaml", {"a\x00b": "integer"}, 'SELECT "a\x00b" AS x FROM t')
    with pytest.raises(InvalidCase, match=r"tables\.t: table 't': the name 'a\\x00b' holds a control character"):
        load_case(path, "nul")


def test_a_nul_in_a_case_files_query_is_an_invalid_case(tmp_path: Path) -> None:
    path = _case_file(tmp_path / "nul.yaml", {"a": "integer"}, 'SELECT a AS "x\x00" FROM t')
    with pytest.raises(InvalidCase, match=r"nul\.yaml: sql: the name 'x\\x00' holds a control character"):
        load_case(path, "nul")


# -- names that differ only in case -----------------------------------------------------


# Columns of one table told apart only by case: tests/test_user_names.py (unsupported
# where the dialect cannot hold them, judged where it can).


# -- the harness's hidden-column prefix ---------------------------------------------------


@pytest.mark.parametrize("statement", [
    "CREATE TABLE t (__wh_rowid integer, b integer);\nINSERT INTO t VALUES (1, 2);\n"
    "SELECT b, row_number() OVER (ORDER BY b) AS r FROM t;\n",
    'CREATE TABLE t (b integer);\nINSERT INTO t VALUES (2);\nSELECT b AS "__WH_RN_0", rank() OVER (ORDER BY b) AS r FROM t;\n',
])
def test_a_reserved_name_is_the_files_error_and_the_run_goes_on(statement: str, tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.sql"
    bad.write_text(statement)
    (tmp_path / "good.sql").write_text(GOOD)
    code, verdicts, err = _run([tmp_path], capsys)
    assert code == 2 and verdicts == _good_verdicts()
    assert f"invalid case: {bad}:" in err and "which the harness keeps for its hidden columns" in err
    assert "table 't'" in err or "__WH_RN_0" in err


def test_a_case_file_with_a_reserved_column_is_invalid_and_the_others_run(tmp_path: Path, capsys) -> None:
    bad = _case_file(tmp_path / "rowid.yaml", {"__wh_rowid": "integer"}, "SELECT __wh_rowid AS x FROM t")
    (tmp_path / "good.sql").write_text(GOOD)
    code, verdicts, err = _run([tmp_path], capsys)
    assert code == 2 and verdicts == _good_verdicts()
    assert f"invalid case: {bad}: tables.t: table 't': the name '__wh_rowid' starts with '__wh_'" in err


def test_a_tables_file_with_a_reserved_column_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"__wh_rowid": [1], "a": [2]}), path)
    with pytest.raises(InvalidInput, match=rf"{path}: the name '__wh_rowid' starts with '__wh_'"):
        read_table_file(path)


def test_output_columns_differing_only_in_case_are_refused_not_judged(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.sql"
    bad.write_text('CREATE TABLE t (a integer);\nINSERT INTO t VALUES (1), (2);\n'
                   'SELECT * FROM (SELECT a AS x, a + 1 AS "X" FROM t) AS s;\n'
                   'WITH w(y, "Y") AS (SELECT a, a + 1 FROM t) SELECT * FROM w;\n')
    (tmp_path / "good.sql").write_text(GOOD)
    code, verdicts, err = _run([tmp_path], capsys)
    assert code == 2 and verdicts == _good_verdicts()  # no false mismatch on DuckDB and SQLite
    assert f"invalid case: {bad}:3:1: output columns 'x' and 'X' differ only in case" in err
    assert f"invalid case: {bad}:4:1: the column list's names 'y' and 'Y' differ only in case" in err
