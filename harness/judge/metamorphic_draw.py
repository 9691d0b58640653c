"""Drawing the parts of a metamorphic check from a subject: a table with a
unique `id`, the case's own window expressions over it, and a seeded random
stream, so that the same seed always draws the same check.

The window expressions drawn are deterministic (`deterministic`: a total
window order, ending in `id`), so a tie can never cause a false violation;
sums whose order could overflow are not drawn (`_sums_safely`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal
from random import Random

import pyarrow as pa

from harness.cases.case import Case
from harness.core import types as T
from harness.core.dialect import Dialect
from harness.core.functions import FUNCTIONS, FunctionKind, FunctionSpec, is_order_sensitive
from harness.core.model import (
    BinaryOp,
    BinaryOperator,
    Bound,
    BoundKind,
    Column,
    ColumnDef,
    Exclusion,
    Expr,
    Frame,
    FrameMode,
    FuncCall,
    IsNull,
    Literal,
    NullsOrder,
    NullTreatment,
    Select,
    SortKey,
    Star,
    TableRef,
    TableSchema,
    WindowExpr,
    WindowSpec,
    resolve_window,
)
from harness.core.types import SqlType, TypeKind
from harness.judge.metamorphic_check import ID
from harness.sql.literals import natural_integer_type

ASC_LAST = NullsOrder.LAST
# Sums whose |terms| add up past these may overflow in one order and not in
# another, so they are not drawn (integers: 64 bits; floats: squares too).
_INT_LIMIT = 2**62
_FLOAT_LIMIT = 1e150


# -- the subject ---------------------------------------------------------------------


@dataclass(frozen=True)
class Subject:
    """What a relation draws from: one table with a unique `id`, the case's
    (deterministic) window expressions and WHERE over it, the dialect the
    queries must render in, and the random stream."""

    case: Case
    schema: TableSchema
    table: pa.Table
    dialect: Dialect
    rng: Random
    base: tuple[WindowExpr, ...] = ()
    where: Expr | None = None


def subject_of(case: Case, rng: Random, dialect: Dialect) -> Subject | None:
    """The table the case's query reads (else the first) if it has a unique `id`."""
    source = case.query.source if isinstance(case.query, Select) else None
    names = [source.name] if isinstance(source, TableRef) else []
    for schema in sorted(case.schemas, key=lambda s: s.name not in names):
        table = case.tables.get(schema.name)
        if table is not None and _has_unique_id(schema, table):
            base, where = _case_windows(case, schema)
            return Subject(case, schema, table, dialect, rng, base, where)
    return None


def _has_unique_id(schema: TableSchema, table: pa.Table) -> bool:
    if ID not in table.column_names or not any(c.name == ID and c.type.is_integer for c in schema.columns):
        return False
    ids = table.column(ID).to_pylist()
    return None not in ids and len(set(ids)) == len(ids)


def _case_windows(case: Case, schema: TableSchema) -> tuple[tuple[WindowExpr, ...], Expr | None]:
    """The case's top-level window expressions, inlined and made deterministic,
    and its WHERE, when the query is a plain scan of this table."""
    q = case.query
    plain = (isinstance(q, Select) and q.source == TableRef(schema.name) and not q.group_by
             and q.having is None and not q.distinct)
    if not plain:
        return (), None
    assert isinstance(q, Select)
    found = []
    for item in q.items:
        if isinstance(item.expr, WindowExpr):
            inlined = replace(item.expr, window=resolve_window(item.expr.window, q.windows))
            made = deterministic(inlined)
            if made is not None:
                found.append(made)
    return tuple(found), q.where


# -- determinism -------------------------------------------------------------------


ID_KEY = SortKey(Column(ID), False, ASC_LAST)


def total(keys: tuple[SortKey, ...]) -> tuple[SortKey, ...]:
    """The keys with `id` appended unless already among them: no two rows tie."""
    return keys if any(k.expr == Column(ID) for k in keys) else (*keys, ID_KEY)


def has_range_offsets(frame: Frame | None) -> bool:
    return frame is not None and frame.mode is FrameMode.RANGE and any(
        b.offset is not None for b in (frame.start, frame.end))


def deterministic(expr: WindowExpr) -> WindowExpr | None:
    """`expr` with a total window order (and a total aggregate ORDER BY), so
    its value cannot depend on how peers are ordered; None where that cannot
    be done (a single-key RANGE offset frame over an order-sensitive function)."""
    call, spec = expr.func, expr.window
    if call.order_by:
        call = replace(call, order_by=total(call.order_by))
    frame_order = FUNCTIONS[call.name].ordered_aggregate and not call.order_by
    sensitive = FUNCTIONS[call.name].order_sensitive or frame_order
    if has_range_offsets(spec.frame):
        return None if sensitive else replace(expr, func=call)
    if spec.order_by or sensitive or is_order_sensitive(call, spec.frame, False):
        spec = replace(spec, order_by=total(spec.order_by))
    return WindowExpr(call, spec)


