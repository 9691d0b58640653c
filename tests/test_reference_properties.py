"""Invariants that hold by the definitions, checked on random small tables.

Tables shrink toward fewer rows, smaller values and no NULLs; orders toward
ASC NULLS LAST.
"""

from __future__ import annotations

from collections import defaultdict

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from harness.core.model import SortKey
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
)

SETTINGS = settings(max_examples=examples(60), deadline=None)
SMALL = st.one_of(st.none(), st.integers(-3, 3))


@st.composite
def tables(draw) -> pa.Table:
    """Rows with a unique id, a partition key g, an order key k and a value x."""
    n = draw(st.integers(1, 10))
    return table(
        id=("bigint", list(range(1, n + 1))),
        g=(
            "integer",
            draw(st.lists(st.one_of(st.none(), st.integers(0, 2)), min_size=n, max_size=n)),
        ),
        k=("integer", draw(st.lists(SMALL, min_size=n, max_size=n))),
        x=("integer", draw(st.lists(SMALL, min_size=n, max_size=n))),
    )


orders = st.builds(
    lambda descending, nulls: desc(col("k"), nulls) if descending else asc(col("k"), nulls),
    st.booleans(),
    st.sampled_from(["last", "first"]),
)
PARTITION = [col("g")]


def columns(data: pa.Table, **exprs) -> dict[str, list]:
    """Each named expression's values, plus id and g, per input row."""
    query = select(col("id"), col("g"), *[(e, name) for name, e in exprs.items()])
    return run(query, data).table.to_pydict()


def by_partition(result: dict[str, list]) -> dict[object, list[int]]:
    groups: dict[object, list[int]] = defaultdict(list)
    for i, g in enumerate(result["g"]):
        groups[g].append(i)
    return groups


@SETTINGS
@given(tables(), orders)
def test_rank_bounds(data, order):
    r = columns(
        data,
        rn=over(call("row_number"), PARTITION, [order]),
        rk=over(call("rank"), PARTITION, [order]),
        dr=over(call("dense_rank"), PARTITION, [order]),
    )
    assert all(dr <= rk <= rn for dr, rk, rn in zip(r["dr"], r["rk"], r["rn"], strict=True))


@SETTINGS
@given(tables(), orders)
def test_dense_rank_is_contiguous_and_the_last_peers_have_cume_dist_one(data, order):
    r = columns(
        data,
        dr=over(call("dense_rank"), PARTITION, [order]),
        cd=over(call("cume_dist"), PARTITION, [order]),
    )
    for rows in by_partition(r).values():
        ranks = {r["dr"][i] for i in rows}
        assert ranks == set(range(1, len(ranks) + 1))
        last = [r["cd"][i] for i in rows if r["dr"][i] == len(ranks)]
        assert last and all(c == 1.0 for c in last)


@SETTINGS
@given(tables(), orders)
def test_rows_over_the_whole_partition_sums_the_partition(data, order):
    whole = frame("rows", bound("unbounded preceding"), bound("unbounded following"))
    r = columns(data, s=over(call("sum", col("x")), PARTITION, [order], whole))
    xs = data.column("x").to_pylist()
    for rows in by_partition(r).values():
        present = [xs[i] for i in rows if xs[i] is not None]
        assert all(r["s"][i] == (sum(present) if present else None) for i in rows)


@SETTINGS
@given(tables(), orders)
def test_groups_zero_offsets_equal_range_current_row(data, order):
    zero = frame("groups", bound(0, "preceding"), bound(0, "following"))
    peers = frame("range", bound("current row"), bound("current row"))
    r = columns(
        data,
        a=over(call("sum", col("x")), PARTITION, [order], zero),
        b=over(call("sum", col("x")), PARTITION, [order], peers),
    )
    assert r["a"] == r["b"]


@SETTINGS
@given(tables(), orders, st.integers(-3, 3), st.booleans())
def test_lag_is_lead_with_the_offset_negated(data, order, k, ignore_nulls):
    def offset(name, n):
        return over(
            call(name, col("x"), lit(n), lit(99), ignore_nulls=ignore_nulls), PARTITION, [order]
        )

    r = columns(data, lag=offset("lag", k), lead=offset("lead", -k))
    assert r["lag"] == r["lead"]


