"""Ranking functions of the reference, on small hand-computed tables.

The table below sorts (v ASC NULLS LAST) as
    v=1: ids 2, 8 | v=2: id 5 | v=3: ids 1, 3, 6 | NULL: ids 4, 7
so the peer groups start at positions 0, 2, 3, 6 of 8 rows.
Expected lists are per id, in input order.
"""

from __future__ import annotations

import math

import pytest

from harness.core.dialect import NULLS_SMALLEST
from harness.core.errors import EvaluationError
from reference_impl import SemanticsProfile
from reference_impl.testing import asc, call, col, desc, lit, over, table, window_values

T = table(
    id=("bigint", [1, 2, 3, 4, 5, 6, 7, 8]),
    g=("varchar", ["a", "a", "b", "b", "a", "b", "a", "b"]),
    v=("integer", [3, 1, 3, None, 2, 3, None, 1]),
)
BY_V = [asc(col("v"), nulls="last")]


def values(name: str, *args, order=BY_V, partition=(), data=T, **kw):
    return window_values(over(call(name, *args), partition=partition, order=order), data, **kw)


def test_row_number_keeps_input_order_among_peers():
    assert values("row_number") == [4, 1, 5, 7, 3, 6, 8, 2]


def test_rank_and_dense_rank():
    assert values("rank") == [4, 1, 4, 7, 3, 4, 7, 1]
    assert values("dense_rank") == [3, 1, 3, 4, 2, 3, 4, 1]


def test_percent_rank_is_rank_minus_one_over_rows_minus_one():
    expected = [3 / 7, 0.0, 3 / 7, 6 / 7, 2 / 7, 3 / 7, 6 / 7, 0.0]
    assert values("percent_rank") == expected


def test_percent_rank_of_a_single_row_is_zero():
    one = table(id=("bigint", [1]), v=("integer", [5]))
    assert values("percent_rank", data=one) == [0.0]


def test_cume_dist_counts_rows_up_to_the_last_peer():
    assert values("cume_dist") == [6 / 8, 2 / 8, 6 / 8, 1.0, 3 / 8, 6 / 8, 1.0, 2 / 8]


def test_desc_nulls_first():
    # Order: NULL (4, 7), 3 (1, 3, 6), 2 (5), 1 (2, 8).
    order = [desc(col("v"), nulls="first")]
    assert values("rank", order=order) == [3, 7, 3, 1, 6, 3, 1, 7]
    assert values("row_number", order=order) == [3, 7, 4, 1, 6, 5, 2, 8]


def test_unwritten_null_order_follows_the_profile():
    # Default profile: NULLs largest (last for ASC). NULLS_SMALLEST: first for ASC.
    order = [asc(col("v"))]
    assert values("rank", order=order) == [4, 1, 4, 7, 3, 4, 7, 1]
    spark_like = SemanticsProfile(name="nulls-smallest", null_ordering=NULLS_SMALLEST)
    assert values("rank", order=order, profile=spark_like) == [6, 3, 6, 1, 5, 6, 1, 3]


def test_partitioned_ranks():
    # Partition a sorts 2 (v=1), 5 (2), 1 (3), 7 (NULL);
    # partition b sorts 8 (v=1), {3, 6} (3), 4 (NULL).
    partition = [col("g")]
    assert values("rank", partition=partition) == [3, 1, 2, 4, 2, 2, 4, 1]
    assert values("dense_rank", partition=partition) == [3, 1, 2, 3, 2, 2, 4, 1]
    assert values("cume_dist", partition=partition) == [0.75, 0.25, 0.75, 1.0, 0.5, 0.75, 1.0, 0.25]


def test_without_order_by_every_row_is_a_peer():
    assert values("rank", order=()) == [1] * 8
    assert values("cume_dist", order=()) == [1.0] * 8
    assert values("row_number", order=()) == [1, 2, 3, 4, 5, 6, 7, 8]


def test_ntile_larger_buckets_first():
    by_id = [asc(col("id"))]
    assert values("ntile", lit(3), order=by_id) == [1, 1, 1, 2, 2, 2, 3, 3]
    assert values("ntile", lit(5), order=by_id) == [1, 1, 2, 2, 3, 3, 4, 5]
    assert values("ntile", lit(4), order=by_id) == [1, 1, 2, 2, 3, 3, 4, 4]


def test_ntile_with_more_buckets_than_rows_gives_each_row_its_own():
    assert values("ntile", lit(20), order=[asc(col("id"))]) == [1, 2, 3, 4, 5, 6, 7, 8]


def test_ntile_null_and_invalid_arguments():
    assert values("ntile", lit(None, "bigint"), order=[asc(col("id"))]) == [None] * 8
    with pytest.raises(EvaluationError):
        values("ntile", lit(0), order=[asc(col("id"))])
    with pytest.raises(EvaluationError):
        values("ntile", lit(-2), order=[asc(col("id"))])


def test_minus_zero_and_zero_are_peers_and_nan_is_largest():
    data = table(
        id=("bigint", [1, 2, 3, 4, 5, 6]),
        f=("double", [0.0, -0.0, math.nan, 1.0, math.nan, math.inf]),
    )
    # ASC: {0.0, -0.0}, 1.0, inf, {NaN, NaN}
    assert values("rank", order=[asc(col("f"), nulls="last")], data=data) == [1, 1, 5, 3, 5, 4]
    assert values("dense_rank", order=[desc(col("f"), nulls="last")], data=data) == [
        4,
        4,
        1,
        3,
        1,
        2,
    ]


def test_partitions_group_nulls_nans_and_signed_zeros():
    data = table(
        id=("bigint", [1, 2, 3, 4, 5, 6, 7]),
        f=("double", [0.0, -0.0, math.nan, math.nan, None, None, 1.0]),
    )
    counts = window_values(over(call("count", col("id")), partition=[col("f")]), data)
    assert counts == [2, 2, 2, 2, 2, 2, 1]
