"""Subqueries in expressions and IN lists: how the canonical parser reads them,
how the writer spells them, and which subqueries count as correlated."""

from __future__ import annotations

import pytest

from harness.core.dialect import Feature
from harness.core.errors import Unsupported
from harness.core.model import (
    BinaryOp,
    BinaryOperator,
    Column,
    Exists,
    InList,
    InSubquery,
    Literal,
    ScalarSubquery,
    Select,
    SelectItem,
    TableRef,
    UnaryOp,
    UnaryOperator,
)
from harness.core.types import BOOL, INT32
from harness.engines.registry import get_dialect
from harness.sql import parse, parse_expr, write
from harness.sql.correlation import is_aggregated, is_correlated, outer_references

ONE = Literal(1, INT32)
SUB = Select((SelectItem(Column("v")),), TableRef("u"))


def test_a_parenthesised_select_is_a_scalar_subquery() -> None:
    assert parse_expr("(SELECT v FROM u) + 1") == BinaryOp(
        BinaryOperator.ADD, ScalarSubquery(SUB), ONE)
    assert isinstance(parse_expr("(WITH w AS (SELECT 1 AS v) SELECT v FROM w)"), ScalarSubquery)
    assert parse_expr("((1))") == ONE  # parentheses around an expression stay parentheses


def test_exists_and_not_exists() -> None:
    assert parse_expr("EXISTS (SELECT v FROM u)") == Exists(SUB)
    assert parse_expr("NOT EXISTS (SELECT v FROM u)") == Exists(SUB, negated=True)
    assert parse_expr("NOT (EXISTS (SELECT v FROM u))") == UnaryOp(UnaryOperator.NOT, Exists(SUB))
    # EXISTS is not reserved: a column may carry the name.
    assert parse_expr("exists + 1") == BinaryOp(BinaryOperator.ADD, Column("exists"), ONE)


def test_in_binds_tighter_than_comparison_and_looser_than_arithmetic() -> None:
    x = Column("x")
    assert parse_expr("x IN (SELECT v FROM u) = TRUE") == BinaryOp(
        BinaryOperator.EQ, InSubquery(x, SUB), Literal(True, BOOL))
    assert parse_expr("x + 1 NOT IN (1, 2)") == InList(
        BinaryOp(BinaryOperator.ADD, x, ONE), (ONE, Literal(2, INT32)), negated=True)
    assert parse_expr("NOT x IN (1)") == UnaryOp(UnaryOperator.NOT, InList(x, (ONE,)))


@pytest.mark.parametrize("sql", [
    "SELECT id, (SELECT max(v) FROM t) AS m FROM t",
    "SELECT id FROM t WHERE v NOT IN (SELECT u.v FROM t AS u WHERE u.k = t.k)",
    "SELECT id, NOT (v IN (1, NULL)) AS x, v NOT IN (1, 2) AS y FROM t",
    "SELECT id, NOT (NOT EXISTS (SELECT 1 FROM t AS u)) AS x FROM t",
    "SELECT id, (v IN (1)) = (v IN (2)) AS x FROM t",
    "SELECT id, sum(v - (SELECT avg(v) FROM t)) OVER w AS x FROM t WINDOW w AS (ORDER BY id ASC)",
    "SELECT id, (SELECT sum(v) OVER w FROM t AS u WINDOW w AS (ORDER BY u.id ASC) LIMIT 1) AS x, "
    "rank() OVER w FROM t WINDOW w AS (ORDER BY v DESC)",
])
def test_round_trip(sql: str) -> None:
    q = parse(sql)
    assert parse(write(q)) == q


def test_canonical_spellings() -> None:
    text = write(parse("SELECT x NOT IN (1, 2) AS a, EXISTS (SELECT 1) AS b, (SELECT 2) AS c"))
    assert "x NOT IN (1, 2) AS a" in text
    assert "EXISTS (SELECT 1) AS b" in text
    assert "(SELECT 2) AS c" in text


