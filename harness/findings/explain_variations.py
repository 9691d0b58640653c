"""Small variations of a window expression, each the reading of one step of the
derivation an engine might get wrong, for `explain --engine`: the reference
is evaluated under each, and the first (in the order of the steps) whose value
for the cell is the engine's names the step at which the engine's answer
differs.

The steps, in order: the sort (NULLs ordered the other way, another order of
tied rows), the frame and EXCLUDE, smallest change first (each offset bound
off by one, the default frame for a written one or ROWS for the default, each
other exclusion, then the whole partition), FILTER ignored, IGNORE NULLS ignored, DISTINCT ignored, the
computation (ntile's larger buckets last), the rounding to the result type
(the exact value kept to fewer significant digits).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal

from harness.cases.case import Case
from harness.core import types as T
from harness.core.errors import HarnessError
from harness.core.model import (
    CURRENT_ROW,
    UNBOUNDED_FOLLOWING,
    UNBOUNDED_PRECEDING,
    BinaryOp,
    BinaryOperator,
    Bound,
    BoundKind,
    Cast,
    Exclusion,
    Expr,
    Frame,
    FrameMode,
    Literal,
    NullsOrder,
    Query,
    Select,
    SortKey,
    WindowExpr,
    resolve_window,
)
from harness.core.semantics import SemanticsProfile
from harness.judge.cells import cells_equal, float_tolerance, hashable
from harness.judge.instrument import ROWID, instrument, with_rowid
from reference_impl.evaluation import PeerOrder
from reference_impl.explain import CellAt, CellDerivation, explain_cell
from reference_impl.ordering import sort_spec
from reference_impl.rewrite import replace_exprs
from reference_impl.windows import window_exprs_in


@dataclass(frozen=True)
class Variation:
    name: str  # short, stable: "exclude-group", "start-offset+1", ...
    step: str  # the derivation step it varies: sort, frame, exclude, filter, nulls, distinct, compute, result
    sentence: str  # completes "the engine's value equals ..."
    query: Query | None = None  # the case's query with the window expression varied
    peer_order: PeerOrder | None = None
    digits: int | None = None  # the reference's value kept to this many significant digits


def same_value(engine: object, reference: object) -> bool:
    if isinstance(reference, float) and isinstance(engine, float):
        return cells_equal(engine, reference, float_tolerance(reference, None, False))
    return hashable(engine) == hashable(reference)


def _reverse_peers(key: object, rows: Sequence[object]) -> list[int]:
    return list(reversed(range(len(rows))))


def variations(case: Case, at: CellAt, profile: SemanticsProfile) -> list[Variation]:
    """The variations of the cell's window expression, in the order of the steps."""
    query = case.query
    assert isinstance(query, Select)
    written = window_exprs_in(query.items[at.column].expr)[0]
    spec = resolve_window(written.window, query.windows)
    inline = WindowExpr(written.func, dataclasses.replace(spec, base=None, parenthesized=False))

    def varied(expr: Expr) -> Query:
        items = tuple(replace_exprs(item, {written: expr}) for item in query.items)
        return dataclasses.replace(query, items=items)  # type: ignore[arg-type]

    out = [v for v in _sort_variations(inline, profile, varied)]
    out += [Variation("peer-order", "sort", "another order of the tied rows (each peer group reversed)",
                      peer_order=_reverse_peers)]
    out += _frame_variations(inline, varied)
    out += _function_variations(inline, varied)
    out += [Variation(f"digits-{d}", "result", f"the exact result kept to {d} significant digits "
                      "(the rounding to the result type)", digits=d) for d in range(1, 15)]
    return out


def _with_spec(w: WindowExpr, **changes: object) -> WindowExpr:
    return WindowExpr(w.func, dataclasses.replace(w.window, **changes))


def _sort_variations(w: WindowExpr, profile: SemanticsProfile, varied) -> Iterator[Variation]:  # type: ignore[no-untyped-def]
    if not w.window.order_by:
        return
    flipped = tuple(
        dataclasses.replace(k, nulls=NullsOrder.LAST if sort_spec(k, profile).nulls_first else NullsOrder.FIRST)
        for k in w.window.order_by)
    yield Variation("nulls-other-way", "sort", "the window's ORDER BY with NULLs at the other end "
                    "(NULLS FIRST and LAST swapped)", varied(_with_spec(w, order_by=flipped)))


