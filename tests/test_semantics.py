"""Semantics profiles: each knob changes the reference's answer as its engine does."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pyarrow as pa
import pytest

from harness.engines.registry import engine_names, get_dialect
from harness.errors import EvaluationError
from harness.semantics import (
    NULLS_SMALLEST,
    STANDARD,
    AvgType,
    IntegerDivision,
    Overflow,
)
from harness.sql import parse
from reference_impl import evaluate

TABLE = {"t": pa.table({
    "id": pa.array([1, 2, 3], pa.int64()),
    "v": pa.array([7, None, -7], pa.int64()),
    "big": pa.array([2**62, 2**62, 1], pa.int64()),
    "d": pa.array([Decimal("1.00"), Decimal("2.00"), Decimal("4.00")], pa.decimal128(10, 2)),
})}


def _column(sql: str, profile=STANDARD) -> list:
    return evaluate(parse(sql), TABLE, profile=profile).table.column(1).to_pylist()


def test_integer_division_truncates_or_gives_a_double():
    sql = "SELECT id, v / 2 AS q FROM t ORDER BY id ASC"
    assert _column(sql) == [3, None, -3]
    as_double = replace(STANDARD, integer_division=IntegerDivision.TO_DOUBLE)
    assert _column(sql, as_double) == [3.5, None, -3.5]


def test_sum_overflow_raises_wraps_or_widens():
    sql = "SELECT id, sum(big) OVER (ORDER BY id ASC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS s FROM t ORDER BY id ASC"
    with pytest.raises(EvaluationError):
        _column(sql)
    assert _column(sql, replace(STANDARD, sum_overflow=Overflow.WRAP)) == [2**62, -(2**63), -(2**63) + 1]
    widened = _column(sql, replace(STANDARD, sum_overflow=Overflow.WIDEN))
    assert widened == [2**62, 2**63, 2**63 + 1]


def test_avg_types():
    sql = "SELECT id, avg(d) OVER () AS a FROM t"
    assert _column(sql) == [Decimal("2.333333")] * 3
    assert _column(sql, replace(STANDARD, avg_of_decimals=AvgType.DOUBLE)) == [7 / 3] * 3


def test_avg_of_decimals_at_scale_plus_4_cut_or_rounded():
    # avg(DECIMAL(10,2)) over -2.00, 1.43, -2.00 is -0.856666... exactly.
    table = {"t": pa.table({"d": pa.array([Decimal(x) for x in ("-2.00", "1.43", "-2.00")],
                                          pa.decimal128(10, 2))})}

    def avg(profile) -> pa.Table:
        return evaluate(parse("SELECT avg(d) AS a FROM t"), table, profile=profile).table

    cut = avg(replace(STANDARD, avg_of_decimals=AvgType.PLUS4_TRUNCATED))
    assert cut.schema.field("a").type == pa.decimal128(14, 6)
    assert cut.column("a").to_pylist() == [Decimal("-0.856666")]
    rounded = avg(replace(STANDARD, avg_of_decimals=AvgType.PLUS4_ROUNDED))
    assert rounded.column("a").to_pylist() == [Decimal("-0.856667")]


def test_unwritten_null_order_follows_the_profile():
    sql = "SELECT id, row_number() OVER (ORDER BY v ASC) AS rn FROM t ORDER BY id ASC"
    assert _column(sql) == [2, 3, 1]  # standard: NULL is the largest value
    assert _column(sql, replace(STANDARD, null_ordering=NULLS_SMALLEST)) == [3, 1, 2]


@pytest.mark.parametrize("name", [n for n in engine_names() if n != "reference"])
def test_every_engine_declares_a_named_profile(name):
    profile = get_dialect(name).semantics
    assert profile.name == name
    assert profile == STANDARD or profile.differences(STANDARD)
