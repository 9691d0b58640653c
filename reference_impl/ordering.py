"""Sort keys, stable sorting and peer groups.

The standard orders rows by the ORDER BY keys in turn; NULLs go first or
last as NULLS FIRST/LAST says (the semantics profile decides when a key
leaves it unwritten), independently of ASC/DESC. Rows equal on every key are
*peers*; NULL is a peer of NULL, NaN of NaN, -0.0 of 0.0. Sorting is stable,
so peers keep their input order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cmp_to_key
from typing import TypeVar

from harness.core.model import NullsOrder, SortKey
from harness.core.semantics import SemanticsProfile
from reference_impl.values import category, compare, order_keys

T = TypeVar("T")


@dataclass(frozen=True)
class SortSpec:
    descending: bool = False
    nulls_first: bool = False


def sort_spec(key: SortKey, profile: SemanticsProfile) -> SortSpec:
    if key.nulls is None:
        nulls_first = profile.null_ordering.nulls_first(key.descending)
    else:
        nulls_first = key.nulls is NullsOrder.FIRST
    return SortSpec(descending=key.descending, nulls_first=nulls_first)


def compare_value(a: object, b: object, spec: SortSpec) -> int:
    """The order of two key values under one sort key (NULLs included)."""
    if a is None and b is None:
        return 0
    if a is None:
        return -1 if spec.nulls_first else 1
    if b is None:
        return 1 if spec.nulls_first else -1
    c = compare(a, b)
    return -c if spec.descending else c


def compare_keys(a: Sequence[object], b: Sequence[object], specs: Sequence[SortSpec]) -> int:
    for x, y, spec in zip(a, b, specs, strict=True):
        c = compare_value(x, y, spec)
        if c:
            return c
    return 0


def stable_sort(items: Sequence[T], keys: Sequence[tuple], specs: Sequence[SortSpec]) -> list[T]:
    """`items` ordered by their `keys`; items with equal keys keep their order."""
    return [items[i] for i in sort_order(keys, specs)]


def sort_order(
    keys: Sequence[tuple], specs: Sequence[SortSpec], collated: list[tuple] | None = None
) -> list[int]:
    """The indexes of `keys` in sorted order; equal keys keep their order.

    `collated`: the keys' `collation_keys`, when the caller has them.
    """
    collated = collated if collated is not None else collation_keys(keys, specs)
    if collated is None:
        return sort_order_by_comparison(keys, specs)
    return sort_order_by_collation(collated, specs)


def sort_order_by_comparison(keys: Sequence[tuple], specs: Sequence[SortSpec]) -> list[int]:
    """The definition: a stable sort under `compare_keys`."""
    return sorted(
        range(len(keys)),
        key=cmp_to_key(lambda i, j: compare_keys(keys[i], keys[j], specs)),
    )


# Fast path for sorting and for finding peers. A sort through `compare_keys`
# runs Python code for every comparison (it was the reference's main cost);
# instead each row gets a collation key, a tuple that Python compares in C:
# per ORDER BY key, the value's `order_keys` key, or (0,) or (2,) for NULL.
# Two rows' collation keys are equal exactly when `compare_keys` says 0, and
# their order is `compare_keys`' order once every DESC key's order is
# reversed (which is why NULL ranks 0 or 2 by direction and NULLS
# FIRST/LAST). tests/test_reference_speed.py checks both against the
# definition on random values.


def collation_keys(keys: Sequence[tuple], specs: Sequence[SortSpec]) -> list[tuple] | None:
    """A collation key per row of `keys`, or None when some ORDER BY key's
    values are not covered by `order_keys` (the definition then sorts)."""
    columns: list[list[tuple]] = []
    for c, spec in enumerate(specs):
        column = order_keys([key[c] for key in keys], null_collation(spec))
        if column is None:
            return None
        columns.append(column)
    if not columns:
        return [() for _ in keys]
    return list(zip(*columns, strict=True))


def null_collation(spec: SortSpec) -> tuple[int]:
    """The collation key of NULL: below every value, or above, so that it ends
    up where NULLS FIRST/LAST says once a DESC key's order is reversed."""
    return (0,) if spec.nulls_first != spec.descending else (2,)


