"""Metamorphic relations that rewrite the window over the same rows:
frame-modes (ROWS = GROUPS = RANGE on a unique key with mapped offsets),
desc-mirror (the reversed order with the frame mirrored), exclude-no-others,
first-value-nth-value and value-at-current-row. Each is a `Subject -> Check |
None` function; `harness.judge.metamorphic` registers them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import pyarrow as pa

from harness.core import types as T
from harness.core.dialect import Dialect
from harness.core.functions import FUNCTIONS, FunctionKind
from harness.core.model import (
    CURRENT_ROW,
    UNBOUNDED_FOLLOWING,
    Bound,
    BoundKind,
    Column,
    ColumnDef,
    Exclusion,
    Expr,
    Frame,
    FrameMode,
    FuncCall,
    NullsOrder,
    NullTreatment,
    SortKey,
    TableSchema,
    WindowExpr,
    WindowSpec,
)
from harness.core.types import TypeKind
from harness.judge.cells import hashable
from harness.judge.metamorphic_build import (
    Pair,
    collect,
    fresh_name,
    make_check,
    same_table,
    scale_of,
    select,
    side,
)
from harness.judge.metamorphic_check import ID, Check, FloatScale
from harness.judge.metamorphic_draw import (
    WITH_OFFSET,
    Subject,
    bound_kinds,
    column_values,
    deterministic,
    has_range_offsets,
    integer,
    is_total,
    literal,
    pick_column,
    random_call,
    random_frame,
    random_keys,
    random_partition,
    random_window_expr,
    total,
)

# -- frame modes ------------------------------------------------------------------------


# How a ROWS offset n maps to a RANGE offset: (n, outer) -> offset, None when
# it does not map. `outer`: a bound that widens the frame as its offset grows
# (start PRECEDING, end FOLLOWING); the others narrow it.
OffsetMap = Callable[[int, bool], "Expr | None"]


@dataclass(frozen=True)
class OrderPlan:
    """A unique window order: its keys, the table that holds them, and how ROWS
    offsets map to RANGE offsets."""

    partition_by: tuple[Expr, ...]
    order_by: tuple[SortKey, ...]
    range_offset: OffsetMap
    schema: TableSchema
    table: pa.Table


def _outer(kind: BoundKind, is_start: bool) -> bool:
    return (kind is BoundKind.PRECEDING) == is_start


def _by_id(s: Subject) -> OrderPlan:
    """ORDER BY id: unique but not consecutive, so RANGE maps only offset 0."""
    key = SortKey(Column(ID), s.rng.random() < 0.5, s.rng.choice(list(NullsOrder)))
    return OrderPlan(random_partition(s), (key,), lambda n, outer: integer(0) if n == 0 else None,
                     s.schema, s.table)


def _compound(s: Subject) -> OrderPlan:
    """ORDER BY v, id: unique, several keys, so no RANGE offsets at all."""
    keys = total(random_keys(s, s.rng.randint(1, 2)))
    return OrderPlan(random_partition(s), keys, lambda n, outer: None, s.schema, s.table)


def _consecutive(s: Subject) -> OrderPlan:
    """A derived key that takes the values c, 2c, 3c, ... in each partition (in
    a random order): ROWS n = RANGE n*c + slack on an outer bound (the row n*c
    away is in, the one (n+1)*c away is out), and RANGE max(n*c - slack, 0)
    on an inner one (the row n*c away is in, the one (n-1)*c away is out)."""
    exact = [c for c in s.schema.columns if c.name != ID and not c.type.is_float
             and c.type.kind is not TypeKind.LIST]
    parts = tuple(Column(c.name) for c in s.rng.sample(exact, min(len(exact), s.rng.randint(0, 1))))
    floats = s.rng.random() < 0.4
    step: float = s.rng.choice((0.5, 1.0, 2.5)) if floats else s.rng.choice((1, 2, 5))
    # Any slack below one step reaches no further row (binary-exact for the floats).
    slack = s.rng.choice((0.0, step / 2)) if floats else s.rng.randint(0, int(step) - 1)
    name = fresh_name(s.schema, "mr_key")
    groups: dict[tuple, list[int]] = {}
    for i, row in enumerate(zip(*(s.table.column(c.name).to_pylist() for c in parts), strict=True)
                            if parts else ((),) * s.table.num_rows):
        groups.setdefault(tuple(hashable(v) for v in row), []).append(i)
    keys: list[object] = [None] * s.table.num_rows
    for members in groups.values():
        for rank, i in enumerate(s.rng.sample(members, len(members)), start=1):
            keys[i] = rank * step
    t = T.FLOAT64 if floats else T.INT64
    table = s.table.append_column(name, pa.array(keys, type=pa.float64() if floats else pa.int64()))
    schema = TableSchema(s.schema.name, (*s.schema.columns, ColumnDef(name, t, nullable=False)))
    key = SortKey(Column(name), s.rng.random() < 0.5, s.rng.choice(list(NullsOrder)))
    def offset(n: int, outer: bool) -> Expr:
        return literal(n * step + slack if outer else max(n * step - slack, 0 * step), t)

    return OrderPlan(parts, (key,), offset, schema, table)


def frame_modes(s: Subject) -> Check | None:
    """Left: f() OVER (PARTITION BY P ORDER BY <unique> ROWS BETWEEN ...); right:
    the same over GROUPS, or RANGE with the offsets mapped."""
    plan = s.rng.choice((_by_id, _compound, _consecutive))(s)
    mode = s.rng.choice((FrameMode.GROUPS, FrameMode.RANGE))
    mapped: OffsetMap = (lambda n, outer: integer(n)) if mode is FrameMode.GROUPS else plan.range_offset
    sub = replace(s, schema=plan.schema, table=plan.table, base=())

    def draw() -> Pair | None:
        call = _frame_call(s)
        if call is None:
            return None
        ns = [n for n in range(4) if mapped(n, True) is not None and mapped(n, False) is not None]
        first, last = bound_kinds(s.rng, bool(ns))
        offsets = [s.rng.choice(ns) if ns else 0 for _ in range(2)]
        exclusion = s.rng.choice([None, *Exclusion]) if s.rng.random() < 0.3 else None

        def frame(m: FrameMode, f: OffsetMap) -> Frame:
            def make(kind: BoundKind, n: int, is_start: bool) -> Bound:
                return Bound(kind, f(n, _outer(kind, is_start))) if kind in WITH_OFFSET else Bound(kind)
            return Frame(m, make(first, offsets[0], True), make(last, offsets[1], False), exclusion)

        spec = WindowSpec(None, plan.partition_by, plan.order_by)
        left = WindowExpr(call, replace(spec, frame=frame(FrameMode.ROWS, lambda n, outer: integer(n))))
        right = WindowExpr(call, replace(spec, frame=frame(mode, mapped)))
        return left, right, scale_of(s, left)

    def build(pairs: Sequence[Pair]) -> Check:
        left, right = select(sub, [p[0] for p in pairs]), select(sub, [p[1] for p in pairs])
        return make_check(sub, "frame-modes", pairs, side(sub, "left", left, plan.schema, plan.table),
                          side(sub, "right", right, plan.schema, plan.table))

    return collect(s, draw, build)


def _frame_call(s: Subject) -> FuncCall | None:
    """A call that reads the frame, the case's own sometimes; ORDER BY made total."""
    mine = [e.func for e in s.base if FUNCTIONS[e.func.name].uses_frame]
    call = s.rng.choice(mine) if mine and s.rng.random() < 0.5 else random_call(s, lambda f: f.uses_frame)
    if call is not None and call.order_by:
        call = replace(call, order_by=total(call.order_by))
    return call


