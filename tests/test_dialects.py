"""Each engine's dialect: its feature table and spelling hooks, checked by
rendering models and by running what was rendered on the engine itself.

The feature table cannot go stale in either direction: a feature a dialect
supports must render (its clause written, not dropped) and run; a feature it
declares missing must raise Unsupported, *and* the engine must still reject
the clause when it is rendered anyway.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from decimal import Decimal

import pyarrow as pa
import pytest

from harness.core.dialect import Dialect, Feature
from harness.core.errors import EngineError, Unsupported
from harness.core.model import Column as Col
from harness.core.model import FuncCall as Call
from harness.core.model import Literal, Select, SelectItem, SortKey, WindowExpr, WindowSpec
from harness.core.types import (
    BOOL,
    DATE,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    TIMESTAMP,
    decimal,
)
from harness.engines.base import Engine
from harness.engines.registry import get_dialect
from harness.sql import parse, write

NAN, INF = math.nan, math.inf
DIALECTS = ["duckdb", "datafusion", "spark", "postgres"]

TABLE = pa.table({
    "id": pa.array([1, 2, 3, 4, 5, 6, 7], pa.int64()),
    "k": pa.array([1, 1, 1, 2, 2, None, None], pa.int64()),
    "v": pa.array([10, None, 10, 20, 30, None, 5], pa.int64()),
    "d": pa.array([dt.date(2024, 1, i) for i in (1, 2, 2, 3, 5, 6, 9)]),
    "dec": pa.array([Decimal(x) for x in ("1.50", "2.25", "-3.00", "0.01", "9.99", "1.50", "2.00")],
                    pa.decimal128(10, 2)),
    "s": pa.array(["a", "b", None, "a", "c", "", None]),
})
TABLES = {"t": TABLE}

# One canonical query per feature, using no other optional feature, and the
# text that shows the clause was written.
FEATURE_EXAMPLES: dict[Feature, tuple[str, str]] = {
    Feature.GROUPS_FRAME: (
        "SELECT id, sum(v) OVER (ORDER BY id ASC GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW) "
        "AS x FROM t", "GROUPS BETWEEN 1 PRECEDING"),
    Feature.RANGE_OFFSET: (
        "SELECT id, sum(v) OVER (ORDER BY v ASC RANGE BETWEEN 5 PRECEDING AND 5 FOLLOWING) "
        "AS x FROM t", "RANGE BETWEEN 5 PRECEDING AND 5 FOLLOWING"),
    Feature.RANGE_INTERVAL: (
        "SELECT id, count(*) OVER (ORDER BY d ASC RANGE BETWEEN INTERVAL '1' DAY PRECEDING "
        "AND CURRENT ROW) AS x FROM t", "INTERVAL '1' DAY PRECEDING"),
    Feature.EXCLUDE: (
        "SELECT id, sum(v) OVER (ORDER BY id ASC ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING "
        "EXCLUDE NO OTHERS) AS x FROM t", "EXCLUDE NO OTHERS"),
    Feature.FRAME_ON_RANKING: (
        "SELECT id, rank() OVER (ORDER BY id ASC ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) "
        "AS x FROM t", "ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING"),
    Feature.IGNORE_NULLS: (
        "SELECT id, lag(v, 1, 0) IGNORE NULLS OVER (ORDER BY id ASC) AS x FROM t",
        "IGNORE NULLS"),
    Feature.NTH_VALUE_FROM_LAST: (
        "SELECT id, nth_value(v, 2) FROM LAST OVER (ORDER BY id ASC ROWS BETWEEN UNBOUNDED "
        "PRECEDING AND UNBOUNDED FOLLOWING) AS x FROM t", "FROM LAST"),
    Feature.DISTINCT_WINDOW_AGGREGATE: (
        "SELECT id, count(DISTINCT v) OVER (PARTITION BY k) AS x FROM t", "count(DISTINCT v)"),
    Feature.FILTER_WINDOW_AGGREGATE: (
        "SELECT id, sum(v) FILTER (WHERE v > 5) OVER (ORDER BY id ASC) AS x FROM t",
        "FILTER (WHERE v > 5)"),
    Feature.ORDERED_AGGREGATE: (
        "SELECT id, string_agg(s, ',' ORDER BY id DESC) OVER (PARTITION BY k) AS x FROM t",
        "ORDER BY id DESC)"),
    Feature.NULLS_ORDER: (
        "SELECT id, row_number() OVER (ORDER BY v DESC NULLS LAST, id ASC NULLS FIRST) AS x "
        "FROM t", "ORDER BY v DESC NULLS LAST, id ASC NULLS FIRST"),
    Feature.NAMED_WINDOW: (
        "SELECT id, sum(v) OVER w AS x FROM t WINDOW w AS (ORDER BY id ASC)", "OVER w"),
    Feature.LIMIT_OFFSET: ("SELECT id FROM t ORDER BY id ASC LIMIT 2 OFFSET 1", "OFFSET 1"),
    Feature.FULL_JOIN: (
        "SELECT t.id, u.id AS x FROM t FULL JOIN t AS u ON t.id = u.k", "FULL JOIN"),
    Feature.INTERVAL_LITERAL: (
        "SELECT id, d + INTERVAL '1' DAY AS x FROM t", "INTERVAL '1' DAY"),
    Feature.NAN_LITERAL: ("SELECT id, CAST('NaN' AS DOUBLE PRECISION) AS x FROM t", "'NaN'"),
    Feature.NAMED_WINDOW_REFINEMENT: (
        "SELECT id, sum(v) OVER (w ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS x FROM t "
        "WINDOW w AS (ORDER BY id ASC)", "OVER (w ROWS"),
    Feature.FRAME_START_AFTER_END: (
        "SELECT id, count(*) OVER (ORDER BY id ASC ROWS BETWEEN 2 FOLLOWING AND 1 FOLLOWING) "
        "AS x FROM t", "2 FOLLOWING AND 1 FOLLOWING"),
    Feature.RANGE_MIXED_INTERVAL_UNITS: (
        "SELECT id, count(*) OVER (ORDER BY d ASC RANGE BETWEEN INTERVAL '2' DAY PRECEDING "
        "AND INTERVAL '1' HOUR PRECEDING) AS x FROM t", "INTERVAL '1' HOUR PRECEDING"),
    Feature.RANGE_WITHOUT_ORDER_BY: (
        "SELECT id, count(*) OVER (PARTITION BY k RANGE BETWEEN UNBOUNDED PRECEDING AND "
        "CURRENT ROW) AS x FROM t", "PARTITION BY k RANGE BETWEEN"),
    Feature.FRAME_OFFSET_EXPRESSION: (
        "SELECT id, sum(v) OVER (ORDER BY id ASC ROWS BETWEEN 1 + 1 PRECEDING AND CURRENT ROW) "
        "AS x FROM t", "1 + 1 PRECEDING"),
    Feature.FRAME_OFFSET_INTERVAL_EXPRESSION: (
        "SELECT id, count(*) OVER (ORDER BY d ASC RANGE BETWEEN INTERVAL '1' DAY * 2 PRECEDING "
        "AND CURRENT ROW) AS x FROM t", "INTERVAL '1' DAY * 2 PRECEDING"),
    Feature.INT_DIV_OPERATOR: ("SELECT id, v // 3 AS x FROM t", "v // 3"),
    Feature.QUALIFY: (
        "SELECT id, v FROM t QUALIFY row_number() OVER (PARTITION BY k ORDER BY id ASC) = 1",
        "QUALIFY"),
    Feature.GROUP_BY_ALL: ("SELECT k, count(*) AS x FROM t GROUP BY ALL", "GROUP BY ALL"),
    Feature.ORDER_BY_ALL: ("SELECT id, v FROM t ORDER BY ALL ASC", "ORDER BY ALL"),
    Feature.VALUES: (
        "SELECT x, sum(y) OVER (ORDER BY x ASC) AS s FROM (VALUES (1, 10), (2, 20)) AS v(x, y)",
        "VALUES (1, 10), (2, 20)"),
    Feature.SUBQUERY_WITHOUT_ALIAS: ("SELECT id FROM (SELECT id FROM t)", "FROM (SELECT id"),
    Feature.COLUMN_ALIASES: ("SELECT a, b FROM (SELECT id, v FROM t) AS q(a, b)", "AS q(a, b)"),
    Feature.GENERATE_SERIES: (
        "SELECT x, sum(x) OVER (ORDER BY x ASC) AS s FROM generate_series(1, 5) AS g(x)",
        "generate_series(1, 5)"),
    Feature.RANGE_TABLE_FUNCTION: (
        "SELECT x, sum(x) OVER (ORDER BY x ASC) AS s FROM range(1, 5) AS g(x)", "range(1, 5)"),
    Feature.SCALAR_SUBQUERY: ("SELECT id, (SELECT max(v) FROM t) AS x FROM t", "(SELECT max(v)"),
    Feature.IN_SUBQUERY: ("SELECT id FROM t WHERE v IN (SELECT v FROM t AS u WHERE u.k = 1)",
                          "IN (SELECT"),
    Feature.EXISTS_SUBQUERY: (
        "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM t AS u WHERE u.v > 25)", "EXISTS (SELECT"),
    Feature.CORRELATED_SUBQUERY: (
        "SELECT id, (SELECT count(*) FROM t AS u WHERE u.k = t.k) AS x FROM t", "u.k = t.k"),
    Feature.SUBQUERY_PREDICATE_AS_VALUE: (
        "SELECT id, v IN (SELECT v FROM t AS u WHERE u.k = 1) AS x FROM t", "v IN (SELECT"),
    Feature.CORRELATED_SUBQUERY_IN_WINDOW: (
        "SELECT id, sum((SELECT count(*) FROM t AS u WHERE u.k = t.k)) OVER (ORDER BY id ASC) "
        "AS x FROM t", "sum((SELECT count(*)"),
    Feature.CORRELATED_SCALAR_UNAGGREGATED: (
        "SELECT id, (SELECT u.v FROM t AS u WHERE u.id = t.id) AS x FROM t", "(SELECT u.v"),
    Feature.CORRELATION_BEYOND_PARENT: (
        "SELECT id, (SELECT count(*) FROM t AS u WHERE EXISTS (SELECT 1 FROM t AS w "
        "WHERE w.k = t.k AND w.id = u.id)) AS x FROM t", "w.k = t.k"),
    Feature.WITHIN_GROUP: (
        "SELECT k, percentile_cont(5E-1) WITHIN GROUP (ORDER BY v ASC) AS x FROM t GROUP BY k",
        "WITHIN GROUP (ORDER BY v ASC)"),
    Feature.WITHIN_GROUP_WINDOW: (
        "SELECT id, percentile_cont(5E-1) WITHIN GROUP (ORDER BY v ASC) OVER (PARTITION BY k) AS x "
        "FROM t", "WITHIN GROUP (ORDER BY v ASC) OVER"),
    Feature.OFFSET_BEYOND_INT: (
        "SELECT id, count(*) OVER (ORDER BY id ASC ROWS BETWEEN 2147483648 PRECEDING AND CURRENT ROW) "
        "AS x FROM t", "2147483648 PRECEDING"),
    Feature.FOLLOWING_FRAME_TO_HUGE_OFFSET: (
        "SELECT id, count(*) OVER (ORDER BY id ASC ROWS BETWEEN 1 FOLLOWING AND 2147483647 FOLLOWING) "
        "AS x FROM t", "2147483647 FOLLOWING"),
    # An INTEGER offset: PostgreSQL has lag(anyelement, integer) only.
    Feature.LAG_ROW_OFFSET: (
        "SELECT id, lag(v, CAST(k AS INTEGER)) OVER (ORDER BY id ASC) AS x FROM t", "lag(v, CAST(k AS"),
    Feature.LAG_ROW_DEFAULT: (
        "SELECT id, lag(v, 1, id) OVER (ORDER BY id ASC) AS x FROM t", "lag(v, 1, id)"),
    Feature.RANKING_ORDER_BY: (
        "SELECT id, cume_dist(ORDER BY v ASC) OVER (PARTITION BY k ORDER BY id ASC) AS x FROM t",
        "cume_dist(ORDER BY v"),
    Feature.LAG_NULL_OFFSET: (
        "SELECT id, lag(v, CAST(NULL AS INTEGER)) OVER (ORDER BY id ASC) AS x FROM t",
        "lag(v, CAST(NULL AS"),
}


def dialect_case(name: str) -> object:
    return pytest.param(name, id=name, marks=[pytest.mark.spark] if name == "spark" else [])


def feature_cases(supported: bool, refused: bool = False) -> list[object]:
    """(dialect, feature) pairs: those it supports (and does not refuse), those it
    lacks, or with `refused`, the valid constructs it writes but refuses."""
    cases = []
    for name in DIALECTS:
        dialect = get_dialect(name)
        for feature in Feature:
            if (feature in dialect.refusals) == refused and dialect.supports(feature) == supported:
                marks = [pytest.mark.spark] if name == "spark" else []
                cases.append(pytest.param(name, feature, id=f"{name}-{feature.value}", marks=marks))
    return cases


def render(sql: str, dialect: Dialect) -> str:
    return write(parse(sql), dialect)


def lifted(dialect: Dialect) -> Dialect:
    """The same dialect with every feature switched on: renders what it would refuse."""
    return dataclasses.replace(dialect, unsupported=frozenset())


# -- the feature table --------------------------------------------------------------


def test_every_feature_has_an_example() -> None:
    assert set(FEATURE_EXAMPLES) == set(Feature)


@pytest.mark.parametrize(("name", "feature"), feature_cases(supported=True))
def test_a_supported_feature_is_written_and_runs(engines, name: str, feature: Feature) -> None:
    sql, marker = FEATURE_EXAMPLES[feature]
    engine = engines.get(name)
    text = engine.render(parse(sql))
    assert marker in text, text
    assert engine.run(TABLES, text).num_rows > 0


@pytest.mark.parametrize(("name", "feature"), feature_cases(supported=False))
def test_a_missing_feature_is_unsupported_and_the_engine_agrees(
        engines, name: str, feature: Feature) -> None:
    sql, marker = FEATURE_EXAMPLES[feature]
    with pytest.raises(Unsupported) as caught:
        render(sql, get_dialect(name))
    assert caught.value.feature == feature.value
    engine = engines.get(name)
    anyway = render(sql, lifted(engine.dialect))
    assert marker in anyway
    with pytest.raises(EngineError):
        engine.run(TABLES, anyway)


@pytest.mark.parametrize(("name", "feature"), feature_cases(supported=True, refused=True))
def test_a_refused_feature_is_sent_and_refused_in_the_words_declared(
        engines, name: str, feature: Feature) -> None:
    # Error conformance: the query is valid, so it is written and sent (never
    # an `unsupported`); the engine's refusal must be the one its dialect names.
    sql, marker = FEATURE_EXAMPLES[feature]
    engine = engines.get(name)
    text = engine.render(parse(sql))
    assert marker in text, text
    with pytest.raises(EngineError) as caught:
        engine.run(TABLES, text)
    assert engine.dialect.refused_feature(caught.value.message) is feature, caught.value.message


# -- spelling ------------------------------------------------------------------------

LAG = "SELECT id, lag(v, 1, 0) IGNORE NULLS OVER (ORDER BY id ASC) AS x FROM t"


@pytest.mark.parametrize(("name", "sql", "expected"), [
    ("datafusion", "SELECT count(*) OVER (ORDER BY dec ASC RANGE BETWEEN "
     "CAST(1.50 AS DECIMAL(10,2)) PRECEDING AND CURRENT ROW) AS x FROM t",
     "RANGE BETWEEN 1.50 PRECEDING AND CURRENT ROW"),
    ("duckdb", LAG, "lag(v, 1, 0 IGNORE NULLS) OVER (ORDER BY id ASC)"),
    ("datafusion", LAG, "lag(v, 1, 0) IGNORE NULLS OVER (ORDER BY id ASC)"),
    ("spark", LAG, "lag(v, 1, 0) IGNORE NULLS OVER (ORDER BY id ASC)"),
    ("duckdb", 'SELECT "My Col" AS "select", pivot FROM t', '"My Col" AS "select", "pivot"'),
    ("datafusion", 'SELECT "My Col" AS "select", user FROM t', '"My Col" AS "select", "user"'),
    ("spark", 'SELECT "My Col" AS "select", "a`b" FROM t', "`My Col` AS `select`, `a``b`"),
    ("spark", "SELECT 'it''s \\n' AS s", r"'it\'s \\n'"),
    ("spark", "SELECT CAST(x AS DOUBLE PRECISION), CAST(s AS VARCHAR) FROM t",
     "CAST(x AS DOUBLE), CAST(s AS STRING)"),
    ("datafusion", "SELECT CAST(1234567890123456789012345678.1234567890 AS DECIMAL(38,10))",
     "CAST('1234567890123456789012345678.1234567890' AS DECIMAL(38,10))"),
    ("datafusion", "SELECT TIMESTAMP '0001-01-01 00:00:00'",
     "CAST('0001-01-01 00:00:00' AS TIMESTAMP(6))"),
])
def test_spelling(name: str, sql: str, expected: str) -> None:
    assert expected in render(sql, get_dialect(name))


@pytest.mark.parametrize("name", DIALECTS)
def test_an_explicit_null_order_is_always_written(name: str) -> None:
    sql = ("SELECT id, sum(v) OVER (PARTITION BY k ORDER BY v ASC NULLS FIRST, s DESC NULLS LAST "
           "ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS x FROM t ORDER BY id DESC NULLS FIRST")
    text = render(sql, get_dialect(name))
    assert "ORDER BY v ASC NULLS FIRST, s DESC NULLS LAST ROWS BETWEEN" in text
    assert text.endswith("ORDER BY id DESC NULLS FIRST")


# -- hooks, run for real -------------------------------------------------------------

STRINGS = ["", "it's", "''", "\\", "\\'", "a\\nb", "a\nb", "tab\t", "ü€😀", "e\u0301",
           "${spark.master}", "${env:HOME}", "x' OR '1'='1", "--c", "/* c */", '"dq"', "`bt`",
           "\\u0041", "%_", "\x01\x7f", "a\x00b"]

LITERALS = [
    *[Literal(s, STRING) for s in STRINGS],
    Literal(-(2**63), INT64), Literal(2**63 - 1, INT64), Literal(-(2**31), INT32),
    Literal(-128, INT8), Literal(32767, INT16),
    *[Literal(x, FLOAT64) for x in (0.1, -0.0, NAN, INF, -INF, 1e308, 5e-324)],
    *[Literal(x, FLOAT32) for x in (1.5, -0.0, NAN, -INF)],
    Literal(Decimal("1.50"), decimal(10, 2)), Literal(Decimal("-0.01"), decimal(3, 2)),
    Literal(Decimal("1234567890123456789012345678.1234567890"), decimal(38, 10)),
    Literal(Decimal("0.1000000000000000000000000000000000001"), decimal(38, 37)),
    Literal(dt.date(1, 1, 1), DATE), Literal(dt.date(9999, 12, 31), DATE),
    Literal(dt.datetime(1, 1, 1), TIMESTAMP),
    Literal(dt.datetime(9999, 12, 31, 23, 59, 59, 999999), TIMESTAMP),
    Literal(dt.datetime(2024, 2, 29, 12, 0, 0, 1), TIMESTAMP),
    Literal(True, BOOL), Literal(None, INT64), Literal(None, STRING),
]


def same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return type(a) is type(b) and a == b


def _writable(engine: Engine, lit: Literal) -> bool:
    """Can the engine's dialect write `lit`? (PostgreSQL has no TINYINT and no NUL in text.)"""
    try:
        engine.render(Select((SelectItem(lit, "c"),)))
    except Unsupported as e:
        assert e.feature in engine.dialect.unrepresentable, e.feature  # declared, never a surprise
        return False
    return True


