"""The reducer's passes on the query: rewriting the model towards simpler SQL.

Each pass or variant function's docstring says what "simpler" means for it:
the query's structure (subqueries, UNION ALL, joins, CTEs), the clauses of a
SELECT, window expressions and their frames. Rewrites are pure functions on
the model; `on_nodes` turns a "simpler variants of this node" function into a
pass. A frame's offset of a RANGE key's type shrinks by the simplicity order
of values in `harness.findings.reduce_data`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import replace
from decimal import Decimal
from functools import cache
from typing import Any

from harness.cases.case import Case
from harness.core.errors import HarnessError
from harness.core.functions import FUNCTIONS
from harness.core.model import (
    BinaryOp,
    BinaryOperator,
    Bound,
    BoundKind,
    Column,
    FrameMode,
    FuncCall,
    Interval,
    Join,
    Literal,
    Query,
    Select,
    SelectItem,
    SortKey,
    Star,
    SubqueryRef,
    TableRef,
    UnionAll,
    WindowExpr,
    With,
    replace_nth,
    resolve_window,
    rewrite,
    walk,
    window_exprs,
)
from harness.core.types import to_arrow
from harness.findings.reduce_data import simpler_values
from harness.findings.reduce_search import Pass, Search, ddmin, with_query
from harness.sql.literals import natural_integer_type

# -- rewriting the model ----------------------------------------------------------------


def _nodes(root: object, kind: type | tuple[type, ...]) -> list:
    return [n for n in walk(root) if isinstance(n, kind)]


def on_nodes(kind: type | tuple[type, ...], variants: Callable[[Any], Iterable[object]]) -> Pass:
    """A pass that offers, for each node of `kind` in turn, its simpler variants
    (simplest first) in place of it. After an accepted variant the same node is
    offered again, so independent simplifications of one node all get a turn."""

    def run(search: Search) -> None:
        n = 0
        while n < len(nodes := _nodes(search.case.query, kind)):
            if not any(search.attempt_query(replace_nth(search.case.query, kind, n, v))
                       for v in variants(nodes[n])):
                n += 1

    return run


# -- passes: the query's structure ----------------------------------------------------


def hoist_subqueries(search: Search) -> None:
    """Replace the whole query by one of its subqueries, CTE bodies or UNION ALL
    branches (the first, in walk order, that still fails)."""
    n = 1  # node 0 is the query itself
    while n < len(inner := _nodes(search.case.query, (Select, UnionAll, With))):
        n = 1 if search.attempt_query(inner[n]) else n + 1


def union_variants(u: UnionAll) -> list[Query]:
    """A UNION ALL as one of its branches, taking over the union's ORDER BY/LIMIT."""
    tail = {"order_by": u.order_by, "limit": u.limit, "offset": u.offset}
    has_tail = u.order_by or u.limit is not None or u.offset is not None
    out = []
    for branch in (u.left, u.right):
        if not has_tail:
            out.append(branch)
        elif isinstance(branch, Select) and not branch.order_by \
                and branch.limit is None and branch.offset is None:
            out.append(replace(branch, **tail))
    return out


def join_variants(j: Join) -> list[object]:
    """A join as one of its sides."""
    return [j.left, j.right]


def subquery_variants(s: SubqueryRef) -> list[object]:
    """A trivial subquery (SELECT * or plain columns FROM a table, no other
    clause) as the table itself, under the subquery's alias."""
    q = s.query
    trivial = (
        not s.columns  # a column list renames what the table would not
        and isinstance(q, Select) and isinstance(q.source, TableRef)
        and q == Select(q.items, q.source)
        and all(_is_plain_column(i.expr, i.alias) for i in q.items)
    )
    return [TableRef(q.source.name, s.alias)] if trivial else []  # type: ignore[union-attr]


def _is_plain_column(expr: object, alias: str | None) -> bool:
    if isinstance(expr, Star):
        return expr.table is None
    return isinstance(expr, Column) and alias in (None, expr.name)


def with_variants(w: With) -> list[Query]:
    """A WITH without one of its CTEs (the body alone when none is left)."""
    return [replace(w, ctes=w.ctes[:i] + w.ctes[i + 1:]) if len(w.ctes) > 1 else w.body
            for i in range(len(w.ctes))]


# -- passes: clauses of a SELECT --------------------------------------------------------


def drop_select_items(search: Search) -> None:
    """Delta debugging over each SELECT's items; an ORDER BY key that names a
    dropped item goes with it, and one window expression always stays."""
    n = 0
    while n < len(selects := _nodes(search.case.query, Select)):
        start, select = search.case, selects[n]

        def build(kept: list[int], start: Case = start, s: Select = select, n: int = n) -> Case | None:
            if not kept:
                return None
            dropped = [item for i, item in enumerate(s.items) if i not in kept]
            order_by = tuple(k for k in s.order_by if not any(_names(k, d) for d in dropped))
            new = replace(s, items=tuple(s.items[i] for i in kept), order_by=order_by)
            return with_query(start, replace_nth(start.query, Select, n, new), search.needs_window)

        ddmin(search, len(select.items), build)
        n += 1


