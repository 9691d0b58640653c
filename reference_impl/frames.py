"""Window frames by their definitions: ROWS, RANGE, GROUPS, and EXCLUDE.

The standard defines the frame of the current row as the partition, in window
order, minus the rows before the frame start and the rows after the frame
end, minus the excluded rows:

- ROWS counts rows: `n PRECEDING` is the row n positions earlier.
- GROUPS counts peer groups: `n PRECEDING` starts at the first row of the peer
  group n groups earlier.
- RANGE compares the (single) ORDER BY key with the current row's key moved
  by n in the sort direction: `n PRECEDING` removes the rows that sort before
  `key - n` (ASC) or `key + n` (DESC). NULL +- n is NULL, and NULLs sort by
  NULLS FIRST/LAST, so the bound of a NULL row falls at its NULL peer group,
  and a non-NULL row's value range never takes in a NULL row.
- CURRENT ROW as a RANGE or GROUPS bound is the current row's peer group.
- A frame whose start lies after its end is empty.

Positions are 0-based places in the sorted partition; extents are half-open.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal

from harness.core import types as T
from harness.core.errors import EvaluationError, ReferenceGap
from harness.core.model import (
    CURRENT_ROW,
    UNBOUNDED_PRECEDING,
    Bound,
    BoundKind,
    Exclusion,
    Frame,
    FrameMode,
    Interval,
    Literal,
)
from harness.core.types import SqlType
from reference_impl.expressions import constant_value
from reference_impl.intervals import add_interval
from reference_impl.numeric import exact_decimal
from reference_impl.ordering import SortedPartition, SortSpec, compare_value, null_collation
from reference_impl.values import category, order_key

# With ORDER BY, the standard's default frame is RANGE BETWEEN UNBOUNDED
# PRECEDING AND CURRENT ROW; without it every row is a peer of every other,
# so the same frame is the whole partition.
DEFAULT_FRAME = Frame(FrameMode.RANGE, UNBOUNDED_PRECEDING, CURRENT_ROW)

P, F = BoundKind.PRECEDING, BoundKind.FOLLOWING


@dataclass(frozen=True)
class FrameBound:
    kind: BoundKind
    offset: object = None  # int (ROWS, GROUPS); int, Decimal, float or Interval (RANGE)


class OffsetOutOfRange(EvaluationError):
    """A NULL, negative or NaN frame offset: a data exception, raised when a row's
    frame is computed, so a window over no rows does not raise it (as ntile(0))."""


@dataclass(frozen=True)
class FrameDef:
    """A window's frame with its offsets evaluated and checked."""

    mode: FrameMode
    start: FrameBound
    end: FrameBound
    exclusion: Exclusion | None
    key_spec: SortSpec | None = None  # the ORDER BY key of a RANGE frame with offsets


def resolve_frame(
    frame: Frame | None, order_specs: Sequence[SortSpec], key_types: Sequence[SqlType | None]
) -> FrameDef:
    """Check a frame clause against the standard's syntax rules and evaluate its offsets."""
    frame = frame or DEFAULT_FRAME
    _check_bound_order(frame.start.kind, frame.end.kind)
    if frame.mode is FrameMode.GROUPS and not order_specs:
        # A syntax rule: GROUPS counts peer groups, which only an ORDER BY makes.
        raise EvaluationError("a GROUPS frame needs an ORDER BY")
    has_offset = any(b.kind in (P, F) for b in (frame.start, frame.end))
    key_spec = None
    if frame.mode is FrameMode.RANGE and has_offset:
        if len(order_specs) != 1:
            raise EvaluationError("RANGE with an offset needs exactly one ORDER BY key")
        key_spec = order_specs[0]
    key_type = key_types[0] if key_types else None
    start = _resolve_bound(frame.start, frame.mode, key_type)
    end = _resolve_bound(frame.end, frame.mode, key_type)
    return FrameDef(frame.mode, start, end, frame.exclusion, key_spec)