def test_every_literal_round_trips(sql_engine: Engine) -> None:
    literals = [lit for lit in LITERALS if _writable(sql_engine, lit)]
    query = Select(tuple(SelectItem(lit, f"c{i}") for i, lit in enumerate(literals)))
    row = sql_engine.execute(query, {}).to_pylist()[0]
    got = [row[f"c{i}"] for i in range(len(literals))]
    bad = [(lit, value) for lit, value in zip(literals, got, strict=True) if not same(lit.value, value)]
    assert not bad, sql_engine.render(query)


def test_the_default_null_order_is_the_measured_one(sql_engine: Engine) -> None:
    def row_number(descending: bool) -> WindowExpr:
        keys = (SortKey(Col("v"), descending), SortKey(Col("id")))
        return WindowExpr(Call("row_number"), WindowSpec(order_by=keys))

    query = Select((SelectItem(Col("v")), SelectItem(row_number(False), "asc"),
                    SelectItem(row_number(True), "desc")), parse("SELECT 1 FROM t").source)
    rows = sql_engine.execute(query, TABLES).to_pylist()
    nulls = [r for r in rows if r["v"] is None]
    order = sql_engine.dialect.default_null_ordering
    for key, descending in (("asc", False), ("desc", True)):
        first = {r[key] for r in nulls} == {1, 2}
        assert first == order.nulls_first(descending), key


