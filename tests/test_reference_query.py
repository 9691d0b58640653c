"""The operators around the windows: WHERE, expressions, ORDER BY, LIMIT,
DISTINCT, subqueries, joins, UNION ALL, WITH; and what raises ReferenceGap."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pyarrow as pa
import pytest

from harness.core import types as T
from harness.core.errors import EvaluationError, InvalidQuery, ReferenceGap
from harness.core.model import (
    BinaryOp,
    BinaryOperator,
    Case,
    Cast,
    CommonTable,
    IsNull,
    Join,
    JoinKind,
    Star,
    SubqueryRef,
    TableRef,
    UnaryOp,
    UnaryOperator,
    UnionAll,
    With,
)
from reference_impl.testing import asc, call, col, desc, interval, lit, over, run, select, table

B = BinaryOperator
T1 = table(
    id=("bigint", [1, 2, 3, 4]),
    v=("integer", [5, None, -7, 2]),
    s=("varchar", ["x", "y", None, "x"]),
)


def rows(query, tables=T1):
    return run(query, tables).table.to_pylist()


def column(query, name, tables=T1):
    return run(query, tables).table.column(name).to_pylist()


def expr_values(expr, tables=T1):
    return column(select((expr, "e")), "e", tables)


def test_where_keeps_only_true_rows():
    assert column(select(col("id"), where=BinaryOp(B.GT, col("v"), lit(0))), "id") == [1, 4]
    # NOT (NULL > 0) is NULL: the NULL row is dropped by both conditions.
    negated = UnaryOp(UnaryOperator.NOT, BinaryOp(B.GT, col("v"), lit(0)))
    assert column(select(col("id"), where=negated), "id") == [3]


def test_three_valued_and_or():
    is_x = BinaryOp(B.EQ, col("s"), lit("x"))
    positive = BinaryOp(B.GT, col("v"), lit(0))
    # Rows: (5, x), (NULL, y), (-7, NULL), (2, x)
    assert expr_values(BinaryOp(B.AND, is_x, positive)) == [True, False, False, True]
    assert expr_values(BinaryOp(B.OR, is_x, positive)) == [True, None, None, True]


def test_integer_division_truncates_and_modulo_keeps_the_dividend_sign():
    assert expr_values(BinaryOp(B.DIV, col("v"), lit(2))) == [2, None, -3, 1]
    assert expr_values(BinaryOp(B.MOD, col("v"), lit(2))) == [1, None, -1, 0]


def test_division_by_zero_and_integer_overflow_are_errors():
    with pytest.raises(EvaluationError):
        expr_values(BinaryOp(B.DIV, col("v"), lit(0)))
    with pytest.raises(EvaluationError):
        expr_values(BinaryOp(B.MUL, col("id"), lit(2**62)))


def test_decimal_and_float_arithmetic():
    total = BinaryOp(B.ADD, lit(Decimal("1.10")), lit(Decimal("2.205")))
    result = run(select((total, "e")), T1).table
    # DECIMAL(3,2) + DECIMAL(4,3): scale 3, precision max(1, 1) + 3 + 1.
    assert result.column("e").type == pa.decimal128(5, 3)
    assert result.column("e").to_pylist()[0] == Decimal("3.305")
    assert expr_values(BinaryOp(B.MUL, col("v"), lit(0.5)))[:2] == [2.5, None]


def test_case_coalesce_nullif_abs_is_null():
    case = Case(((BinaryOp(B.GT, col("v"), lit(0)), lit("pos")),), lit("other"))
    assert expr_values(case) == ["pos", "other", "other", "pos"]
    assert expr_values(call("coalesce", col("v"), lit(0))) == [5, 0, -7, 2]
    assert expr_values(call("nullif", col("v"), lit(5))) == [None, None, -7, 2]
    assert expr_values(call("abs", col("v"))) == [5, None, 7, 2]
    assert expr_values(IsNull(col("v"))) == [False, True, False, False]


def test_case_branches_take_a_common_type():
    case = Case(((BinaryOp(B.GT, col("v"), lit(0)), col("v")),), lit(0.5))
    assert expr_values(case) == [5.0, 0.5, 0.5, 2.0]


def test_casts():
    assert expr_values(Cast(col("v"), T.FLOAT64)) == [5.0, None, -7.0, 2.0]
    assert expr_values(Cast(col("v"), T.STRING)) == ["5", None, "-7", "2"]
    assert expr_values(Cast(lit("2024-02-29"), T.DATE))[0] == dt.date(2024, 2, 29)
    assert expr_values(Cast(lit(0.125), T.decimal(5, 2)))[0] == Decimal("0.13")  # half up
    assert expr_values(Cast(lit(0.1), T.decimal(5, 2)))[0] == Decimal("0.10")
    with pytest.raises(ReferenceGap):
        # The double nearest 2.675 lies just below it: exact rounding gives 2.67,
        # rounding its printed digits (as PostgreSQL does) gives 2.68.
        expr_values(Cast(lit(2.675), T.decimal(5, 2)))
    with pytest.raises(ReferenceGap):
        expr_values(Cast(lit(2.5), T.INT32))  # rounding to integer is the engine's choice
    with pytest.raises(EvaluationError):
        expr_values(Cast(lit(300), T.INT8))


def test_date_plus_interval():
    plus = BinaryOp(B.ADD, lit(dt.date(2024, 1, 31)), interval(1, "month"))
    assert expr_values(plus)[0] == dt.date(2024, 2, 29)


def test_order_by_desc_nulls_first_and_last():
    query = select(col("id"), order_by=[desc(col("v"), nulls="first")])
    assert column(query, "id") == [2, 1, 4, 3]
    query = select(col("id"), order_by=[desc(col("v"), nulls="last")])
    assert column(query, "id") == [1, 4, 3, 2]


def test_order_by_output_alias_and_position():
    query = select(
        col("id"), (UnaryOp(UnaryOperator.NEG, col("id")), "neg"), order_by=[asc(col("neg"))]
    )
    assert column(query, "id") == [4, 3, 2, 1]
    query = select(col("v"), col("id"), order_by=[asc(lit(2, "integer"))])
    assert column(query, "id") == [1, 2, 3, 4]


def test_limit_and_offset():
    query = select(col("id"), order_by=[asc(col("id"))], limit=2, offset=1)
    assert column(query, "id") == [2, 3]


def test_limit_that_cuts_through_ties_or_without_order_is_a_gap():
    with pytest.raises(ReferenceGap):
        rows(select(col("id"), limit=2))
    with pytest.raises(ReferenceGap):
        rows(select(col("id"), order_by=[asc(col("s"))], limit=1))  # ids 1 and 4 tie on "x"
    assert column(select(col("s"), order_by=[asc(col("s"))], limit=1), "s") == ["x"]  # same rows


def test_select_distinct():
    data = table(f=("double", [0.0, -0.0, math.nan, math.nan, None, None, 1.0]))
    assert len(rows(select(col("f"), distinct=True), data)) == 4


def test_select_star_and_output_names():
    assert run(select(Star()), T1).table.column_names == ["id", "v", "s"]
    names = run(select(col("id"), lit(1), (lit(2), "two")), T1).table.column_names
    assert names == ["id", "_col1", "two"]


def test_top_n_per_group_through_a_subquery():
    data = table(g=("varchar", ["a", "a", "a", "b"]), v=("integer", [3, 1, 2, 9]))
    ranked = select(
        col("g"),
        col("v"),
        (over(call("row_number"), partition=[col("g")], order=[desc(col("v"))]), "rn"),
    )
    query = select(
        col("g"),
        col("v"),
        source=SubqueryRef(ranked, "q"),
        where=BinaryOp(B.LE, col("rn"), lit(2)),
        order_by=[asc(col("g")), desc(col("v"))],
    )
    assert rows(query, data) == [{"g": "a", "v": 3}, {"g": "a", "v": 2}, {"g": "b", "v": 9}]


L = table(k=("integer", [1, 2, None]), a=("varchar", ["l1", "l2", "lnull"]))
R = table(k=("integer", [2, 3, None]), b=("varchar", ["r2", "r3", "rnull"]))


def join(kind):
    on = None if kind is JoinKind.CROSS else BinaryOp(B.EQ, col("k", "l"), col("k", "r"))
    source = Join(kind, TableRef("L", "l"), TableRef("R", "r"), on)
    query = select(col("a"), col("b"), source=source)
    return sorted(rows(query, {"L": L, "R": R}), key=lambda r: (str(r["a"]), str(r["b"])))


def test_joins_never_match_null_keys():
    assert join(JoinKind.INNER) == [{"a": "l2", "b": "r2"}]
    assert join(JoinKind.LEFT) == [
        {"a": "l1", "b": None},
        {"a": "l2", "b": "r2"},
        {"a": "lnull", "b": None},
    ]
    assert len(join(JoinKind.FULL)) == 5
    assert len(join(JoinKind.RIGHT)) == 3
    assert len(join(JoinKind.CROSS)) == 9


def test_ambiguous_column_is_invalid():
    source = Join(JoinKind.CROSS, TableRef("L", "l"), TableRef("R", "r"))
    with pytest.raises(InvalidQuery):
        rows(select(col("k"), source=source), {"L": L, "R": R})


def test_union_all_and_with():
    one = select((col("v"), "x"), where=BinaryOp(B.GT, col("v"), lit(0)))
    two = select((lit(0.5), "y"), source=None)
    union = UnionAll(one, two, order_by=(asc(col("x")),))
    assert column(union, "x") == [0.5, 2.0, 5.0]
    with_ = With((CommonTable("pos", one),), select(call("count", Star()), source="pos"))
    assert rows(with_)[0] == {"_col0": 2}


def test_gaps_are_reported_not_guessed():
    with pytest.raises(ReferenceGap):
        expr_values(Cast(lit(0.1), T.STRING))  # engines spell floats differently
    with pytest.raises(ReferenceGap):
        expr_values(BinaryOp(B.DIV, lit(Decimal("1.0")), lit(Decimal("3.0"))))


def test_window_functions_are_not_allowed_in_where_or_nested():
    rn = over(call("row_number"))
    with pytest.raises(EvaluationError):
        rows(select(col("id"), where=BinaryOp(B.EQ, rn, lit(1))))
    with pytest.raises(EvaluationError):
        rows(select(over(call("sum", rn))))


def test_named_windows_and_refinement():
    from harness.core.model import NamedWindow, WindowExpr, WindowSpec

    named = (NamedWindow("w", WindowSpec(partition_by=(col("s"),))),)
    refined = WindowExpr(call("row_number"), WindowSpec(base="w", order_by=(desc(col("id")),)))
    plain = WindowExpr(call("count", Star()), WindowSpec(base="w"))
    query = select(col("id"), (refined, "rn"), (plain, "n"), windows=named)
    # Partitions: x -> ids 1, 4; y -> 2; NULL -> 3.
    assert rows(query) == [
        {"id": 1, "rn": 2, "n": 2},
        {"id": 2, "rn": 1, "n": 1},
        {"id": 3, "rn": 1, "n": 1},
        {"id": 4, "rn": 1, "n": 2},
    ]


def test_window_expression_only_in_order_by():
    rn = over(call("row_number"), order=[desc(col("id"))])
    assert column(select(col("id"), order_by=[asc(rn)]), "id") == [4, 3, 2, 1]
