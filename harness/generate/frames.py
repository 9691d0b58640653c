"""Window frames: every mode, bound kind and exclusion, with typed offsets.

ROWS and GROUPS offsets count rows or peer groups: 0, small, or larger than
any generated partition. RANGE offsets have the type of the window's one
ORDER BY key: an integer, a decimal of the key's scale, a float, or an
interval for dates and timestamps. Bound kinds always come in the standard's
order; two offsets of one kind may still make a frame that starts after it
ends (an empty frame) when `Swarm.EMPTY_FRAMES` is on, and never when it is
off (some engines reject such frames).
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Context as DecimalContext
from decimal import Decimal

from harness.core.model import (
    BinaryOp,
    BinaryOperator,
    Bound,
    BoundKind,
    Exclusion,
    Expr,
    Frame,
    FrameMode,
    Interval,
    IntervalUnit,
    Literal,
    SortKey,
)
from harness.core.types import INT64, SqlType, TypeKind
from harness.generate.calls import extreme_count
from harness.generate.context import Context, integer, is_range_key
from harness.generate.draws import chance, weighted
from harness.generate.swarm import Swarm
from harness.sql.frames import starts_after_end

_START_KINDS = (BoundKind.UNBOUNDED_PRECEDING, BoundKind.CURRENT_ROW, BoundKind.PRECEDING,
                BoundKind.FOLLOWING)
_END_KINDS = (BoundKind.CURRENT_ROW, BoundKind.UNBOUNDED_FOLLOWING, BoundKind.FOLLOWING,
              BoundKind.PRECEDING)
_RANK = {kind: i for i, kind in enumerate(BoundKind)}
_OFFSET_KINDS = (BoundKind.PRECEDING, BoundKind.FOLLOWING)


def random_frame(ctx: Context, order_by: tuple[SortKey, ...]) -> Frame:
    """A frame that is valid over these ORDER BY keys: ROWS, RANGE, or GROUPS
    (with keys); offsets unless RANGE lacks exactly one key of a type an
    offset can move; an EXCLUDE sometimes.
    Simpler means ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW."""
    rng = ctx.rng
    key_type = range_key_type(ctx, order_by)
    # RANGE twice as often when its offsets can be written (the rarest frames).
    range_weight = 2 if key_type is not None and Swarm.RANGE_OFFSETS in ctx.on else 1
    groups_weight = 1 if order_by and Swarm.GROUPS in ctx.on else 0
    modes = ((FrameMode.ROWS, 1), (FrameMode.RANGE, range_weight), (FrameMode.GROUPS, groups_weight))
    mode = weighted(rng, modes)
    key_type = key_type if mode is FrameMode.RANGE else None
    offsets = Swarm.OFFSETS in ctx.on and (
        mode is not FrameMode.RANGE or (key_type is not None and Swarm.RANGE_OFFSETS in ctx.on))
    allowed = [k for k in BoundKind if offsets or k not in _OFFSET_KINDS]
    start = rng.choice([k for k in _START_KINDS if k in allowed])
    end = rng.choice([k for k in _END_KINDS if k in allowed and _RANK[k] >= _RANK[start]])
    frame = Frame(mode, _bound(ctx, start, key_type), _bound(ctx, end, key_type))
    frame = _order_offsets(ctx, frame)
    if ctx.flag(Swarm.EXCLUSION, 0.4):
        frame = replace(frame, exclusion=rng.choice(list(Exclusion)))
    return frame


def range_key_type(ctx: Context, order_by: tuple[SortKey, ...]) -> SqlType | None:
    """The type of the single ORDER BY key a RANGE offset needs, or None."""
    if len(order_by) != 1:
        return None
    t = ctx.scope.type_of(order_by[0].expr)
    return t if t is not None and is_range_key(t) else None


def _order_offsets(ctx: Context, frame: Frame) -> Frame:
    """Two offsets of one kind: an empty frame (start after end) sometimes when
    the swarm allows it, never when it does not."""
    if frame.start.kind is not frame.end.kind or frame.start.kind not in _OFFSET_KINDS:
        return frame
    backwards = starts_after_end(frame)
    swapped = replace(frame, start=replace(frame.start, offset=frame.end.offset),
                      end=replace(frame.end, offset=frame.start.offset))
    want_empty = ctx.flag(Swarm.EMPTY_FRAMES, 0.15)  # Spark and DataFusion refuse the whole query
    if backwards != want_empty and starts_after_end(swapped) == want_empty:
        return swapped
    return frame


def _bound(ctx: Context, kind: BoundKind, key_type: SqlType | None) -> Bound:
    if kind not in _OFFSET_KINDS:
        return Bound(kind)
    if key_type is None:  # ROWS and GROUPS count rows or peer groups
        return Bound(kind, _spelled(ctx, count_offset(ctx)))
    return Bound(kind, _spelled(ctx, range_offset(ctx, key_type)))


def _spelled(ctx: Context, offset: Expr) -> Expr:
    """Sometimes the same offset written otherwise: an integer n as a + (n - a) or
    as CAST(n AS BIGINT), an interval as INTERVAL '1' UNIT * n. Simpler means as drawn."""
    if not ctx.flag(Swarm.OFFSET_EXPRESSIONS, 0.3):
        return offset
    if isinstance(offset, Interval):
        return BinaryOp(BinaryOperator.MUL, Interval(1, offset.unit), integer(offset.count))
    if not (isinstance(offset, Literal) and type(offset.value) is int):
        return offset
    n = offset.value
    if chance(ctx.rng, 0.3):
        return Literal(n, INT64)  # a typed literal, not the type a bare n is read as
    a = ctx.rng.randint(0, n)
    # Past the largest INTEGER (Swarm.EXTREME_OFFSETS) two INTEGER literals would
    # overflow in their own type: the first is then a BIGINT, so the sum is one.
    first = Literal(a, INT64) if n > 2**31 - 1 else integer(a)
    return BinaryOp(BinaryOperator.ADD, first, integer(n - a))


def count_offset(ctx: Context) -> Literal:
    """A ROWS/GROUPS offset: 0, small, or larger than every generated partition;
    near 2^31 or 2^63 sometimes when the swarm allows. Simpler means 0."""
    if ctx.flag(Swarm.EXTREME_OFFSETS, 0.15):
        return extreme_count(ctx)
    return integer(weighted(ctx.rng, ((0, 3), (1, 4), (2, 3), (3, 2), (5, 1), (100, 1))))


def _extreme_range_offset(ctx: Context, t: SqlType) -> Literal:
    """A RANGE offset over an integer key near the key type's largest value, or
    2^63 - 1: key +- offset then lies outside the key's type (and BIGINT's), which
    the frame only compares with, never stores."""
    top = {TypeKind.INT8: 2**7 - 1, TypeKind.INT16: 2**15 - 1, TypeKind.INT32: 2**31 - 1}
    largest = top.get(t.kind, 2**63 - 1)
    return integer(ctx.rng.choice((largest, largest - 1, 2**63 - 1)))


def range_offset(ctx: Context, t: SqlType) -> Expr:
    """A finite, non-negative RANGE offset for a key of type `t`. Simpler means 0."""
    if t.is_integer and t.kind is not TypeKind.INT128 and ctx.flag(Swarm.EXTREME_OFFSETS, 0.15):
        return _extreme_range_offset(ctx, t)
    if t.is_integer:
        return integer(weighted(ctx.rng, ((0, 2), (1, 4), (2, 3), (3, 2), (5, 1), (10, 1), (100, 1))))
    if t.kind is TypeKind.DECIMAL:
        return _decimal_offset(ctx, t)
    if t.is_float:
        # No infinite offsets: key +- inf is NaN for an infinite key, the standard
        # does not say which rows that takes, and the reference declines them.
        return Literal(ctx.rng.choice((0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 10.0, 1000.0)), t)
    return _interval_offset(ctx, t)


def _decimal_offset(ctx: Context, t: SqlType) -> Literal:
    """A decimal of the key's type: hundredths up to 10, cut to its scale and precision."""
    assert t.precision is not None and t.scale is not None
    hundredths = ctx.rng.choice((0, 1, 25, 50, 100, 150, 300, 1000))
    # In units of the key's last digit, so no Decimal context rounds it.
    units = hundredths * 10**t.scale // 100
    return Literal(Decimal(min(units, 10**t.precision - 1)).scaleb(-t.scale, _EXACT), t)