_BOUND_ORDER = tuple(BoundKind)


def _check_bound_order(start: BoundKind, end: BoundKind) -> None:
    # Syntax rules of <window frame extent>: the start may not come after the
    # end in the list UNBOUNDED PRECEDING, PRECEDING, CURRENT ROW, FOLLOWING,
    # UNBOUNDED FOLLOWING (two offsets of one kind may still give an empty frame).
    if start is BoundKind.UNBOUNDED_FOLLOWING or end is BoundKind.UNBOUNDED_PRECEDING:
        raise EvaluationError(f"a frame cannot start at {start.value} or end at {end.value}")
    if _BOUND_ORDER.index(start) > _BOUND_ORDER.index(end):
        raise EvaluationError(f"a frame starting at {start.value} cannot end at {end.value}")


def _resolve_bound(bound: Bound, mode: FrameMode, key_type: SqlType | None) -> FrameBound:
    if bound.kind not in (P, F):
        return FrameBound(bound.kind)
    assert bound.offset is not None
    # A literal's value is what evaluating it gives, without compiling it.
    offset = bound.offset
    value = offset.value if type(offset) is Literal else constant_value(offset)
    if value is None:
        raise OffsetOutOfRange("a frame offset must not be NULL")
    if mode is FrameMode.RANGE:
        return FrameBound(bound.kind, _range_offset(value, key_type))
    return FrameBound(bound.kind, _count_offset(value, mode))


def _count_offset(value: object, mode: FrameMode) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        # The standard wants an exact number of scale 0; engines round or reject others.
        raise ReferenceGap(f"a {mode.value} offset that is not an integer: {value!r}")
    if value < 0:
        raise OffsetOutOfRange(f"a {mode.value} frame offset must not be negative: {value}")
    return value


def _range_offset(value: object, key_type: SqlType | None) -> object:
    if key_type is not None and key_type.kind in (T.DATE.kind, T.TIMESTAMP.kind):
        if not isinstance(value, Interval):
            raise EvaluationError(f"a RANGE offset over {key_type} must be an interval")
        if value.count < 0:
            raise OffsetOutOfRange(f"a RANGE frame offset must not be negative: {value}")
        return value
    if key_type is None or not key_type.is_numeric:
        raise EvaluationError(
            f"RANGE with an offset needs a numeric or datetime key, got {key_type}"
        )
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        raise EvaluationError(f"a RANGE offset over {key_type} must be a number, got {value!r}")
    if (isinstance(value, float) and math.isnan(value)) or value < 0:
        raise OffsetOutOfRange(f"a RANGE frame offset must not be negative or NaN: {value}")
    if isinstance(value, float) and math.isinf(value):
        # key +- inf is NaN for an infinite key; the standard does not say which rows that takes.
        raise ReferenceGap("an infinite RANGE offset")
    return value


# ---------------------------------------------------------------------------
# The frame of one row


def frame_positions(frame: FrameDef, part: SortedPartition, i: int) -> list[int]:
    """The positions in the frame of the row at position i, in window order."""
    start = _START[frame.mode](frame, frame.start, part, i)
    end = _END[frame.mode](frame, frame.end, part, i)
    return _exclude(frame.exclusion, range(start, max(start, end)), part, i)


# Fast path: the window operator wants the frame of every row of a partition,
# and `frame_positions` finds each through several calls. Here the bounds
# that do not depend on the row (UNBOUNDED) are filled in at once, the others
# come from the same per-row functions, and a frame without exclusion is its
# extent. tests/test_reference_speed.py checks it against `frame_positions`.


