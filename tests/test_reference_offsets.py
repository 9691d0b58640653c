"""lag/lead and first_value/last_value/nth_value on hand-computed tables.

Rows are ordered by id; expected lists are per id.
"""

from __future__ import annotations

import pytest

from harness.core.errors import EvaluationError
from reference_impl.testing import asc, bound, call, col, frame, lit, over, table, window_values

T = table(id=("bigint", [1, 2, 3, 4, 5]), v=("integer", [10, None, 30, None, 50]))
BY_ID = [asc(col("id"))]


def offset(name: str, *args, ignore_nulls=None, partition=(), data=T):
    func = call(name, col("v"), *args, ignore_nulls=ignore_nulls)
    return window_values(over(func, partition=partition, order=BY_ID), data)


def test_lag_and_lead_default_offset_one():
    assert offset("lag") == [None, 10, None, 30, None]
    assert offset("lead") == [None, 30, None, 50, None]


def test_lag_with_offset_two_and_zero():
    assert offset("lag", lit(2)) == [None, None, 10, None, 30]
    assert offset("lag", lit(0)) == [10, None, 30, None, 50]


def test_default_only_where_no_row_exists():
    # Row 3's previous row exists and holds NULL: NULL, not the default.
    assert offset("lag", lit(1), lit(-1)) == [-1, 10, None, 30, None]
    assert offset("lead", lit(1), lit(0)) == [None, 30, None, 50, 0]


def test_negative_offset_reverses_direction():
    assert offset("lag", lit(-1)) == offset("lead", lit(1))
    assert offset("lead", lit(-2), lit(7)) == [7, 7, 10, None, 30]


def test_null_offset_gives_null():
    assert offset("lag", lit(None, "bigint"), lit(-1)) == [None] * 5


def test_ignore_nulls_counts_only_non_null_values():
    assert offset("lag", ignore_nulls=True) == [None, 10, 10, 30, 30]
    assert offset("lead", ignore_nulls=True) == [30, 30, 50, 50, None]
    # Two non-NULL values back: only rows 4 and 5 have two before them (10, 30).
    assert offset("lag", lit(2), lit(-1), ignore_nulls=True) == [-1, -1, -1, 10, 10]
    assert offset("lag", ignore_nulls=False) == offset("lag")


def test_lag_restarts_in_each_partition():
    data = table(
        id=("bigint", [1, 2, 3, 4]), g=("integer", [1, 2, 1, 2]), v=("integer", [1, 2, 3, 4])
    )
    assert offset("lag", partition=[col("g")], data=data) == [None, None, 1, 2]


def test_default_takes_the_value_type():
    data = table(id=("bigint", [1, 2]), v=("double", [0.5, 1.5]))
    assert offset("lag", lit(1), lit(2), data=data) == [2.0, 0.5]


# ---------------------------------------------------------------------------
# Value functions. Frame ROWS 1 PRECEDING..1 FOLLOWING:
#   id 1: {1, 2}; id 2: {1, 2, 3}; id 3: {2, 3, 4}; id 4: {3, 4, 5}; id 5: {4, 5}

V = table(id=("bigint", [1, 2, 3, 4, 5]), v=("integer", [None, 20, None, 40, 50]))
SLIDING = frame("rows", bound(1, "preceding"), bound(1, "following"))


def value(name: str, *args, frame_=SLIDING, data=V, **clauses):
    func = call(name, col("v"), *args, **clauses)
    return window_values(over(func, order=BY_ID, frame=frame_), data)


def test_first_and_last_value():
    assert value("first_value") == [None, None, 20, None, 40]
    assert value("last_value") == [20, None, 40, 50, 50]


def test_first_and_last_value_ignore_nulls():
    assert value("first_value", ignore_nulls=True) == [20, 20, 20, 40, 40]
    assert value("last_value", ignore_nulls=True) == [20, 20, 40, 50, 50]


def test_nth_value():
    assert value("nth_value", lit(2)) == [20, 20, None, 40, 50]
    assert value("nth_value", lit(3)) == [None, None, 40, 50, None]  # beyond a 2-row frame: NULL
    assert value("nth_value", lit(1)) == value("first_value")


def test_nth_value_from_last_and_ignore_nulls():
    assert value("nth_value", lit(2), from_last=True) == [None, 20, None, 40, 40]
    assert value("nth_value", lit(1), from_last=True) == value("last_value")
    assert value("nth_value", lit(2), ignore_nulls=True) == [None, None, 40, 50, 50]


def test_nth_value_null_and_invalid_n():
    assert value("nth_value", lit(None, "bigint")) == [None] * 5
    with pytest.raises(EvaluationError):
        value("nth_value", lit(0))


def test_value_functions_see_the_exclusion():
    excluding = frame("rows", bound(1, "preceding"), bound(1, "following"), exclude="current row")
    assert value("first_value", frame_=excluding) == [20, None, 20, None, 40]
    assert value("last_value", frame_=excluding) == [20, None, 40, 50, 40]


def test_value_functions_over_empty_frames_are_null():
    empty = frame("rows", bound(2, "following"), bound(1, "following"))
    assert value("first_value", frame_=empty) == [None] * 5
    assert value("nth_value", lit(1), frame_=empty) == [None] * 5


def test_last_value_over_the_default_frame_reaches_the_last_peer():
    data = table(id=("bigint", [1, 2, 3]), k=("integer", [1, 1, 2]), v=("integer", [10, 20, 30]))
    func = call("last_value", col("v"))
    assert window_values(over(func, order=[asc(col("k"))]), data) == [20, 20, 30]
