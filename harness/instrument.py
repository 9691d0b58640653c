"""Instrument a query so its answer can be judged row by row.

For a row-level window query (one table scanned, optionally filtered, no
GROUP BY or DISTINCT) the harness adds hidden columns to the select list:

- `__wh_rowid`: a row id added to the table, so each output row is matched
  to its input row instead of comparing bags;
- `__wh_rn_<i>`: `row_number()` over the PARTITION BY and ORDER BY of each
  window that has an order-sensitive expression, which reveals the order in
  which the engine put tied rows (the witness order for tie-aware checks);
- `__wh_ok_<i>`: a top-level ORDER BY key that is not already an output
  column, so the engine's row order can be checked.

Adding columns to the select list changes neither the rows nor the values of
the other columns. Queries of other shapes are left as they are and compared
as bags.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import pyarrow as pa

from harness.functions import is_aggregate, is_order_sensitive
from harness.model import (
    SUBQUERY_EXPRS,
    Column,
    FuncCall,
    InSubquery,
    Query,
    Select,
    SelectItem,
    SortKey,
    Star,
    TableRef,
    TableSchema,
    WindowExpr,
    WindowSpec,
    children,
    resolve_window,
    window_exprs,
)

ROWID = "__wh_rowid"
RN_PREFIX = "__wh_rn_"
ORDER_KEY_PREFIX = "__wh_ok_"

WindowKey = tuple[tuple, tuple]


@dataclass(frozen=True)
class OrderKey:
    """A top-level ORDER BY key: which output column holds it, and its direction."""

    column: int
    descending: bool
    nulls_first: bool | None  # None: the engine's default


@dataclass(frozen=True)
class Plan:
    """What the comparator needs to know about an instrumented query."""

    query: Query
    visible: int  # the first `visible` output columns are the user's
    rowid_column: int | None = None
    witness_columns: tuple[tuple[WindowKey, int], ...] = ()
    order_keys: tuple[OrderKey, ...] | None = ()  # None: ORDER BY present but not checkable
    limit: int | None = None
    offset: int | None = None
    sensitive_columns: frozenset[int] = frozenset()  # user columns that depend on peer order

    @property
    def unlimited(self) -> Query:
        """The query without LIMIT/OFFSET, to know every row the limit may pick from."""
        return replace(self.query, limit=None, offset=None) if isinstance(self.query, Select) else self.query


def with_rowid(tables: Mapping[str, pa.Table]) -> dict[str, pa.Table]:
    """Each table with a hidden, unique int64 row id appended."""
    return {
        name: t.append_column(ROWID, pa.array(range(t.num_rows), type=pa.int64()))
        for name, t in tables.items()
    }


def instrument(query: Query, schemas: tuple[TableSchema, ...], unordered_witness: bool = False) -> Plan:
    """Add the hidden columns described above, where the query's shape allows.

    `unordered_witness`: also reveal the row order of windows without ORDER BY
    (every row of a partition is a peer there) with an unordered row_number,
    for engines that accept one.
    """
    if not isinstance(query, Select):
        return Plan(query, visible=-1, order_keys=None if _has_order(query) else ())
    query = _expand_star(query, {s.name: s for s in schemas})
    visible = len(query.items)
    items = list(query.items)
    rowid = witness = None
    if _is_row_level(query):
        rowid = len(items)
        items.append(SelectItem(Column(ROWID), ROWID))
        witness = _add_witnesses(query, items, unordered_witness)
    order_keys = _order_keys(query, items, allow_hidden=_is_row_level(query))
    instrumented = replace(query, items=tuple(items))
    return Plan(
        query=instrumented,
        visible=visible,
        rowid_column=rowid,
        witness_columns=tuple(witness or ()),
        order_keys=order_keys,
        limit=query.limit,
        offset=query.offset,
        sensitive_columns=_sensitive_columns(query),
    )


def _has_order(query: Query) -> bool:
    return bool(getattr(query, "order_by", ()))


def _is_row_level(query: Select) -> bool:
    return (
        isinstance(query.source, TableRef)
        and not query.group_by
        and query.having is None
        and not query.distinct
        and not _has_plain_aggregate(query)
    )


def _has_plain_aggregate(query: Select) -> bool:
    """A GROUP BY-less aggregate such as SELECT count(*) FROM t (not one under OVER)."""

    def visit(node: object) -> bool:
        if isinstance(node, WindowExpr):
            return False
        if isinstance(node, SUBQUERY_EXPRS):  # a subquery's aggregates group its own rows
            return isinstance(node, InSubquery) and visit(node.operand)
        if isinstance(node, FuncCall) and is_aggregate(node.name):
            return True
        return any(visit(c) for c in children(node))

    return any(visit(item.expr) for item in query.items)


def _expand_star(query: Select, schemas: dict[str, TableSchema]) -> Select:
    if not any(isinstance(i.expr, Star) for i in query.items):
        return query
    if not isinstance(query.source, TableRef) or query.source.name not in schemas:
        return query  # left to the engines and the reference to expand
    columns = schemas[query.source.name].columns
    items: list[SelectItem] = []
    for item in query.items:
        if isinstance(item.expr, Star):
            items.extend(SelectItem(Column(c.name)) for c in columns)
        else:
            items.append(item)
    return replace(query, items=tuple(items))


def _window_key(spec: WindowSpec) -> WindowKey:
    return (spec.partition_by, spec.order_by)


def has_unordered_sensitive_window(query: Query) -> bool:
    """Whether an order-sensitive expression runs over a window without ORDER BY."""
    return isinstance(query, Select) and any(not s.order_by for s in _sensitive_windows(query))


def _sensitive_windows(query: Select) -> list[WindowSpec]:
    """The distinct windows (by PARTITION BY and ORDER BY) of order-sensitive expressions."""
    specs: dict[WindowKey, WindowSpec] = {}
    for item in query.items:
        for w in window_exprs(item.expr):
            spec = resolve_window(w.window, query.windows)
            if is_order_sensitive(w.func, spec.frame, bool(spec.order_by)):
                specs.setdefault(_window_key(spec), spec)
    return list(specs.values())


def _add_witnesses(
    query: Select, items: list[SelectItem], unordered: bool
) -> list[tuple[WindowKey, int]]:
    # Without ORDER BY every row of a partition is a peer; some engines reject
    # an unordered row_number, and for them those windows are left to the search.
    witness = []
    ordered = [spec for spec in _sensitive_windows(query) if spec.order_by or unordered]
    for i, spec in enumerate(ordered):
        rn_spec = WindowSpec(partition_by=spec.partition_by, order_by=spec.order_by)
        witness.append((_window_key(spec), len(items)))
        items.append(SelectItem(WindowExpr(FuncCall("row_number"), rn_spec), f"{RN_PREFIX}{i}"))
    return witness


def _sensitive_columns(query: Select) -> frozenset[int]:
    out = set()
    for i, item in enumerate(query.items):
        for w in window_exprs(item.expr):
            spec = resolve_window(w.window, query.windows)
            if is_order_sensitive(w.func, spec.frame, bool(spec.order_by)):
                out.add(i)
    return frozenset(out)


def _order_keys(
    query: Select, items: list[SelectItem], allow_hidden: bool
) -> tuple[OrderKey, ...] | None:
    keys = []
    for i, key in enumerate(query.order_by):
        column = _output_position(key, query.items)
        if column is None:
            if not allow_hidden:
                return None
            column = len(items)
            items.append(SelectItem(key.expr, f"{ORDER_KEY_PREFIX}{i}"))
        nulls_first = None if key.nulls is None else key.nulls.name == "FIRST"
        keys.append(OrderKey(column, key.descending, nulls_first))
    return tuple(keys)


def _output_position(key: SortKey, items: tuple[SelectItem, ...]) -> int | None:
    """The select-list position an ORDER BY key refers to: an alias, or the same expression."""
    for i, item in enumerate(items):
        if isinstance(key.expr, Column) and key.expr.table is None and item.alias == key.expr.name:
            return i
    for i, item in enumerate(items):
        if item.expr == key.expr:
            return i
    return None
