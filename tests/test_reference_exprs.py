"""The reference on the expression-level syntax of issue 16: `::`, IS [NOT]
DISTINCT FROM, `//`, interval arithmetic, constant expressions as frame
offsets and as offset/ntile/nth_value arguments, QUALIFY, GROUP BY ALL and
ORDER BY ALL. Expected values are derived in the comments."""

from __future__ import annotations

import datetime as dt

import pytest

from harness.core import types as T
from harness.core.errors import EvaluationError, ReferenceGap
from harness.core.model import Interval, IntervalUnit
from harness.sql import parse
from reference_impl.testing import run, table

T1 = table(
    id=("bigint", [1, 2, 3, 4, 5, 6]),
    k=("integer", [1, 1, 1, 2, 2, None]),
    v=("integer", [10, None, 10, 20, 30, 5]),
    d=("date", [dt.date(2024, 1, i) for i in (1, 2, 2, 3, 5, 9)]),
)


def rows(sql: str, tables=T1) -> list[tuple]:
    return [tuple(r.values()) for r in run(parse(sql), tables).table.to_pylist()]


def one(sql: str):
    return rows(sql)[0]


def test_double_colon_is_a_cast():
    assert one("SELECT 5::bigint AS a, -5::bigint AS b, '7'::integer AS c") == (5, -5, 7)
    assert run(parse("SELECT 5::bigint AS a"), T1).table.schema.field("a").type.bit_width == 64


def test_is_distinct_from_is_null_safe():
    # NULL vs NULL: not distinct; NULL vs 1: distinct; 1 vs 1: not distinct.
    assert one("SELECT NULL IS DISTINCT FROM NULL AS a, 1 IS DISTINCT FROM NULL AS b, "
               "1 IS DISTINCT FROM 1 AS c, NULL IS NOT DISTINCT FROM NULL AS d, "
               "2 IS NOT DISTINCT FROM 1 AS e") == (False, True, False, True, False)
    assert rows("SELECT id FROM t WHERE v IS DISTINCT FROM 10 ORDER BY id ASC") == [
        (2,), (4,), (5,), (6,)]


def test_integer_division_truncates_toward_zero_in_the_integer_type():
    # DuckDB 2.0.1: 7 // 2 = 3, -7 // 2 = -3, 7 // -2 = -3, -7 // -2 = 3 (INTEGER).
    assert one("SELECT 7 // 2 AS a, -7 // 2 AS b, 7 // -2 AS c, -7 // -2 AS d") == (3, -3, -3, 3)
    result = run(parse("SELECT CAST(-9 AS SMALLINT) // CAST(4 AS SMALLINT) AS a"), T1).table
    assert result.column("a").to_pylist() == [-2] and result.schema.field("a").type.bit_width == 16


def test_integer_division_of_other_numbers_divides():
    # DuckDB 2.0.1: 7.5 // 2 = 3.75 and 7.0E0 // 2.0E0 = 3.5, both DOUBLE.
    assert one("SELECT 7.5 // 2 AS a, 7.0E0 // 2.0E0 AS b") == (3.75, 3.5)


@pytest.mark.parametrize("sql", ["SELECT 7 // 0 AS a", "SELECT CAST(-128 AS TINYINT) // "
                                 "CAST(-1 AS TINYINT) AS a"])
def test_integer_division_by_zero_and_overflow_are_errors(sql):
    with pytest.raises(EvaluationError):
        rows(sql)