# -- DESC mirrors ASC ----------------------------------------------------------------------

_SWAPPED = {"first_value": "last_value", "last_value": "first_value", "lag": "lead", "lead": "lag"}
_MIRROR = {BoundKind.UNBOUNDED_PRECEDING: BoundKind.UNBOUNDED_FOLLOWING, BoundKind.PRECEDING: BoundKind.FOLLOWING,
           BoundKind.CURRENT_ROW: BoundKind.CURRENT_ROW, BoundKind.FOLLOWING: BoundKind.PRECEDING,
           BoundKind.UNBOUNDED_FOLLOWING: BoundKind.UNBOUNDED_PRECEDING}


def mirrored_call(call: FuncCall) -> FuncCall | None:
    """The call that reads the reversed order as `call` reads this one, or None."""
    spec = FUNCTIONS[call.name]
    if call.name in _SWAPPED:
        return replace(call, name=_SWAPPED[call.name])
    if call.name == "nth_value":
        return replace(call, from_last=not call.from_last)
    frame_order = spec.ordered_aggregate and not call.order_by
    return call if spec.kind is FunctionKind.AGGREGATE and not frame_order else None


def _explicit(key: SortKey, dialect: Dialect) -> SortKey:
    if key.nulls is not None:
        return key
    first = dialect.default_null_ordering.nulls_first(key.descending)
    return replace(key, nulls=NullsOrder.FIRST if first else NullsOrder.LAST)


def reversed_key(key: SortKey) -> SortKey:
    flip = NullsOrder.LAST if key.nulls is NullsOrder.FIRST else NullsOrder.FIRST
    return SortKey(key.expr, not key.descending, flip)


def mirrored_frame(frame: Frame | None) -> Frame:
    """The frame that selects the same rows in the reversed order."""
    if frame is None:  # the default with ORDER BY: RANGE UNBOUNDED PRECEDING .. CURRENT ROW
        return Frame(FrameMode.RANGE, CURRENT_ROW, UNBOUNDED_FOLLOWING)
    flip = lambda b: Bound(_MIRROR[b.kind], b.offset)  # noqa: E731
    return Frame(frame.mode, flip(frame.end), flip(frame.start), frame.exclusion)


def _nan_key(s: Subject, spec: WindowSpec) -> bool:
    """Whether a key holds NaN, where the standard does not say what RANGE n takes."""
    names = [k.expr.name for k in spec.order_by if isinstance(k.expr, Column)]
    return any(isinstance(v, float) and math.isnan(v) for n in names for v in column_values(s, n))


