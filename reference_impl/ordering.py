"""Sort keys, stable sorting and peer groups.

The standard orders rows by the ORDER BY keys in turn; NULLs go first or
last as NULLS FIRST/LAST says (the semantics profile decides when a key
leaves it unwritten), independently of ASC/DESC. Rows equal on every key are
*peers*; NULL is a peer of NULL, NaN of NaN, -0.0 of 0.0. Sorting is stable,
so peers keep their input order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cmp_to_key
from typing import TypeVar

from harness.model import NullsOrder, SortKey
from reference_impl.api import SemanticsProfile
from reference_impl.values import compare

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
    pairs = sorted(
        zip(keys, range(len(items)), strict=True),
        key=cmp_to_key(lambda x, y: compare_keys(x[0], y[0], specs)),
    )
    return [items[i] for _, i in pairs]


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


def sort_partition(
    rows: list[int], keys: list[tuple], specs: Sequence[SortSpec]
) -> SortedPartition:
    """Sort one partition (rows in input order) and find its peer groups."""
    order = stable_sort(list(range(len(rows))), keys, specs)
    sorted_rows = [rows[i] for i in order]
    sorted_keys = [keys[i] for i in order]
    groups: list[tuple[int, int]] = []
    group_of: list[int] = []
    for p, key in enumerate(sorted_keys):
        if not groups or compare_keys(sorted_keys[groups[-1][0]], key, specs) != 0:
            groups.append((p, p))
        groups[-1] = (groups[-1][0], p + 1)
        group_of.append(len(groups) - 1)
    return SortedPartition(sorted_rows, sorted_keys, groups, group_of)
