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
    VarianceType,
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


def test_a_decimal_sum_past_38_digits_raises_or_has_no_limit():
    top = Decimal("9" * 38)
    table = {"t": pa.table({"d": pa.array([top, top], pa.decimal128(38, 0))})}
    sql = parse("SELECT sum(d) AS s FROM t")
    with pytest.raises(EvaluationError, match="out of range"):
        evaluate(sql, table)
    got = evaluate(sql, table, profile=replace(STANDARD, decimal_sum_overflow=Overflow.WIDEN)).table
    assert got.column("s").to_pylist() == [Decimal("1" + "9" * 37 + "8")]  # 39 digits: decimal256


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


NUMERIC = replace(STANDARD, avg_of_integers=AvgType.NUMERIC, avg_of_decimals=AvgType.NUMERIC,
                  variance_of_exact=VarianceType.NUMERIC)


def test_numeric_quotients_take_postgres_division_scale():
    # Measured on PostgreSQL 15 over the same three rows (see tests/test_postgres.py):
    # 16 significant digits at least, 20 after the point for a quotient below 1
    # (zero included), rounded half away from zero.
    sql = ("SELECT id, avg(d) OVER () AS a, var_samp(d) OVER () AS vs, stddev_samp(d) OVER () AS ss, "
           "var_pop(v) OVER () AS vp, avg(v) OVER () AS av FROM t ORDER BY id ASC")
    row = evaluate(parse(sql), TABLE, profile=NUMERIC).table.to_pylist()[0]
    assert row == {"id": 1, "a": Decimal("2.3333333333333333"), "vs": Decimal("2.3333333333333333"),
                   "ss": Decimal("1.5275252316519467"), "vp": Decimal(49), "av": Decimal(0)}


def test_numeric_quotients_of_floats_stay_doubles():
    table = {"t": pa.table({"f": [1.0, 2.0, 2.0]})}
    got = evaluate(parse("SELECT avg(f) AS a, var_samp(f) AS v FROM t"), table, profile=NUMERIC).table
    assert [f.type for f in got.schema] == [pa.float64(), pa.float64()]


def test_a_numeric_quotient_column_is_sized_to_its_values():
    # 2^63 - 1 has 19 digits before the point, 1/3 20 after: 39 digits at one
    # scale, more than decimal128 holds (PostgreSQL answers the same column).
    table = {"t": pa.table({"id": [1, 2, 3, 4, 5],
                            "k": pa.array([2**63 - 1, 2**63 - 1, -1, 1, 1], pa.int64())})}
    sql = "SELECT id, avg(k) OVER (PARTITION BY id < 3) AS a FROM t ORDER BY id ASC"
    got = evaluate(parse(sql), table, profile=NUMERIC).table
    assert got.schema.field("a").type == pa.decimal256(76, 20)
    assert got.column("a").to_pylist() == [Decimal(2**63 - 1)] * 2 + [Decimal("0.33333333333333333333")] * 3


def test_unwritten_null_order_follows_the_profile():
    sql = "SELECT id, row_number() OVER (ORDER BY v ASC) AS rn FROM t ORDER BY id ASC"
    assert _column(sql) == [2, 3, 1]  # standard: NULL is the largest value
    assert _column(sql, replace(STANDARD, null_ordering=NULLS_SMALLEST)) == [3, 1, 2]


@pytest.mark.parametrize("name", [n for n in engine_names() if n != "reference"])
def test_every_engine_declares_a_named_profile(name):
    profile = get_dialect(name).semantics
    assert profile.name == name
    assert profile == STANDARD or profile.differences(STANDARD)
