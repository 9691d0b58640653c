"""The window functions proper (ranking, offset and value functions), one
function each, keyed by name. Window aggregates live in `aggregates.py`.

Each function takes the call over one sorted partition and a position i
(0-based, in window order) and returns the value for the row at i. The
definitions follow the standard's <window function>:

- row_number: the position, from 1.
- rank: 1 + the number of rows that precede the current row's peer group.
- dense_rank: the number of peer groups up to and including the current one.
- percent_rank: (rank - 1) / (rows in partition - 1), 0 for a single row.
- cume_dist: (rows preceding or peer with the current row) / rows in partition.
- ntile(n): buckets 1..n of sizes differing by at most one, larger first.
- lag/lead: the value k rows before/after in the partition; the default only
  when no such row exists.
- first_value/last_value/nth_value: read the frame (after EXCLUDE).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate

from harness.core.errors import EvaluationError, ReferenceGap
from harness.core.model import FuncCall, NullTreatment
from harness.core.semantics import NthValueBelowOne
from harness.core.types import SqlType
from reference_impl.frames import Runs
from reference_impl.ordering import SortedPartition
from reference_impl.profile import active_profile


@dataclass(frozen=True)
class WindowCall:
    """One window function call over one sorted partition."""

    call: FuncCall
    part: SortedPartition
    args: list[list[object]]  # args[k][p]: argument k evaluated on the row at position p
    frame: Callable[[int], list[int]]  # the frame of the row at a position
    result_type: SqlType | None
    runs: Sequence[Runs] | None = None  # the frame of each position as runs (the fast path)

    @property
    def ignore_nulls(self) -> bool:
        return self.call.null_treatment is NullTreatment.IGNORE

    @cached_property
    def non_null(self) -> tuple[list[int], list[int]]:
        """The positions whose first argument is not NULL, and before[p]: how
        many of them lie before position p."""
        flags = [v is not None for v in self.args[0]]
        positions = [p for p, flag in enumerate(flags) if flag]
        return positions, [0, *accumulate(flags)]


# ---------------------------------------------------------------------------
# Ranking


def row_number(w: WindowCall, i: int) -> int:
    return i + 1


def rank(w: WindowCall, i: int) -> int:
    return w.part.peer_start(i) + 1


def dense_rank(w: WindowCall, i: int) -> int:
    return w.part.group_of[i] + 1


def percent_rank(w: WindowCall, i: int) -> float:
    rows = w.part.size
    return 0.0 if rows == 1 else w.part.peer_start(i) / (rows - 1)


def cume_dist(w: WindowCall, i: int) -> float:
    return w.part.peer_end(i) / w.part.size


def ntile(w: WindowCall, i: int) -> int | None:
    buckets = _positive_count(w.args[0][i], "ntile")
    return None if buckets is None else ntile_bucket(i, w.part.size, buckets)


def ntile_bucket(i: int, rows: int, buckets: int) -> int:
    """The bucket (from 1) of position i (from 0) among `rows` rows."""
    # The first `rows % buckets` buckets hold one row more than the others; with
    # more buckets than rows, every row is a bucket of its own.
    small, extra = divmod(rows, buckets)
    large_rows = extra * (small + 1)
    if i < large_rows:
        return i // (small + 1) + 1
    return extra + (i - large_rows) // small + 1


def ranked_within_frame(name: str, args: list[object], before: int, peers: int, size: int) -> object:
    """A ranking function with an ORDER BY of its own (DuckDB's extension,
    "computed within the frame using the provided ordering instead of the frame
    ordering"), for a row whose frame holds `size` rows, of which `before` come
    before it by the function's keys and `peers` (itself included) tie with it:
    rank = before + 1; percent_rank = before / (size - 1), 0 for one row;
    cume_dist = (before + peers) / size; row_number and ntile place the row at
    position `before` of the frame, which only a row without ties determines."""
    if name == "rank":
        return before + 1
    if name == "percent_rank":
        return 0.0 if size == 1 else before / (size - 1)
    if name == "cume_dist":
        return (before + peers) / size
    if peers > 1:
        raise ReferenceGap(f"{name}() over rows its own ORDER BY leaves tied: their order is not determined")
    if name == "row_number":
        return before + 1
    assert name == "ntile"
    buckets = _positive_count(args[0], "ntile")
    return None if buckets is None else ntile_bucket(before, size, buckets)


def _positive_count(value: object, name: str) -> int | None:
    """An argument that must be a positive integer (NULL gives NULL)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ReferenceGap(f"{name}() with a non-integer argument {value!r}")
    if value < 1:
        raise EvaluationError(f"the argument of {name}() must be greater than zero, got {value}")
    return value


# ---------------------------------------------------------------------------
# Offset functions


def lag(w: WindowCall, i: int) -> object:
    return _offset_value(w, i, direction=-1)


def lead(w: WindowCall, i: int) -> object:
    return _offset_value(w, i, direction=1)


def _offset_value(w: WindowCall, i: int, direction: int) -> object:
    offset = w.args[1][i] if len(w.args) > 1 else 1
    if offset is None:
        return None
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise ReferenceGap(f"{w.call.name}() with a non-integer offset {offset!r}")
    target = _offset_position(w, i, direction * offset)  # a negative offset reverses
    if target is None:
        return w.args[2][i] if len(w.args) > 2 else None
    return w.args[0][target]


def _offset_position(w: WindowCall, i: int, step: int) -> int | None:
    """The position `step` rows away, counting only non-NULL values under IGNORE NULLS."""
    if not w.ignore_nulls or step == 0:
        target = i + step
        return target if 0 <= target < w.part.size else None
    unit, remaining, p = (1 if step > 0 else -1), abs(step), i
    while True:
        p += unit
        if not 0 <= p < w.part.size:
            return None
        if w.args[0][p] is not None:
            remaining -= 1
            if remaining == 0:
                return p


# ---------------------------------------------------------------------------
# Value functions over the frame


def _frame_values(w: WindowCall, i: int) -> list[int]:
    positions = w.frame(i)
    if w.ignore_nulls:
        positions = [p for p in positions if w.args[0][p] is not None]
    return positions


def first_value(w: WindowCall, i: int) -> object:
    positions = _frame_values(w, i)
    return w.args[0][positions[0]] if positions else None


def last_value(w: WindowCall, i: int) -> object:
    positions = _frame_values(w, i)
    return w.args[0][positions[-1]] if positions else None


def nth_value(w: WindowCall, i: int) -> object:
    n, from_last = _nth_row(w.args[1][i]), bool(w.call.from_last)
    if n is None:
        return None
    if n < 0:  # the profile counts -k from the frame's other end
        n, from_last = -n, not from_last
    positions = _frame_values(w, i)
    if from_last:
        positions = positions[::-1]
    return w.args[0][positions[n - 1]] if n <= len(positions) else None


# Fast path: the value functions read one position of the frame, which
# `frame_positions` lists in full (the cost of the frame's size, for each
# row). The frame's runs find the n-th position from either end at once, and
# with IGNORE NULLS the n-th non-NULL one, through the non-NULL positions
# counted before each position. tests/test_reference_frame_speed.py checks them
# against the definitions above.


def _nth_position(w: WindowCall, i: int, n: int, from_last: bool) -> int | None:
    """`_frame_values(w, i)[n - 1]` (of the reversed list, `from_last`), None
    when there are fewer than n; n >= 1."""
    runs = w.runs[i]  # type: ignore[index]
    positions = None
    if w.ignore_nulls:
        # The non-NULL positions in each run, as runs of indexes into them.
        positions, before = w.non_null
        runs = tuple((before[start], before[end]) for start, end in runs)
    for start, end in reversed(runs) if from_last else runs:
        if n <= end - start:
            k = end - n if from_last else start + n - 1
            return k if positions is None else positions[k]
        n -= end - start
    return None


def _value_at(w: WindowCall, p: int | None) -> object:
    return None if p is None else w.args[0][p]


def first_value_by_runs(w: WindowCall, i: int) -> object:
    return _value_at(w, _nth_position(w, i, 1, from_last=False))


def last_value_by_runs(w: WindowCall, i: int) -> object:
    return _value_at(w, _nth_position(w, i, 1, from_last=True))


def nth_value_by_runs(w: WindowCall, i: int) -> object:
    n, from_last = _nth_row(w.args[1][i]), bool(w.call.from_last)
    if n is None:
        return None
    if n < 0:
        n, from_last = -n, not from_last
    return _value_at(w, _nth_position(w, i, n, from_last))


def _nth_row(value: object) -> int | None:
    """nth_value's n, as the profile reads n < 1: the standard's data exception,
    NULL (None), or -k counting from the end (0 is NULL there)."""
    below_one = active_profile().nth_value_below_one
    if below_one is NthValueBelowOne.ERROR or isinstance(value, bool) or not isinstance(value, int) \
            or value >= 1:
        return _positive_count(value, "nth_value")
    return None if below_one is NthValueBelowOne.NULL or value == 0 else value


WINDOW_FUNCTIONS: dict[str, Callable[[WindowCall, int], object]] = {
    "row_number": row_number,
    "rank": rank,
    "dense_rank": dense_rank,
    "percent_rank": percent_rank,
    "cume_dist": cume_dist,
    "ntile": ntile,
    "lag": lag,
    "lead": lead,
    "first_value": first_value,
    "last_value": last_value,
    "nth_value": nth_value,
}

# The fast paths, for a WindowCall with `runs`.
WINDOW_FUNCTIONS_BY_RUNS: dict[str, Callable[[WindowCall, int], object]] = {
    "first_value": first_value_by_runs,
    "last_value": last_value_by_runs,
    "nth_value": nth_value_by_runs,
}