def is_total(spec: WindowSpec) -> bool:
    return any(k.expr == Column(ID) for k in spec.order_by)


# -- drawing calls and windows ------------------------------------------------------------


def integer(n: int) -> Literal:
    return Literal(n, natural_integer_type(n))


def literal(value: object, t: SqlType) -> Literal:
    return integer(value) if t.is_integer and value is not None else Literal(value, t)  # type: ignore[arg-type]


def column_values(s: Subject, column: str) -> list[object]:
    return [v for v in s.table.column(column).to_pylist() if v is not None]


def pick_column(s: Subject, fits: Callable[[SqlType], bool], values_only: bool = True) -> ColumnDef | None:
    """A column whose type fits; value columns before `id`."""
    found = [c for c in s.schema.columns if fits(c.type)]
    values = [c for c in found if c.name != ID]
    pool = values if values and (values_only or s.rng.random() < 0.9) else found
    return s.rng.choice(pool) if pool else None


def predicate(s: Subject) -> Expr:
    """`c IS [NOT] NULL`, or `c <op> v` with a value v of the table."""
    column = pick_column(s, lambda t: t.kind is not TypeKind.LIST, values_only=False)
    assert column is not None  # `id` at least
    values = column_values(s, column.name)
    # An interval value has no literal (the model writes constants of one unit).
    if not values or s.rng.random() < 0.3 or column.type.kind is TypeKind.INTERVAL:
        return IsNull(Column(column.name), negated=s.rng.random() < 0.5)
    op = s.rng.choice([BinaryOperator.EQ, BinaryOperator.NE, BinaryOperator.LT, BinaryOperator.GE])
    return BinaryOp(op, Column(column.name), literal(s.rng.choice(values), column.type))


def _orderable(t: SqlType) -> bool:
    return t.kind not in (TypeKind.LIST, TypeKind.BOOL)


def _args(s: Subject, name: str) -> tuple[Expr, ...] | None:
    """Arguments of fitting types for `name`, or None when no column fits."""
    any_type = lambda t: t.kind is not TypeKind.LIST  # noqa: E731
    rng = s.rng
    if name in ("row_number", "rank", "dense_rank", "percent_rank", "cume_dist"):
        return ()
    if name == "ntile":
        return (integer(rng.randint(1, 4)),)
    fits = {"sum": _summable, "avg": _summable, "min": _orderable, "max": _orderable,
            "string_agg": lambda t: t.kind is TypeKind.STRING}.get(name, any_type)
    if name.startswith(("var", "stddev")):
        fits = _summable
    if name in ("bool_and", "bool_or"):
        column = pick_column(s, lambda t: t.kind is TypeKind.BOOL)
        return (Column(column.name),) if column and rng.random() < 0.5 else (predicate(s),)
    if name == "count" and rng.random() < 0.3:
        return (Star(),)
    column = pick_column(s, fits, values_only=False)
    if column is None or (fits is _summable and not _sums_safely(s, column)):
        return None
    args: list[Expr] = [Column(column.name)]
    if name == "nth_value":
        args.append(integer(rng.randint(1, 3)))
    elif name == "string_agg":
        args.append(Literal(rng.choice((",", "")), T.STRING))
    elif name in ("lag", "lead") and rng.random() < 0.6:
        args.append(integer(rng.randint(0, 3)))
        values = column_values(s, column.name)
        if values and rng.random() < 0.5 and column.type.kind is not TypeKind.INTERVAL:  # no interval literal
            args.append(literal(rng.choice(values), column.type))
    return tuple(args)


def _summable(t: SqlType) -> bool:
    return t.is_numeric


def _sums_safely(s: Subject, column: ColumnDef) -> bool:
    """Whether any order of summing the column (and its squares) stays in range."""
    linear = sum(abs(float(v)) for v in column_values(s, column.name) if is_finite_number(v))
    t = column.type
    if t.is_integer:
        return linear < _INT_LIMIT
    if t.kind is TypeKind.DECIMAL:
        return linear < 10.0 ** (37 - (t.scale or 0))
    return linear < _FLOAT_LIMIT


def is_finite_number(v: object) -> bool:
    return isinstance(v, (int, float, Decimal)) and not isinstance(v, bool) and math.isfinite(float(v))


# The aggregates issue 16 added (full_grid False: two columns, a constant p,
# WITHIN GROUP) have no argument rule in `_args` yet; the query generator
# (harness.generate.calls) draws them.
_CALLABLE = tuple(s for s in FUNCTIONS.values()
                  if s.kind in (FunctionKind.WINDOW, FunctionKind.AGGREGATE) and s.full_grid)