# Queries whose answer is fully determined (unique order keys, explicit NULL
# order), so every engine must agree with the reference exactly.
AGREEMENT = [
    "SELECT id, lag(v, 2, -1) IGNORE NULLS OVER (ORDER BY id ASC) AS x FROM t",
    "SELECT id, first_value(v) IGNORE NULLS OVER (ORDER BY id DESC ROWS BETWEEN 1 PRECEDING "
    "AND 2 FOLLOWING) AS x FROM t",
    "SELECT id, sum(v) OVER (ORDER BY v DESC NULLS FIRST RANGE BETWEEN 5 PRECEDING AND "
    "10 FOLLOWING) AS x FROM t",
    "SELECT id, count(*) OVER (ORDER BY d ASC RANGE BETWEEN INTERVAL '1' DAY PRECEDING AND "
    "INTERVAL '2' DAY FOLLOWING) AS x FROM t",
    "SELECT id, ntile(3) OVER (PARTITION BY k ORDER BY id ASC) AS x, "
    "percent_rank() OVER (ORDER BY v ASC NULLS LAST) AS y FROM t",
    "SELECT id, count(v) FILTER (WHERE s <> 'a') OVER w AS x FROM t "
    "WINDOW w AS (ORDER BY id ASC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)",
    # Default column names of sources, which engines name otherwise (DuckDB
    # col0, Spark col1 and `id`, DataFusion `value`): the writer spells them out.
    "SELECT column1, column2 FROM (VALUES (1, 'a'), (2, 'b')) AS v",
    "WITH v AS (VALUES (1), (2)) SELECT v.column1 AS x FROM v",
    "VALUES (1, 'a') UNION ALL SELECT id, s FROM t WHERE id = 3",
    "SELECT r, row_number() OVER (ORDER BY r DESC) AS n FROM range(0, 10, 3) AS r",
    "SELECT generate_series.generate_series AS x FROM generate_series(-3, 3, 2)",
    "SELECT t.id, g.x FROM t JOIN generate_series(2, 4) AS g(x) ON t.id = g.x",
]


