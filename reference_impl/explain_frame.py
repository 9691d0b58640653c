"""The frame steps of a cell's derivation (`explain.py`): the bounds of one
row's frame with their arithmetic, and what EXCLUDE takes out.

Positions in the sentences are 1-based; the extent handed in is `frames.frame_extent`'s
(0-based, half-open), so the sentences explain the bounds the reference found.
"""

from __future__ import annotations

from harness.core.model import BoundKind, Exclusion, FrameMode
from reference_impl.explain_steps import FrameStep, RemovedStep, show
from reference_impl.frames import FrameBound, FrameDef, range_bound_value
from reference_impl.ordering import SortedPartition

P, F = BoundKind.PRECEDING, BoundKind.FOLLOWING


def frame_clause(frame: FrameDef) -> str:
    def bound(b: FrameBound) -> str:
        return f"{show(b.offset)} {b.kind.value}" if b.kind in (P, F) else b.kind.value

    text = f"{frame.mode.value} BETWEEN {bound(frame.start)} AND {bound(frame.end)}"
    return text + (f" EXCLUDE {frame.exclusion.value}" if frame.exclusion is not None else "")


def frame_step(frame: FrameDef, written: object, part: SortedPartition, i: int,
               extent: tuple[int, int], spell: object = None) -> FrameStep:
    start, end = extent
    clause = frame_clause(frame)
    if written is None:
        clause = f"the default frame, {clause}"
    arithmetic = (_bound_text(frame, frame.start, part, i, start, True),
                  _bound_text(frame, frame.end, part, i, end, False))
    span = f"positions {start + 1}..{end}" if start < end else "empty (its start lies after its end)"
    text = f"The frame, {clause}: {arithmetic[0]}; {arithmetic[1]}. The frame is {span}."
    return FrameStep(kind="frame", text=text, mode=frame.mode.value, start=start + 1, end=end,
                     arithmetic=arithmetic)


def _bound_text(frame: FrameDef, b: FrameBound, part: SortedPartition, i: int, at: int,
                is_start: bool) -> str:
    edge = f"position {at + 1}" if is_start else f"position {at}"
    side = "starts" if is_start else "ends"
    if b.kind is BoundKind.UNBOUNDED_PRECEDING:
        return f"it {side} at the partition's first row, position 1"
    if b.kind is BoundKind.UNBOUNDED_FOLLOWING:
        return f"it {side} at the partition's last row, position {part.size}"
    if b.kind is BoundKind.CURRENT_ROW:
        if frame.mode is FrameMode.ROWS:
            return f"it {side} at the current row, position {i + 1}"
        return f"it {side} at the current row's peer group's {'first' if is_start else 'last'} row, {edge}"
    if frame.mode is FrameMode.ROWS:
        return _rows_text(b, i, side, edge, part.size)
    if frame.mode is FrameMode.GROUPS:
        return _groups_text(b, part, i, side, edge, is_start)
    return _range_text(frame, b, part, i, side, edge, is_start)


def _rows_text(b: FrameBound, i: int, side: str, edge: str, size: int) -> str:
    sign = "-" if b.kind is P else "+"
    counted = i + 1 + (-1 if b.kind is P else 1) * b.offset  # type: ignore[operator]
    clamp = "" if 1 <= counted <= size else f", beyond the partition (1..{size}), so {edge}"
    return f"it {side} {b.offset} rows {b.kind.value.lower()}: position {i + 1} {sign} {b.offset} = {counted}{clamp}"


def _groups_text(b: FrameBound, part: SortedPartition, i: int, side: str, edge: str, is_start: bool) -> str:
    g = part.group_of[i] + 1
    sign = "-" if b.kind is P else "+"
    target = g + (-1 if b.kind is P else 1) * b.offset  # type: ignore[operator]
    which = "first" if is_start else "last"
    inside = 1 <= target <= len(part.groups)
    where = f"its {which} row is {edge}" if inside else f"beyond the {len(part.groups)} groups, so {edge}"
    return (f"it {side} {b.offset} peer groups {b.kind.value.lower()}: the current row is in group {g}, "
            f"{g} {sign} {b.offset} = group {target}; {where}")


def _range_text(frame: FrameDef, b: FrameBound, part: SortedPartition, i: int, side: str, edge: str,
                is_start: bool) -> str:
    key = part.keys[i][0]
    if key is None:
        return f"the current key is NULL, and NULL {'-' if b.kind is P else '+'} {show(b.offset)} is NULL: " \
               f"the bound is the NULL peer group, {edge}"
    target = range_bound_value(frame, b, key)
    descending = frame.key_spec is not None and frame.key_spec.descending
    sign = "-" if (b.kind is P) != descending else "+"
    arithmetic = f"key {sign} {show(b.offset)} = {show(key)} {sign} {show(b.offset)} = {show(target)}"
    if is_start:
        rule = f"the first row whose key is not {'above' if descending else 'below'} {show(target)}"
    else:
        rule = f"the last row whose key is not {'below' if descending else 'above'} {show(target)}"
    return f"it {side} at {arithmetic}, at {rule}: {edge}"


def exclude_step(exclusion: Exclusion, extent: tuple[int, int], kept: list[int],
                 inputs: list[int]) -> RemovedStep:
    removed = [p for p in range(*extent) if p not in kept]
    what = {Exclusion.CURRENT_ROW: "the current row", Exclusion.GROUP: "the current row and its peers",
            Exclusion.TIES: "the current row's peers but the row itself",
            Exclusion.NO_OTHERS: "nothing"}[exclusion]
    rows = [inputs[p] for p in removed]
    listed = ", ".join(str(p + 1) for p in removed) or "none"
    text = f"EXCLUDE {exclusion.value} removes {what}: positions {listed}" + (
        f" (input rows {', '.join(map(str, rows))})." if rows else ".")
    return RemovedStep(kind="exclude", text=text, positions=tuple(p + 1 for p in removed), rows=tuple(rows))