def item_variants(item: SelectItem) -> list[SelectItem]:
    """An item that computes on window expressions as one of them alone (its alias kept)."""
    if isinstance(item.expr, WindowExpr):
        return []
    return [replace(item, expr=w) for w in window_exprs(item.expr)]


def _names(key: SortKey, item: object) -> bool:
    """Does an ORDER BY key name this select item (by alias or by expression)?"""
    alias_ref = isinstance(key.expr, Column) and key.expr.table is None \
        and key.expr.name == getattr(item, "alias", None)
    return alias_ref or key.expr == getattr(item, "expr", None)


def where_variants(s: Select) -> list[Select]:
    """No WHERE; else one side of a top-level AND."""
    w = s.where
    if w is None:
        return []
    out = [replace(s, where=None)]
    if isinstance(w, BinaryOp) and w.op is BinaryOperator.AND:
        out += [replace(s, where=w.left), replace(s, where=w.right)]
    return out


def qualify_variants(s: Select) -> list[Select]:
    """No QUALIFY (it only filters the rows the windows computed)."""
    return [] if s.qualify is None else [replace(s, qualify=None)]


def grouping_variants(s: Select) -> list[Select]:
    """No GROUP BY and HAVING; else no HAVING."""
    out = []
    if s.group_by:
        out.append(replace(s, group_by=(), having=None))
    if s.having is not None:
        out.append(replace(s, having=None))
    return out


def tail_variants(q: Select | UnionAll) -> list[object]:
    """No LIMIT/OFFSET, no OFFSET; no ORDER BY, or one key fewer; no DISTINCT."""
    out: list[object] = []
    if q.limit is not None or q.offset is not None:
        out.append(replace(q, limit=None, offset=None))
    if q.limit is not None and q.offset is not None:
        out.append(replace(q, offset=None))
    if q.order_by:
        out.append(replace(q, order_by=()))
    if len(q.order_by) > 1:
        out += [replace(q, order_by=_without(q.order_by, i)) for i in range(len(q.order_by))]
    if isinstance(q, Select) and q.distinct:
        out.append(replace(q, distinct=False))
    return out


def named_window_variants(s: Select) -> list[Select]:
    """The WINDOW clause inlined into every OVER that refers to it."""
    if not s.windows:
        return []

    def inline(node: object) -> object | None:
        if isinstance(node, WindowExpr) and node.window.base is not None:
            return replace(node, window=resolve_window(node.window, s.windows))
        return None

    try:
        items, order_by = rewrite(s.items, inline), rewrite(s.order_by, inline)
    except HarnessError:  # a window that refers to an undefined or cyclic one
        return []
    return [replace(s, items=items, order_by=order_by, windows=())]


def _without(items: tuple, i: int) -> tuple:
    return items[:i] + items[i + 1:]


# -- passes: window expressions -----------------------------------------------------------


def _spec(w: WindowExpr, **changes: object) -> WindowExpr:
    return replace(w, window=replace(w.window, **changes))


def partition_variants(w: WindowExpr) -> list[WindowExpr]:
    """No PARTITION BY; else one key fewer."""
    keys = w.window.partition_by
    out = [_spec(w, partition_by=())] if keys else []
    if len(keys) > 1:
        out += [_spec(w, partition_by=_without(keys, i)) for i in range(len(keys))]
    return out


def order_variants(w: WindowExpr) -> list[WindowExpr]:
    """No ORDER BY where the function and frame allow it; else one key fewer;
    else a DESC key made ASC (its NULLS FIRST/LAST kept: engine defaults differ)."""
    keys = w.window.order_by
    out = []
    if keys and _may_be_unordered(w):
        out.append(_spec(w, order_by=()))
    if len(keys) > 1:  # more than one key: no RANGE offset frame here
        out += [_spec(w, order_by=_without(keys, i)) for i in range(len(keys))]
    for i, k in enumerate(keys):
        if k.descending:
            out.append(_spec(w, order_by=keys[:i] + (replace(k, descending=False),) + keys[i + 1:]))
    return out


def _may_be_unordered(w: WindowExpr) -> bool:
    """GROUPS and RANGE offset frames need ORDER BY; so do the functions that
    some registered engine accepts only ordered (a reduced case is confirmed
    on every engine, so it should run on all of them)."""
    frame = w.window.frame
    if frame is not None and (frame.mode is FrameMode.GROUPS
                              or frame.mode is FrameMode.RANGE and _has_offset(frame)):
        return False
    return w.func.name not in _needs_order_by()


