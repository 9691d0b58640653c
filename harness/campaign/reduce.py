"""Reduce a failing case to a small case that still fails.

    shrink(case, holds, *, deadline=None, on_step=None) -> Reduction

`holds(candidate)` says whether the failure (a finding's signature) still
occurs; the campaign supplies it. The shrinker runs the passes of `PASSES` in
turn, each greedily (a candidate that holds becomes the current case at once),
and repeats the whole list until a round accepts nothing: a fixpoint.
`holds` is taken to be deterministic: a candidate that failed is never tried
again (candidates are keyed by SQL, schemas and the tables' bytes). The
passes come cheapest and biggest first: the query's structure, then rows
(which makes every later attempt cheaper), then windows, frames, columns and
values.

Every candidate is a consistent case: the query is rewritten on the model,
`sql` is its canonical text, the tables are Arrow with schemas that follow
dropped columns. Candidates that are invalid by construction (no window
expression left, a table that does not exist, a frame the writer rejects) are
never produced; others that are invalid only by meaning simply fail `holds`.

What "simpler" means, pass by pass, is in each pass's docstring. Every
accepted candidate is strictly simpler by a well-founded measure (fewer
nodes, rows or columns, or a cell or offset strictly lower in `_simplicity`),
so the fixpoint is reached.

A case with a `finding` record (a generated case: the reference is its
oracle) has `expected` and `error` cleared, since they would no longer
describe it. A hand-written case keeps them, though after reduction they
describe the original case, not the reduced one: a `holds` for such a case
must judge engines against the reference (e.g. run the candidate with
`expected=None` and a `finding` record), and the reduced case is a lead to
derive new expected rows from, not a finished case file.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import math
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields, is_dataclass, replace
from decimal import Context, Decimal, localcontext
from functools import cache
from typing import Any

import pyarrow as pa

from harness.cases import Case
from harness.errors import HarnessError
from harness.functions import FUNCTIONS
from harness.model import (
    BinaryOp,
    BinaryOperator,
    Bound,
    BoundKind,
    Column,
    ColumnDef,
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
    TableSchema,
    UnionAll,
    WindowExpr,
    With,
    resolve_window,
    walk,
    window_exprs,
)
from harness.sql.literals import natural_integer_type
from harness.sql.writer import write
from harness.types import to_arrow

Holds = Callable[[Case], bool]
OnStep = Callable[[str, Case], None]
Pass = Callable[["_Search"], None]  # runs greedily on the search's current case

REDUCED = " (reduced)"
MAX_VALUE_TRIES = 4  # candidate values per cell and round, simplest first


@dataclass(frozen=True)
class Reduction:
    """The smallest case found, and what it took.

    `steps`: accepted shrinks per pass name (see PASSES); `attempts`: calls of
    `holds`; `timed_out`: the deadline stopped the search before a fixpoint.
    """

    case: Case
    steps: dict[str, int]
    attempts: int
    seconds: float
    timed_out: bool = False


def shrink(case: Case, holds: Holds, *, deadline: float | None = None,
           on_step: OnStep | None = None) -> Reduction:
    """Shrink `case` while `holds` stays true (the caller has seen it hold on `case`).

    `deadline` is a time.monotonic() value; past it the best case so far is
    returned. `on_step(pass_name, case)` is called on each accepted shrink.
    An exception raised by `holds` counts as False. Returns the original case
    object when nothing could be removed.
    """
    t0 = time.monotonic()
    search = _Search(_working_copy(case), holds, deadline, on_step)
    timed_out = False
    try:
        while True:
            before = search.accepted
            for name, run in PASSES:
                search.kind = name
                run(search)
            if search.accepted == before:
                break
    except _Expired:
        timed_out = True
    best = search.case if search.accepted else case
    return Reduction(best, dict(search.steps), search.attempts, time.monotonic() - t0, timed_out)


def _working_copy(case: Case) -> Case:
    description = case.description.removesuffix(REDUCED) + REDUCED
    if case.finding is not None:
        return replace(case, description=description, expected=None, error=None, path=None)
    return replace(case, description=description, path=None)


class _Expired(Exception):
    """The deadline passed; unwinds out of whichever pass was running."""


class _Search:
    """The current case and the bookkeeping of attempts."""

    def __init__(self, case: Case, holds: Holds, deadline: float | None,
                 on_step: OnStep | None) -> None:
        self.case = case
        self.holds = holds
        self.deadline = deadline
        self.on_step = on_step
        self.kind = ""
        self.steps: Counter[str] = Counter()
        self.attempts = 0
        self.accepted = 0
        self.needs_window = any(isinstance(n, WindowExpr) for n in walk(case.query))
        # Candidates that failed, by content: greedy passes meet the same
        # candidate again after an unrelated change elsewhere was accepted.
        self.failed: set[tuple] = set()

    def attempt(self, candidate: Case | None) -> bool:
        """Try a candidate (None: none could be built); keep it when it holds."""
        if candidate is None:
            return False
        key = _content_key(candidate)
        if key in self.failed:
            return False
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise _Expired
        self.attempts += 1
        if not self._holds(candidate):
            self.failed.add(key)
            return False
        self.case = candidate
        self.accepted += 1
        self.steps[self.kind] += 1
        if self.on_step is not None:
            self.on_step(self.kind, candidate)
        return True

    def _holds(self, candidate: Case) -> bool:
        try:
            return bool(self.holds(candidate))
        except Exception:  # noqa: BLE001 - the contract: a predicate that raises does not hold
            return False

    def attempt_query(self, query: Query) -> bool:
        return self.attempt(_with_query(self.case, query, self.needs_window))


def _content_key(case: Case) -> tuple:
    return (case.sql, case.schemas, tuple((name, _fingerprint(t)) for name, t in case.tables.items()))


def _fingerprint(table: pa.Table) -> bytes:
    """Equal bytes mean equal cells, bit for bit (-0.0 and NaN included)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table.combine_chunks())
    return hashlib.sha256(sink.getvalue().to_pybytes()).digest()


