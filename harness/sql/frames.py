"""Rules about the order of a frame's two bounds, shared by parser and writer.

Two kinds of "backwards" frame differ. By bound kind (`ROWS BETWEEN CURRENT ROW
AND 1 PRECEDING`) the standard makes it a syntax error, so the model is invalid.
By offset within one kind (`ROWS BETWEEN 1 PRECEDING AND 2 PRECEDING`) it is
valid and the frame is empty; some engines reject it, hence a Feature.
"""

from __future__ import annotations

from decimal import Decimal

from harness.model import Bound, BoundKind, Frame, Interval, IntervalUnit, Literal

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


def _size(bound: Bound) -> tuple[str, int | float | Decimal] | None:
    """An offset's magnitude with its scale, for comparison; None if not comparable."""
    offset = bound.offset
    if isinstance(offset, Literal) and isinstance(offset.value, (int, float, Decimal)):
        return "number", offset.value
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