def normalised(table: pa.Table) -> list[tuple[object, ...]]:
    """Rows with every number as a Decimal (engines differ in integer widths)."""
    def norm(x: object) -> object:
        if isinstance(x, (int, float, Decimal)) and not isinstance(x, bool):
            return Decimal(repr(x)) if isinstance(x, float) else Decimal(x)
        return x
    return sorted(tuple(norm(x) for x in row.values()) for row in table.to_pylist())


@pytest.mark.parametrize("sql", AGREEMENT)
def test_rendering_keeps_the_meaning(engines, sql_engine: Engine, sql: str) -> None:
    query = parse(sql)
    try:
        sql_engine.render(query)
    except Unsupported as e:  # what the dialect declares missing is tested above
        pytest.skip(f"{sql_engine.name} lacks {e.feature}")
    expected = engines.get("reference").execute(query, TABLES)
    assert normalised(sql_engine.execute(query, TABLES)) == normalised(expected), \
        sql_engine.render(query)


# -- per-function limits -----------------------------------------------------------

FUNCTION_LIMITS = [
    pytest.param("spark", "SELECT id, lag(v) OVER (PARTITION BY k) AS x FROM t",
                 "window.lag-without-order-by", id="spark-lag-unordered",
                 marks=pytest.mark.spark),
    pytest.param("datafusion", "SELECT id, bool_and(v > 1) OVER (ORDER BY id ASC "
                 "ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS x FROM t",
                 "window.bool_and-moving-frame", id="datafusion-bool_and-moving"),
    pytest.param("spark", "SELECT id, median(v) OVER (PARTITION BY k ORDER BY id ASC) AS x FROM t",
                 "window.median-with-order-by", id="spark-median-ordered",
                 marks=pytest.mark.spark),
    pytest.param("datafusion", "SELECT id, bit_or(v) OVER (ORDER BY id ASC "
                 "ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS x FROM t",
                 "window.bit_or-moving-frame", id="datafusion-bit_or-moving"),
]


