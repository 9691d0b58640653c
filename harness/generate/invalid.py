"""Invalid window queries, made on purpose (error conformance).

A share of generated cases (INVALID_SHARE, decided by a stream of its own,
`Random(f"{seed}/invalid")`, so the other cases stay what they always were)
takes its valid query and breaks it in one way the standard forbids: a
frame from UNBOUNDED FOLLOWING, ntile(0), a window function in WHERE, ...
(`harness.core.conformance.INVALID_KINDS`). The case's `error` says which way; the
reference must refuse the query, and so must every engine: refusing it is
`rejected-as-expected`, answering it `wrongly-accepted`.

Each breaker changes one window expression (or the WHERE clause) and leaves
the rest of the query valid, so that the one thing wrong is the thing meant.
A breaker that does not apply to the query (no ORDER BY to put a RANGE
offset on, no string key) gives None and the next one, in a random order, is
tried. Which way the query is invalid is finally the reference's to say: the
report's matrix places a verdict by the reference's reason, not by the
breaker's intent.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import replace
from random import Random

from harness.cases.case import Case
from harness.core import types as T
from harness.core.conformance import KINDS_BY_NAME, InvalidKind
from harness.core.functions import FUNCTIONS
from harness.core.model import (
    CURRENT_ROW,
    UNBOUNDED_FOLLOWING,
    UNBOUNDED_PRECEDING,
    BinaryOp,
    BinaryOperator,
    Column,
    Frame,
    FrameMode,
    FuncCall,
    Interval,
    IntervalUnit,
    Literal,
    NamedWindow,
    Select,
    Star,
    TableRef,
    WindowExpr,
    WindowSpec,
    following,
    preceding,
    replace_nth,
    walk,
    window_exprs,
)
from harness.core.types import TypeKind

INVALID_SHARE = 0.05

Breaker = Callable[[Select, Random, Case], Select | None]


def maybe_invalid(seed: str, case: Case, share: float = INVALID_SHARE) -> tuple[InvalidKind, Select] | None:
    """For `share` of the seeds, the case's query broken in one way (and how); else None."""
    rng = Random(f"{seed}/invalid")
    if rng.random() >= share or not isinstance(case.query, Select):
        return None
    return invalidate(case.query, rng, case)


def invalidate(query: Select, rng: Random, case: Case) -> tuple[InvalidKind, Select] | None:
    """`query` (over `case`'s tables) broken by the first breaker, in a random
    order, that applies."""
    names = sorted(BREAKERS)
    rng.shuffle(names)
    for name in names:
        broken = BREAKERS[name](query, rng, case)
        if broken is not None:
            return KINDS_BY_NAME[name], broken
    return None


def invalid_kind_of(case: Case) -> InvalidKind | None:
    """How a generated case was broken on purpose (its `invalid.<kind>` tag), or None."""
    return next((KINDS_BY_NAME[t.removeprefix("invalid.")] for t in case.tags
                 if t.startswith("invalid.") and t.removeprefix("invalid.") in KINDS_BY_NAME), None)


# -- helpers --------------------------------------------------------------------------------


def _int(value: int) -> Literal:
    return Literal(value, T.INT32)


def _window_exprs(query: Select) -> list[WindowExpr]:
    return [n for n in walk(query) if isinstance(n, WindowExpr)]


def _change_window_expr(query: Select, rng: Random, change: Callable[[WindowExpr], WindowExpr | None],
                        only: Sequence[WindowExpr] | None = None) -> Select | None:
    """`query` with one window expression (a random one `change` applies to,
    among `only` if given) changed."""
    exprs = _window_exprs(query)
    order = [n for n in range(len(exprs)) if only is None or any(exprs[n] is w for w in only)]
    rng.shuffle(order)
    for n in order:
        new = change(exprs[n])
        if new is not None:
            return replace_nth(query, WindowExpr, n, new)
    return None


def _reads_frame(w: WindowExpr) -> bool:
    spec = FUNCTIONS.get(w.func.name)
    return spec is not None and spec.uses_frame


def _with_frame(make: Callable[[WindowSpec], Frame | None], syntax: bool = False,
                data: bool = False) -> Breaker:
    """A breaker giving one inline window (not one refining a named window, whose
    frame rules are others) the frame `make` builds for it.

    A frame the syntax rules forbid (`syntax`: from UNBOUNDED FOLLOWING) is
    invalid on any function; other frame rules (a RANGE offset needs one
    numeric key) bind a function that reads its frame (sum, nth_value), not
    one that ignores it (rank, lag). A negative offset (`data`) is a data
    exception, raised when a frame is computed: over rows, as ntile(0) is."""

    def breaker(query: Select, rng: Random, case: Case) -> Select | None:
        if data and not _rows_reach_windows(query, case):
            return None

        def change(w: WindowExpr) -> WindowExpr | None:
            if w.window.base is not None or not (syntax or _reads_frame(w)):
                return None
            frame = make(w.window)
            return None if frame is None else replace(w, window=replace(w.window, frame=frame))

        return _change_window_expr(query, rng, change, only=window_exprs(query) if data else None)

    return breaker