def test_a_named_window_of_the_subquery_stays_inside_it() -> None:
    # The subquery's WINDOW clause resolves its own `OVER w`; the outer one
    # is back in force after it (a frame on the outer w, none on the inner).
    q = parse("SELECT (SELECT rank() OVER w FROM u WINDOW w AS (ORDER BY v ASC) LIMIT 1) AS a, "
              "sum(v) OVER w AS b FROM t WINDOW w AS (ORDER BY v ASC ROWS BETWEEN 1 PRECEDING "
              "AND CURRENT ROW)")
    spark = get_dialect("spark")  # rank() with a frame is Unsupported on Spark
    assert "rank() OVER w" in write(q, spark)


@pytest.mark.parametrize("sql, outer", [
    ("SELECT count(*) FROM t AS u WHERE u.k = t.k", {"t"}),
    ("SELECT count(*) FROM t WHERE t.k = 1", set()),
    ("SELECT count(*) FROM t AS u WHERE u.k = k", set()),  # unqualified: taken as local
    ("SELECT 1 FROM u WHERE EXISTS (SELECT 1 FROM w WHERE w.a = u.a AND w.b = t.b)", {"t"}),
    ("SELECT 1 FROM (SELECT q.a FROM q WHERE q.b = t.b) AS d", {"t"}),
    ("SELECT 1 FROM u JOIN w ON u.a = w.a WHERE w.b = s.b", {"s"}),
    ("SELECT u.a FROM u UNION ALL SELECT z.a FROM w", {"z"}),
])
def test_outer_references(sql: str, outer: set[str]) -> None:
    q = parse(sql)
    assert outer_references(q) == outer
    assert is_correlated(q) == bool(outer)


def test_is_aggregated() -> None:
    assert is_aggregated(parse("SELECT max(v) + 1 FROM u WHERE u.k = t.k"))
    assert not is_aggregated(parse("SELECT v FROM u WHERE u.k = t.k"))
    assert not is_aggregated(parse("SELECT sum(v) OVER () FROM u"))


@pytest.mark.parametrize("sql, feature", [
    ("SELECT id, v IN (SELECT v FROM t AS u) AS x FROM t", Feature.SUBQUERY_PREDICATE_AS_VALUE),
    ("SELECT id, count(*) FILTER (WHERE EXISTS (SELECT 1 FROM t AS u)) OVER () AS x FROM t",
     Feature.SUBQUERY_PREDICATE_AS_VALUE),
    ("SELECT id, sum(v) OVER (PARTITION BY (SELECT max(u.v) FROM t AS u WHERE u.k = t.k)) "
     "AS x FROM t", Feature.CORRELATED_SUBQUERY_IN_WINDOW),
    ("SELECT id, (SELECT u.v FROM t AS u WHERE u.id = t.id) AS x FROM t",
     Feature.CORRELATED_SCALAR_UNAGGREGATED),
    ("SELECT id FROM t WHERE EXISTS (SELECT 1 FROM t AS u WHERE EXISTS "
     "(SELECT 1 FROM t AS w WHERE w.k = t.k))", Feature.CORRELATION_BEYOND_PARENT),
])
def test_places_datafusion_refuses(sql: str, feature: Feature) -> None:
    with pytest.raises(Unsupported) as caught:
        write(parse(sql), get_dialect("datafusion"))
    assert caught.value.feature == feature.value


@pytest.mark.parametrize("sql", [
    "SELECT id FROM t WHERE v IN (SELECT v FROM t AS u WHERE u.k = t.k)",
    "SELECT k FROM t GROUP BY k HAVING EXISTS (SELECT 1 FROM t AS u WHERE u.k = t.k)",
    "SELECT t.id FROM t JOIN t AS u ON t.id = u.id AND t.v IN (SELECT w.v FROM t AS w)",
    "SELECT id, (SELECT max(u.v) FROM t AS u WHERE u.k = t.k) AS x FROM t",
    "SELECT id, sum(v - (SELECT min(v) FROM t)) OVER (ORDER BY id ASC) AS x FROM t",
])
def test_places_datafusion_takes(sql: str) -> None:
    assert write(parse(sql), get_dialect("datafusion"))