def _frame_variations(w: WindowExpr, varied) -> list[Variation]:  # type: ignore[no-untyped-def]
    frame = w.window.frame
    out: list[Variation] = []
    if frame is None and w.window.order_by:
        rows = Frame(FrameMode.ROWS, UNBOUNDED_PRECEDING, CURRENT_ROW)
        out.append(Variation("default-as-rows", "frame", "the default frame read as ROWS BETWEEN UNBOUNDED "
                             "PRECEDING AND CURRENT ROW (the current row's later peers left out) instead of "
                             "RANGE", varied(_with_spec(w, frame=rows))))
    if frame is not None:  # the smallest change first: a bound off by one
        for side in ("start", "end"):
            out += _offset_variations(w, frame, side, varied)
        out.append(Variation("default-frame", "frame", "the default frame (RANGE BETWEEN UNBOUNDED PRECEDING "
                             "AND CURRENT ROW) instead of the written one", varied(_with_spec(w, frame=None))))
    if frame is not None:
        out += _exclude_variations(w, frame, varied)
    # The largest change last; a frame already unbounded on both sides varies by its EXCLUDE only.
    whole = Frame(FrameMode.ROWS, UNBOUNDED_PRECEDING, UNBOUNDED_FOLLOWING)
    if frame is None or (frame.start, frame.end) != (whole.start, whole.end):
        out.append(Variation("whole-partition", "frame", "the whole partition as the frame",
                             varied(_with_spec(w, frame=whole))))
    return out


def _offset_variations(w: WindowExpr, frame: Frame, side: str, varied) -> list[Variation]:  # type: ignore[no-untyped-def]
    bound: Bound = getattr(frame, side)
    if bound.kind not in (BoundKind.PRECEDING, BoundKind.FOLLOWING):
        return []
    out = []
    for delta in (1, -1):
        offset = _shifted(bound.offset, delta)
        if offset is None:
            continue
        moved = dataclasses.replace(frame, **{side: Bound(bound.kind, offset)})
        was, now = f"{_value(bound.offset)} {bound.kind.value}", f"{_value(offset)} {bound.kind.value}"
        note = ""
        if frame.mode is FrameMode.RANGE:
            sign = "-" if bound.kind is BoundKind.PRECEDING else "+"
            note = (f" (on an integer key: the bound key {sign} {_value(bound.offset)} "
                    f"{'taken beyond its own value' if delta > 0 else 'excluded instead of included'})")
        out.append(Variation(f"{side}-offset{delta:+d}", "frame", f"the frame's {side} bound off by one: {now} "
                             f"instead of {was}{note}", varied(_with_spec(w, frame=moved))))
    return out


def _value(offset: object) -> object:
    return offset.value if isinstance(offset, Literal) else offset


def _shifted(offset: object, delta: int) -> Literal | None:
    if not isinstance(offset, Literal) or isinstance(offset.value, bool):
        return None
    if not isinstance(offset.value, (int, Decimal)) or offset.value + delta < 0:
        return None
    type_ = offset.type if offset.type is not None and offset.value + delta <= 2**31 - 1 else T.INT64
    return Literal(offset.value + delta, type_)


_EXCLUSION_WORDS = {None: "no EXCLUDE", Exclusion.CURRENT_ROW: "EXCLUDE CURRENT ROW",
                    Exclusion.GROUP: "EXCLUDE GROUP", Exclusion.TIES: "EXCLUDE TIES"}
_EXCLUSION_SENTENCE = {None: "the frame with nothing excluded",
                       Exclusion.CURRENT_ROW: "the frame without the current row",
                       Exclusion.GROUP: "the frame without the current row's peers",
                       Exclusion.TIES: "the frame without the current row's ties (its peers but itself)"}


def _exclude_variations(w: WindowExpr, frame: Frame, varied) -> list[Variation]:  # type: ignore[no-untyped-def]
    current = None if frame.exclusion is Exclusion.NO_OTHERS else frame.exclusion
    out = []
    for other in (None, Exclusion.CURRENT_ROW, Exclusion.GROUP, Exclusion.TIES):
        if other is current:
            continue
        sentence = f"{_EXCLUSION_SENTENCE[other]} ({_EXCLUSION_WORDS[other]} instead of {_EXCLUSION_WORDS[current]})"
        name = "exclude-" + (other.value.lower().replace(" ", "-") if other is not None else "nothing")
        out.append(Variation(name, "exclude", sentence,
                             varied(_with_spec(w, frame=dataclasses.replace(frame, exclusion=other)))))
    return out


def _function_variations(w: WindowExpr, varied) -> list[Variation]:  # type: ignore[no-untyped-def]
    f, out = w.func, []
    if f.filter is not None:
        out.append(Variation("filter-ignored", "filter", "the value with FILTER ignored (every row of the frame)",
                             varied(WindowExpr(dataclasses.replace(f, filter=None), w.window))))
    if f.null_treatment is not None:
        out.append(Variation("ignore-nulls-ignored", "nulls", "the value with IGNORE NULLS ignored "
                             "(NULLs respected)", varied(WindowExpr(dataclasses.replace(f, null_treatment=None),
                                                                     w.window))))
    if f.distinct:
        out.append(Variation("distinct-ignored", "distinct", "the value with DISTINCT ignored (every value, "
                             "duplicates too)", varied(WindowExpr(dataclasses.replace(f, distinct=False), w.window))))
    if f.distinct and f.args:
        # Engines have removed the duplicates of the values cast to DOUBLE (BIGINTs near
        # 2^63 then count once): DataFusion's var_samp and median, DuckDB's stddev.
        as_double = (Cast(f.args[0], T.FLOAT64), *f.args[1:])
        out.append(Variation("distinct-as-double", "distinct", "DISTINCT applied to the values cast to DOUBLE "
                             "PRECISION (values that share a DOUBLE count once)",
                             varied(WindowExpr(dataclasses.replace(f, args=as_double), w.window))))
    if f.name == "ntile" and w.window.order_by:
        out.append(Variation("ntile-larger-last", "compute", "ntile with the larger buckets last (the rows left "
                             "over after an even split given to the last buckets, not the first)",
                             varied(_ntile_larger_last(w))))
    return out