_EXACT = DecimalContext(prec=80)
_DATE_UNITS = (IntervalUnit.DAY, IntervalUnit.DAY, IntervalUnit.DAY, IntervalUnit.MONTH,
               IntervalUnit.YEAR)
_TIMESTAMP_UNITS = (IntervalUnit.DAY, IntervalUnit.HOUR, IntervalUnit.MINUTE, IntervalUnit.SECOND,
                    IntervalUnit.MONTH)
# Over a day-time interval key: day-time units only (a month is not comparable
# with a day-time interval).
_INTERVAL_UNITS = (IntervalUnit.DAY, IntervalUnit.HOUR, IntervalUnit.HOUR, IntervalUnit.MINUTE,
                   IntervalUnit.SECOND)
_UNITS = {TypeKind.DATE: _DATE_UNITS, TypeKind.TIMESTAMP: _TIMESTAMP_UNITS, TypeKind.INTERVAL: _INTERVAL_UNITS}


def _interval_offset(ctx: Context, t: SqlType) -> Interval:
    """INTERVAL 'n' UNIT: days (mostly), months or years for a date; day-time
    units (and months) for a timestamp; day-time units for an interval."""
    units = _UNITS[t.kind]
    return Interval(ctx.rng.choice((0, 1, 1, 2, 3, 7, 30)), ctx.rng.choice(units))