# -- building candidates --------------------------------------------------------------


def _with_query(case: Case, query: Query, needs_window: bool) -> Case | None:
    """The case with another query, or None when the query cannot be a candidate."""
    if needs_window and not any(isinstance(n, WindowExpr) for n in walk(query)):
        return None
    known = {c.name.lower() for n in walk(query) if isinstance(n, With) for c in n.ctes}
    known |= {name.lower() for name in case.tables}
    if any(isinstance(n, TableRef) and n.name.lower() not in known for n in walk(query)):
        return None
    try:
        sql = write(query)
    except HarnessError:  # e.g. a frame whose start comes after its end by kind
        return None
    return replace(case, query=query, sql=sql)


def _with_table(case: Case, name: str, table: pa.Table, schema: TableSchema | None = None) -> Case:
    schemas = case.schemas if schema is None else tuple(
        schema if s.name == name else s for s in case.schemas)
    return replace(case, tables={**case.tables, name: table}, schemas=schemas)


def _rewrite(root: object, fn: Callable[[object], object | None]) -> object:
    """`root` with every node for which fn gives a replacement replaced (not
    descended into); other nodes are rebuilt only when something below changed.
    Nodes are visited in `harness.model.walk` order."""

    def visit(node: object) -> object:
        new = fn(node)
        if new is not None:
            return new
        if isinstance(node, tuple):
            items = tuple(visit(v) for v in node)
            return node if all(a is b for a, b in zip(items, node, strict=True)) else items
        if is_dataclass(node) and not isinstance(node, type):
            changes = {}
            for f in fields(node):
                old = getattr(node, f.name)
                if (value := visit(old)) is not old:
                    changes[f.name] = value
            return replace(node, **changes) if changes else node
        return node

    return visit(root)


def _nodes(root: object, kind: type | tuple[type, ...]) -> list:
    return [n for n in walk(root) if isinstance(n, kind)]


