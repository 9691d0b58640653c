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

import datetime as dt
import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import partial

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
    IntervalUnit,
    Literal,
)
from harness.core.types import SqlType
from reference_impl.expressions import constant_value
from reference_impl.intervals import add_interval, day_time
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
    if key_type is not None and key_type.kind is T.INTERVAL.kind:
        return _interval_key_offset(value, key_type)
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


def _interval_key_offset(value: object, key_type: SqlType) -> dt.timedelta:
    """A RANGE offset over a day-time interval key: a day-time interval (the key
    plus or minus it must be defined, and a year-month interval is not
    comparable with a day-time one: <interval value expression>), not negative."""
    if not isinstance(value, Interval):
        raise EvaluationError(f"a RANGE offset over {key_type} must be an interval")
    if value.unit in (IntervalUnit.YEAR, IntervalUnit.MONTH):
        raise EvaluationError(f"a RANGE offset of {value.unit.value}s over a day-time {key_type} key")
    if value.count < 0:
        raise OffsetOutOfRange(f"a RANGE frame offset must not be negative: {value}")
    return day_time(value)  # type: ignore[return-value]


# ---------------------------------------------------------------------------
# The frame of one row


def frame_positions(frame: FrameDef, part: SortedPartition, i: int) -> list[int]:
    """The positions in the frame of the row at position i, in window order."""
    start = _START[frame.mode](frame, frame.start, part, i)
    end = _END[frame.mode](frame, frame.end, part, i)
    return _exclude(frame.exclusion, range(start, max(start, end)), part, i)


# Fast path: the window operator wants the frame of every row of a partition,
# and `frame_positions` finds each through several calls and lists each of
# its positions, so that frames spanning the partition or a large part of it
# cost the square of its size. Here the bounds that do not depend on the row
# (UNBOUNDED) are filled in at once, the others come from the same per-row
# functions, and each frame is given as runs of consecutive positions: the
# extent, less the excluded rows (the current row, or its peers but perhaps
# the current row), is at most three runs. tests/test_reference_speed.py
# checks that the runs hold exactly the positions of `frame_positions`.

Run = tuple[int, int]  # the positions start..end-1, start < end
Runs = tuple[Run, ...]  # in window order


class PartitionRuns(Sequence[Runs]):
    """The frame of each position of a partition, as runs (`partition_runs`).

    `extents`: where no row is excluded, each frame is its extent, and these
    are the starts and ends of all of them (an end never before its start),
    which the window operator's fast paths read without making a tuple per row.
    """

    def __init__(self, starts: list[int], ends: list[int], excluded: list[Runs] | None) -> None:
        self.extents = None if excluded is not None else (starts, ends)
        self._excluded = excluded
        self._starts, self._ends = starts, ends

    def __len__(self) -> int:
        return len(self._starts)

    def __getitem__(self, i: int) -> Runs:  # type: ignore[override]
        if self._excluded is not None:
            return self._excluded[i]
        start, end = self._starts[i], self._ends[i]
        return ((start, end),) if start < end else ()


def partition_runs(frame: FrameDef, part: SortedPartition) -> PartitionRuns:
    """The positions of `frame_positions(frame, part, i)` as runs, for each
    position i of the partition: two ints per run, whatever the frame's size."""
    starts = _bounds(frame, frame.start, part, end=False)
    ends = list(map(max, starts, _bounds(frame, frame.end, part, end=True)))  # a frame whose start lies after its end is empty
    if frame.exclusion in (None, Exclusion.NO_OTHERS):
        return PartitionRuns(starts, ends, None)
    excluded = [
        _runs_excluding(frame.exclusion, start, end, part, i)
        for i, (start, end) in enumerate(zip(starts, ends, strict=True))
    ]
    return PartitionRuns(starts, ends, excluded)


def _runs_excluding(exclusion: Exclusion, start: int, end: int, part: SortedPartition, i: int) -> Runs:
    """The extent start..end-1 less what `_exclude` takes out, as runs."""
    if exclusion is Exclusion.CURRENT_ROW:
        kept = ((start, min(end, i)), (max(start, i + 1), end))
    else:
        peer_start, peer_end = part.peer_start(i), part.peer_end(i)
        before, after = (start, min(end, peer_start)), (max(start, peer_end), end)
        # EXCLUDE TIES takes out the peers but the current row, which lies between.
        current = (max(start, i), min(end, i + 1))
        kept = (before, after) if exclusion is Exclusion.GROUP else (before, current, after)
    return tuple(run for run in kept if run[0] < run[1])