def random_call(s: Subject, fits: Callable[[FunctionSpec], bool] = lambda spec: True) -> FuncCall | None:
    """A call of a window function or aggregate that `fits`, with the clauses it
    takes (IGNORE/RESPECT NULLS, DISTINCT, FILTER) sometimes."""
    pool = [spec for spec in _CALLABLE if fits(spec)]
    spec = s.rng.choice(pool)
    args = _args(s, spec.name)
    if args is None:
        return None
    call = FuncCall(spec.name, args)
    if spec.ignore_nulls and s.rng.random() < 0.3:
        call = replace(call, null_treatment=s.rng.choice(list(NullTreatment)))
    if spec.kind is FunctionKind.AGGREGATE and args != (Star(),) and s.rng.random() < 0.15:
        call = replace(call, distinct=True)
    if spec.kind is FunctionKind.AGGREGATE and s.rng.random() < 0.15:
        call = replace(call, filter=predicate(s))
    return call


def random_keys(s: Subject, count: int) -> tuple[SortKey, ...]:
    columns = [c for c in s.schema.columns if _orderable(c.type) or c.type.kind is TypeKind.BOOL]
    picked = s.rng.sample(columns, min(count, len(columns)))
    return tuple(SortKey(Column(c.name), s.rng.random() < 0.5, s.rng.choice(list(NullsOrder)))
                 for c in picked)


def random_partition(s: Subject, most: int = 2) -> tuple[Expr, ...]:
    columns = [c for c in s.schema.columns if c.name != ID and c.type.kind is not TypeKind.LIST]
    count = min(len(columns), most, s.rng.choice((0, 1, 1, 2)))
    return tuple(Column(c.name) for c in s.rng.sample(columns, count))


_ORDER = {kind: i for i, kind in enumerate(BoundKind)}
_STARTS = (BoundKind.UNBOUNDED_PRECEDING, BoundKind.PRECEDING, BoundKind.CURRENT_ROW, BoundKind.FOLLOWING)
_ENDS = (BoundKind.PRECEDING, BoundKind.CURRENT_ROW, BoundKind.FOLLOWING, BoundKind.UNBOUNDED_FOLLOWING)
WITH_OFFSET = (BoundKind.PRECEDING, BoundKind.FOLLOWING)  # the kinds that take an offset


def bound_kinds(rng: Random, offsets: bool, start: BoundKind | None = None,
                end: BoundKind | None = None) -> tuple[BoundKind, BoundKind]:
    """A start and end kind in order (start not after end by kind)."""
    ok = [k for k in BoundKind if offsets or k not in WITH_OFFSET]
    first = start or rng.choice([k for k in _STARTS if k in ok and (end is None or _ORDER[k] <= _ORDER[end])])
    last = end or rng.choice([k for k in _ENDS if k in ok and _ORDER[k] >= _ORDER[first]])
    return first, last


def random_frame(s: Subject, order_by: tuple[SortKey, ...]) -> Frame:
    """ROWS/GROUPS with offsets 0-3; RANGE with offsets only over one numeric key."""
    modes = [FrameMode.ROWS, FrameMode.RANGE] + ([FrameMode.GROUPS] if order_by else [])
    mode = s.rng.choice(modes)
    key_type = _single_numeric_key(s, order_by)
    offsets = mode is not FrameMode.RANGE or key_type is not None
    first, last = bound_kinds(s.rng, offsets)

    def bound(kind: BoundKind) -> Bound:
        if kind not in WITH_OFFSET:
            return Bound(kind)
        n = s.rng.randint(0, 3)
        if mode is FrameMode.RANGE and key_type is not None and key_type.is_float:
            return Bound(kind, Literal(n / 2, key_type))
        if mode is FrameMode.RANGE and key_type is not None and key_type.kind is TypeKind.DECIMAL:
            return Bound(kind, Literal(Decimal(n).scaleb(-(key_type.scale or 0)), key_type))
        return Bound(kind, integer(n))

    exclusion = s.rng.choice([None, *Exclusion]) if s.rng.random() < 0.3 else None
    return Frame(mode, bound(first), bound(last), exclusion)


def _single_numeric_key(s: Subject, order_by: tuple[SortKey, ...]) -> SqlType | None:
    if len(order_by) != 1 or not isinstance(order_by[0].expr, Column):
        return None
    t = s.schema.column(order_by[0].expr.name).type
    return t if t.is_numeric else None


def random_window_expr(s: Subject, fits: Callable[[FunctionSpec], bool] = lambda spec: True) -> WindowExpr | None:
    """A deterministic window expression whose function `fits`: one of the
    case's half the time (when one fits), else a fresh one."""
    mine = [e for e in s.base if fits(FUNCTIONS[e.func.name])]
    if mine and s.rng.random() < 0.5:
        return s.rng.choice(mine)
    call = random_call(s, fits)
    if call is None:
        return None
    order_by = random_keys(s, s.rng.choice((0, 1, 1, 2, 3)))
    frame = random_frame(s, order_by) if s.rng.random() < 0.6 else None
    return deterministic(WindowExpr(call, WindowSpec(None, random_partition(s), order_by, frame)))
