"""Analyses of the query remembered per query node.

Campaigns evaluate one frozen Query many times: under each semantics
profile, again under other peer orders while the comparator searches for a
witness, and over the tables of every sibling case of a batch. What depends
on the query alone (which window expressions there are, their resolved
windows, the rewrites that read computed columns) is the same every time,
so it is computed once per query node and kept.

A node is found by identity, not by value: hashing a frozen model tree by
value walks all of it, which costs about as much as the analysis. A model
node (a frozen dataclass) is also found by the identities of its fields, so
a copy made with `dataclasses.replace` that keeps every sub-node (the
instrumented query without its LIMIT, say) shares the original's memo: same
sub-node objects, so equal values. The cache holds its nodes (hence their
sub-nodes), so no id it knows can be reused while it holds them; it starts
over once it knows CACHE_SIZE nodes. A failing analysis is not remembered:
it raises again, at the same point of the evaluation. Remembered values are
shared, so they must be immutable (tuples, frozen dataclasses) or never
changed by their users.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TypeVar

R = TypeVar("R")

# Nodes known at once. A campaign case brings a few new ones (its instrumented
# query, the expressions instrumentation adds, its tables); forgetting all
# now and then costs one analysis of the shape at hand.
CACHE_SIZE = 4096

Memo = dict[tuple, object]

_by_identity: dict[int, tuple[object, Memo]] = {}
_by_fields: dict[tuple, tuple[object, Memo]] = {}
_MISSING = object()


def per_node(fn: Callable[..., R]) -> Callable[..., R]:
    """`fn(node, *rest)`, remembered per query node (see the module doc) and
    per value of `rest` (hashable: rewrites, sort specs, types, profiles)."""

    @wraps(fn)
    def remembered(node: object, *rest: object) -> R:
        memo = _memo_of(node)
        key = (fn, *rest)
        value = memo.get(key, _MISSING)
        if value is _MISSING:
            value = memo[key] = fn(node, *rest)
        return value  # type: ignore[return-value]

    remembered.uncached = fn  # type: ignore[attr-defined]
    return remembered


def clear() -> None:
    """Forget every node."""
    _by_identity.clear()
    _by_fields.clear()


def _memo_of(node: object) -> Memo:
    found = _by_identity.get(id(node))
    if found is not None and found[0] is node:
        return found[1]
    fields = _field_identities(node)
    found = None if fields is None else _by_fields.get(fields)
    if found is not None:
        return found[1]  # a copy (often short-lived): not kept, found by its fields again
    if len(_by_identity) >= CACHE_SIZE:
        clear()
    memo: Memo = {}
    if fields is not None:
        _by_fields[fields] = (node, memo)
    _by_identity[id(node)] = (node, memo)
    return memo


def _field_identities(node: object) -> tuple | None:
    params = getattr(type(node), "__dataclass_params__", None)
    if params is None or not params.frozen:
        return None
    return (type(node), *(id(getattr(node, f)) for f in type(node).__dataclass_fields__))
