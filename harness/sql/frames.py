"""Rules about the order of a frame's two bounds, shared by parser and writer.

Two kinds of "backwards" frame differ. By bound kind (`ROWS BETWEEN CURRENT ROW
AND 1 PRECEDING`) the standard makes it a syntax error, so the model is invalid.
By offset within one kind (`ROWS BETWEEN 1 PRECEDING AND 2 PRECEDING`) it is
valid and the frame is empty; some engines reject it, hence a Feature.
"""

from __future__ import annotations

from decimal import Decimal

from harness.core.errors import HarnessError
from harness.core.functions import FunctionKind, lookup
from harness.core.model import (
    SUBQUERY_EXPRS,
    Bound,
    BoundKind,
    Column,
    Expr,
    Frame,
    FuncCall,
    Interval,
    IntervalUnit,
    Literal,
    Star,
    WindowExpr,
    walk,
)
from reference_impl.expressions import constant_value  # the one evaluator of constants

# Bound kinds in frame order.
_RANK = {kind: i for i, kind in enumerate(BoundKind)}

# An interval as (months, seconds): the two parts cannot be compared with each other.
_MONTHS = {IntervalUnit.YEAR: 12, IntervalUnit.MONTH: 1}
_SECONDS = {IntervalUnit.DAY: 86400, IntervalUnit.HOUR: 3600, IntervalUnit.MINUTE: 60,
            IntervalUnit.SECOND: 1}


def kind_order_problem(start: BoundKind, end: BoundKind) -> str | None:
    """Why a frame from `start` to `end` is not valid SQL, or None if it is."""
    backwards = _RANK[start] > _RANK[end]
    if backwards or start is BoundKind.UNBOUNDED_FOLLOWING or end is BoundKind.UNBOUNDED_PRECEDING:
        return f"a frame cannot run from {start.value} to {end.value}"
    return None


def offset_problem(offset: Expr) -> str | None:
    """Why `offset` cannot be a frame offset, or None: it must be a constant
    expression (no column, subquery, aggregate or window function), and a bare
    literal must be a number."""
    if isinstance(offset, Literal):
        numeric = offset.type is not None and offset.type.is_numeric
        return None if numeric else "a frame offset must be a number or an INTERVAL"
    for node in walk(offset):
        if isinstance(node, (Column, Star, *SUBQUERY_EXPRS)):
            return "a frame offset must be a constant expression (no column or subquery)"
        if isinstance(node, WindowExpr) or (
                isinstance(node, FuncCall) and lookup(node.name).kind is not FunctionKind.SCALAR):
            return "a frame offset must be a constant expression (no aggregate or window function)"
    return None


def offset_value(offset: Expr | None) -> object:
    """The value of a constant frame offset (an Interval for intervals), or None
    when it has none or it cannot be evaluated here (the reference then says why)."""
    if offset is None or isinstance(offset, Literal):
        return None if offset is None else offset.value
    if isinstance(offset, Interval):
        return offset
    try:
        return constant_value(offset)
    except (HarnessError, ArithmeticError):
        return None


def _size(bound: Bound) -> tuple[str, int | float | Decimal] | None:
    """An offset's magnitude with its scale, for comparison; None if not comparable."""
    offset = offset_value(bound.offset)
    if isinstance(offset, (int, float, Decimal)) and not isinstance(offset, bool):
        return "number", offset
    if isinstance(offset, Interval):
        if offset.unit in _MONTHS:
            return "months", offset.count * _MONTHS[offset.unit]
        return "seconds", offset.count * _SECONDS[offset.unit]
    return None


def starts_after_end(frame: Frame) -> bool:
    """Does the frame start after it ends, by its offsets (so it is always empty)?

    Offsets of different scales (months against days) are not comparable and
    count as not backwards.
    """
    kinds = (frame.start.kind, frame.end.kind)
    if kinds not in ((BoundKind.PRECEDING,) * 2, (BoundKind.FOLLOWING,) * 2):
        return False
    start, end = _size(frame.start), _size(frame.end)
    if start is None or end is None or start[0] != end[0]:
        return False
    # n PRECEDING lies before m PRECEDING when n > m; FOLLOWING runs the other way.
    if kinds[0] is BoundKind.PRECEDING:
        return start[1] < end[1]
    return start[1] > end[1]