@pytest.mark.parametrize(("name", "sql", "feature"), FUNCTION_LIMITS)
def test_a_function_limit_is_unsupported_and_the_engine_agrees(engines, name, sql, feature):
    with pytest.raises(Unsupported) as caught:
        render(sql, get_dialect(name))
    assert caught.value.feature == feature
    engine = engines.get(name)
    anyway = dataclasses.replace(engine.dialect, needs_order_by=frozenset(),
                                 no_moving_frame_start=frozenset(),
                                 unordered_window_only=frozenset())
    with pytest.raises(EngineError):
        engine.run(TABLES, render(sql, anyway))


@pytest.mark.parametrize("call", ["last(DISTINCT v ORDER BY v ASC)", "first(DISTINCT v ORDER BY v ASC)"])
def test_duckdb_refuses_distinct_in_its_value_functions_in_words_it_declares(engines, call):
    # A refusal in the engine's declared words is an `unsupported` verdict, not an error.
    engine = engines.get("duckdb")
    sql = f"SELECT id, {call} OVER (ORDER BY id ASC) AS x FROM t"
    with pytest.raises(EngineError) as refused:
        engine.run(TABLES, render(sql, engine.dialect))
    assert engine.dialect.says_not_implemented(refused.value.message)


def test_a_growing_frame_is_not_a_moving_one():
    sql = ("SELECT id, bool_and(v > 1) OVER (ORDER BY id ASC ROWS BETWEEN UNBOUNDED PRECEDING "
           "AND 1 FOLLOWING) AS x FROM t")
    assert "bool_and" in render(sql, get_dialect("datafusion"))