def test_interval_constants_fold_exactly():
    expressions = {
        "INTERVAL '1' DAY * 2": Interval(2, IntervalUnit.DAY),
        "3 * INTERVAL '1' MONTH": Interval(3, IntervalUnit.MONTH),
        "INTERVAL '1' DAY + INTERVAL '2' HOUR": Interval(26, IntervalUnit.HOUR),
        "INTERVAL '1' YEAR - INTERVAL '1' MONTH": Interval(11, IntervalUnit.MONTH),
        "INTERVAL '6' DAY / 3": Interval(2, IntervalUnit.DAY),
        "-(INTERVAL '2' DAY)": Interval(-2, IntervalUnit.DAY),
    }
    from harness.sql import parse_expr
    from reference_impl.expressions import constant_value
    for text, value in expressions.items():
        assert constant_value(parse_expr(text)) == value, text
    for gap in ("INTERVAL '1' MONTH + INTERVAL '1' DAY", "INTERVAL '5' DAY / 2",
                "INTERVAL '1' DAY * 1.5"):
        with pytest.raises(ReferenceGap):
            constant_value(parse_expr(gap))


def test_a_date_plus_an_interval_expression():
    assert one("SELECT DATE '2024-01-30' + INTERVAL '1' DAY * 3 AS a") == (dt.date(2024, 2, 2),)


def test_constant_expression_frame_offsets():
    # ROWS 1 + 1 PRECEDING: the sum of the row and the two before it.
    # ids 1..6, v 10, NULL, 10, 20, 30, 5 -> 10, 10, 20, 30, 60, 55.
    sql = ("SELECT id, sum(v) OVER (ORDER BY id ASC ROWS BETWEEN {} PRECEDING AND CURRENT ROW) "
           "AS s FROM t ORDER BY id ASC")
    expected = [(1, 10), (2, 10), (3, 20), (4, 30), (5, 60), (6, 55)]
    assert rows(sql.format("1 + 1")) == expected
    assert rows(sql.format("CAST(2 AS BIGINT)")) == expected
    assert rows(sql.format("2::smallint")) == expected


def test_a_constant_expression_evaluating_negative_is_a_negative_offset():
    with pytest.raises(EvaluationError, match="must not be negative"):
        rows("SELECT sum(v) OVER (ORDER BY id ASC ROWS BETWEEN 1 - 3 PRECEDING AND CURRENT ROW) "
             "AS s FROM t")
    with pytest.raises(EvaluationError, match="must not be negative"):
        rows("SELECT count(*) OVER (ORDER BY d ASC RANGE BETWEEN INTERVAL '1' DAY * -2 "
             "PRECEDING AND CURRENT ROW) AS c FROM t")


def test_range_with_an_interval_expression():
    # d: 01-01, 01-02, 01-02, 01-03, 01-05, 01-09; 2 days back from each row:
    # 01-01 -> 1; 01-02 -> 3 (01-01..01-02); 01-03 -> 4; 01-05 -> 2 (01-03..01-05); 01-09 -> 1.
    assert rows("SELECT id, count(*) OVER (ORDER BY d ASC RANGE BETWEEN INTERVAL '1' DAY * 2 "
                "PRECEDING AND CURRENT ROW) AS c FROM t ORDER BY id ASC") == [
        (1, 1), (2, 3), (3, 3), (4, 4), (5, 2), (6, 1)]


def test_constant_expressions_as_window_function_arguments():
    # lag(v, 2, 1 + 1): v two rows back, else 2; ntile(1 + 2) over 6 rows: 1 1 2 2 3 3;
    # nth_value(v, 1 + 1) over the whole partition: the second v, NULL.
    assert rows("SELECT id, lag(v, 1 + 1, 1 + 1) OVER (ORDER BY id ASC) AS l, "
                "ntile(CAST(3 AS BIGINT)) OVER (ORDER BY id ASC) AS n, "
                "nth_value(v, 2 + 1) OVER (ORDER BY id ASC ROWS BETWEEN UNBOUNDED PRECEDING AND "
                "UNBOUNDED FOLLOWING) AS x FROM t ORDER BY id ASC") == [
        (1, 2, 1, 10), (2, 2, 1, 10), (3, 10, 2, 10), (4, None, 2, 10), (5, 10, 3, 10),
        (6, 20, 3, 10)]