@cache
def _needs_order_by() -> frozenset[str]:
    from harness.engines.registry import engine_names, get_dialect

    return frozenset().union(*(get_dialect(name).needs_order_by for name in engine_names()))


def _has_offset(frame: object) -> bool:
    return any(b.offset is not None for b in (frame.start, frame.end))  # type: ignore[attr-defined]


def call_variants(f: FuncCall) -> list[FuncCall]:
    """Without FILTER, DISTINCT, IGNORE/RESPECT NULLS, FROM FIRST/LAST, the
    aggregate's ORDER BY, an optional trailing argument; smaller integer arguments."""
    out = []
    for clause, plain in (("filter", None), ("distinct", False), ("null_treatment", None),
                          ("from_last", None), ("order_by", ())):
        if getattr(f, clause) != plain:
            out.append(replace(f, **{clause: plain}))
    spec = FUNCTIONS.get(f.name)
    if spec is not None and len(f.args) > spec.min_args:
        out.append(replace(f, args=f.args[:-1]))
    for i, arg in enumerate(f.args):
        out += [replace(f, args=f.args[:i] + (smaller,) + f.args[i + 1:])
                for smaller in _smaller_counts(arg)]
    return out


def _smaller_counts(e: object) -> list[Literal]:
    """An integer literal n > 1 as 1, then n // 2 (ntile's buckets, lag's offset...)."""
    if not (isinstance(e, Literal) and type(e.value) is int and e.value > 1):
        return []
    return [_integer(v) for v in sorted({1, e.value // 2}) if v < e.value]


def _integer(n: int) -> Literal:
    return Literal(n, natural_integer_type(n))


# -- passes: frames -----------------------------------------------------------------------


def frame_variants(w: WindowExpr) -> list[WindowExpr]:
    """The default frame; else a ROWS frame for RANGE/GROUPS (offsets as whole
    row counts); else no EXCLUDE."""
    frame = w.window.frame
    if frame is None:
        return []
    out = [_spec(w, frame=None)]
    if frame.mode is not FrameMode.ROWS:
        rows = replace(frame, mode=FrameMode.ROWS, start=_as_rows(frame.start), end=_as_rows(frame.end))
        out.append(_spec(w, frame=rows))
    if frame.exclusion is not None:
        out.append(_spec(w, frame=replace(frame, exclusion=None)))
    return out


def _as_rows(b: Bound) -> Bound:
    o = b.offset
    if isinstance(o, Interval):
        return replace(b, offset=_integer(abs(o.count)))
    if isinstance(o, Literal) and isinstance(o.value, (int, float, Decimal)) \
            and not isinstance(o.value, bool) and math.isfinite(o.value):
        return replace(b, offset=_integer(int(abs(o.value))))
    return b


_UNBOUNDED = {"start": Bound(BoundKind.UNBOUNDED_PRECEDING), "end": Bound(BoundKind.UNBOUNDED_FOLLOWING)}
_OFFSET_KINDS = (BoundKind.PRECEDING, BoundKind.FOLLOWING)


def bound_variants(w: WindowExpr) -> list[WindowExpr]:
    """Each bound towards simpler: UNBOUNDED, then CURRENT ROW, then a smaller
    offset (1 or n/2 rows; a simpler value of a RANGE key's type; a smaller
    interval). Frames the writer rejects (start after end by kind) fail to build."""
    frame = w.window.frame
    if frame is None:
        return []
    out = []
    for side in ("start", "end"):
        for bound in _simpler_bounds(getattr(frame, side), _UNBOUNDED[side]):
            out.append(_spec(w, frame=replace(frame, **{side: bound})))
    return out


def _simpler_bounds(b: Bound, unbounded: Bound) -> list[Bound]:
    if b.kind in (BoundKind.UNBOUNDED_PRECEDING, BoundKind.UNBOUNDED_FOLLOWING):
        return []
    out = [unbounded]
    if b.kind in _OFFSET_KINDS:
        out.append(Bound(BoundKind.CURRENT_ROW))
        out += [Bound(b.kind, o) for o in _smaller_offsets(b.offset)]
    return out


def _smaller_offsets(o: object) -> list[object]:
    if isinstance(o, Interval):
        return [replace(o, count=c) for c in sorted({1, o.count // 2}) if 0 < c < o.count]
    if not isinstance(o, Literal) or o.type is None:
        return []
    if type(o.value) is int:
        return _smaller_counts(o)
    return [Literal(v, o.type) for v in simpler_values(o.value, to_arrow(o.type), nullable=False)
            if v >= 0]  # type: ignore[operator]
