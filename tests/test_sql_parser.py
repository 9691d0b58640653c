"""Unit tests of the canonical SQL parser: what it builds, and how it fails."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pytest

from harness.core import types as T
from harness.core.errors import InvalidQuery
from harness.core.model import (
    CURRENT_ROW,
    UNBOUNDED_PRECEDING,
    BinaryOp,
    BinaryOperator,
    Bound,
    BoundKind,
    Case,
    Cast,
    Column,
    CommonTable,
    Exclusion,
    Frame,
    FrameMode,
    FuncCall,
    Interval,
    IntervalUnit,
    IsNull,
    Join,
    JoinKind,
    Literal,
    NamedWindow,
    NullsOrder,
    NullTreatment,
    Select,
    SelectItem,
    SortKey,
    Star,
    SubqueryRef,
    TableFunctionRef,
    TableRef,
    UnaryOp,
    UnaryOperator,
    UnionAll,
    Values,
    WindowExpr,
    WindowSpec,
    With,
    preceding,
)
from harness.sql import parse, parse_expr

a, b, c, k, x = (Column(n) for n in "abckx")


def i32(v: int) -> Literal:
    return Literal(v, T.INT32)


def op(o: BinaryOperator, left, right) -> BinaryOp:
    return BinaryOp(o, left, right)


def window_of(sql: str) -> WindowExpr:
    e = parse_expr(sql)
    assert isinstance(e, WindowExpr)
    return e


# -- what unwritten things become ----------------------------------------------------


def test_unwritten_nulls_and_frame_stay_unwritten():
    w = window_of("sum(x) OVER (PARTITION BY a ORDER BY k)")
    assert w.window == WindowSpec(partition_by=(a,), order_by=(SortKey(k, False, None),))
    assert w.window.frame is None


def test_short_frame_form_ends_at_current_row():
    w = window_of("sum(x) OVER (ORDER BY k ROWS 2 PRECEDING)")
    assert w.window.frame == Frame(FrameMode.ROWS, preceding(i32(2)), CURRENT_ROW)
    w = window_of("sum(x) OVER (ORDER BY k RANGE UNBOUNDED PRECEDING)")
    assert w.window.frame == Frame(FrameMode.RANGE, UNBOUNDED_PRECEDING, CURRENT_ROW)


def test_full_window_clause():
    w = window_of("count(*) FILTER (WHERE x > 0) OVER (ORDER BY k DESC NULLS LAST "
                  "GROUPS BETWEEN 1 PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE TIES)")
    assert w.func == FuncCall("count", (Star(),), filter=op(BinaryOperator.GT, x, i32(0)))
    assert w.window.order_by == (SortKey(k, True, NullsOrder.LAST),)
    assert w.window.frame == Frame(FrameMode.GROUPS, preceding(i32(1)),
                                   Bound(BoundKind.UNBOUNDED_FOLLOWING), Exclusion.TIES)


@pytest.mark.parametrize("sql", [
    "nth_value(x, 2) FROM LAST IGNORE NULLS OVER w",
    "nth_value(x, 2 IGNORE NULLS) FROM LAST OVER w",  # DuckDB's placement reads the same
])
def test_from_last_and_ignore_nulls(sql):
    assert window_of(sql) == WindowExpr(
        FuncCall("nth_value", (x, i32(2)), null_treatment=NullTreatment.IGNORE, from_last=True),
        WindowSpec(base="w"))


def test_ordered_and_distinct_aggregates():
    assert parse_expr("string_agg(DISTINCT a, ',' ORDER BY k DESC)") == FuncCall(
        "string_agg", (a, Literal(",", T.STRING)), distinct=True,
        order_by=(SortKey(k, True),))


def test_named_windows_and_refinement():
    q = parse("SELECT rank() OVER (w ORDER BY k) FROM t WINDOW w AS (PARTITION BY a), v AS (w)")
    assert q.windows == (NamedWindow("w", WindowSpec(partition_by=(a,))),
                         NamedWindow("v", WindowSpec(base="w")))
    assert q.items[0].expr.window == WindowSpec(base="w", order_by=(SortKey(k),))


def test_function_names_and_keywords_are_case_insensitive():
    assert parse_expr("COUNT(*) oVeR ()") == WindowExpr(FuncCall("count", (Star(),)), WindowSpec())


# -- names -------------------------------------------------------------------------


def test_unquoted_names_fold_and_quoted_names_keep_everything():
    q = parse('SELECT Foo, "Foo", "a ""b"" c", "select", "ünï" AS "X Y" FROM T AS "From"')
    assert [i.expr for i in q.items] == [Column("foo"), Column("Foo"), Column('a "b" c'),
                                         Column("select"), Column("ünï")]
    assert q.items[-1].alias == "X Y"
    assert q.source == TableRef("t", "From")


def test_qualified_columns_and_stars():
    q = parse("SELECT t.a, t.*, * FROM t")
    assert q.items == (SelectItem(Column("a", "t")), SelectItem(Star("t")), SelectItem(Star()))


# -- literals ------------------------------------------------------------------------


@pytest.mark.parametrize("sql, expected", [
    ("2147483647", Literal(2147483647, T.INT32)),
    ("-2147483648", Literal(-2147483648, T.INT32)),
    ("2147483648", Literal(2147483648, T.INT64)),
    ("9223372036854775808", Literal(Decimal("9223372036854775808"), T.decimal(19, 0))),
    ("1.50", Literal(Decimal("1.50"), T.decimal(3, 2))),
    ("0.05", Literal(Decimal("0.05"), T.decimal(2, 2))),
    ("-.5", Literal(Decimal("-0.5"), T.decimal(1, 1))),
    ("1.5E0", Literal(1.5, T.FLOAT64)),
    ("TRUE", Literal(True, T.BOOL)),
    ("NULL", Literal(None, None)),
    ("'it''s'", Literal("it's", T.STRING)),
    ("DATE '2024-02-29'", Literal(dt.date(2024, 2, 29), T.DATE)),
    ("TIMESTAMP '2024-02-29 01:02:03.5'", Literal(dt.datetime(2024, 2, 29, 1, 2, 3, 500000),
                                                  T.TIMESTAMP)),
    ("INTERVAL '3' DAY", Interval(3, IntervalUnit.DAY)),
    ("CAST(5 AS BIGINT)", Literal(5, T.INT64)),
    ("CAST(-5 AS TINYINT)", Literal(-5, T.INT8)),
    ("CAST(1.50 AS DECIMAL(10,2))", Literal(Decimal("1.50"), T.decimal(10, 2))),
    ("CAST(7 AS NUMERIC(10, 2))", Literal(Decimal("7"), T.decimal(10, 2))),
    ("CAST(1.5E0 AS REAL)", Literal(1.5, T.FLOAT32)),
    ("CAST('-Infinity' AS REAL)", Literal(-math.inf, T.FLOAT32)),
    ("CAST(NULL AS DATE)", Literal(None, T.DATE)),
    # Not one of the folded shapes: these stay casts.
    ("CAST((5) AS BIGINT)", Cast(i32(5), T.INT64)),
    ("CAST(300 AS TINYINT)", Cast(i32(300), T.INT8)),
    ("CAST(1.555 AS DECIMAL(10,2))", Cast(Literal(Decimal("1.555"), T.decimal(4, 3)),
                                          T.decimal(10, 2))),
    ("CAST(1 AS REAL)", Cast(i32(1), T.FLOAT32)),
    ("CAST('nan' AS REAL)", Cast(Literal("nan", T.STRING), T.FLOAT32)),
    ("CAST(a AS DOUBLE PRECISION)", Cast(a, T.FLOAT64)),
])
def test_literal_conventions(sql, expected):
    assert repr(parse_expr(sql)) == repr(expected)


def test_nan_literal():
    e = parse_expr("CAST('NaN' AS DOUBLE PRECISION)")
    assert e.type == T.FLOAT64 and math.isnan(e.value)


def test_minus_folds_only_into_a_number_token():
    assert parse_expr("-5") == i32(-5)
    assert parse_expr("- 5") == i32(-5)
    assert parse_expr("-(5)") == UnaryOp(UnaryOperator.NEG, i32(5))
    assert parse_expr("-a") == UnaryOp(UnaryOperator.NEG, a)
    assert parse_expr("a - -5") == op(BinaryOperator.SUB, a, i32(-5))


# -- precedence -------------------------------------------------------------------------


@pytest.mark.parametrize("sql, expected", [
    ("a OR b AND c", op(BinaryOperator.OR, a, op(BinaryOperator.AND, b, c))),
    ("NOT a = b", UnaryOp(UnaryOperator.NOT, op(BinaryOperator.EQ, a, b))),
    ("NOT a IS NULL", UnaryOp(UnaryOperator.NOT, IsNull(a))),
    ("a = b IS NOT NULL", IsNull(op(BinaryOperator.EQ, a, b), negated=True)),
    ("a + b * c", op(BinaryOperator.ADD, a, op(BinaryOperator.MUL, b, c))),
    ("a - b - c", op(BinaryOperator.SUB, op(BinaryOperator.SUB, a, b), c)),
    ("a || b + c", op(BinaryOperator.CONCAT, a, op(BinaryOperator.ADD, b, c))),
    ("a || b = c", op(BinaryOperator.EQ, op(BinaryOperator.CONCAT, a, b), c)),
    ("a != b", op(BinaryOperator.NE, a, b)),
    ("(a OR b) AND c", op(BinaryOperator.AND, op(BinaryOperator.OR, a, b), c)),
    ("CASE WHEN a THEN 1 ELSE 2 END % 3",
     op(BinaryOperator.MOD, Case(((a, i32(1)),), i32(2)), i32(3))),
])
def test_precedence_is_postgresqls(sql, expected):
    assert parse_expr(sql) == expected


# -- queries -------------------------------------------------------------------------------


def test_joins_associate_left_and_comma_binds_loosest():
    q = parse("SELECT 1 FROM a, b LEFT OUTER JOIN c ON TRUE JOIN (d CROSS JOIN e) ON FALSE")
    on_true, on_false = Literal(True, T.BOOL), Literal(False, T.BOOL)
    inner = Join(JoinKind.CROSS, TableRef("d"), TableRef("e"))
    right = Join(JoinKind.INNER, Join(JoinKind.LEFT, TableRef("b"), TableRef("c"), on_true),
                 inner, on_false)
    assert q.source == Join(JoinKind.CROSS, TableRef("a"), right)


def test_subquery_in_from():
    q = parse("SELECT * FROM (SELECT 1) s, ((SELECT 1) UNION ALL (SELECT 2)) AS u")
    one = Select((SelectItem(i32(1)),))
    assert q.source.left == SubqueryRef(one, "s")
    assert q.source.right == SubqueryRef(UnionAll(one, Select((SelectItem(i32(2)),))), "u")


def test_sources_without_alias_with_column_lists_values_and_series():
    q = parse("SELECT * FROM (SELECT 1) CROSS JOIN (VALUES (1, 'a')) AS v(x, y), "
              "generate_series(1, 3) AS g(n), range(0, 4, 2), ((SELECT 1) UNION ALL (SELECT 2))")
    one = Select((SelectItem(i32(1)),))
    left, series, rng, union = q.source.left.left.left, q.source.left.left.right, \
        q.source.left.right, q.source.right
    assert left == Join(JoinKind.CROSS, SubqueryRef(one, None),
                        SubqueryRef(Values(((i32(1), Literal("a", T.STRING)),)), "v", ("x", "y")))
    assert series == TableFunctionRef("generate_series", (i32(1), i32(3)), "g", ("n",))
    assert rng == TableFunctionRef("range", (i32(0), i32(4), i32(2)))
    assert union == SubqueryRef(UnionAll(one, Select((SelectItem(i32(2)),))), None)


def test_with_column_lists_and_values_bodies():
    q = parse("WITH v(x) AS (VALUES (1), (2)) VALUES (3) UNION ALL SELECT x FROM v")
    assert q.ctes == (CommonTable("v", Values(((i32(1),), (i32(2),))), ("x",)),)
    assert isinstance(q.body, UnionAll) and q.body.left == Values(((i32(3),),))


def test_a_window_over_a_table_function_reads_its_window_clause():
    q = parse("SELECT x, sum(x) OVER w FROM generate_series(1,5) g(x) WINDOW w AS (ORDER BY x)")
    assert q.windows[0].name == "w" and q.source.columns == ("x",)


def test_order_by_and_limit_apply_to_the_whole_union():
    q = parse("SELECT 1 UNION ALL SELECT 2 ORDER BY 1 DESC LIMIT 3 OFFSET 4")
    assert isinstance(q, UnionAll)
    assert (q.order_by, q.limit, q.offset) == ((SortKey(i32(1), True),), 3, 4)
    assert q.left.limit is None and q.right.limit is None


def test_with_group_by_having_distinct():
    q = parse("WITH s AS (SELECT a FROM t) SELECT DISTINCT a, count(*) FROM s GROUP BY a "
              "HAVING count(*) > 1 ORDER BY a;  -- trailing comment")
    assert isinstance(q, With) and q.ctes[0].name == "s"
    body = q.body
    assert body.distinct and body.group_by == (a,) and body.order_by == (SortKey(a),)
    assert body.having == op(BinaryOperator.GT, FuncCall("count", (Star(),)), i32(1))


def test_comments_are_whitespace():
    assert parse_expr("a /* one\ntwo */ + -- three\n b") == op(BinaryOperator.ADD, a, b)


# -- errors ------------------------------------------------------------------------------------


def error_of(sql: str, expr: bool = False) -> str:
    with pytest.raises(InvalidQuery) as raised:
        (parse_expr if expr else parse)(sql)
    return str(raised.value)


def test_syntax_error_names_line_column_and_token():
    msg = error_of("SELECT a\nFROM t\nWHERE a = = 1")
    assert msg.startswith("3:11: ") and "'='" in msg


def test_end_of_input_is_named():
    assert error_of("SELECT a FROM") == "1:14: expected a table name, got end of input"


def test_reserved_word_as_name_has_a_hint():
    msg = error_of("SELECT a FROM select")
    assert msg.startswith("1:15: ") and "'select'" in msg and "quote" in msg


def test_unknown_function_names_the_function():
    msg = error_of("SELECT frobnicate(a) FROM t")
    assert msg.startswith("1:8: ") and "frobnicate" in msg


def test_wrong_arity_names_the_function_and_counts():
    msg = error_of("SELECT lag() OVER () FROM t")
    assert msg.startswith("1:8: ") and "lag() takes 1 to 3 arguments, got 0" in msg
    assert "nth_value() takes 2 arguments, got 3" in error_of("nth_value(a, 1, 2) OVER ()", True)


@pytest.mark.parametrize("sql, words", [
    ("rank()", ["rank()", "OVER"]),
    ("abs(a) OVER ()", ["abs()", "OVER"]),
    ("sum(a) IGNORE NULLS OVER ()", ["sum()", "IGNORE"]),
    ("lag(a) FROM LAST OVER ()", ["lag()", "FROM FIRST/LAST"]),
    ("rank(DISTINCT) OVER ()", ["rank()", "DISTINCT"]),
    ("count(DISTINCT *)", ["count()", "*"]),
    ("sum(*)", ["sum()", "*"]),
    ("lag(a) IGNORE NULLS", ["lag()", "OVER"]),
    ("lag(a IGNORE NULLS) IGNORE NULLS OVER ()", ["twice"]),
])
def test_clauses_a_function_cannot_take(sql, words):
    msg = error_of(sql, expr=True)
    assert msg.startswith("1:1: ")
    for word in words:
        assert word in msg


@pytest.mark.parametrize("sql, fragment", [
    ("SELECT 1 FROM t WINDOW w AS (ORDER BY a), v AS (w PARTITION BY b)", "PARTITION BY"),
    ("SELECT 1 FROM t WINDOW w AS (ORDER BY a), v AS (w ORDER BY b)", "ORDER BY"),
    ("SELECT 1 FROM t WINDOW w AS (ROWS CURRENT ROW), v AS (w ORDER BY b)", "frame"),
    ("SELECT rank() OVER nope FROM t", "'nope' is not defined"),
    ("SELECT 1 FROM t WINDOW w AS (), w AS ()", "defined twice"),
    ("SELECT 1 FROM t WINDOW v AS (w), w AS ()", "not defined before"),
    ("SELECT 1 FROM t ORDER BY rank() OVER nope", "'nope' is not defined"),
    ("WITH s AS (SELECT 1), s AS (SELECT 2) SELECT 1", "defined twice"),
])
def test_window_and_with_rules(sql, fragment):
    assert fragment in error_of(sql)


@pytest.mark.parametrize("sql, fragment", [
    ("SELECT sum(a) OVER (ROWS BETWEEN CURRENT ROW AND 1 PRECEDING) FROM t", "cannot run from"),
    ("SELECT sum(a) OVER (ROWS UNBOUNDED FOLLOWING) FROM t", "cannot run from"),
    ("SELECT sum(a) OVER (ROWS BETWEEN a PRECEDING AND CURRENT ROW) FROM t", "frame offset"),
    ("SELECT sum(a) OVER (ROWS BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE ALL) FROM t", "EXCLUDE"),
    ("SELECT 1 UNION SELECT 2", "only UNION ALL"),
    ("SELECT * FROM (SELECT 1)(a)", "expected the end"),
    ("SELECT * FROM (VALUES (1, 2), (3)) AS v", "1:31: VALUES rows must have one length"),
    ("VALUES (1) ORDER BY 1", "after VALUES"),
    ("SELECT * FROM generate_series(1) AS g", "1:15: generate_series takes 2 to 3 arguments"),
    ("SELECT * FROM range(1, 2) AS r(a, b)", "returns one column"),
    ("SELECT * FROM t AS u(a)", "expected the end"),
    # `((` is read as a query, then as a join: the error of the reading that got further.
    ("SELECT * FROM ((SELECT 1) AS a CROSS JOIN b WHERE)", "got 'WHERE'"),
    ("SELECT * FROM ((SELECT 1) UNION ALL (SELECT 2 FROM))", "expected a table name"),
    ("SELECT a IN () FROM t", "expected an expression"),
    ("SELECT a NOT IN 1 FROM t", "expected '('"),
    ("SELECT (SELECT 1 FROM t", "expected ')'"),
    ("SELECT CASE a WHEN 1 THEN 2 END", "searched CASE"),
    ("SELECT CAST(a AS VARCHAR(10))", "unknown type"),
    ("SELECT INTERVAL 'three' DAY", "whole number"),
    ("SELECT INTERVAL '3' WEEK", "interval unit"),
    ("SELECT DATE '2024-02-30'", "invalid DATE"),
    ("SELECT TIMESTAMP '2024-01-01 00:00:00+01:00'", "time zone"),
    ("SELECT 'abc", "unterminated"),
    ('SELECT ""', "zero-length"),
    ("SELECT 1e999", "out of range"),
    ("SELECT a = b = c", "end of the query"),
    ("SELECT 1 # 2", "unexpected character"),
    ("SELECT 1L FROM t", "a number with a suffix, '1L'"),  # Spark's BIGINT literal, DuckDB's alias
    ("SELECT 2.5D", "a number with a suffix, '2.5D'"),
    ("SELECT CAST(1 AS float)", "means REAL in DuckDB and Spark, DOUBLE PRECISION in PostgreSQL"),
    ("(SELECT 1 LIMIT 1) ORDER BY 1", "already has ORDER BY"),
    ("SELECT 1 LIMIT -1", "whole number"),
])
def test_error_messages(sql, fragment):
    assert fragment in error_of(sql)


def test_error_position_on_a_later_line():
    msg = error_of("SELECT a,\n       'unterminated\nFROM t")
    assert msg.startswith("2:8: ")


def test_inside_ignore_nulls_belongs_to_the_enclosing_call():
    e = window_of("lag(coalesce(a) IGNORE NULLS) OVER ()")
    assert e.func == FuncCall("lag", (FuncCall("coalesce", (a,)),),
                              null_treatment=NullTreatment.IGNORE)


def test_non_reserved_words_are_names():
    q = parse("SELECT date, user, current, ties, no, day FROM t WHERE date > DATE '2024-01-01'")
    assert [i.expr for i in q.items] == [Column(n) for n in
                                         ("date", "user", "current", "ties", "no", "day")]
    assert q.where == op(BinaryOperator.GT, Column("date"), Literal(dt.date(2024, 1, 1), T.DATE))


def test_reserved_words_are_all_quoted_by_the_writer():
    # Otherwise a name the writer leaves bare would read back as a keyword.
    from harness.sql.canonical import CANONICAL
    from harness.sql.lexer import RESERVED

    assert all(CANONICAL.needs_quotes(word) for word in RESERVED)


def test_a_frame_that_starts_after_it_ends_by_offset_is_valid():
    w = window_of("sum(x) OVER (ORDER BY k ROWS BETWEEN 1 PRECEDING AND 2 PRECEDING)")
    assert w.window.frame == Frame(FrameMode.ROWS, preceding(i32(1)), preceding(i32(2)))


# -- issue 16: `::`, INTERVAL spellings, offset expressions, QUALIFY, ALL ----------------


@pytest.mark.parametrize("sql, expected", [
    ("5::bigint", Literal(5, T.INT64)),  # folds as CAST(5 AS BIGINT) does
    ("'NaN'::double precision", Literal(math.nan, T.FLOAT64)),
    ("NULL::integer", Literal(None, T.INT32)),
    ("(5)::bigint", Cast(i32(5), T.INT64)),
    ("x::int", Cast(x, T.INT32)),
    # `::` binds tighter than unary minus and every binary operator (PostgreSQL).
    ("-5::bigint", UnaryOp(UnaryOperator.NEG, Literal(5, T.INT64))),
    ("-x::int", UnaryOp(UnaryOperator.NEG, Cast(x, T.INT32))),
    ("a + b::bigint", op(BinaryOperator.ADD, a, Cast(b, T.INT64))),
    ("5::bigint::int", Cast(Literal(5, T.INT64), T.INT32)),
    ("x::decimal(10,2)", Cast(x, T.decimal(10, 2))),
])
def test_double_colon_casts(sql, expected):
    got = parse_expr(sql)
    if isinstance(expected, Literal) and isinstance(expected.value, float):
        assert math.isnan(got.value) and got.type == expected.type
    else:
        assert got == expected


def test_double_colon_type_ends_before_the_alias():
    q = parse("SELECT x::int AS y, x::double precision z FROM t")
    assert [i.alias for i in q.items] == ["y", "z"]
    assert q.items[1].expr == Cast(x, T.FLOAT64)


@pytest.mark.parametrize("sql", ["INTERVAL '3' DAY", "INTERVAL 3 DAY", "INTERVAL '3 days'",
                                 "INTERVAL '3' DAYS", "interval '3 Day'", "INTERVAL ' 3  day '"])
def test_interval_spellings(sql):
    assert parse_expr(sql) == Interval(3, IntervalUnit.DAY)


def _offset(sql: str) -> object:
    q = parse(f"SELECT sum(x) OVER (ORDER BY k ROWS BETWEEN {sql} PRECEDING AND CURRENT ROW) FROM t")
    return q.items[0].expr.window.frame.start.offset


def test_frame_offsets_are_constant_expressions():
    assert _offset("1 + 1") == op(BinaryOperator.ADD, i32(1), i32(1))
    assert _offset("CAST(2 AS BIGINT)") == Literal(2, T.INT64)
    assert _offset("INTERVAL '1' DAY * 2") == op(BinaryOperator.MUL, Interval(1, IntervalUnit.DAY),
                                                 i32(2))
    assert _offset("abs(-2)") == FuncCall("abs", (i32(-2),))


@pytest.mark.parametrize("sql, fragment", [
    ("x", "no column"),
    ("1 + x", "no column"),
    ("count(*)", "no aggregate or window"),
    ("'a'", "must be a number"),
])
def test_a_frame_offset_that_is_not_constant_is_refused_at_its_token(sql, fragment):
    with pytest.raises(InvalidQuery, match=fragment) as caught:
        _offset(sql)
    assert caught.value.where == "1:45"


def test_qualify_after_window_before_order_by():
    q = parse("SELECT x FROM t WHERE x > 0 WINDOW w AS (ORDER BY k) "
              "QUALIFY row_number() OVER w = 1 ORDER BY x")
    assert q.qualify == op(BinaryOperator.EQ, WindowExpr(FuncCall("row_number"),
                                                         WindowSpec(base="w")), i32(1))
    assert q.where is not None and q.order_by == (SortKey(x),)
    assert parse("SELECT x FROM t QUALIFY x > 0").source == TableRef("t")  # not an alias
    with pytest.raises(InvalidQuery, match="not defined"):
        parse("SELECT x FROM t QUALIFY row_number() OVER w = 1")


def test_group_by_all_and_order_by_all():
    from harness.core.model import AllColumns

    q = parse("SELECT k, count(*) FROM t GROUP BY ALL ORDER BY ALL DESC NULLS FIRST")
    assert q.group_by == (AllColumns(),)
    assert q.order_by == (SortKey(AllColumns(), True, NullsOrder.FIRST),)
    assert parse("SELECT k FROM t ORDER BY ALL").order_by == (SortKey(AllColumns()),)
    with pytest.raises(InvalidQuery):
        parse("SELECT k FROM t ORDER BY ALL, k")
    with pytest.raises(InvalidQuery):  # ALL is not a window's sort key
        parse("SELECT row_number() OVER (ORDER BY ALL) FROM t")


@pytest.mark.parametrize("name, meant", [
    ("int1", "TINYINT"), ("int2", "SMALLINT"), ("int4", "INTEGER"), ("int8", "BIGINT"),
    ("float4", "REAL"), ("float8", "DOUBLE PRECISION"), ("int64", "BIGINT"), ("int16", "SMALLINT"),
])
def test_byte_sized_type_names_mean_what_postgresql_and_duckdb_mean(name: str, meant: str) -> None:
    """`5::int8` in a DuckDB or PostgreSQL test is a BIGINT (8 bytes), not Arrow's int8."""
    from harness.core.types import canonical_type_name, parse_type_name

    assert canonical_type_name(parse_type_name(name)) == meant