def test_qualify_filters_on_window_results():
    # Top 1 per k by v DESC, id ASC: k=1 -> id 1 (10, the lower id of the tie),
    # k=2 -> id 5 (30), k=NULL -> id 6.
    assert rows("SELECT id, k FROM t QUALIFY row_number() OVER (PARTITION BY k ORDER BY v DESC "
                "NULLS LAST, id ASC) = 1 ORDER BY id ASC") == [(1, 1), (5, 2), (6, None)]


def test_qualify_reads_select_list_windows_and_runs_after_where():
    # WHERE drops id 1; the running count then starts at id 2.
    assert rows("SELECT id, count(*) OVER (ORDER BY id ASC) AS c FROM t WHERE id > 1 "
                "QUALIFY c <= 2 ORDER BY id ASC") == [(2, 1), (3, 2)]


def test_qualify_after_grouping_and_before_distinct():
    # sum(v) per k: 1 -> 20, 2 -> 50, NULL -> 5; the top one is k = 2.
    assert rows("SELECT k, sum(v) AS s FROM t GROUP BY k QUALIFY rank() OVER "
                "(ORDER BY sum(v) DESC) = 1") == [(2, 50)]
    # Rows with v >= 10 by window; DISTINCT k then leaves 1 and 2.
    assert rows("SELECT DISTINCT k FROM t QUALIFY min(v) OVER (PARTITION BY k) >= 10 "
                "ORDER BY k ASC") == [(1,), (2,)]


def test_qualify_without_a_window_function_is_an_error():
    with pytest.raises(EvaluationError, match="QUALIFY needs a window function"):
        rows("SELECT id FROM t QUALIFY id > 3")


def test_group_by_all_groups_by_the_items_without_aggregates():
    # k + 1 for k = 1, 2, NULL; the window over the groups ranks their sums.
    assert rows("SELECT k + 1 AS k1, sum(v) AS s, rank() OVER (ORDER BY sum(v) DESC) AS r "
                "FROM t GROUP BY ALL ORDER BY k1 ASC NULLS LAST") == [
        (2, 20, 2), (3, 50, 1), (None, 5, 3)]
    assert rows("SELECT count(*) AS c FROM t GROUP BY ALL") == [(6,)]


def test_group_by_all_over_star_and_constants():
    assert len(rows("SELECT * FROM t GROUP BY ALL")) == 6
    assert rows("SELECT 1 AS one, k, count(*) AS c FROM t GROUP BY ALL ORDER BY k ASC "
                "NULLS FIRST") == [(1, None, 1), (1, 1, 3), (1, 2, 2)]


def test_order_by_all_sorts_by_every_column_left_to_right():
    assert rows("SELECT k, v FROM t ORDER BY ALL DESC NULLS FIRST") == [
        (None, 5), (2, 30), (2, 20), (1, None), (1, 10), (1, 10)]
    assert rows("SELECT k FROM t WHERE k = 2 UNION ALL SELECT v FROM t WHERE v < 10 "
                "ORDER BY ALL ASC") == [(2,), (2,), (5,)]


def test_interval_spellings_mean_the_same():
    for text in ("INTERVAL 3 DAY", "INTERVAL '3 days'", "INTERVAL '3' DAYS"):
        assert parse(f"SELECT {text} AS i") == parse("SELECT INTERVAL '3' DAY AS i")


def test_int_div_type_of_integers():
    assert run(parse("SELECT CAST(7 AS BIGINT) // 2 AS a"), T1).table.schema.field(
        "a").type.bit_width == 64
    assert T.INT64.is_integer


def test_integer_division_float_types_follow_duckdb():
    # DuckDB 2.0.1: REAL // 2 and 7 // REAL are REAL; REAL // DOUBLE is DOUBLE.
    table = run(parse("SELECT CAST(-5.5 AS REAL) // 2 AS a, 7 // CAST(2 AS REAL) AS b, "
                      "CAST(7 AS REAL) // CAST(2 AS DOUBLE PRECISION) AS c"), T1).table
    assert table.to_pylist() == [{"a": -2.75, "b": 3.5, "c": 3.5}]
    assert [f.type.bit_width for f in table.schema] == [32, 32, 64]