def desc_mirror(s: Subject) -> Check | None:
    """Left: f() OVER (P ORDER BY keys frame); right: g() OVER (P ORDER BY the
    keys reversed (ASC <-> DESC, NULLS FIRST <-> LAST) mirrored frame), g the
    mirror of f (itself for order-insensitive aggregates)."""
    def draw() -> Pair | None:
        e = random_window_expr(s, lambda f: f.uses_frame or f.name in _SWAPPED)
        if e is None or not e.window.order_by or (g := mirrored_call(e.func)) is None:
            return None
        if not is_total(e.window) and (g is not e.func or _nan_key(s, e.window)):
            return None  # first_value etc. need a total order; RANGE offsets a key without NaN
        keys = tuple(_explicit(k, s.dialect) for k in e.window.order_by)
        left = replace(e, window=replace(e.window, order_by=keys))
        frame = mirrored_frame(e.window.frame) if FUNCTIONS[g.name].uses_frame else e.window.frame
        mirrored = replace(e.window, order_by=tuple(reversed_key(k) for k in keys), frame=frame)
        return left, WindowExpr(g, mirrored), scale_of(s, left)

    return collect(s, draw, same_table(s, "desc-mirror", s.where))


# -- EXCLUDE NO OTHERS ----------------------------------------------------------------------


def exclude_no_others(s: Subject) -> Check | None:
    """Left: f() OVER (... frame) without EXCLUDE; right: the same frame with
    EXCLUDE NO OTHERS."""
    def draw() -> Pair | None:
        e = random_window_expr(s)
        if e is None:
            return None
        frame = e.window.frame
        if frame is None:
            frame = random_frame(s, e.window.order_by)
            candidate = deterministic(replace(e, window=replace(e.window, frame=frame)))
            if candidate is None:
                return None
            e = candidate
        if frame.exclusion not in (None, Exclusion.NO_OTHERS):
            return None
        left = replace(e, window=replace(e.window, frame=replace(frame, exclusion=None)))
        right = replace(e, window=replace(e.window, frame=replace(frame, exclusion=Exclusion.NO_OTHERS)))
        return left, right, scale_of(s, left)

    return collect(s, draw, same_table(s, "exclude-no-others", s.where))


# -- first_value = nth_value(x, 1) ------------------------------------------------------------


def _total_window(s: Subject) -> WindowSpec | None:
    """A window with a total order: one of the case's, or a fresh one."""
    e = random_window_expr(s)
    if e is None or has_range_offsets(e.window.frame):
        return None
    return replace(e.window, order_by=total(e.window.order_by))


def first_value_nth_value(s: Subject) -> Check | None:
    """Left: first_value(x) [nulls] OVER w; right: nth_value(x, 1) [nulls] OVER w
    (or last_value and nth_value(x, 1) FROM LAST), w with a total order."""
    def draw() -> Pair | None:
        window, column = _total_window(s), pick_column(s, lambda t: True, values_only=False)
        if window is None or column is None:
            return None
        nulls = s.rng.choice((None, None, *NullTreatment))
        last = s.rng.random() < 0.3
        value = FuncCall("last_value" if last else "first_value", (Column(column.name),), null_treatment=nulls)
        nth = FuncCall("nth_value", (Column(column.name), integer(1)), null_treatment=nulls,
                       from_last=True if last else None)
        return WindowExpr(value, window), WindowExpr(nth, window), FloatScale()

    return collect(s, draw, same_table(s, "first-value-nth-value", s.where))


def value_at_current_row(s: Subject) -> Check | None:
    """Left: last_value(x) OVER (P ORDER BY <total> <mode> BETWEEN s AND CURRENT
    ROW), or first_value(x) over BETWEEN CURRENT ROW AND e; right: x."""
    def draw() -> Pair | None:
        window, column = _total_window(s), pick_column(s, lambda t: True, values_only=False)
        if window is None or column is None:
            return None
        last = s.rng.random() < 0.5
        mode = s.rng.choice(list(FrameMode))
        offsets = mode is not FrameMode.RANGE or len(window.order_by) == 1
        first, end = (bound_kinds(s.rng, offsets, end=BoundKind.CURRENT_ROW) if last
                      else bound_kinds(s.rng, offsets, start=BoundKind.CURRENT_ROW))
        make = lambda k: Bound(k, integer(s.rng.randint(0, 3))) if k in WITH_OFFSET else Bound(k)  # noqa: E731
        exclusion = s.rng.choice((None, None, Exclusion.NO_OTHERS, Exclusion.TIES))
        frame = Frame(mode, make(first), make(end), exclusion)
        call = FuncCall("last_value" if last else "first_value", (Column(column.name),),
                        null_treatment=s.rng.choice((None, NullTreatment.RESPECT)))
        return WindowExpr(call, replace(window, frame=frame)), Column(column.name), FloatScale()

    return collect(s, draw, same_table(s, "value-at-current-row", s.where))
