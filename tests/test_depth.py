"""Deep SQL is an error, not a crash (issue 33, item 3).

Text nested deeper than `MAX_DEPTH` (parentheses, subqueries, CASE in CASE,
calls in calls, NOT NOT ...) or a left-deep chain as long (`1 + 1 + ... + 1`)
is refused where it becomes a model, with `LINE:COL: nested too deeply (limit
N)`, by every entry point (the parser, `.sql` files, case files, the three
importers), and the run goes on with the other statements and files; a model
built in code deeper than `MAX_MODEL_DEPTH` is refused by the writer and the
reference with the same error. At the limits, the deepest recursion of the
parser and of a whole run fits well inside Python's default recursion limit,
also under pytest and Hypothesis (`test_*_fit_the_stack`).
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from harness.cases.case import load_case
from harness.cases.sqlfile import read_sql_files
from harness.cli.main import main
from harness.core.depth import MAX_DEPTH, MAX_MODEL_DEPTH, model_depth
from harness.core.errors import InvalidCase, NestedTooDeeply
from harness.core.model import (
    BinaryOp,
    BinaryOperator,
    Case,
    Column,
    Expr,
    FuncCall,
    Literal,
    ScalarSubquery,
    Select,
    SelectItem,
    TableRef,
    UnaryOp,
    UnaryOperator,
)
from harness.core.types import INT32
from harness.engines.registry import engine_names, get_dialect, get_engine
from harness.importers.pipeline import import_paths
from harness.judge.corpus_runner import run_corpus
from harness.sql import parse, write
from reference_impl import evaluate

PROPERTY = settings(max_examples=examples(60), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
LIMIT_MESSAGE = f"nested too deeply (limit {MAX_DEPTH})"
# Frames the deepest recursion at the limits may take on top of the caller's: the
# measured worst is about 580 (the parser, 32 calls in calls); Python's default is
# 1,000, and pytest with Hypothesis stands about 50 deep when a test starts.
FRAME_BUDGET = 700

# One level of nesting each, around an expression `e` that each puts in parentheses
# or in a clause of its own (so any mix reads as SQL): more than MAX_DEPTH of them
# is too deep, whatever the mix. Long chains without parentheses are `deep_sql`'s.
EXPR_WRAPPERS: dict[str, Callable[[str], str]] = {
    "parentheses": lambda e: f"({e})",
    "chain": lambda e: f"({e}) + 1",
    "right chain": lambda e: f"1 + ({e})",
    "or": lambda e: f"({e}) OR a = 1",
    "concat": lambda e: f"({e}) || 'x'",
    "negation": lambda e: f"-({e})",
    "not": lambda e: f"NOT ({e})",
    "cast": lambda e: f"({e})::bigint",
    "call": lambda e: f"abs({e})",
    "coalesce": lambda e: f"coalesce(1, {e})",
    "case": lambda e: f"CASE WHEN a = 1 THEN {e} END",
    "in": lambda e: f"({e}) IN (1, 2)",
    "subquery": lambda e: f"(SELECT {e})",
    "exists": lambda e: f"EXISTS (SELECT 1 WHERE {e})",
    "window": lambda e: f"sum({e}) OVER (ORDER BY a)",
    "partition": lambda e: f"sum(a) OVER (PARTITION BY {e})",
}
QUERY_WRAPPERS: dict[str, Callable[[str], str]] = {
    "derived table": lambda q: f"SELECT * FROM ({q}) AS s",
    "union": lambda q: f"{q} UNION ALL SELECT 1",
    "with": lambda q: f"WITH c AS ({q}) SELECT * FROM c",
    "join": lambda q: f"SELECT s.* FROM ({q}) AS s JOIN t AS u ON true",
}
GOOD = "SELECT a, row_number() OVER (ORDER BY a) AS r FROM t"


def _wrapped(wrappers: list[Callable[[str], str]], inner: str) -> str:
    for wrap in wrappers:
        inner = wrap(inner)
    return inner


def deep_sql() -> st.SearchStrategy[str]:
    """A query nested or chained past MAX_DEPTH: a mix of expression wrappers, of
    query wrappers, or one operator repeated; shrinks towards MAX_DEPTH + 1 levels
    of the first wrapper."""
    too_many = {"min_size": MAX_DEPTH + 1, "max_size": 1500}
    expressions = st.lists(st.sampled_from(list(EXPR_WRAPPERS.values())), **too_many).map(
        lambda ws: f"SELECT {_wrapped(ws, 'a')} AS x FROM t")
    queries = st.lists(st.sampled_from(list(QUERY_WRAPPERS.values())), **too_many).map(
        lambda ws: _wrapped(ws, "SELECT a FROM t"))
    chains = st.tuples(st.sampled_from([" + 1", " * 1", " AND true", " || 'x'", " IS NULL"]),
                       st.integers(MAX_DEPTH + 1, 3000)).map(lambda t: "SELECT 1" + t[0] * t[1])
    return st.one_of(expressions, queries, chains)


def _refused(error: BaseException) -> None:
    assert isinstance(error, NestedTooDeeply) and error.limit == MAX_DEPTH
    line, column = (int(part) for part in error.where.split(":"))
    assert line >= 1 and column >= 1


# -- every entry point refuses deep text ----------------------------------------------


@PROPERTY
@given(deep_sql())
def test_parse_refuses_deep_text(sql: str) -> None:
    with pytest.raises(NestedTooDeeply) as caught:
        parse(sql)
    _refused(caught.value)


@PROPERTY
@given(deep_sql())
def test_a_sql_file_refuses_the_deep_statement_and_reads_the_others(sql: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "deep.sql"
        path.write_text(f"CREATE TABLE t (a integer);\nINSERT INTO t VALUES (1);\n{sql};\n{GOOD};\n")
        read = read_sql_files([path])
    assert [c.id for c in read.cases] == ["deep/q2"]
    [error] = read.invalid
    assert str(error).startswith(f"{path}:3:") and str(error).endswith(LIMIT_MESSAGE)


@PROPERTY
@given(deep_sql())
def test_a_case_file_with_deep_sql_is_an_invalid_case(sql: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "deep.yaml"
        path.write_text(json.dumps({"description": "deep", "sql": sql, "expected": {"columns": ["x"], "rows": []},
                                    "tables": {"t": {"columns": {"a": "integer"}, "rows": [[1]]}}}))
        with pytest.raises(InvalidCase) as caught:
            load_case(path, "deep")
    assert str(caught.value).startswith(f"{path}: sql: ") and str(caught.value).endswith(LIMIT_MESSAGE)


def _slt(deep: str) -> dict[str, str]:
    return {"t.test": f"statement ok\nCREATE TABLE t(a INTEGER)\n\nstatement ok\nINSERT INTO t VALUES (1)\n\n"
                      f"query I\n{deep}\n----\n1\n\nquery II\n{GOOD}\n----\n1\t1\n"}


def _pg_regress(deep: str) -> dict[str, str]:
    setup = "CREATE TABLE t (a int);\nINSERT INTO t VALUES (1);\n"
    good = f"{GOOD};\n a | r \n---+---\n 1 | 1\n(1 row)\n\n"
    return {"sql/t.sql": f"{setup}{deep};\n{GOOD};\n",
            "expected/t.out": f"{setup}{deep};\n x \n---\n 1\n(1 row)\n\n{good}"}


def _spark_golden(deep: str) -> dict[str, str]:
    def block(sql: str, schema: str, output: str) -> str:
        return f"-- !query\n{sql}\n-- !query schema\n{schema}\n-- !query output\n{output}\n\n\n"
    setup = ["CREATE TABLE t (a INT)", "INSERT INTO t VALUES (1)"]
    results = "".join(block(s, "struct<>", "") for s in setup)
    results += block(deep, "struct<x:int>", "1") + block(GOOD, "struct<a:int,r:int>", "1\t1")
    return {"inputs/t.sql": ";\n".join([*setup, deep, GOOD]) + ";\n",
            "results/t.sql.out": "-- Automatically generated by SQLQueryTestSuite\n" + results}


IMPORT_FILES = {"slt": _slt, "pg-regress": _pg_regress, "spark-golden": _spark_golden}


@pytest.fixture(scope="module")
def duckdb():
    engine = get_engine("duckdb")
    yield engine
    engine.close()


@pytest.mark.parametrize("fmt", list(IMPORT_FILES))
@settings(PROPERTY, max_examples=examples(15))
@given(sql=deep_sql())
def test_import_leaves_the_deep_query_out_and_imports_the_others(duckdb, fmt: str, sql: str) -> None:
    deep = sql.replace("SELECT", "SELECT row_number() OVER () AS w,", 1)  # a window query to import
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "in"
        for name, text in IMPORT_FILES[fmt](deep).items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        counts = import_paths([str(root)], fmt, Path(tmp) / "out", duckdb)
    assert counts.imported == 1 and counts.window_queries == 2
    assert list(counts.reasons.values()) == [LIMIT_MESSAGE]


# -- a model built in code ------------------------------------------------------------

ROW = Column("a")
MODEL_WRAPPERS: list[Callable[[Expr], Expr]] = [
    lambda e: BinaryOp(BinaryOperator.ADD, e, Literal(1, INT32)),
    lambda e: UnaryOp(UnaryOperator.NEG, e),
    lambda e: FuncCall("abs", (e,)),
    lambda e: Case(((BinaryOp(BinaryOperator.EQ, ROW, Literal(1, INT32)), e),), None),
    lambda e: ScalarSubquery(Select((SelectItem(e),))),
]


def _select(e: Expr) -> Select:
    return Select((SelectItem(e, "x"),), TableRef("t"))


def _built(wrappers: list[Callable[[Expr], Expr]]) -> Select:
    e: Expr = ROW
    for wrap in wrappers:
        e = wrap(e)
    return _select(e)


TABLES = {"t": pa.table({"a": pa.array([1, 2], pa.int32())})}


@PROPERTY
@given(st.lists(st.sampled_from(MODEL_WRAPPERS), min_size=MAX_MODEL_DEPTH, max_size=3000))
def test_the_writer_and_the_reference_refuse_a_deep_model_built_in_code(wrappers) -> None:
    query = _built(wrappers)
    assert model_depth(query) > MAX_MODEL_DEPTH
    for name in engine_names():
        with pytest.raises(NestedTooDeeply):
            write(query, get_dialect(name))
    with pytest.raises(NestedTooDeeply):
        evaluate(query, TABLES)


# -- at the limits, the deepest recursion fits the stack ------------------------------


@contextmanager
def _frame_budget(frames: int) -> Iterator[None]:
    """Python's recursion limit set to `frames` above the caller's depth, for the block."""
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + frames)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def _deepest(wrap: Callable[[str], str], inner: str, template: str) -> str:
    """The most levels of `wrap` around `inner` the parser takes (in `template`)."""
    text = template.format(inner)
    while True:
        deeper = wrap(inner)
        try:
            parse(template.format(deeper))
        except NestedTooDeeply:
            return text
        inner, text = deeper, template.format(deeper)


@pytest.mark.parametrize("shape", [*EXPR_WRAPPERS, *QUERY_WRAPPERS])
def test_a_query_at_the_limit_runs_and_fits_the_stack(shape: str, tmp_path: Path) -> None:
    if shape in EXPR_WRAPPERS:
        sql = _deepest(EXPR_WRAPPERS[shape], "a", "SELECT {} AS x FROM t")
    else:
        sql = _deepest(QUERY_WRAPPERS[shape], "SELECT a FROM t", "{}")
    path = tmp_path / "limit.sql"
    path.write_text(f"CREATE TABLE t (a integer);\nINSERT INTO t VALUES (1), (2);\n{sql};\n")
    # SQLite (in this process, so its rendering and judging count): DuckDB takes exponential
    # time on nested IN lists, its own matter, not the stack's.
    engines = [get_engine("reference"), get_engine("sqlite")]
    with _frame_budget(FRAME_BUDGET):
        parse(sql)
        read = read_sql_files([path])
        assert not read.invalid and not read.left_out
        run = run_corpus(read.cases, engines)
    assert len(run.results) == 2  # each engine's verdict, whatever it is: no crash


@pytest.mark.parametrize("wrap", range(len(MODEL_WRAPPERS)))
def test_a_model_at_the_model_limit_is_written_and_evaluated_within_the_stack(wrap: int) -> None:
    wrappers = [MODEL_WRAPPERS[wrap]] * MAX_MODEL_DEPTH
    while model_depth(_built(wrappers)) > MAX_MODEL_DEPTH:
        wrappers.pop()
    query = _built(wrappers)
    with _frame_budget(FRAME_BUDGET):
        for name in engine_names():
            try:
                write(query, get_dialect(name))
            except Exception as e:  # a dialect may lack a construct; never the stack
                assert not isinstance(e, RecursionError)
        evaluate(query, TABLES)


# -- the command: the good file gets its verdicts -------------------------------------


def test_run_reports_deep_files_and_judges_the_good_one(tmp_path: Path, capsys) -> None:
    nested = "(" * 70 + "1" + ")" * 70
    (tmp_path / "deep.sql").write_text(f"SELECT {nested} AS x;\nSELECT 1{' + 1' * 1000} AS y;\n")
    (tmp_path / "deep_case.yaml").write_text(json.dumps({
        "description": "deep", "sql": f"SELECT a{' + 1' * 1000} AS y FROM t",
        "tables": {"t": {"columns": {"a": "integer"}, "rows": [[1]]}},
        "expected": {"columns": ["y"], "rows": [[1001]]}}))
    (tmp_path / "good.sql").write_text(f"CREATE TABLE t (a integer);\nINSERT INTO t VALUES (1);\n{GOOD};\n")
    code = main(["run", str(tmp_path), "--engines", "reference,duckdb", "--format", "json"])
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert code == 2
    assert {(r["case"], r["verdict"]) for r in doc["results"]} == {("good/q1", "match")}
    assert "Traceback" not in captured.err and "RecursionError" not in captured.err
    said = sorted(line for line in captured.err.splitlines() if LIMIT_MESSAGE in line)
    case, sql = re.escape(str(tmp_path / "deep_case.yaml")), re.escape(str(tmp_path / "deep.sql"))
    patterns = [f"{sql}:1:\\d+: ", f"{sql}:2:\\d+: ", f"{case}: sql: 1:\\d+: "]  # sorted
    assert len(said) == 3
    for line, pattern in zip(said, patterns, strict=True):
        assert re.fullmatch(f"window-harness: invalid case: {pattern}{re.escape(LIMIT_MESSAGE)}", line), line