def _ntile_larger_last(w: WindowExpr) -> Expr:
    """n + 1 - ntile(n) over the window in reverse order: the same bucket sizes, the larger last."""
    reverse = tuple(SortKey(k.expr, not k.descending,
                            NullsOrder.FIRST if k.nulls is NullsOrder.LAST else NullsOrder.LAST)
                    for k in w.window.order_by)
    reversed_ntile = WindowExpr(w.func, dataclasses.replace(w.window, order_by=reverse))
    n_plus_one = BinaryOp(BinaryOperator.ADD, w.func.args[0], Literal(1, T.INT32))
    return BinaryOp(BinaryOperator.SUB, n_plus_one, reversed_ntile)


def first_match(case: Case, column: int, derivation: CellDerivation, engine_value: object,
                tried: Sequence[Variation], profile: SemanticsProfile) -> list[Variation]:
    """The variations whose value for the cell is the engine's, in the order of the steps."""
    return [v for v in tried if _gives(case, column, derivation, engine_value, v, profile)]


def _gives(case: Case, column: int, derivation: CellDerivation, engine_value: object, v: Variation,
           profile: SemanticsProfile) -> bool:
    if v.digits is not None:
        ref = derivation.value
        if not isinstance(ref, float) or not isinstance(engine_value, float) or not math.isfinite(ref):
            return False
        kept = float(f"{ref:.{v.digits}g}")
        # Rounding a finite value near the largest double up to fewer digits can
        # overflow to inf: that is no rounding an engine does, so it explains nothing.
        return math.isfinite(kept) and same_value(engine_value, kept) and not same_value(engine_value, ref)
    plan = instrument(case.query, case.schemas)
    tables = with_rowid(case.tables) if plan.rowid_column is not None else dict(case.tables)
    at = CellAt(column, derivation.input_row, by_input=True)
    try:
        found = explain_cell(v.query or case.query, tables, at, profile=profile, peer_order=v.peer_order,
                             rowid=ROWID if plan.rowid_column is not None else None)
    except HarnessError:
        return False
    return same_value(engine_value, found.value) and not same_value(engine_value, derivation.value)


__all__ = ["Variation", "first_match", "same_value", "variations"]


MAX_PEERS_SEARCHED = 6  # every order of up to 6 tied rows: 720 evaluations of a small case


def peer_orders_searched(case: Case, column: int, derivation: CellDerivation, engine_value: object,
                         profile: SemanticsProfile) -> tuple[int, Variation | None]:
    """Every order of the current row's peer group (up to MAX_PEERS_SEARCHED rows),
    each evaluated by the reference: the number of orders tried, and the variation of
    the first that gives the engine's value (None: no order of the ties gives it, so
    the engine's value differs at the computation itself). (0, None) when the row
    has no tied peers, too many, or the case has no row ids to find them by."""
    from itertools import permutations

    size = _peer_group_size(derivation)
    plan = instrument(case.query, case.schemas)
    if not 2 <= size <= MAX_PEERS_SEARCHED or plan.rowid_column is None:
        return 0, None
    wanted = derivation.input_row - 1
    tried = 0
    for order in permutations(range(size)):
        if list(order) == list(range(size)):
            continue  # the reference's own order

        def hook(key: object, rows: Sequence, order: tuple[int, ...] = order) -> list[int]:
            mine = any(_rowid_of(r) == wanted for r in rows)
            return list(order) if mine and len(rows) == len(order) else list(range(len(rows)))

        tried += 1
        v = Variation(f"peer-order-{''.join(str(i + 1) for i in order)}", "sort",
                      f"the current row's tied rows in the order {[i + 1 for i in order]} of their input order",
                      peer_order=hook)
        if _gives(case, column, derivation, engine_value, v, profile):
            return tried, v
    return tried, None


def _rowid_of(row: object) -> object:
    """The harness's row id in a peer group's row mapping (its name maybe qualified)."""
    items = row.items() if hasattr(row, "items") else ()
    return next((v for k, v in items if str(k).rpartition(".")[2] == ROWID), None)


def _peer_group_size(derivation: CellDerivation) -> int:
    from reference_impl.explain_steps import SortStep

    sort = next((s for s in derivation.steps if isinstance(s, SortStep)), None)
    if sort is None:
        return 0
    return next((last - first + 1 for first, last in sort.peer_groups if first <= sort.position <= last), 0)
