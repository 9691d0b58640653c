"""Semantics profiles: each knob changes the reference's answer as its engine does."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from decimal import Decimal

import pyarrow as pa
import pytest

from harness.core.errors import EvaluationError, ReferenceGap
from harness.core.semantics import (
    NULLS_SMALLEST,
    STANDARD,
    AvgType,
    DateFromString,
    DatetimeVsString,
    DivisionByZero,
    IntegerDivision,
    InvalidString,
    NthValueBelowOne,
    Overflow,
    StringAggArgument,
    VarianceType,
)
from harness.engines.registry import engine_names, get_dialect
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


def test_division_by_zero_raises_or_is_null():
    sql = "SELECT id, 7 / (id - 2) AS q FROM t ORDER BY id ASC"
    with pytest.raises(EvaluationError, match="division by zero"):
        _column(sql)
    as_null = replace(STANDARD, division_by_zero=DivisionByZero.NULL, integer_division=IntegerDivision.TO_DOUBLE)
    assert _column(sql, as_null) == [-7.0, None, 7.0]
    assert _column("SELECT id, 7 % (id - 2) AS q FROM t ORDER BY id ASC", as_null) == [0, None, 0]


@pytest.mark.parametrize(("cast", "standard_error"), [
    ("CAST('x' AS INTEGER)", "invalid number"),
    ("CAST('x' AS DOUBLE PRECISION)", "invalid number"),
    ("CAST('not a date' AS DATE)", "invalid date"),
    ("CAST('x' AS TIMESTAMP)", "invalid timestamp"),
])
def test_a_string_that_does_not_cast_raises_or_is_null(cast, standard_error):
    sql = f"SELECT id, {cast} AS x FROM t ORDER BY id ASC"
    with pytest.raises(EvaluationError, match=standard_error):
        _column(sql)
    assert _column(sql, replace(STANDARD, invalid_string_cast=InvalidString.NULL)) == [None] * 3


def test_without_ansi_mode_a_comparison_with_a_string_that_is_no_date_is_null():
    spark35 = get_dialect("spark").at("3.5.9").semantics
    sql = "SELECT id, DATE '2024-01-01' > 'not a date' AS x FROM t ORDER BY id ASC"
    assert _column(sql, spark35) == [None] * 3
    with pytest.raises(EvaluationError, match="invalid date"):
        _column(sql, get_dialect("spark").semantics)
    # Spark 3.5 reads '1.5' AS INTEGER as 1: not a NULL, and not the reference's to guess.
    with pytest.raises(ReferenceGap):
        _column("SELECT id, CAST('1.5' AS INTEGER) AS x FROM t", spark35)


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


# -- lenient readings of queries the standard refuses ------------------------------------

LENIENT = {"t": pa.table({
    "id": pa.array([1, 2, 3, 4], pa.int64()),
    "v": pa.array([10, None, 30, 40], pa.int32()),
    "f": pa.array([1.5, 0.1, 1e20, -0.0], pa.float64()),
    "dc": pa.array([Decimal("1.50"), Decimal("-0.05"), None, Decimal("10.00")], pa.decimal128(10, 2)),
    "d": pa.array([dt.date(2024, 1, 1), dt.date(2024, 1, 2), dt.date(2024, 1, 10), None]),
    "b": pa.array([True, False, None, True]),
    "ts": pa.array([dt.datetime(2024, 1, 2, 10, 30)] * 4, pa.timestamp("us")),
    "s": pa.array(["2024-01-02 10:30:00", "2024-01-02", "2024-01-02 junk", None]),
})}
WHOLE = "OVER (ORDER BY id ASC ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)"


def _lenient(sql: str, **knobs) -> list:
    return evaluate(parse(sql), LENIENT, profile=replace(STANDARD, **knobs)).table.column(1).to_pylist()


def test_nth_value_below_one_raises_is_null_or_counts_from_the_end():
    sql = "SELECT id, nth_value(v, {n}) {over} AS x FROM t ORDER BY id ASC"
    moving = "OVER (ORDER BY id ASC ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)"
    for n in (0, -1):
        with pytest.raises(EvaluationError, match="nth_value"):
            _lenient(sql.format(n=n, over=WHOLE))
        assert _lenient(sql.format(n=n, over=WHOLE), nth_value_below_one=NthValueBelowOne.NULL) == [None] * 4
    from_end = {"nth_value_below_one": NthValueBelowOne.FROM_END}
    assert _lenient(sql.format(n=0, over=WHOLE), **from_end) == [None] * 4
    assert _lenient(sql.format(n=-1, over=WHOLE), **from_end) == [40] * 4
    assert _lenient(sql.format(n=-4, over=WHOLE), **from_end) == [10] * 4
    assert _lenient(sql.format(n=-5, over=WHOLE), **from_end) == [None] * 4  # past the frame
    # Measured on DataFusion 55.2: over each row's frame, NULLs counted unless ignored.
    assert _lenient(sql.format(n=-2, over=moving), **from_end) == [None, 10, None, 30]
    ignoring = f"SELECT id, nth_value(v, -2) IGNORE NULLS {WHOLE} AS x FROM t ORDER BY id ASC"
    assert _lenient(ignoring, **from_end) == [30] * 4
    from_last = f"SELECT id, nth_value(v, -1) FROM LAST {WHOLE} AS x FROM t ORDER BY id ASC"
    assert _lenient(from_last, **from_end) == [10] * 4  # from the other end: the first
    positive = f"SELECT id, nth_value(v, 3) {WHOLE} AS x FROM t ORDER BY id ASC"
    for choice in NthValueBelowOne:  # a valid n reads the same under every profile
        assert _lenient(positive, nth_value_below_one=choice) == [30] * 4


@pytest.mark.parametrize("text, strict, timestamp_date, date_prefix", [
    ("2024-01-02", "2024-01-02", "2024-01-02", "2024-01-02"),
    (" 2024-1-5 ", "2024-01-05", "2024-01-05", "2024-01-05"),  # unsigned integers, spaces trimmed
    ("2024-01-02 10:30:00", None, "2024-01-02", "2024-01-02"),
    ("2024-01-02T10:30:00.5", None, "2024-01-02", "2024-01-02"),
    ("2024-01-02 25:99:00", None, None, "2024-01-02"),
    ("2024-01-02 junk", None, None, "2024-01-02"),
    ("2024-02-30", None, None, None),
    ("20240102", None, None, None),
    ("2024-W01-1", None, None, None),
])
def test_a_string_cast_to_date(text, strict, timestamp_date, date_prefix):
    sql = f"SELECT id, CAST('{text}' AS DATE) AS x FROM t WHERE id = 1"
    for choice, want in ((DateFromString.STRICT, strict), (DateFromString.TIMESTAMP_DATE, timestamp_date),
                         (DateFromString.DATE_PREFIX, date_prefix)):
        if want is None:
            with pytest.raises(EvaluationError, match="invalid date"):
                _lenient(sql, date_from_string=choice)
        else:
            assert _lenient(sql, date_from_string=choice) == [dt.date.fromisoformat(want)], choice


def test_a_timestamp_string_with_a_zone_is_a_gap_not_a_guess():
    sql = "SELECT id, CAST('2024-01-02 23:30:00+05:00' AS DATE) AS x FROM t"
    with pytest.raises(ReferenceGap):
        _lenient(sql, date_from_string=DateFromString.TIMESTAMP_DATE)


def test_a_datetime_compared_with_a_string_literal():
    cast = {"datetime_vs_string": DatetimeVsString.LITERAL_CAST}
    sql = "SELECT id, d {op} '{text}' AS x FROM t ORDER BY id ASC"
    with pytest.raises(EvaluationError, match="cannot compare DATE with VARCHAR"):
        _lenient(sql.format(op=">", text="2024-01-01"))
    assert _lenient(sql.format(op=">", text="2024-01-01"), **cast) == [False, True, True, None]
    reversed_ = "SELECT id, '2024-01-01' < d AS x FROM t ORDER BY id ASC"
    assert _lenient(reversed_, **cast) == [False, True, True, None]
    # By date, not as text: '2024-01-10' < '2024-1-5' as strings.
    assert _lenient(sql.format(op="<", text="2024-1-5"), **cast) == [True, True, False, None]
    # A timestamp-shaped literal is cast to DATE by the profile's own cast: refused under
    # the standard's, the date under PostgreSQL's (never d cast to a timestamp).
    stamp = sql.format(op="=", text="2024-01-02 10:30:00")
    with pytest.raises(EvaluationError, match="invalid date"):
        _lenient(stamp, **cast)
    assert _lenient(stamp, **cast, date_from_string=DateFromString.TIMESTAMP_DATE) == [False, True, False, None]
    for choice in DateFromString:  # no reading makes a date of it
        with pytest.raises(EvaluationError, match="invalid date"):
            _lenient(sql.format(op=">", text="not a date"), **cast, date_from_string=choice)
    timestamps = "SELECT id, ts = '2024-01-02T10:30:00' AS x FROM t ORDER BY id ASC"
    assert _lenient(timestamps, **cast) == [True] * 4
    with pytest.raises(EvaluationError, match="cannot compare"):  # a column is no literal
        _lenient("SELECT id, d = s AS x FROM t", **cast)


def test_string_agg_over_a_non_string():
    text = {"string_agg_argument": StringAggArgument.CAST_TO_TEXT}
    sql = "SELECT id, string_agg({x}, ',') " + WHOLE + " AS x FROM t ORDER BY id ASC"
    with pytest.raises(EvaluationError, match="string_agg"):
        _lenient(sql.format(x="v"))
    assert _lenient(sql.format(x="v"), **text) == ["10,30,40"] * 4
    assert _lenient(sql.format(x="dc"), **text) == ["1.50,-0.05,10.00"] * 4
    assert _lenient(sql.format(x="d"), **text) == ["2024-01-01,2024-01-02,2024-01-10"] * 4
    assert _lenient(sql.format(x="b"), **text) == ["true,false,true"] * 4
    assert _lenient(sql.format(x="s"), **text) == _lenient(sql.format(x="s"))  # text is text
    for spelled_differently in ("f", "ts"):  # 1e+20, 1e20, 1.0E20; a T or a space
        with pytest.raises(ReferenceGap, match="spell"):
            _lenient(sql.format(x=spelled_differently), **text)


def test_each_lenient_knob_counts_only_for_queries_it_can_change():
    from harness.judge.runner import _touched_knobs

    def touched(sql: str) -> frozenset[str]:
        return _touched_knobs(parse(sql)) & {"nth_value_below_one", "date_from_string",
                                             "datetime_vs_string", "string_agg_argument",
                                             "invalid_string_cast", "division_by_zero"}

    assert touched("SELECT id, sum(v) OVER () AS s FROM t") == set()
    assert touched(f"SELECT id, nth_value(v, 2) {WHOLE} AS x FROM t") == {"nth_value_below_one"}
    assert touched("SELECT id, CAST(s AS DATE) AS x FROM t") == {"date_from_string", "invalid_string_cast"}
    assert touched("SELECT id FROM t WHERE d > '2024-01-01'") == {"date_from_string", "datetime_vs_string",
                                                                  "invalid_string_cast"}
    assert touched("SELECT id, v % 2 AS x FROM t") == {"division_by_zero"}
    assert touched(f"SELECT id, string_agg(v, ',') {WHOLE} AS x FROM t") >= {"string_agg_argument"}


def test_the_refusals_the_lenient_knobs_answer_have_their_matrix_rows():
    from harness.core.conformance import invalid_kind

    for reason, kind in (("cannot compare DATE with VARCHAR", "datetime-vs-string"),
                         ("invalid date '2024-01-02 junk' (nor a timestamp)", "invalid-date-string"),
                         ("string_agg() needs text, got INTEGER", "string-agg-not-text")):
        assert invalid_kind(reason).name == kind
