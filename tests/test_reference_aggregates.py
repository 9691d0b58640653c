"""Aggregates (as window aggregates and with GROUP BY): exact arithmetic,
NULL handling, FILTER, DISTINCT, empty frames, result types and magnitudes.
"""

from __future__ import annotations

import math
from decimal import Decimal

import pyarrow as pa
import pytest

from harness.core.errors import EvaluationError
from harness.core.model import BinaryOp, BinaryOperator, Star
from reference_impl.testing import (
    asc,
    bound,
    call,
    col,
    desc,
    frame,
    lit,
    over,
    run,
    select,
    table,
    window_values,
)


def whole(name, data, *args, **clauses):
    """name(args) OVER () for every row (the whole partition)."""
    return window_values(over(call(name, *args, **clauses)), data)


def single(name, values, type_name, *extra, **clauses):
    data = table(v=(type_name, values))
    return whole(name, data, col("v"), *extra, **clauses)[0]


def test_count_star_counts_rows_and_count_x_skips_nulls():
    data = table(v=("integer", [1, None, 3]))
    assert whole("count", data, Star()) == [3, 3, 3]
    assert whole("count", data, col("v")) == [2, 2, 2]


def test_integer_sum_is_exact_and_overflow_is_an_error():
    assert single("sum", [2**62, 2**62 - 1, -(2**62)], "bigint") == 2**62 - 1
    with pytest.raises(EvaluationError):
        single("sum", [2**62, 2**62], "bigint")


def test_decimal_sum_is_exact_and_keeps_the_scale():
    data = table(v=("decimal(10,2)", [Decimal("0.10"), Decimal("0.20"), None]))
    result = run(select((over(call("sum", col("v"))), "s")), data).table
    assert result.column("s").type == pa.decimal128(38, 2)
    assert result.column("s").to_pylist()[0] == Decimal("0.30")


def test_float_sum_is_the_exact_sum_rounded_once():
    # Left to right in doubles, 1e16 + 1 rounds back to 1e16 and the sum is 0.
    assert single("sum", [1e16, 1.0, -1e16], "double") == 1.0
    # Ten doubles nearest 0.1 sum exactly to 1.0000000000000000555..., nearest double 1.0.
    assert single("sum", [0.1] * 10, "double") == 1.0


def test_float_sum_special_values():
    assert math.isnan(single("sum", [1.0, math.nan], "double"))
    assert math.isnan(single("sum", [math.inf, -math.inf], "double"))
    assert single("sum", [math.inf, 1.0], "double") == math.inf
    assert single("sum", [1.7e308, 1.7e308], "double") == math.inf  # the exact sum overflows


def test_avg():
    assert single("avg", [1, 2], "integer") == 1.5
    assert single("avg", [1, 1, 2], "integer") == 4 / 3
    # The exact mean of two huge doubles is representable although their sum is not.
    assert single("avg", [1.7e308, 1.7e308], "double") == 1.7e308
    assert math.isnan(single("avg", [1.0, math.nan], "double"))


def test_avg_of_decimals_rounds_half_up_at_the_result_scale():
    data = table(v=("decimal(10,2)", [Decimal("1.00"), Decimal("2.00"), Decimal("2.00")]))
    result = run(select((over(call("avg", col("v"))), "a")), data).table
    assert result.column("a").type == pa.decimal128(38, 6)  # scale max(2 + 4, 6)
    assert result.column("a").to_pylist()[0] == Decimal("1.666667")


def test_min_and_max_with_nan_the_largest():
    assert math.isnan(single("max", [1.0, math.nan, math.inf], "double"))
    assert single("min", [1.0, math.nan, math.inf, None], "double") == 1.0
    assert single("min", ["b", "a", None], "varchar") == "a"


def test_filter_and_distinct():
    data = table(v=("integer", [1, 1, 2, None, 3]))
    assert (
        whole("sum", data, col("v"), filter=BinaryOp(BinaryOperator.GT, col("v"), lit(1)))[0] == 5
    )
    assert whole("count", data, col("v"), distinct=True)[0] == 3
    assert whole("sum", data, col("v"), distinct=True)[0] == 6


def test_distinct_treats_nan_and_signed_zeros_as_duplicates():
    assert single("count", [0.0, -0.0, math.nan, math.nan, None], "double", distinct=True) == 2