def _replace_nth(root: object, kind: type | tuple[type, ...], n: int, new: object) -> object:
    """`root` with its n-th node of `kind` (in walk order) replaced by `new`."""
    seen = itertools.count()
    return _rewrite(root, lambda node: new if isinstance(node, kind) and next(seen) == n else None)


def _on_nodes(kind: type | tuple[type, ...], variants: Callable[[Any], Iterable[object]]) -> Pass:
    """A pass that offers, for each node of `kind` in turn, its simpler variants
    (simplest first) in place of it. After an accepted variant the same node is
    offered again, so independent simplifications of one node all get a turn."""

    def run(search: _Search) -> None:
        n = 0
        while n < len(nodes := _nodes(search.case.query, kind)):
            if not any(search.attempt_query(_replace_nth(search.case.query, kind, n, v))
                       for v in variants(nodes[n])):
                n += 1

    return run


def _ddmin(search: _Search, size: int, build: Callable[[list[int]], Case | None]) -> None:
    """Delta debugging over `size` elements: remove all of them, then halves,
    quarters, ... down to single elements, keeping each removal that holds.
    `build(kept)` makes the candidate from the indices kept."""
    kept = list(range(size))
    chunk = size
    while chunk >= 1 and kept:
        i = 0
        while i < len(kept):
            trial = kept[:i] + kept[i + chunk:]
            if not search.attempt(build(trial)):
                i += chunk
            else:
                kept = trial
        chunk //= 2


# -- passes: the query's structure ----------------------------------------------------


def _hoist_subqueries(search: _Search) -> None:
    """Replace the whole query by one of its subqueries, CTE bodies or UNION ALL
    branches (the first, in walk order, that still fails)."""
    n = 1  # node 0 is the query itself
    while n < len(inner := _nodes(search.case.query, (Select, UnionAll, With))):
        n = 1 if search.attempt_query(inner[n]) else n + 1


def _union_variants(u: UnionAll) -> list[Query]:
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


def _join_variants(j: Join) -> list[object]:
    """A join as one of its sides."""
    return [j.left, j.right]


def _subquery_variants(s: SubqueryRef) -> list[object]:
    """A trivial subquery (SELECT * or plain columns FROM a table, no other
    clause) as the table itself, under the subquery's alias."""
    q = s.query
    trivial = (
        isinstance(q, Select) and isinstance(q.source, TableRef)
        and q == Select(q.items, q.source)
        and all(_is_plain_column(i.expr, i.alias) for i in q.items)
    )
    return [TableRef(q.source.name, s.alias)] if trivial else []  # type: ignore[union-attr]


def _is_plain_column(expr: object, alias: str | None) -> bool:
    if isinstance(expr, Star):
        return expr.table is None
    return isinstance(expr, Column) and alias in (None, expr.name)


def _with_variants(w: With) -> list[Query]:
    """A WITH without one of its CTEs (the body alone when none is left)."""
    return [replace(w, ctes=w.ctes[:i] + w.ctes[i + 1:]) if len(w.ctes) > 1 else w.body
            for i in range(len(w.ctes))]


# -- passes: clauses of a SELECT --------------------------------------------------------


def _drop_select_items(search: _Search) -> None:
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
            return _with_query(start, _replace_nth(start.query, Select, n, new), search.needs_window)

        _ddmin(search, len(select.items), build)
        n += 1


def _item_variants(item: SelectItem) -> list[SelectItem]:
    """An item that computes on window expressions as one of them alone (its alias kept)."""
    if isinstance(item.expr, WindowExpr):
        return []
    return [replace(item, expr=w) for w in window_exprs(item.expr)]


def _names(key: SortKey, item: object) -> bool:
    """Does an ORDER BY key name this select item (by alias or by expression)?"""
    alias_ref = isinstance(key.expr, Column) and key.expr.table is None \
        and key.expr.name == getattr(item, "alias", None)
    return alias_ref or key.expr == getattr(item, "expr", None)


