"""Instrument a query so its answer can be judged row by row.

For a row-level window query (one table scanned, optionally filtered, no
GROUP BY or DISTINCT) the harness adds hidden columns to the select list:

- `__wh_rowid`: a row id added to the table, so each output row is matched
  to its input row instead of comparing bags;
- `__wh_rn_<i>`: `row_number()` over the PARTITION BY and ORDER BY of each
  window that has an order-sensitive expression, which reveals the order in
  which the engine put tied rows (the witness order for tie-aware checks);
- `__wh_ok_<i>`: a top-level ORDER BY key that is not already an output
  column, so the engine's row order can be checked (in any SELECT without
  DISTINCT, grouped or not).

Adding columns to the select list changes neither the rows nor the values of
the other columns. Queries of other shapes are compared as bags, on every
column the user's select list has: `*` is first expanded into the columns it
stands for over any source (`harness.sql.star`), and where it cannot be, the
whole answer is judged. A top-level ORDER BY key that is a bare integer is a
position (`harness.core.model.key_position`), never the constant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property

import pyarrow as pa

from harness.core.functions import contains_aggregate, depends_on_peer_order
from harness.core.model import (
    SUBQUERY_EXPRS,
    AllColumns,
    Column,
    FuncCall,
    NullsOrder,
    Query,
    Select,
    SelectItem,
    SortKey,
    Star,
    TableRef,
    TableSchema,
    UnionAll,
    WindowExpr,
    WindowSpec,
    With,
    key_position,
    resolve_window,
    rewrite,
    walk,
    window_exprs,
)
from harness.sql.star import Names, Scope, cte_names, expand_stars, query_names

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

    @cached_property
    def unlimited(self) -> Query:
        """The query without LIMIT/OFFSET, to know every row the limit may pick from
        (one object per plan: what is keyed by it is found again)."""
        return _without_limit(self.query)


def _without_limit(query: Query) -> Query:
    if isinstance(query, With):
        return replace(query, body=_without_limit(query.body))
    if isinstance(query, (Select, UnionAll)):
        return replace(query, limit=None, offset=None)
    return query


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
    tables = {s.name: s for s in schemas}
    if isinstance(query, With):
        return _instrument_with(query, tables)
    if isinstance(query, UnionAll):
        return _union_plan(query, query, Scope(tables, {}))
    if not isinstance(query, Select):
        return Plan(query, visible=-1, order_keys=None if _has_order(query) else ())
    return _instrument_select(query, tables, {}, unordered_witness)


def _instrument_select(query: Select, tables: dict[str, TableSchema], ctes: dict[str, Names | None],
                       unordered_witness: bool) -> Plan:
    expanded = expand_stars(query, tables, ctes)
    if expanded is None:
        # A `*` whose columns cannot be written out: nothing is added, and
        # every column of the answer is judged (visible=-1).
        return Plan(query, visible=-1, order_keys=_unexpanded_order_keys(query),
                    limit=query.limit, offset=query.offset)
    query = expanded
    row_level = not ctes and _is_row_level(query, tables)
    if row_level:
        query = _nested_stars_written_out(query, tables)
    visible = len(query.items)
    items = list(query.items)
    rowid = witness = None
    if row_level:
        rowid = len(items)
        items.append(SelectItem(Column(ROWID), ROWID))
        witness = _add_witnesses(query, items, unordered_witness)
    if any(isinstance(k.expr, AllColumns) for k in query.order_by):
        order_keys = _all_order_keys(query)
    else:
        # With DISTINCT a hidden column would change which rows are distinct; with
        # GROUP BY ALL, what the query groups by.
        by_all = any(isinstance(e, AllColumns) for e in query.group_by)
        order_keys = _order_keys(query, items, allow_hidden=not query.distinct and not by_all)
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


def _nested_stars_written_out(query: Select, tables: dict[str, TableSchema]) -> Select:
    """`query` with each `*` of its subqueries written out as columns: with a row id,
    every table carries the hidden `__wh_rowid`, which a `*` would pick up (an
    IN (SELECT * FROM u) would get two columns). A WITH inside is left as it is."""

    def write_out(node: object) -> object | None:
        if isinstance(node, With):
            return node
        if isinstance(node, Select) and node is not query:
            inner = _nested_stars_written_out(node, tables)
            return expand_stars(inner, tables) or inner
        return None

    return rewrite(query, write_out)  # type: ignore[return-value]


def _instrument_with(query: With, tables: dict[str, TableSchema]) -> Plan:
    """A WITH query: its body is instrumented with the CTEs' columns in scope.

    No row id: a CTE may read the table with `*`, and would pass the row id on.
    """
    ctes = cte_names(query.ctes, Scope(tables, {}))
    body = query.body
    if isinstance(body, Select):
        plan = _instrument_select(body, tables, ctes, unordered_witness=False)
        return replace(plan, query=replace(query, body=plan.query))
    if isinstance(body, UnionAll):
        return _union_plan(query, body, Scope(tables, ctes))
    return Plan(query, visible=-1, order_keys=None if _has_order(body) else ())


def _union_plan(query: Query, union: UnionAll, scope: Scope) -> Plan:
    return Plan(query, visible=-1, order_keys=_union_order_keys(union, scope),
                limit=union.limit, offset=union.offset)


def _has_order(query: Query) -> bool:
    return bool(getattr(query, "order_by", ()))


def _is_row_level(query: Select, tables: dict[str, TableSchema]) -> bool:
    return (
        isinstance(query.source, TableRef)
        and query.source.name in tables
        and not query.group_by
        and query.having is None
        and not query.distinct
        and not _has_plain_aggregate(query)
    )


def _has_plain_aggregate(query: Select) -> bool:
    """An aggregate over groups, which makes the query grouped even without GROUP BY."""
    clauses = (*query.items, query.having, *query.order_by, *query.windows, query.qualify)
    return any(contains_aggregate(c) for c in clauses if c is not None)


def window_key(spec: WindowSpec) -> WindowKey:
    return (spec.partition_by, spec.order_by)


def has_unordered_sensitive_window(query: Query) -> bool:
    """Whether an order-sensitive expression runs over a window without ORDER BY."""
    return isinstance(query, Select) and any(not s.order_by for s in _sensitive_windows(query))


def _sensitive_windows(query: Select) -> list[WindowSpec]:
    """The distinct windows (by PARTITION BY and ORDER BY) of order-sensitive
    expressions, QUALIFY's included: its row_number witness is computed before
    QUALIFY filters, so the rows kept still show the order the engine chose."""
    specs: dict[WindowKey, WindowSpec] = {}
    exprs = [item.expr for item in query.items]
    for expr in exprs + ([query.qualify] if query.qualify is not None else []):
        for w in window_exprs(expr):
            spec = resolve_window(w.window, query.windows, lenient=True)
            if depends_on_peer_order(w.func, spec.frame, bool(spec.order_by)):
                specs.setdefault(window_key(spec), spec)
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
        witness.append((window_key(spec), len(items)))
        items.append(SelectItem(WindowExpr(FuncCall("row_number"), rn_spec), f"{RN_PREFIX}{i}"))
    return witness


def _sensitive_columns(query: Select) -> frozenset[int]:
    if query.qualify is not None and _order_sensitive(query, query.qualify):
        # Which rows QUALIFY keeps depends on the peer order: every column does.
        return frozenset(range(len(query.items)))
    out = set()
    for i, item in enumerate(query.items):
        for w in window_exprs(item.expr):
            spec = resolve_window(w.window, query.windows, lenient=True)
            if depends_on_peer_order(w.func, spec.frame, bool(spec.order_by)):
                out.add(i)
    return frozenset(out)


def sensitive_window_keys(query: Query) -> dict[int, frozenset[WindowKey]] | None:
    """For each user column of a row-level SELECT that depends on peer order,
    the windows (PARTITION BY and ORDER BY, as the reference's peer_order hook
    names them) of its order-sensitive expressions; None for any other query,
    or one whose QUALIFY depends on peer order (which rows it keeps does)."""
    if not isinstance(query, Select) or query.qualify is not None:
        return None
    if any(isinstance(n, SUBQUERY_EXPRS) and any(isinstance(m, WindowExpr) for m in walk(n)) for n in walk(query)):
        return None  # a subquery's windows would also order peers, of other rows
    keys: dict[int, frozenset[WindowKey]] = {}
    for i, item in enumerate(query.items):
        found = set()
        for w in window_exprs(item.expr):
            spec = resolve_window(w.window, query.windows, lenient=True)
            if depends_on_peer_order(w.func, spec.frame, bool(spec.order_by)):
                found.add(window_key(spec))
        if found:
            keys[i] = frozenset(found)
    return keys


def plain_row_number(query: Query, column: int) -> WindowKey | None:
    """The window of a user column that is exactly `row_number() OVER (...)`, else None:
    its values are the positions of the rows, so they name the one order of the
    peers that gives them."""
    if not isinstance(query, Select) or column >= len(query.items):
        return None
    expr = query.items[column].expr
    if not isinstance(expr, WindowExpr) or expr.func != FuncCall("row_number"):
        return None
    spec = resolve_window(expr.window, query.windows, lenient=True)
    return window_key(spec)


def _all_order_keys(query: Select) -> tuple[OrderKey, ...] | None:
    """ORDER BY ALL: every user column, left to right. The query keeps ALL, so
    the engine also sorts by the hidden columns after them, which only
    refines the order the user asked for."""
    if any(isinstance(i.expr, Star) for i in query.items) or len(query.order_by) != 1:
        return None  # `*` over a source whose columns are not known here
    key = query.order_by[0]
    nulls_first = None if key.nulls is None else key.nulls is NullsOrder.FIRST
    return tuple(OrderKey(i, key.descending, nulls_first) for i in range(len(query.items)))


def _order_sensitive(query: Select, expr: object) -> bool:
    return any(
        depends_on_peer_order(w.func, (spec := resolve_window(w.window, query.windows)).frame,
                           bool(spec.order_by))
        for w in window_exprs(expr))


def _order_keys(
    query: Select, items: list[SelectItem], allow_hidden: bool
) -> tuple[OrderKey, ...] | None:
    keys = []
    for i, key in enumerate(query.order_by):
        column = _output_position(key, query.items)
        if column is None:
            if not allow_hidden or key_position(key.expr) is not None:
                return None  # a position out of range: the query is refused anyway
            column = len(items)
            items.append(SelectItem(key.expr, f"{ORDER_KEY_PREFIX}{i}"))
        keys.append(_order_key(key, column))
    return tuple(keys)


def _order_key(key: SortKey, column: int) -> OrderKey:
    nulls_first = None if key.nulls is None else key.nulls.name == "FIRST"
    return OrderKey(column, key.descending, nulls_first)


def _output_position(key: SortKey, items: tuple[SelectItem, ...]) -> int | None:
    """The select-list position an ORDER BY key refers to: a position (ORDER BY 2),
    an alias, or the same expression."""
    position = key_position(key.expr)
    if position is not None:
        return position - 1 if 1 <= position <= len(items) else None
    for i, item in enumerate(items):
        if isinstance(key.expr, Column) and key.expr.table is None and item.alias == key.expr.name:
            return i
    for i, item in enumerate(items):
        if item.expr == key.expr:
            return i
    return None


def _unexpanded_order_keys(query: Select) -> tuple[OrderKey, ...] | None:
    """Order keys of a select list whose `*` stayed unexpanded: positions count
    output columns, and the items before the first `*` keep their positions."""
    stars = [i for i, item in enumerate(query.items) if isinstance(item.expr, Star)]
    before = query.items[: stars[0]] if stars else query.items
    keys = []
    for key in query.order_by:
        position = key_position(key.expr)
        if position is not None:
            column = position - 1 if position >= 1 else None
        else:
            column = _output_position(key, before)
        if column is None:
            return None
        keys.append(_order_key(key, column))
    return tuple(keys)


def _union_order_keys(union: UnionAll, scope: Scope) -> tuple[OrderKey, ...] | None:
    """A UNION ALL is ordered by positions or by the output names of its left side."""
    names = query_names(union.left, scope) or ()
    keys = []
    for key in union.order_by:
        position = key_position(key.expr)
        if position is not None:
            column = position - 1 if position >= 1 else None
        elif isinstance(key.expr, Column) and key.expr.table is None and names.count(key.expr.name) == 1:
            column = names.index(key.expr.name)
        else:
            column = None
        if column is None:
            return None
        keys.append(_order_key(key, column))
    return tuple(keys)


# -- the bare query ------------------------------------------------------------------


def bare_plan(query: Query, schemas: tuple[TableSchema, ...]) -> Plan:
    """The plan of the query as the user wrote it: nothing added (no row id, no
    witness, no hidden ORDER BY key), over the tables as they are.

    The instrumented query is another query to an optimizer, and a rewrite that
    fires only on the user's can hide behind it (`harness.judge.bare`). Its
    answer is judged as a multiset, in order by the ORDER BY keys that are
    output columns (an ORDER BY on anything else leaves the order unchecked,
    and says so), with the peer-order search of queries without a witness.
    """
    tables = {s.name: s for s in schemas}
    if isinstance(query, With):
        ctes = cte_names(query.ctes, Scope(tables, {}))
        if isinstance(query.body, Select):
            return replace(_bare_select(query.body, tables, ctes), query=query)
        if isinstance(query.body, UnionAll):
            return _union_plan(query, query.body, Scope(tables, ctes))
        return Plan(query, visible=-1, order_keys=None if _has_order(query.body) else ())
    if isinstance(query, UnionAll):
        return _union_plan(query, query, Scope(tables, {}))
    if not isinstance(query, Select):
        return Plan(query, visible=-1, order_keys=None if _has_order(query) else ())
    return _bare_select(query, tables, {})


def _bare_select(query: Select, tables: dict[str, TableSchema], ctes: dict[str, Names | None]) -> Plan:
    """The plan of a SELECT left as it is; `*` is expanded only to know which
    output column an ORDER BY key and an order-sensitive window are."""
    expanded = expand_stars(query, tables, ctes)
    if expanded is None:
        return Plan(query, visible=-1, order_keys=_unexpanded_order_keys(query),
                    limit=query.limit, offset=query.offset)
    if any(isinstance(k.expr, AllColumns) for k in expanded.order_by):
        order_keys = _all_order_keys(expanded)
    else:
        order_keys = _order_keys(expanded, list(expanded.items), allow_hidden=False)
    return Plan(query, visible=len(expanded.items), order_keys=order_keys, limit=query.limit,
                offset=query.offset, sensitive_columns=_sensitive_columns(expanded))
