"""Frames by their definitions: ROWS, GROUPS, RANGE (numbers, dates, NULL and
special float keys, ASC and DESC), EXCLUDE, empty frames and invalid bounds.

Values are powers of two where possible, so every sum names its frame.
Expected lists are per input row, in input order.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pytest

from harness.core.errors import EvaluationError
from harness.core.model import Star
from reference_impl.testing import (
    asc,
    bound,
    call,
    col,
    desc,
    frame,
    interval,
    lit,
    over,
    table,
    window_values,
)

UP, CR, UF = bound("unbounded preceding"), bound("current row"), bound("unbounded following")


def P(n):  # upper case: reads like the SQL
    return bound(n, "preceding")


def F(n):
    return bound(n, "following")


def agg(name, data, order, frame_=None, arg="v"):
    """name(arg) over the window; arg=None is count(*)."""
    args = (col(arg),) if arg else (Star(),)
    return window_values(over(call(name, *args), order=order, frame=frame_), data)


SEQ = table(id=("bigint", [1, 2, 3, 4, 5]), v=("integer", [1, 2, 3, 4, 5]))
BY_ID = [asc(col("id"))]


def test_rows_sliding():
    assert agg("sum", SEQ, BY_ID, frame("rows", P(1), F(1))) == [3, 6, 9, 12, 9]
    assert agg("sum", SEQ, BY_ID, frame("rows", UP, P(1))) == [None, 1, 3, 6, 10]
    assert agg("sum", SEQ, BY_ID, frame("rows", F(1), UF)) == [14, 12, 9, 5, None]


def test_rows_frames_past_the_partition_edge_are_empty():
    last = frame("rows", F(1), F(1))
    assert agg("sum", SEQ, BY_ID, last) == [2, 3, 4, 5, None]
    assert agg("count", SEQ, BY_ID, last) == [1, 1, 1, 1, 0]


def test_start_after_end_gives_empty_frames():
    empty = frame("rows", F(2), F(1))
    assert agg("count", SEQ, BY_ID, empty, arg=None) == [0] * 5
    assert agg("sum", SEQ, BY_ID, empty) == [None] * 5
    assert agg("sum", SEQ, BY_ID, frame("rows", P(1), P(2))) == [None] * 5


@pytest.mark.parametrize("start, end", [(CR, P(1)), (F(1), CR), (F(1), P(1)), (UF, UF), (UP, UP)])
def test_bounds_out_of_order_are_invalid(start, end):
    with pytest.raises(EvaluationError):
        agg("sum", SEQ, BY_ID, frame("rows", start, end))


@pytest.mark.parametrize("mode", ["rows", "groups", "range"])
def test_negative_and_null_offsets_are_invalid(mode):
    with pytest.raises(EvaluationError):
        agg("sum", SEQ, BY_ID, frame(mode, P(-1), CR))
    with pytest.raises(EvaluationError):
        agg("sum", SEQ, BY_ID, frame(mode, bound(lit(None, "bigint"), "preceding"), CR))


# Keys 1, 1 | 2 | 3, 3, 3 | 5: peer groups G0..G3 with sums 3, 4, 56, 64.
K = table(
    id=("bigint", [1, 2, 3, 4, 5, 6, 7]),
    k=("integer", [1, 1, 2, 3, 3, 3, 5]),
    v=("integer", [1, 2, 4, 8, 16, 32, 64]),
)
BY_K = [asc(col("k"))]


def test_default_frame_with_and_without_order_by():
    assert agg("sum", K, BY_K) == [3, 3, 7, 63, 63, 63, 127]
    assert agg("sum", K, ()) == [127] * 7


def test_groups_counts_peer_groups():
    assert agg("sum", K, BY_K, frame("groups", P(1), CR)) == [3, 3, 7, 60, 60, 60, 120]
    assert agg("sum", K, BY_K, frame("groups", F(1), F(1))) == [4, 4, 56, 64, 64, 64, None]
    assert agg("sum", K, BY_K, frame("groups", P(5), P(1))) == [None, None, 3, 7, 7, 7, 63]


def test_range_numeric_offsets():
    # k=1: keys in [0, 2]; k=2: [1, 3]; k=3: [2, 4]; k=5: [4, 6].
    assert agg("sum", K, BY_K, frame("range", P(1), F(1))) == [7, 7, 63, 60, 60, 60, 64]


def test_range_desc_preceding_means_larger_values():
    # DESC: 1 PRECEDING .. CURRENT ROW takes keys in [k, k + 1].
    desc_sums = agg("sum", K, [desc(col("k"))], frame("range", P(1), CR))
    assert desc_sums == [7, 7, 60, 56, 56, 56, 64]
    # It mirrors ASC CURRENT ROW .. 1 FOLLOWING.
    assert desc_sums == agg("sum", K, BY_K, frame("range", CR, F(1)))


def test_range_over_decimal_and_float_keys():
    data = table(
        id=("bigint", [1, 2, 3, 4]),
        k=("decimal(4,1)", [Decimal("1.0"), Decimal("1.5"), Decimal("2.5"), Decimal("3.0")]),
    )
    window = frame(
        "range", bound(lit(Decimal("1.0")), "preceding"), bound(lit(Decimal("1.0")), "following")
    )
    assert agg("count", data, BY_K, window, arg=None) == [2, 3, 3, 2]
    floats = table(id=("bigint", [1, 2, 3, 4]), k=("double", [1.0, 1.5, 2.5, 3.0]))
    assert agg("count", floats, BY_K, frame("range", P(1), F(1)), arg=None) == [2, 3, 3, 2]


NULL_KEYS = table(
    id=("bigint", [1, 2, 3, 4, 5]),
    k=("integer", [1, None, 2, None, 4]),
    v=("integer", [1, 2, 4, 8, 16]),
)


def test_range_offsets_around_null_keys():
    # A NULL row's bounds fall at its NULL peer group (2 + 8 = 10); a non-NULL
    # row's value range never takes in the NULLs.
    last = [asc(col("k"), nulls="last")]
    assert agg("sum", NULL_KEYS, last, frame("range", P(1), F(1))) == [5, 10, 5, 10, 16]
    # ... unless the other bound is unbounded on the NULLs' side.
    assert agg("sum", NULL_KEYS, last, frame("range", P(1), UF)) == [31, 10, 31, 10, 26]
    first = [asc(col("k"), nulls="first")]
    assert agg("sum", NULL_KEYS, first, frame("range", UP, F(1))) == [15, 10, 15, 10, 31]
    desc_first = [desc(col("k"), nulls="first")]
    assert agg("sum", NULL_KEYS, desc_first, frame("range", P(1), F(1))) == [5, 10, 5, 10, 16]


def test_range_over_nan_infinities_and_signed_zeros():
    data = table(
        id=("bigint", list(range(1, 9))),
        k=("double", [-math.inf, -0.0, 0.0, 1.0, math.inf, math.nan, math.nan, None]),
    )
    # -inf +- 1 = -inf and inf +- 1 = inf frame only themselves; NaN rows are
    # peers of each other only; -0.0 and 0.0 take in 1.0; NULL takes only NULL.
    counts = agg("count", data, [asc(col("k"), nulls="last")], frame("range", P(1), F(1)), arg=None)
    assert counts == [1, 3, 3, 3, 1, 2, 2, 1]


D = table(
    id=("bigint", [1, 2, 3, 4, 5, 6]),
    d=(
        "date",
        [
            dt.date(2024, 1, 1),
            dt.date(2024, 1, 2),
            dt.date(2024, 1, 4),
            dt.date(2024, 1, 31),
            dt.date(2024, 2, 29),
            dt.date(2024, 3, 31),
        ],
    ),
    v=("integer", [1, 2, 4, 8, 16, 32]),
)
BY_D = [asc(col("d"))]


def test_range_over_dates_with_day_intervals():
    window = frame("range", bound(interval(2, "day"), "preceding"), CR)
    assert agg("sum", D, BY_D, window) == [1, 3, 6, 8, 16, 32]


def test_range_over_dates_with_month_intervals():
    # 2024-03-31 - 1 MONTH = 2024-02-29 (the day is clamped to the month's end).
    window = frame("range", bound(interval(1, "month"), "preceding"), CR)
    assert agg("sum", D, BY_D, window) == [1, 3, 7, 15, 24, 48]
    mirrored = frame("range", CR, bound(interval(1, "month"), "following"))
    assert agg("sum", D, [desc(col("d"))], mirrored) == [1, 3, 7, 15, 24, 48]


def test_range_over_timestamps_with_hour_intervals():
    stamps = [dt.datetime(2024, 1, 1, h, m) for h, m in [(0, 0), (1, 0), (3, 0), (3, 30)]]
    data = table(id=("bigint", [1, 2, 3, 4]), t=("timestamp", stamps))
    window = frame("range", bound(interval(2, "hour"), "preceding"), CR)
    assert agg("count", data, [asc(col("t"))], window, arg=None) == [1, 2, 2, 2]


def test_range_offset_needs_one_numeric_or_datetime_key():
    with pytest.raises(EvaluationError):
        agg("sum", K, [asc(col("k")), asc(col("id"))], frame("range", P(1), CR))
    text = table(id=("bigint", [1]), k=("varchar", ["a"]), v=("integer", [1]))
    with pytest.raises(EvaluationError):
        agg("sum", text, BY_K, frame("range", P(1), CR))
    with pytest.raises(EvaluationError):
        agg("sum", D, BY_D, frame("range", P(1), CR))  # a date key needs an interval


# Keys 1, 1 | 2, 2, 2 | 3 with values 1, 2 | 4, 8, 16 | 32; the whole partition sums to 63.
E = table(
    id=("bigint", [1, 2, 3, 4, 5, 6]),
    k=("integer", [1, 1, 2, 2, 2, 3]),
    v=("integer", [1, 2, 4, 8, 16, 32]),
)


@pytest.mark.parametrize(
    "exclude, expected",
    [
        ("no others", [63] * 6),
        ("current row", [62, 61, 59, 55, 47, 31]),
        ("group", [60, 60, 35, 35, 35, 31]),
        ("ties", [61, 62, 39, 43, 51, 63]),
    ],
)
def test_exclusions_over_the_whole_partition(exclude, expected):
    assert agg("sum", E, BY_K, frame("range", UP, UF, exclude=exclude)) == expected


def test_exclude_group_can_empty_a_rows_frame():
    # id 1: rows {1, 2} minus its group {1, 2}; id 4: {3, 4, 5} minus {3, 4, 5}.
    window = frame("rows", P(1), F(1), exclude="group")
    assert agg("sum", E, BY_K, window) == [None, 4, 2, None, 32, 16]


def test_groups_current_row_excluding_ties_is_the_row_itself():
    window = frame("groups", CR, CR, exclude="ties")
    assert agg("sum", E, BY_K, window) == [1, 2, 4, 8, 16, 32]
