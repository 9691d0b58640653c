"""Windows and window expressions: the specs a query shares, and the slots
that the steer fills.

A query draws a pool of 1-3 window specs first (`random_window_pool`); some
of them are named in a WINDOW clause, and a named one may be defined by
refining an earlier one. Each window expression then calls a function over
one spec of the pool: inline, `OVER w`, or refining `w` with an ORDER BY or
a frame. Expressions share specs, as real queries do (and as engines
optimise for).

Steering: each expression slot draws CANDIDATES expressions, always all of
them (so the draws of a slot do not depend on which one is kept), and a
`Chooser` keeps one: the next of the given picks, else the steer's choice,
else the first. The picks made are recorded, so a case is replayed from its
seed and its picks alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from harness.core.errors import InvalidInput
from harness.core.functions import ARGUMENT_ORDERED_RANKING, FUNCTIONS, is_order_sensitive
from harness.core.model import (
    BoundKind,
    Exclusion,
    Expr,
    Frame,
    FrameMode,
    FuncCall,
    NamedWindow,
    NullsOrder,
    SortKey,
    TableSchema,
    WindowExpr,
    WindowSpec,
    resolve_window,
)
from harness.generate.calls import random_call
from harness.generate.context import Context, column_of, fresh_name, is_comparable
from harness.generate.draws import chance
from harness.generate.frames import random_frame
from harness.generate.keys import (
    maybe_degenerate_order,
    maybe_expression_key,
    random_sort_key,
    shared_prefixes,
)
from harness.generate.swarm import Swarm

# Candidates per slot: the steer needs a dozen to find a rare cell once a
# campaign has covered half the grid (four covered about 15% fewer cells in
# ten minutes).
CANDIDATES = 12
# The share of order-sensitive expressions given an ORDER BY the comparator
# can judge (see `_judgeable`); the rest keep the rarer, degenerate forms.
JUDGEABLE = 0.97


class Steer(Protocol):
    """Chooses one of a slot's candidate window expressions (by index).

    `windows` are the named windows the candidates may refer to (resolve
    them with `harness.core.model.resolve_window`); `schemas` describe the columns
    they read, as `harness.cases.coverage.expression_keys` wants them.
    """

    def begin_query(self) -> None:
        """A new query's slots follow (the picks so far were another query's)."""

    def pick(self, candidates: Sequence[WindowExpr], windows: tuple[NamedWindow, ...],
             schemas: tuple[TableSchema, ...]) -> int: ...


@dataclass
class Chooser:
    """Keeps one candidate per slot: the given picks first, then the steer, else 0."""

    steer: Steer | None = None
    picks: Sequence[int] = ()
    made: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.steer is not None:  # one chooser per query
            self.steer.begin_query()

    def choose(self, candidates: Sequence[WindowExpr], windows: tuple[NamedWindow, ...],
               schemas: tuple[TableSchema, ...]) -> WindowExpr:
        slot = len(self.made)
        if slot < len(self.picks):
            pick = self.picks[slot]
        elif self.steer is not None:
            pick = self.steer.pick(candidates, windows, schemas)
        else:
            pick = 0
        if not isinstance(pick, int) or not 0 <= pick < len(candidates):
            raise InvalidInput(f"pick {pick!r} for slot {slot} is not in 0..{len(candidates) - 1}", "picks")
        self.made.append(pick)
        return candidates[pick]


# -- sort keys and specs --------------------------------------------------------------


def random_sort_keys(ctx: Context, at_least: int = 0, expressions: bool = False) -> tuple[SortKey, ...]:
    """`at_least`-3 keys on distinct scope expressions (a row key among them
    sometimes, which breaks every tie), each ASC or DESC, NULLS LAST/FIRST
    written out unless `Swarm.DEFAULT_NULLS` leaves some to the engine;
    `expressions`: a key may be an expression over columns (`keys`).
    Simpler means fewer keys, ASC NULLS LAST."""
    rng = ctx.rng
    count = max(at_least, rng.choice((0, 1, 1, 1, 2, 2, 3)))
    keys: list[SortKey] = []
    for _ in range(count):
        column = column_of(ctx, is_comparable)
        if column is None:
            continue
        expr = maybe_expression_key(ctx, column) if expressions else column.expr
        if any(k.expr == expr for k in keys):
            continue
        keys.append(random_sort_key(ctx, expr))
    return tuple(keys)


def random_window_spec(ctx: Context) -> WindowSpec:
    """PARTITION BY 0-2 scope columns, ORDER BY 0-3 keys, the default frame or
    an explicit one; keys may be expressions, and the ORDER BY degenerate
    (`keys`); sometimes (`Swarm.UNORDERED_ROWS`) no ORDER BY and a ROWS frame.
    Simpler means `OVER ()`."""
    partition_by, order_by = _partition_by(ctx), _order_by(ctx)
    if ctx.flag(Swarm.UNORDERED_ROWS, 0.2):
        frame = replace(random_frame(ctx, ()), mode=FrameMode.ROWS)
        return WindowSpec(partition_by=partition_by, frame=frame)
    partition_by, order_by = maybe_degenerate_order(ctx, partition_by, order_by)
    return WindowSpec(partition_by=partition_by, order_by=order_by, frame=_maybe_frame(ctx, order_by))


def _partition_by(ctx: Context) -> tuple:
    if Swarm.PARTITION_BY not in ctx.on:
        return ()
    out: list = []
    for _ in range(ctx.rng.choice((0, 0, 1, 1, 2))):
        column = column_of(ctx, is_comparable)
        expr = None if column is None else maybe_expression_key(ctx, column)
        if expr is not None and expr not in out:
            out.append(expr)
    return tuple(out)


def _order_by(ctx: Context) -> tuple[SortKey, ...]:
    return random_sort_keys(ctx, expressions=True) if Swarm.WINDOW_ORDER_BY in ctx.on else ()


def _maybe_frame(ctx: Context, order_by: tuple[SortKey, ...], p: float = 0.75) -> Frame | None:
    return random_frame(ctx, order_by) if ctx.flag(Swarm.FRAMES, p) else None


# -- the pool of specs ------------------------------------------------------------------


@dataclass(frozen=True)
class WindowPool:
    """The specs a query's expressions share: `resolved` (inline form) per
    entry, its name when it is in the WINDOW clause, and that clause."""

    resolved: tuple[WindowSpec, ...]
    names: tuple[str | None, ...]
    named: tuple[NamedWindow, ...]


def random_window_pool(ctx: Context, taken: set[str]) -> WindowPool:
    """1-3 specs; each named sometimes (when the swarm allows), a named one
    refining an earlier named one sometimes; sometimes (`Swarm.SHARED_PARTITIONS`)
    3 specs partitioned by a; a, b; a, b. Simpler means one unnamed spec."""
    resolved: list[WindowSpec] = []
    names: list[str | None] = []
    named: list[NamedWindow] = []
    count = ctx.rng.choice((1, 1, 2, 2, 3))
    prefixes = shared_prefixes(ctx)
    for i in range(count if prefixes is None else len(prefixes)):
        spec = random_window_spec(ctx)
        if prefixes is not None:
            spec = replace(spec, partition_by=prefixes[i])
        definition = spec
        name = None
        if ctx.flag(Swarm.NAMED_WINDOW, 0.5):
            name = fresh_name(f"win{i + 1}", taken)
            definition = _maybe_refine_named(ctx, spec, named)
            named.append(NamedWindow(name, definition))
            spec = resolve_window(definition, tuple(named))
        resolved.append(spec)
        names.append(name)
    return WindowPool(tuple(resolved), tuple(names), tuple(named))


def _maybe_refine_named(ctx: Context, spec: WindowSpec, named: list[NamedWindow]) -> WindowSpec:
    """WINDOW w2 AS (w1 [ORDER BY ...] [frame]) over an earlier frameless window."""
    bases = [w for w in named if w.spec.frame is None]
    if not bases or not ctx.flag(Swarm.REFINEMENT, 0.4):
        return spec
    base = ctx.rng.choice(bases)
    inherited = resolve_window(WindowSpec(base=base.name), tuple(named))
    order_by = () if inherited.order_by else spec.order_by
    frame = _maybe_frame(ctx, order_by or inherited.order_by)
    return WindowSpec(base=base.name, order_by=order_by, frame=frame)


def used_windows(exprs: Sequence[WindowExpr], pool: WindowPool) -> tuple[NamedWindow, ...]:
    """The named windows that the chosen expressions use, directly or through another."""
    by_name = {w.name: w for w in pool.named}
    used: set[str] = set()
    pending = [e.window.base for e in exprs if e.window.base is not None]
    while pending:
        name = pending.pop()
        if name not in used:
            used.add(name)
            base = by_name[name].spec.base
            if base is not None:
                pending.append(base)
    return tuple(w for w in pool.named if w.name in used)


# -- expressions --------------------------------------------------------------------------


def random_window_expr(ctx: Context, pool: WindowPool) -> WindowExpr:
    """A function over one spec of the pool: by name, refining the name, or
    inline; a function that reads the frame sometimes gets a frame of its own
    over the spec's keys (`Swarm.FRAME_VARIANTS`). A function that ignores the frame loses an inherited frame unless
    `Swarm.RANKING_FRAMES` keeps it; an order-sensitive one mostly gets an
    ORDER BY that the comparator can judge (`_judgeable`). Simpler means the
    first spec, inline."""
    call = random_call(ctx)
    i = ctx.rng.randint(0, len(pool.resolved) - 1)
    # Functions that read the order (ranking, offsets, order-sensitive ones) are
    # degenerate without one: prefer a spec that has an ORDER BY.
    wants_order = not FUNCTIONS[call.name].uses_frame or is_order_sensitive(call, pool.resolved[i].frame, True)
    if wants_order and not pool.resolved[i].order_by and chance(ctx.rng, JUDGEABLE):
        i = next((j for j in _from(i, len(pool.resolved)) if pool.resolved[j].order_by), i)
    window = _over(ctx, pool, i)
    resolved = resolve_window(window, pool.named)
    if FUNCTIONS[call.name].uses_frame and resolved.order_by and ctx.flag(Swarm.FRAME_VARIANTS, 0.6):
        # The spec's partitioning and order, with a frame of its own (inline).
        # Not over an unordered spec: RANGE without ORDER BY is valid but refused by
        # Spark, which would then answer nothing of the query.
        window = resolved = replace(resolved, frame=random_frame(ctx, resolved.order_by))
    if resolved.frame is not None and not FUNCTIONS[call.name].uses_frame \
            and not ctx.flag(Swarm.RANKING_FRAMES, 0.5):
        window = resolved = replace(resolved, frame=None)
    if call.name in ARGUMENT_ORDERED_RANKING and ctx.flag(Swarm.RANKING_ORDER_BY, 0.3):
        call, window, resolved = _ranked_by_own_keys(ctx, call, window, resolved)
    return WindowExpr(call, _judgeable(ctx, call, window, resolved))


def _ranked_by_own_keys(ctx: Context, call: FuncCall, window: WindowSpec,
                        resolved: WindowSpec) -> tuple[FuncCall, WindowSpec, WindowSpec]:
    """`rank(ORDER BY x) OVER (...)`: the function ranks the row within its frame
    by keys of its own. row_number and ntile get the row key after them (their
    ties are no peer order the comparator can search); a frame that may leave
    the current row out (where the row ranks is then undefined) is dropped."""
    keys = random_sort_keys(ctx, at_least=1)
    if call.name in ("row_number", "ntile"):
        keys = total_order(keys, ctx.scope.row_key)
    if resolved.frame is not None and not _holds_current_row(resolved.frame):
        window = resolved = replace(resolved, frame=None)
    return replace(call, order_by=keys), window, resolved


def _holds_current_row(frame: Frame) -> bool:
    starts = frame.start.kind in (BoundKind.UNBOUNDED_PRECEDING, BoundKind.PRECEDING, BoundKind.CURRENT_ROW)
    ends = frame.end.kind in (BoundKind.CURRENT_ROW, BoundKind.FOLLOWING, BoundKind.UNBOUNDED_FOLLOWING)
    return starts and ends and frame.exclusion in (None, Exclusion.NO_OTHERS, Exclusion.TIES)


def _from(i: int, n: int) -> list[int]:
    return [(i + k) % n for k in range(n)]


def _judgeable(ctx: Context, call: FuncCall, window: WindowSpec, resolved: WindowSpec) -> WindowSpec:
    """The window, or (mostly) an inline one whose ORDER BY lets the comparator
    judge an order-sensitive function: an ORDER BY at all (without one, every
    row is a peer and engines order peers differently per window), and where
    the instrumenter reveals no peer order, the row key at its end (no ties
    at all). Ties stay common where the witness order resolves them."""
    if not is_order_sensitive(call, resolved.frame, bool(resolved.order_by)):
        return window
    order_by, frame = resolved.order_by, resolved.frame
    # A ROWS frame without ORDER BY stays so where a witness reveals the engine's row order.
    unordered_rows = not order_by and frame is not None and frame.mode is FrameMode.ROWS \
        and ctx.scope.witnessed and Swarm.UNORDERED_ROWS in ctx.on
    if not order_by and not unordered_rows and chance(ctx.rng, JUDGEABLE):
        order_by = random_sort_keys(ctx, at_least=1, expressions=True)
    if order_by and not ctx.scope.witnessed and chance(ctx.rng, JUDGEABLE):
        if _has_range_offset(frame) and not FUNCTIONS[call.name].uses_frame:
            frame = None  # ignored by the function, and it allows one key only
        if not _has_range_offset(frame):
            order_by = total_order(order_by, ctx.scope.row_key)
    if (order_by, frame) == (resolved.order_by, resolved.frame):
        return window
    return replace(resolved, order_by=order_by, frame=frame)


def _has_range_offset(frame: Frame | None) -> bool:
    return frame is not None and frame.mode is FrameMode.RANGE \
        and any(b.offset is not None for b in (frame.start, frame.end))


def total_order(keys: tuple[SortKey, ...], row_key: tuple[Expr, ...]) -> tuple[SortKey, ...]:
    """`keys`, then the row key expressions they lack (which break every tie)."""
    present = {k.expr for k in keys}
    return keys + tuple(SortKey(e, False, NullsOrder.LAST) for e in row_key if e not in present)


def _over(ctx: Context, pool: WindowPool, i: int) -> WindowSpec:
    name, spec = pool.names[i], pool.resolved[i]
    if name is None or not chance(ctx.rng, 0.8):
        return spec
    if spec.frame is None and ctx.flag(Swarm.REFINEMENT, 0.4):
        order_by = () if spec.order_by else random_sort_keys(ctx, at_least=1, expressions=True)
        frame = _maybe_frame(ctx, order_by or spec.order_by, p=0.8)
        if order_by or frame is not None:
            return WindowSpec(base=name, order_by=order_by, frame=frame)
        # Nothing to add: `OVER (w)`, a copy of w (allowed, as w has no frame).
        return WindowSpec(base=name, parenthesized=True)
    return WindowSpec(base=name)


def window_slots(ctx: Context, pool: WindowPool, count: int, chooser: Chooser) -> list[WindowExpr]:
    """`count` window expressions, each chosen from CANDIDATES drawn for its slot."""
    chosen = []
    for _ in range(count):
        candidates = [random_window_expr(ctx, pool) for _ in range(CANDIDATES)]
        chosen.append(chooser.choose(candidates, pool.named, ctx.scope.schemas))
    return chosen