# -- the breakers, one per kind of invalid query ------------------------------------------------


def _from_unbounded_following(spec: WindowSpec) -> Frame:
    return Frame(FrameMode.ROWS, UNBOUNDED_FOLLOWING, UNBOUNDED_FOLLOWING)


def _to_unbounded_preceding(spec: WindowSpec) -> Frame:
    return Frame(FrameMode.ROWS, UNBOUNDED_PRECEDING, UNBOUNDED_PRECEDING)


def _reversed(spec: WindowSpec) -> Frame:
    # By bound kind, not by offset: CURRENT ROW comes after any PRECEDING.
    return Frame(FrameMode.ROWS, CURRENT_ROW, preceding(_int(1)))


def _negative_offset(spec: WindowSpec) -> Frame:
    mode = FrameMode.GROUPS if spec.order_by else FrameMode.ROWS  # GROUPS needs ORDER BY
    return Frame(mode, preceding(_int(-1)), CURRENT_ROW)


def _negative_range_offset(query: Select, rng: Random, case: Case) -> Select | None:
    """RANGE BETWEEN CURRENT ROW AND -1 FOLLOWING over one numeric key, or a
    negative INTERVAL (INTERVAL '-1' DAY FOLLOWING, '-2' MONTH PRECEDING...) over
    one date, timestamp or (day-time) interval key (an integer offset would be invalid for its type first)."""
    types = {c.name: c.type for s in case.schemas for c in s.columns}

    def make(spec: WindowSpec) -> Frame | None:
        keys = [k.expr for k in spec.order_by]
        if len(keys) != 1 or not isinstance(keys[0], Column) or keys[0].name not in types:
            return None
        t = types[keys[0].name]
        if t.is_numeric:
            return Frame(FrameMode.RANGE, CURRENT_ROW, following(_int(-1)))
        if t.kind not in _NEGATIVE_UNITS:
            return None
        units = _NEGATIVE_UNITS[t.kind]
        offset = Interval(-rng.choice((1, 1, 2, 30)), rng.choice(units))
        if rng.random() < 0.5:
            return Frame(FrameMode.RANGE, CURRENT_ROW, following(offset))
        return Frame(FrameMode.RANGE, preceding(offset), CURRENT_ROW)

    return _with_frame(make, data=True)(query, rng, case)


_NEGATIVE_UNITS = {
    TypeKind.DATE: (IntervalUnit.DAY, IntervalUnit.MONTH, IntervalUnit.YEAR),
    TypeKind.TIMESTAMP: (IntervalUnit.DAY, IntervalUnit.HOUR, IntervalUnit.SECOND, IntervalUnit.MONTH),
    TypeKind.INTERVAL: (IntervalUnit.DAY, IntervalUnit.HOUR, IntervalUnit.MINUTE, IntervalUnit.SECOND),
}


def _null_offset(spec: WindowSpec) -> Frame:
    """ROWS (or GROUPS) BETWEEN CAST(NULL AS BIGINT) PRECEDING AND CURRENT ROW: the
    standard's data exception (invalid preceding or following size), like a
    negative offset."""
    mode = FrameMode.GROUPS if spec.order_by else FrameMode.ROWS
    return Frame(mode, preceding(Literal(None, T.INT64)), CURRENT_ROW)


def _range_offset_keys(spec: WindowSpec) -> Frame | None:
    if len(spec.order_by) == 1:
        return None  # one key is the valid case
    return Frame(FrameMode.RANGE, preceding(_int(1)), CURRENT_ROW)


def _range_offset_key_type(query: Select, rng: Random, case: Case) -> Select | None:
    """A RANGE offset over a string column as the window's one ORDER BY key."""
    strings = {c.name for s in case.schemas for c in s.columns if c.type.kind is TypeKind.STRING}
    used = {n.name: n for n in walk(query) if isinstance(n, Column) and n.name in strings}
    if not used:
        return None

    def change(w: WindowExpr) -> WindowExpr | None:
        keys = [k for k in w.window.order_by if isinstance(k.expr, Column) and k.expr.name in strings]
        if w.window.base is not None or not keys or not _reads_frame(w):
            return None  # only a column the window already orders by is surely in its scope
        frame = Frame(FrameMode.RANGE, preceding(_int(1)), CURRENT_ROW)
        return replace(w, window=replace(w.window, order_by=(keys[0],), frame=frame))

    return _change_window_expr(query, rng, change)


