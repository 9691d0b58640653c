"""Names of one table told apart only by letter case (issue 33, minor item):
distinct by the standard, one name on engines that compare names
case-insensitively. Such a case is `unsupported` where the dialect says so
and judged where it does not, never a false `error` or `mismatch`. (Names
refused outright, a control character or the `__wh_` prefix: test_names.py.)"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest

from harness.cli.main import main
from harness.core.errors import EngineError, Unsupported
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
SELECT "a" AS lower, "A" AS upper, sum("A") OVER (ORDER BY o) AS s FROM t;
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


# What each dialect's declaration rests on: loaded as they are, "a" and "A" are one name.
# (Spark would be too, but the harness's sessions set spark.sql.caseSensitive=true:
# there they are judged, test_names_told_apart_only_by_case_... [spark].)
CASE_FOLDED = [
    pytest.param("duckdb", [1, 2], id="duckdb"),  # answers "a"'s values for "A"
    pytest.param("sqlite", "duplicate column name", id="sqlite"),
]


@pytest.mark.parametrize(("name", "measured"), CASE_FOLDED)
def test_an_engine_that_lacks_case_sensitive_names_cannot_tell_them_apart(name, measured, engines):
    engine = engines.get(name)
    tables = {"t": pa.table({"a": [1, 2], "A": [10, 20]})}
    with pytest.raises(Unsupported, match=CASE_ONLY_NAMES):
        engine.check_tables(tables)
    sql = f"SELECT {engine.dialect.quote('A')} AS v FROM t ORDER BY v"
    if isinstance(measured, str):
        with pytest.raises(EngineError, match=measured):
            engine.run(tables, sql)
    else:
        assert engine.run(tables, sql).column("v").to_pylist() == measured


def test_tables_told_apart_only_by_case_are_a_clash_too(engines):
    with pytest.raises(Unsupported, match="tables 't' and 'T' differ only in letter case"):
        engines.get("duckdb").check_tables({"t": pa.table({"x": [1]}), "T": pa.table({"x": [2]})})
    engines.get("datafusion").check_tables({"t": pa.table({"x": [1]}), "T": pa.table({"x": [2]})})
