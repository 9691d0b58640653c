"""The peer_order hook: which windows call it, in what order, with what rows,
and how a permutation of peers changes order-sensitive results."""

from __future__ import annotations

import pytest

from harness.core.errors import InvalidInput
from reference_impl.testing import (
    asc,
    bound,
    call,
    col,
    desc,
    frame,
    over,
    run,
    select,
    table,
)

# k ties ids 1, 2, 3; id 4 is alone.
T = table(id=("bigint", [1, 2, 3, 4]), k=("integer", [7, 7, 7, 9]))
BY_K = [asc(col("k"), nulls="last")]
KEY = ((), tuple(BY_K))


def reverse(key, rows):
    return list(range(len(rows)))[::-1]


class Recorder:
    """A hook that records its calls and applies a fixed permutation."""

    def __init__(self, permute=lambda n: list(range(n))):
        self.calls = []
        self.permute = permute

    def __call__(self, key, rows):
        self.calls.append((key, [dict(r) for r in rows]))
        return self.permute(len(rows))


def column(query, name, **kw):
    return run(query, T, **kw).table.column(name).to_pylist()


def test_default_order_among_peers_is_input_order():
    query = select(col("id"), (over(call("row_number"), order=BY_K), "rn"))
    evaluation = run(query, T)
    assert evaluation.table.column("rn").to_pylist() == [1, 2, 3, 4]
    assert evaluation.peer_groups == [(KEY, 3)]


def test_a_permutation_changes_row_number_and_first_value():
    query = select(
        (over(call("row_number"), order=BY_K), "rn"),
        (
            over(
                call("first_value", col("id")),
                order=BY_K,
                frame=frame("rows", bound("unbounded preceding"), bound("current row")),
            ),
            "fv",
        ),
    )
    assert column(query, "rn", peer_order=reverse) == [3, 2, 1, 4]
    assert column(query, "fv", peer_order=reverse) == [3, 3, 3, 3]
    assert column(query, "fv") == [1, 1, 1, 1]


def test_hook_sees_the_rows_of_each_group_in_input_order():
    hook = Recorder()
    run(select((over(call("row_number"), order=BY_K), "rn")), T, peer_order=hook)
    assert hook.calls == [(KEY, [{"id": 1, "k": 7}, {"id": 2, "k": 7}, {"id": 3, "k": 7}])]


def test_order_insensitive_windows_do_not_call_the_hook():
    hook = Recorder()
    query = select(
        (over(call("rank"), order=BY_K), "r"), (over(call("sum", col("id")), order=BY_K), "s")
    )
    evaluation = run(query, T, peer_order=hook)
    assert hook.calls == [] and evaluation.peer_groups == []


def test_one_call_per_group_for_expressions_sharing_a_window():
    hook = Recorder()
    query = select(
        (over(call("row_number"), order=BY_K), "a"),
        (over(call("lag", col("id")), order=BY_K), "b"),
        (over(call("rank"), order=BY_K), "c"),
    )
    run(query, T, peer_order=hook)
    assert len(hook.calls) == 1


def test_without_order_by_the_partition_is_one_peer_group():
    data = table(id=("bigint", [1, 2, 3, 4]), g=("integer", [1, 1, 2, 2]))
    query = select((over(call("row_number"), partition=[col("g")]), "rn"))
    evaluation = run(query, data, peer_order=reverse)
    assert evaluation.table.column("rn").to_pylist() == [2, 1, 2, 1]
    assert evaluation.peer_groups == [(((col("g"),), ()), 2), (((col("g"),), ()), 2)]


def test_each_window_starts_from_input_order_not_an_earlier_window():
    # The first window orders by id DESC; the second's peers must still come
    # in input order (1, 2, 3), not in the first window's order (3, 2, 1).
    query = select(
        (over(call("row_number"), order=[desc(col("id"))]), "a"),
        (over(call("row_number"), order=BY_K), "b"),
    )
    assert column(query, "b") == [1, 2, 3, 4]


def test_calls_come_in_an_order_independent_of_the_permutations():
    data = table(
        id=("bigint", list(range(1, 9))),
        g=("integer", [2, 1, 2, 1, 2, 1, 2, 1]),
        k=("integer", [1, 1, 2, 2, 1, 1, 2, 2]),
    )
    query = select(
        (over(call("row_number"), partition=[col("g")], order=BY_K), "a"),
        (over(call("lead", col("id")), order=[asc(col("g"))]), "b"),
    )
    plain, permuted = Recorder(), Recorder(lambda n: list(range(n))[::-1])
    first = run(query, data, peer_order=plain)
    second = run(query, data, peer_order=permuted)
    assert [c[0] for c in plain.calls] == [c[0] for c in permuted.calls]
    assert [c[1] for c in plain.calls] == [c[1] for c in permuted.calls]
    assert first.peer_groups == second.peer_groups
    # Partition g=2 comes first (first seen in the input), then g=1.
    assert [c[1][0]["id"] for c in plain.calls[:4]] == [1, 3, 2, 4]


def test_a_hook_must_return_a_permutation():
    with pytest.raises(InvalidInput):
        run(
            select((over(call("row_number"), order=BY_K), "rn")),
            T,
            peer_order=lambda k, r: [0, 0, 1],
        )


def test_an_aggregate_sorted_by_its_own_argument_needs_no_order_of_peers():
    # array_agg(DISTINCT x ORDER BY x) over a RANGE frame: the frame holds whole
    # peer groups and the elements come sorted by their own values, so no order
    # of the peers changes it; without its ORDER BY, or over a ROWS frame that
    # cuts through the peers, or ordered by another column, it still depends on it.
    data = table(id=("bigint", [1, 2, 3, 4]), k=("integer", [7, 7, 7, 9]), x=("integer", [3, 1, 3, 2]))

    def agg(*order, distinct=False, rows=False):
        func = call("array_agg", col("x"), distinct=distinct, order_by=tuple(order))
        f = frame("rows", bound("unbounded preceding"), bound("current row")) if rows else None
        return select((over(func, order=BY_K, frame=f), "a"))

    def groups(query):
        hook = Recorder()
        run(query, data, peer_order=hook)
        return len(hook.calls)

    assert groups(agg(asc(col("x")), distinct=True)) == 0
    assert groups(agg(desc(col("x")), asc(col("id")))) == 0  # its argument first, then anything
    assert groups(agg(asc(col("id")), asc(col("x")))) == 1  # another column first
    assert groups(agg()) == 1
    assert groups(agg(asc(col("x")), rows=True)) == 1