def partition_frames(frame: FrameDef, part: SortedPartition) -> Iterator[list[int]]:
    """`frame_positions(frame, part, i)` for each position i of the partition,
    in turn (a frame list is made when it is asked for: all of them at once
    would take memory quadratic in the partition's size)."""
    starts = _bounds(frame, frame.start, part, _START[frame.mode])
    ends = _bounds(frame, frame.end, part, _END[frame.mode])
    if frame.exclusion in (None, Exclusion.NO_OTHERS):
        return (list(range(start, end)) for start, end in zip(starts, ends, strict=True))
    return (
        _exclude(frame.exclusion, range(start, max(start, end)), part, i)
        for i, (start, end) in enumerate(zip(starts, ends, strict=True))
    )


def _bounds(frame: FrameDef, b: FrameBound, part: SortedPartition, at: _BoundAt) -> list[int]:
    n = part.size
    if b.kind is BoundKind.UNBOUNDED_PRECEDING:
        return [0] * n
    if b.kind is BoundKind.UNBOUNDED_FOLLOWING:
        return [n] * n
    return [at(frame, b, part, i) for i in range(n)]


def _rows_start(frame: FrameDef, b: FrameBound, part: SortedPartition, i: int) -> int:
    if b.kind is BoundKind.UNBOUNDED_PRECEDING:
        return 0
    if b.kind is BoundKind.CURRENT_ROW:
        return i
    n: int = b.offset  # type: ignore[assignment]
    return max(0, i - n) if b.kind is P else min(part.size, i + n)


def _rows_end(frame: FrameDef, b: FrameBound, part: SortedPartition, i: int) -> int:
    if b.kind is BoundKind.UNBOUNDED_FOLLOWING:
        return part.size
    if b.kind is BoundKind.CURRENT_ROW:
        return i + 1
    n: int = b.offset  # type: ignore[assignment]
    return max(0, i - n + 1) if b.kind is P else min(part.size, i + n + 1)


def _groups_start(frame: FrameDef, b: FrameBound, part: SortedPartition, i: int) -> int:
    g, n = part.group_of[i], b.offset
    if b.kind is BoundKind.UNBOUNDED_PRECEDING:
        return 0
    if b.kind is BoundKind.CURRENT_ROW:
        return part.peer_start(i)
    target = max(0, g - n) if b.kind is P else g + n
    return part.groups[target][0] if target < len(part.groups) else part.size


def _groups_end(frame: FrameDef, b: FrameBound, part: SortedPartition, i: int) -> int:
    g, n = part.group_of[i], b.offset
    if b.kind is BoundKind.UNBOUNDED_FOLLOWING:
        return part.size
    if b.kind is BoundKind.CURRENT_ROW:
        return part.peer_end(i)
    target = g - n if b.kind is P else min(len(part.groups) - 1, g + n)
    return part.groups[target][1] if target >= 0 else 0


def _range_start(frame: FrameDef, b: FrameBound, part: SortedPartition, i: int) -> int:
    if b.kind is BoundKind.UNBOUNDED_PRECEDING:
        return 0
    if b.kind is BoundKind.CURRENT_ROW:
        return part.peer_start(i)
    target = _range_target(frame, b, part.keys[i][0])
    # The first row that does not sort before the target value.
    return _range_edge(frame, part, target, after=False)


def _range_end(frame: FrameDef, b: FrameBound, part: SortedPartition, i: int) -> int:
    if b.kind is BoundKind.UNBOUNDED_FOLLOWING:
        return part.size
    if b.kind is BoundKind.CURRENT_ROW:
        return part.peer_end(i)
    target = _range_target(frame, b, part.keys[i][0])
    # One past the last row that does not sort after the target value.
    return _range_edge(frame, part, target, after=True)


def _range_edge(frame: FrameDef, part: SortedPartition, target: object, after: bool) -> int:
    """The first position whose key sorts after `target` (`after`), or else
    the first whose key does not sort before it."""
    fast = _range_edge_by_collation(frame, part, target, after)
    if fast is not None:
        return fast
    if after:
        return bisect_left(
            range(part.size),
            True,
            key=lambda p: _compare_to(part.keys[p][0], target, frame.key_spec) > 0,
        )
    return bisect_left(
        range(part.size),
        True,
        key=lambda p: _compare_to(part.keys[p][0], target, frame.key_spec) >= 0,
    )