def run_positions(runs: Runs) -> list[int]:
    """The positions the runs hold, in window order."""
    return [p for start, end in runs for p in range(start, end)]


def _bounds(frame: FrameDef, b: FrameBound, part: SortedPartition, end: bool) -> list[int]:
    """Where each row's frame starts (or ends, one past its last position):
    what `_START` (or `_END`) finds, with the loop over rows made once for
    ROWS and GROUPS bounds and CURRENT ROW (the peer group's ends)."""
    n = part.size
    if b.kind is BoundKind.UNBOUNDED_PRECEDING:
        return [0] * n
    if b.kind is BoundKind.UNBOUNDED_FOLLOWING:
        return [n] * n
    if frame.mode is FrameMode.RANGE and b.kind is not BoundKind.CURRENT_ROW:
        fast = _integer_range_bounds(frame, b, part, end)
        if fast is not None:
            return fast
        return [_range_edge(frame, part, _range_target(frame, b, key[0]), end) for key in part.keys]
    # Rows (or peer groups) away from the current one: an int, as RANGE CURRENT ROW's 0.
    shift: int = 0 if b.kind is BoundKind.CURRENT_ROW else b.offset if b.kind is F else -b.offset  # type: ignore[assignment, operator]
    if frame.mode is FrameMode.ROWS:  # the row `shift` rows away, or the partition's edge
        past = int(end)
        return [min(n, max(0, i + shift + past)) for i in range(n)]
    # GROUPS, and RANGE CURRENT ROW: the group `shift` groups away, or the
    # partition's edge; found per peer group.
    groups, side, last = part.groups, int(end), len(part.groups) - 1
    per_group = [
        groups[g + shift][side] if 0 <= g + shift <= last else (0 if g + shift < 0 else n)
        for g in range(len(groups))
    ]
    return list(map(per_group.__getitem__, part.group_of))


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
    if isinstance(b.offset, dt.timedelta):  # over an interval key
        try:
            return value + sign * b.offset  # type: ignore[operator]
        except OverflowError:  # past timedelta's range, which holds every key
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


def _integer_range_bounds(
    frame: FrameDef, b: FrameBound, part: SortedPartition, after: bool
) -> list[int] | None:
    """`_range_edge_by_collation` for every row at once, where the ORDER BY
    key's values are ints and the offset one: each row's target is then its
    key plus or minus the offset (`_range_target`), whose collation key is
    (1, 0, target) (`order_key`), or NULL's; None elsewhere."""
    spec = frame.key_spec
    assert spec is not None
    column = part.first_key_collation(spec.descending)
    if column is None or type(b.offset) is not int or column[1] not in (None, "number"):
        return None
    keys = [key[0] for key in part.keys]
    if not all(type(k) is int for k in keys if k is not None):
        return None
    shift = b.offset if (b.kind is F) != spec.descending else -b.offset
    null = null_collation(spec)
    targets = [null if k is None else (1, 0, k + shift) for k in keys]
    if not spec.descending:
        return list(map(partial(bisect_right if after else bisect_left, column[0]), targets))
    edges = map(partial(bisect_left if after else bisect_right, column[0]), targets)
    return [part.size - edge for edge in edges]


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


# ---------------------------------------------------------------------------
# For `explain` (reference_impl/explain.py): the parts of one row's frame


def frame_extent(frame: FrameDef, part: SortedPartition, i: int) -> tuple[int, int]:
    """Where the frame of the row at position i starts and ends (one past its
    last position) before EXCLUDE: what `frame_positions` takes its rows from."""
    start = _START[frame.mode](frame, frame.start, part, i)
    return start, max(start, _END[frame.mode](frame, frame.end, part, i))


def range_bound_value(frame: FrameDef, bound: FrameBound, key: object) -> object:
    """The value a RANGE offset bound compares the keys with: the current row's
    key moved by the offset in the sort direction (None for a NULL key)."""
    target = _range_target(frame, bound, key)
    return None if isinstance(target, _Beyond) else target