@SETTINGS
@given(tables(), st.integers(1, 12))
def test_ntile_buckets_differ_by_at_most_one_larger_first(data, n):
    r = columns(data, t=over(call("ntile", lit(n)), PARTITION, [asc(col("id"))]))
    for rows in by_partition(r).values():
        sizes = [sum(1 for i in rows if r["t"][i] == b) for b in range(1, n + 1)]
        sizes = [s for s in sizes if s] if n > len(rows) else sizes
        assert max(sizes) - min(sizes) <= 1
        assert sizes == sorted(sizes, reverse=True)
        assert sorted(r["t"][i] for i in rows) == [r["t"][i] for i in sorted(rows)]


@SETTINGS
@given(tables(), st.integers(0, 3), st.integers(0, 3))
def test_rows_and_groups_agree_on_a_unique_key(data, before, after):
    def window(mode):
        return frame(mode, bound(before, "preceding"), bound(after, "following"))

    by_id = [asc(col("id"))]
    r = columns(
        data,
        a=over(call("sum", col("x")), PARTITION, by_id, window("rows")),
        b=over(call("sum", col("x")), PARTITION, by_id, window("groups")),
    )
    assert r["a"] == r["b"]


@SETTINGS
@given(tables(), st.integers(0, 3), st.integers(0, 3), st.sampled_from(["first", "last"]))
def test_range_desc_preceding_mirrors_asc_following(data, before, after, nulls):
    mirrored_nulls = {"first": "last", "last": "first"}[nulls]
    r = columns(
        data,
        d=over(
            call("sum", col("x")),
            PARTITION,
            [desc(col("k"), nulls)],
            frame("range", bound(before, "preceding"), bound(after, "following")),
        ),
        a=over(
            call("sum", col("x")),
            PARTITION,
            [asc(col("k"), mirrored_nulls)],
            frame("range", bound(after, "preceding"), bound(before, "following")),
        ),
    )
    assert r["d"] == r["a"]


@SETTINGS
@given(tables(), orders, st.integers(0, 2), st.integers(0, 2))
def test_first_value_is_nth_value_one_and_no_others_is_no_exclusion(data, order, before, after):
    window = frame("rows", bound(before, "preceding"), bound(after, "following"))
    no_others = frame("rows", bound(before, "preceding"), bound(after, "following"), "no others")
    r = columns(
        data,
        f=over(call("first_value", col("x")), PARTITION, [order], window),
        n=over(call("nth_value", col("x"), lit(1)), PARTITION, [order], no_others),
    )
    assert r["f"] == r["n"]


@SETTINGS
@given(tables(), orders, st.randoms(use_true_random=False))
def test_order_insensitive_results_do_not_depend_on_the_order_of_peers(data, order, random):
    def shuffle(key, rows):
        permutation = list(range(len(rows)))
        random.shuffle(permutation)
        return permutation

    query = select(
        (over(call("rank"), PARTITION, [order]), "r"),
        (over(call("sum", col("x")), PARTITION, [order]), "s"),
        (over(call("row_number"), PARTITION, [order]), "rn"),  # makes the window call the hook
    )
    plain = run(query, data).table
    shuffled = run(query, data, peer_order=shuffle).table
    assert plain.column("r") == shuffled.column("r")
    assert plain.column("s") == shuffled.column("s")


@SETTINGS
@given(tables(), orders)
def test_restricting_the_input_to_one_partition_keeps_its_results(data, order: SortKey):
    exprs = {
        "rn": over(call("row_number"), PARTITION, [order]),
        "s": over(call("sum", col("x")), PARTITION, [order]),
    }
    full = columns(data, **exprs)
    first_g = data.column("g")[0].as_py()
    keep = [g == first_g for g in data.column("g").to_pylist()]
    alone = columns(data.filter(pa.array(keep)), **exprs)
    rows = [i for i, k in enumerate(keep) if k]
    assert [full["rn"][i] for i in rows] == alone["rn"]
    assert [full["s"][i] for i in rows] == alone["s"]