_BoundAt = Callable[[FrameDef, FrameBound, SortedPartition, int], int]
_START: dict[FrameMode, _BoundAt] = {
    FrameMode.ROWS: _rows_start,
    FrameMode.GROUPS: _groups_start,
    FrameMode.RANGE: _range_start,
}
_END: dict[FrameMode, _BoundAt] = {
    FrameMode.ROWS: _rows_end,
    FrameMode.GROUPS: _groups_end,
    FrameMode.RANGE: _range_end,
}


@dataclass(frozen=True)
class _Beyond:
    """A bound value past the end of the datetime range: above (+1) or below (-1) every value."""

    direction: int


def _range_target(frame: FrameDef, b: FrameBound, value: object) -> object:
    """The current key moved by the offset: PRECEDING goes toward the start of
    the sort order, so it subtracts for ASC and adds for DESC."""
    if value is None:
        return None
    assert frame.key_spec is not None
    sign = -1 if b.kind is P else 1
    if frame.key_spec.descending:
        sign = -sign
    if isinstance(b.offset, Interval):
        try:
            return add_interval(value, b.offset, sign)  # type: ignore[arg-type]
        except OverflowError:
            return _Beyond(sign)
    if isinstance(value, float) or isinstance(b.offset, float):
        return float(value) + sign * float(b.offset)  # type: ignore[arg-type]
    if type(value) is int and type(b.offset) is int:
        return value + sign * b.offset  # ints need no decimal context
    with exact_decimal():
        return value + sign * b.offset  # type: ignore[operator]


def _compare_to(key: object, target: object, spec: SortSpec | None) -> int:
    """Where a row's key sorts relative to a bound value (NULLs included)."""
    assert spec is not None
    if not isinstance(target, _Beyond):
        return compare_value(key, target, spec)
    if key is None:
        return -1 if spec.nulls_first else 1
    below = -target.direction  # every value lies below a target beyond the top
    return -below if spec.descending else below


# Fast path for RANGE bounds: each probe of the binary search in `_range_edge`
# runs the full comparison of values; instead, bisect (in C) the partition's
# collation keys of its ORDER BY key (see ordering.py) with the target's.
# tests/test_reference_speed.py checks it against the search.


def _range_edge_by_collation(
    frame: FrameDef, part: SortedPartition, target: object, after: bool
) -> int | None:
    spec = frame.key_spec
    assert spec is not None
    column = part.first_key_collation(spec.descending)
    target_key = None if column is None else _target_collation(target, spec, column[1])
    if column is None or target_key is None:
        return None
    ascending = column[0]
    if not spec.descending:
        return (bisect_right if after else bisect_left)(ascending, target_key)
    # The window order is by descending value: `ascending` is it reversed.
    return part.size - (bisect_left if after else bisect_right)(ascending, target_key)


def _target_collation(target: object, spec: SortSpec, family: str | None) -> tuple | None:
    """The collation key of a bound value; None where the comparison must decide."""
    if target is None:
        return null_collation(spec)
    if isinstance(target, _Beyond):  # above or below every value, between the NULL ranks
        return (1, 2) if target.direction > 0 else (1, -1)
    if family is not None and category(target) != family:
        return None  # the comparison raises
    return order_key(target)


def _exclude(
    exclusion: Exclusion | None, extent: range, part: SortedPartition, i: int
) -> list[int]:
    if exclusion in (None, Exclusion.NO_OTHERS):
        return list(extent)
    peers = range(part.peer_start(i), part.peer_end(i))
    if exclusion is Exclusion.CURRENT_ROW:
        excluded = {i}
    elif exclusion is Exclusion.GROUP:
        excluded = set(peers)
    else:
        assert exclusion is Exclusion.TIES
        excluded = set(peers) - {i}
    return [p for p in extent if p not in excluded]