def _where_variants(s: Select) -> list[Select]:
    """No WHERE; else one side of a top-level AND."""
    w = s.where
    if w is None:
        return []
    out = [replace(s, where=None)]
    if isinstance(w, BinaryOp) and w.op is BinaryOperator.AND:
        out += [replace(s, where=w.left), replace(s, where=w.right)]
    return out


def _grouping_variants(s: Select) -> list[Select]:
    """No GROUP BY and HAVING; else no HAVING."""
    out = []
    if s.group_by:
        out.append(replace(s, group_by=(), having=None))
    if s.having is not None:
        out.append(replace(s, having=None))
    return out


def _tail_variants(q: Select | UnionAll) -> list[object]:
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


def _named_window_variants(s: Select) -> list[Select]:
    """The WINDOW clause inlined into every OVER that refers to it."""
    if not s.windows:
        return []

    def inline(node: object) -> object | None:
        if isinstance(node, WindowExpr) and node.window.base is not None:
            return replace(node, window=resolve_window(node.window, s.windows))
        return None

    try:
        items, order_by = _rewrite(s.items, inline), _rewrite(s.order_by, inline)
    except HarnessError:  # a window that refers to an undefined or cyclic one
        return []
    return [replace(s, items=items, order_by=order_by, windows=())]


def _without(items: tuple, i: int) -> tuple:
    return items[:i] + items[i + 1:]


# -- passes: window expressions -----------------------------------------------------------


def _spec(w: WindowExpr, **changes: object) -> WindowExpr:
    return replace(w, window=replace(w.window, **changes))


def _partition_variants(w: WindowExpr) -> list[WindowExpr]:
    """No PARTITION BY; else one key fewer."""
    keys = w.window.partition_by
    out = [_spec(w, partition_by=())] if keys else []
    if len(keys) > 1:
        out += [_spec(w, partition_by=_without(keys, i)) for i in range(len(keys))]
    return out


def _order_variants(w: WindowExpr) -> list[WindowExpr]:
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


def _call_variants(f: FuncCall) -> list[FuncCall]:
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


def _frame_variants(w: WindowExpr) -> list[WindowExpr]:
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


def _bound_variants(w: WindowExpr) -> list[WindowExpr]:
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
    return [Literal(v, o.type) for v in _simpler_values(o.value, to_arrow(o.type), nullable=False)
            if v >= 0]  # type: ignore[operator]


# -- passes: data -------------------------------------------------------------------------


def _shrink_rows(search: _Search) -> None:
    """Delta debugging over each table's rows."""
    for name in list(search.case.tables):
        start = search.case
        table = start.tables[name]
        _ddmin(search, table.num_rows,
               lambda kept, start=start, name=name, table=table:
               _with_table(start, name, table.take(pa.array(kept, pa.int64()))))


def _drop_unused_tables(search: _Search) -> None:
    """Drop the tables the query never names (all at once, else one by one)."""
    named = {n.name.lower() for n in walk(search.case.query) if isinstance(n, TableRef)}
    unused = [name for name in search.case.tables if name.lower() not in named]
    if len(unused) > 1 and search.attempt(_without_tables(search.case, unused)):
        return
    for name in unused:
        search.attempt(_without_tables(search.case, [name]))


def _without_tables(case: Case, names: list[str]) -> Case:
    return replace(case, tables={n: t for n, t in case.tables.items() if n not in names},
                   schemas=tuple(s for s in case.schemas if s.name not in names))


def _drop_unused_columns(search: _Search) -> None:
    """Drop the table columns the query never names (all at once, else one by
    one; a table keeps one column). `id` is an ordinary column: the harness
    adds its own hidden row id."""
    named = {n.name.lower() for n in walk(search.case.query) if isinstance(n, Column)}
    unused = [(t, c) for t, table in search.case.tables.items()
              for c in table.column_names if c.lower() not in named]
    if len(unused) > 1 and search.attempt(_without_columns(search.case, unused)):
        return
    for one in unused:
        search.attempt(_without_columns(search.case, [one]))