def _rows_reach_windows(query: Select, case: Case) -> bool:
    """Do rows surely reach the query's own window functions? An invalid argument
    (ntile(0)) is a data exception, raised only when the function is evaluated
    on some row: over no rows the query is valid. So such breakers take only a
    query whose windows run over a whole table that has rows."""
    source = query.source
    # Under LIMIT an engine may skip rows the answer does not need (LIMIT 0: all of them).
    return (isinstance(source, TableRef) and query.where is None and not query.group_by
            and query.limit is None and case.tables[source.name].num_rows > 0)


def still_invalid(kind: InvalidKind, query: Select, case: Case) -> bool:
    """Is `query`, broken as `kind` says, still invalid over `case`'s tables? A
    campaign gives one broken query new rows (`generate_sibling`): a data
    exception needs rows that reach the window functions."""
    return not kind.data or _rows_reach_windows(query, case)


def _ntile_not_positive(query: Select, rng: Random, case: Case) -> Select | None:
    if not _rows_reach_windows(query, case):
        return None
    n = rng.choice((0, 0, -1))
    return _change_window_expr(query, rng, lambda w: replace(w, func=FuncCall("ntile", (_int(n),))),
                               only=window_exprs(query))


def _nth_value_not_positive(query: Select, rng: Random, case: Case) -> Select | None:
    if not _rows_reach_windows(query, case):
        return None
    n = rng.choice((0, 0, -2))

    def change(w: WindowExpr) -> WindowExpr | None:
        args = [a for a in w.func.args if not isinstance(a, (Star, Literal))]
        return replace(w, func=FuncCall("nth_value", (args[0], _int(n)))) if args else None

    return _change_window_expr(query, rng, change, only=window_exprs(query))


def _window_in_where(query: Select, rng: Random, case: Case) -> Select | None:
    if query.source is None:
        return None
    condition = BinaryOp(BinaryOperator.GT, WindowExpr(FuncCall("row_number"), WindowSpec()), _int(0))
    where = condition if query.where is None else BinaryOp(BinaryOperator.AND, query.where, condition)
    return replace(query, where=where)


def _nested_window(query: Select, rng: Random, case: Case) -> Select | None:
    # count() takes any type, so the one thing wrong is the nesting.
    return _change_window_expr(query, rng, lambda w: WindowExpr(FuncCall("count", (w,)), WindowSpec()))


def _groups_without_order_by(query: Select, rng: Random, case: Case) -> Select | None:
    """A GROUPS frame on a window that orders nothing (its ORDER BY, if any, removed)."""

    def change(w: WindowExpr) -> WindowExpr | None:
        if w.window.base is not None or not _reads_frame(w):
            return None
        frame = Frame(FrameMode.GROUPS, UNBOUNDED_PRECEDING, CURRENT_ROW)
        return replace(w, window=replace(w.window, order_by=(), frame=frame))

    return _change_window_expr(query, rng, change, only=window_exprs(query))


def _framed_window_copy(query: Select, rng: Random, case: Case) -> Select | None:
    """One inline window moved to the WINDOW clause with a frame, and used as
    `OVER (w)`: a copy of a framed window (`OVER w` would be valid)."""
    taken = {w.name for w in query.windows}
    name = next(f"w{i}" for i in itertools.count(1) if f"w{i}" not in taken)
    moved: list[NamedWindow] = []

    def change(w: WindowExpr) -> WindowExpr | None:
        if w.window.base is not None or not _reads_frame(w):
            return None
        frame = w.window.frame or Frame(FrameMode.ROWS, UNBOUNDED_PRECEDING, CURRENT_ROW)
        moved.append(NamedWindow(name, replace(w.window, frame=frame)))
        return replace(w, window=WindowSpec(base=name, parenthesized=True))

    broken = _change_window_expr(query, rng, change, only=window_exprs(query))
    return None if broken is None else replace(broken, windows=(*broken.windows, *moved))


BREAKERS: dict[str, Breaker] = {
    "frame-from-unbounded-following": _with_frame(_from_unbounded_following, syntax=True),
    "frame-to-unbounded-preceding": _with_frame(_to_unbounded_preceding, syntax=True),
    "frame-bounds-reversed": _with_frame(_reversed, syntax=True),
    "negative-offset": _with_frame(_negative_offset, data=True),
    "negative-range-offset": _negative_range_offset,
    "null-offset": _with_frame(_null_offset, data=True),
    "range-offset-keys": _with_frame(_range_offset_keys),
    "range-offset-key-type": _range_offset_key_type,
    "ntile-not-positive": _ntile_not_positive,
    "nth-value-not-positive": _nth_value_not_positive,
    "window-in-where": _window_in_where,
    "nested-window": _nested_window,
    "groups-without-order-by": _groups_without_order_by,
    "framed-window-copy": _framed_window_copy,
}