# -- missing functions ------------------------------------------------------------------

# One call per function of the function table that some dialect lacks, over t.
FUNCTION_CALLS = {
    "quantile_cont": "quantile_cont(v, 0.5)", "quantile_disc": "quantile_disc(v, 0.5)",
    "percentile_cont": "percentile_cont(0.5) WITHIN GROUP (ORDER BY v ASC)",
    "percentile_disc": "percentile_disc(0.5) WITHIN GROUP (ORDER BY v ASC)",
    "covar_pop": "covar_pop(v, id)", "covar_samp": "covar_samp(v, id)", "corr": "corr(v, id)",
    "regr_slope": "regr_slope(v, id)", "regr_intercept": "regr_intercept(v, id)",
    "regr_count": "regr_count(v, id)", "count_if": "count_if(v > 5)",
    "bool_and": "bool_and(v > 5)", "bool_or": "bool_or(v > 5)",
}


def missing_function_cases() -> list[object]:
    return [pytest.param(name, fn, id=f"{name}-{fn}",
                         marks=[pytest.mark.spark] if name == "spark" else [])
            for name in DIALECTS for fn in sorted(get_dialect(name).missing_functions)]


@pytest.mark.parametrize(("name", "function"), missing_function_cases())
def test_a_missing_function_is_unsupported_and_the_engine_agrees(engines, name, function):
    """As a plain aggregate (GROUP BY): the engine has no such function at all."""
    sql = f"SELECT k, {FUNCTION_CALLS.get(function, function + '(v)')} AS x FROM t GROUP BY k"
    with pytest.raises(Unsupported, match=f"function.{function}"):
        render(sql, get_dialect(name))
    engine = engines.get(name)
    anyway = dataclasses.replace(engine.dialect, missing_functions=frozenset())
    if function == "any_value" and name == "spark":
        # Spark has one, of another meaning: at id 3, NULL over NULL, 10 and 20 (the
        # standard: 10 or 20).
        sql = ("SELECT id, any_value(v) OVER (ORDER BY id ASC ROWS BETWEEN 1 PRECEDING AND "
               "1 FOLLOWING) AS x FROM t ORDER BY id ASC")
        assert engine.run(TABLES, render(sql, anyway)).column("x").to_pylist()[2] is None
        return
    with pytest.raises(EngineError):
        engine.run(TABLES, render(sql, anyway))


def test_spark_computes_quantile_cont_as_percentile():
    sql = "SELECT k, quantile_cont(v, 0.25) AS x FROM t GROUP BY k"
    assert "percentile(v, " in render(sql, get_dialect("spark"))