def sort_order_by_collation(collated: list[tuple], specs: Sequence[SortSpec]) -> list[int]:
    """A stable sort by collation keys, reversing the DESC keys' order.

    Stable sorts compose: sorting by the last keys first and by the first
    keys last orders by all of them. Each run of ORDER BY keys of one
    direction is one pass (reverse=True keeps equal keys in order too).
    """
    order = list(range(len(collated)))
    if specs and all(s.descending == specs[0].descending for s in specs):
        order.sort(key=collated.__getitem__, reverse=specs[0].descending)  # one run: one pass
        return order
    stop = len(specs)
    while stop > 0:
        start = stop - 1
        while start > 0 and specs[start - 1].descending == specs[stop - 1].descending:
            start -= 1
        run = slice(start, stop)
        order.sort(key=lambda i, run=run: collated[i][run], reverse=specs[start].descending)
        stop = start
    return order


@dataclass
class SortedPartition:
    """One window partition in window order, with its peer groups.

    Positions are 0-based places in the window order; `rows[p]` is the index
    of the relation row at position p.
    """

    rows: list[int]
    keys: list[tuple]
    groups: list[tuple[int, int]]  # (first position, one past the last) per peer group
    group_of: list[int]  # the peer group number at each position
    # The fast path's collation keys per position (None where they do not apply).
    collated: list[tuple] | None = None
    _first_key: dict[bool, tuple[list[tuple], str | None]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @property
    def size(self) -> int:
        return len(self.rows)

    def peer_start(self, position: int) -> int:
        return self.groups[self.group_of[position]][0]

    def peer_end(self, position: int) -> int:
        return self.groups[self.group_of[position]][1]

    def reorder_group(self, group: int, permutation: Sequence[int]) -> None:
        """Place the rows of one peer group in the order `permutation` gives."""
        start, end = self.groups[group]
        rows, keys = self.rows[start:end], self.keys[start:end]
        self.rows[start:end] = [rows[i] for i in permutation]
        self.keys[start:end] = [keys[i] for i in permutation]
        if self.collated is not None:
            collated = self.collated[start:end]
            self.collated[start:end] = [collated[i] for i in permutation]
        self._first_key.clear()

    def first_key_collation(self, descending: bool) -> tuple[list[tuple], str | None] | None:
        """The collation keys of the first ORDER BY key by ascending value
        (window order, reversed for DESC), and the family of its non-NULL
        values: what RANGE bounds bisect (frames.py). Made once per partition;
        None where collation keys do not apply."""
        if self.collated is None:
            return None
        if descending not in self._first_key:
            column = [key[0] for key in self.collated]
            family = next((category(k[0]) for k in self.keys if k[0] is not None), None)
            self._first_key[descending] = (column[::-1] if descending else column, family)
        return self._first_key[descending]


def sort_partition(
    rows: list[int],
    keys: list[tuple],
    specs: Sequence[SortSpec],
    collated: list[tuple] | None = None,
) -> SortedPartition:
    """Sort one partition (rows in input order) and find its peer groups.

    `collated`: the keys' `collation_keys`, when the caller has them.
    """
    if len(rows) == 1:  # one row, one peer group: what the steps below find, sooner
        return SortedPartition(list(rows), list(keys), [(0, 1)], [0], collated and list(collated))
    if collated is None:
        collated = collation_keys(keys, specs)  # the fast path, where it applies
    order = sort_order(keys, specs, collated)
    sorted_rows = [rows[i] for i in order]
    sorted_keys = [keys[i] for i in order]
    if collated is not None:
        return _collated_partition(sorted_rows, sorted_keys, [collated[i] for i in order])
    groups: list[tuple[int, int]] = []
    group_of: list[int] = []
    for p, i in enumerate(order):
        if not groups or compare_keys(keys[order[groups[-1][0]]], keys[i], specs) != 0:
            groups.append((p, p))
        groups[-1] = (groups[-1][0], p + 1)
        group_of.append(len(groups) - 1)
    return SortedPartition(sorted_rows, sorted_keys, groups, group_of, None)


# Fast path for the peer groups of a partition sorted by collation keys: a
# group starts where a position's key differs from the one before, which
# (equality of collation keys being transitive, as `compare`'s is) is where it
# differs from the group's first. tests/test_reference_speed.py checks
# `sort_partition` against the definition.


def _collated_partition(rows: list[int], keys: list[tuple], collated: list[tuple]) -> SortedPartition:
    """The peer groups of sorted rows, from their collation keys."""
    starts = [p for p in range(len(collated)) if p == 0 or collated[p] != collated[p - 1]]
    ends = [*starts[1:], len(collated)][: len(starts)]  # no rows, no group
    groups = list(zip(starts, ends, strict=True))
    group_of = [g for g, (start, end) in enumerate(groups) for _ in range(end - start)]
    return SortedPartition(rows, keys, groups, group_of, collated)