def _without_columns(case: Case, drop: list[tuple[str, str]]) -> Case | None:
    for name in {t for t, _ in drop}:
        gone = {c for t, c in drop if t == name}
        table = case.tables[name]
        kept = [c for c in table.column_names if c not in gone]
        if not kept:
            return None
        schema = next((s for s in case.schemas if s.name == name), None)
        if schema is not None:
            schema = replace(schema, columns=tuple(c for c in schema.columns if c.name not in gone))
        case = _with_table(case, name, table.select(kept), schema)
    return case


def _simplify_values(search: _Search) -> None:
    """Each column: all NULL, else all zero; then each cell: the simplest of its
    simpler values (see `_simplicity`) that still fails."""
    for name in list(search.case.tables):
        for column in search.case.tables[name].column_names:
            _simplify_column(search, name, column)


def _simplify_column(search: _Search, name: str, column: str) -> None:
    nullable = _nullable(search.case, name, column)
    fills = [None] if nullable else []
    fills += [z for z in [_zero(search.case, name, column)] if z is not None]
    for fill in fills:
        if search.attempt(_with_cells(search.case, name, column, lambda vs, f=fill: [f] * len(vs))):
            break
    for row in range(search.case.tables[name].num_rows):
        values = search.case.tables[name].column(column).to_pylist()
        arrow = search.case.tables[name].schema.field(column).type
        for value in _simpler_values(values[row], arrow, nullable, _simplest(values)):
            cell = _with_cells(search.case, name, column,
                               lambda vs, row=row, value=value: vs[:row] + [value] + vs[row + 1:])
            if search.attempt(cell):
                break


def _simplest(values: list[object]) -> list[object]:
    """The few simplest distinct non-NULL values of a column."""
    distinct = {_simplicity(v): v for v in values if v is not None}
    return [distinct[k] for k in sorted(distinct)[:MAX_VALUE_TRIES]]


def _nullable(case: Case, name: str, column: str) -> bool:
    schema = next((s for s in case.schemas if s.name == name), None)
    defs: tuple[ColumnDef, ...] = schema.columns if schema is not None else ()
    return next((c.nullable for c in defs if c.name == column), True)


def _zero(case: Case, name: str, column: str) -> object:
    values = [v for v in case.tables[name].column(column).to_pylist() if v is not None]
    return _zero_like(values[0]) if values else None


def _with_cells(case: Case, name: str, column: str, change: Callable[[list], list]) -> Case | None:
    """The case with a column's cells changed, or None when nothing changed
    (or the new values do not fit the column's Arrow type)."""
    table = case.tables[name]
    i = table.column_names.index(column)
    old = table.column(i).combine_chunks()
    try:
        new = pa.array(change(old.to_pylist()), old.type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError):
        return None
    if new.equals(old):
        return None
    return _with_table(case, name, table.set_column(i, table.field(i), new))


# -- values: what "simpler" means ------------------------------------------------------------

_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1)


def _simplicity(v: object) -> tuple:
    """A total order on one column's values, smallest simplest: NULL; then
    fewer decimals, smaller magnitude, positive (numbers; special floats
    last); shorter (strings); nearer the epoch (dates); false before true.
    Values of unknown types are only ever made NULL."""
    if v is None:
        return (0,)
    if isinstance(v, bool):
        return (1, 0, 0, int(v), 0)
    if isinstance(v, (int, float, Decimal)):
        if isinstance(v, float) and not math.isfinite(v):
            return (1, 1, 0, 0 if math.isnan(v) else 1, v < 0)
        return (1, 0, _decimals(v), abs(v), math.copysign(1, v) < 0)
    if isinstance(v, str):
        return (1, 0, 0, len(v), v)
    if isinstance(v, dt.datetime):
        v = v.replace(tzinfo=None)
        return (1, 0, 0, abs(v - _EPOCH), v < _EPOCH)
    if isinstance(v, dt.date):
        return (1, 0, 0, abs(v - _EPOCH_DATE), v < _EPOCH_DATE)
    return (2,)