def test_empty_frames_give_zero_count_and_null_otherwise():
    data = table(id=("bigint", [1, 2]), v=("double", [1.0, 2.0]))
    empty = frame("rows", bound(3, "following"), bound(4, "following"))
    for name, expected in [
        ("count", 0),
        ("sum", None),
        ("avg", None),
        ("min", None),
        ("stddev_samp", None),
        ("bool_or", None),
    ]:
        arg = col("v") if name != "bool_or" else BinaryOp(BinaryOperator.GT, col("v"), lit(0.0))
        expr = over(call(name, arg), order=[asc(col("id"))], frame=empty)
        assert window_values(expr, data) == [expected, expected], name


def test_variances_are_exact_then_rounded():
    values = [1, 2, 3, 4]
    assert single("var_samp", values, "integer") == 5 / 3
    assert single("var_pop", values, "integer") == 1.25
    assert single("stddev_samp", values, "integer") == math.sqrt(5 / 3)
    assert single("stddev_pop", values, "integer") == math.sqrt(1.25)
    assert single("var_samp", [7], "integer") is None
    assert single("var_pop", [7], "integer") == 0.0


def test_bool_and_or():
    assert single("bool_and", [True, None, False], "boolean") is False
    assert single("bool_or", [True, None, False], "boolean") is True
    assert single("bool_and", [None], "boolean") is None


def test_string_agg_with_its_own_order():
    data = table(s=("varchar", ["b", "a", None, "c"]))
    ordered = whole("string_agg", data, col("s"), lit(","), order_by=(desc(col("s")),))
    assert ordered[0] == "c,b,a"
    assert whole("string_agg", data, col("s"), lit("-"))[0] == "b-a-c"


def test_magnitudes_of_float_aggregates():
    data = table(id=("bigint", [1, 2, 3]), v=("double", [1e16, 1.0, -1e16]))
    query = select(
        (over(call("sum", col("v"))), "s"),
        (over(call("avg", col("v"))), "a"),
        (over(call("max", col("v"))), "m"),
        (over(call("count", col("v"))), "c"),
    )
    evaluation = run(query, data)
    assert evaluation.magnitudes["s"] == [2e16 + 1] * 3
    assert evaluation.magnitudes["a"] == [(2e16 + 1) / 3] * 3
    assert evaluation.magnitudes["m"] == [1e16] * 3  # |value| for other floats
    assert "c" not in evaluation.magnitudes


def test_magnitudes_follow_rows_through_a_subquery_and_order_by():
    from harness.core.model import SubqueryRef

    data = table(id=("bigint", [1, 2]), v=("double", [3.0, -1.0]))
    inner = select(col("id"), (over(call("sum", col("v")), order=[asc(col("id"))]), "s"))
    outer = select(col("s"), source=SubqueryRef(inner, "q"), order_by=[desc(col("id"))])
    evaluation = run(outer, data)
    assert evaluation.table.column("s").to_pylist() == [2.0, 3.0]
    assert evaluation.magnitudes["s"] == [4.0, 3.0]


# ---------------------------------------------------------------------------
# GROUP BY

G = table(g=("varchar", ["a", "b", "a", None, None]), v=("integer", [1, 2, 3, 4, None]))


def test_group_by_with_null_group_and_having():
    query = select(
        col("g"),
        (call("sum", col("v")), "s"),
        (call("count", Star()), "n"),
        group_by=[col("g")],
        order_by=[asc(col("g"), nulls="last")],
    )
    assert run(query, G).table.to_pylist() == [
        {"g": "a", "s": 4, "n": 2},
        {"g": "b", "s": 2, "n": 1},
        {"g": None, "s": 4, "n": 2},
    ]
    having = BinaryOp(BinaryOperator.GT, call("count", Star()), lit(1))
    query = select(col("g"), group_by=[col("g")], having=having, order_by=[asc(col("g"))])
    assert run(query, G).table.column("g").to_pylist() == ["a", None]


def test_aggregate_without_group_by_over_no_rows_is_one_row():
    empty = table(v=("integer", []))
    query = select((call("count", Star()), "n"), (call("sum", col("v")), "s"))
    assert run(query, empty).table.to_pylist() == [{"n": 0, "s": None}]


def test_window_over_grouped_rows():
    # rank() over the groups by their sums: a -> 4, b -> 2, NULL -> 4.
    query = select(
        col("g"),
        (over(call("sum", call("sum", col("v")))), "total"),
        (over(call("rank"), order=[desc(call("sum", col("v")))]), "r"),
        group_by=[col("g")],
        order_by=[asc(col("g"), nulls="last")],
    )
    assert run(query, G).table.to_pylist() == [
        {"g": "a", "total": 10, "r": 1},
        {"g": "b", "total": 10, "r": 3},
        {"g": None, "total": 10, "r": 1},
    ]