def _decimals(v: int | float | Decimal) -> int:
    if isinstance(v, int):
        return 0
    exponent = Decimal(repr(v) if isinstance(v, float) else v).normalize().as_tuple().exponent
    return max(0, -int(exponent))


def _zero_like(v: object) -> object:
    zeros = ((bool, False), (int, 0), (float, 0.0), (Decimal, Decimal(0)), (str, ""),
             (dt.datetime, _EPOCH), (dt.date, _EPOCH_DATE))
    return next((z for t, z in zeros if isinstance(v, t)), None)


def _smaller_forms(v: object) -> list[object]:
    """Rounder or smaller forms of one value (halving goes towards zero)."""
    if isinstance(v, bool) or v is None:
        return []
    if isinstance(v, int):
        return [abs(v) // 2 * (1 if v > 0 else -1)]
    if isinstance(v, float) and math.isfinite(v):
        halved = [float(int(v / 2))] if v == int(v) else []
        return [float(round(v)), round(v, 1), *halved]
    if isinstance(v, Decimal):
        whole = int(v)
        halved = [Decimal(abs(whole) // 2 * (1 if whole > 0 else -1))] if v == whole else []
        with localcontext(Context(prec=80)):  # DECIMAL(38, s) needs more than the default 28 digits
            return [v.quantize(Decimal(1)), v.quantize(Decimal("0.1")), *halved]
    if isinstance(v, str):
        return [v[:1], v[: len(v) // 2]]
    return []


def _simpler_values(v: object, arrow: pa.DataType, nullable: bool,
                    present: Iterable[object] = ()) -> list[object]:
    """At most MAX_VALUE_TRIES values strictly simpler than `v`, simplest first,
    as they read back from the column's Arrow type (a float32 may not hold the
    rounder double): NULL, zero, rounder or smaller forms, values of `present`."""
    if v is None:
        return []
    candidates = [None] if nullable else []
    candidates += [_zero_like(v), *_smaller_forms(v), *present]
    mine, out = _simplicity(v), {}
    for c in candidates:
        try:
            c = pa.array([c], arrow).to_pylist()[0]
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError):
            continue
        if (c is not None or nullable) and _simplicity(c) < mine:
            out.setdefault(_simplicity(c), c)
    return [out[k] for k in sorted(out)[:MAX_VALUE_TRIES]]


# -- the passes, in order --------------------------------------------------------------------

PASSES: tuple[tuple[str, Pass], ...] = (
    ("hoist-subquery", _hoist_subqueries),
    ("union-branch", _on_nodes(UnionAll, _union_variants)),
    ("join-side", _on_nodes(Join, _join_variants)),
    ("inline-subquery", _on_nodes(SubqueryRef, _subquery_variants)),
    ("drop-cte", _on_nodes(With, _with_variants)),
    ("select-items", _drop_select_items),
    ("item-expressions", _on_nodes(SelectItem, _item_variants)),
    ("where", _on_nodes(Select, _where_variants)),
    ("group-by", _on_nodes(Select, _grouping_variants)),
    ("limit-order-distinct", _on_nodes((Select, UnionAll), _tail_variants)),
    ("rows", _shrink_rows),
    ("named-windows", _on_nodes(Select, _named_window_variants)),
    ("partition-by", _on_nodes(WindowExpr, _partition_variants)),
    ("window-order-by", _on_nodes(WindowExpr, _order_variants)),
    ("function-clauses", _on_nodes(FuncCall, _call_variants)),
    ("frame", _on_nodes(WindowExpr, _frame_variants)),
    ("frame-bounds", _on_nodes(WindowExpr, _bound_variants)),
    ("tables", _drop_unused_tables),
    ("columns", _drop_unused_columns),
    ("values", _simplify_values),
)
