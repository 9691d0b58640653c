"""The top of a query where optimizer bugs live (issue 19): top-N filters on a
ranking window with other windows beside it (QUALIFY, or WHERE over a derived
table), and LIMIT/OFFSET over windows that look ahead.
"""

from __future__ import annotations

from dataclasses import replace

from harness.core.model import (
    BinaryOp,
    BinaryOperator,
    Expr,
    Frame,
    FrameMode,
    FuncCall,
    Star,
    WindowExpr,
    WindowSpec,
)
from harness.generate.calls import small_count
from harness.generate.context import (
    Context,
    columns,
    has_literals,
    integer,
    is_comparable,
    random_literal,
)
from harness.generate.draws import chance
from harness.generate.frames import random_frame
from harness.generate.windows import total_order

# -- beside a top-N filter ----------------------------------------------------------------


def ranking_siblings(ctx: Context, spec: WindowSpec) -> list[WindowExpr]:
    """0-2 windows over the ranking's window (its PARTITION BY and ORDER BY):
    percent_rank, cume_dist or ntile, and an aggregate over a frame of its
    own. Order-sensitive ones end their ORDER BY with the row key where no
    witness reveals the engine's peer order. Simpler means none."""
    rng = ctx.rng
    out = []
    bare = replace(spec, frame=None)
    if chance(rng, 0.7):
        name = rng.choice(("percent_rank", "cume_dist", "ntile"))
        args = (small_count(ctx, 1),) if name == "ntile" else ()
        window = bare
        if name == "ntile" and not ctx.scope.witnessed:
            window = replace(bare, order_by=total_order(bare.order_by, ctx.scope.row_key))
        out.append(WindowExpr(FuncCall(name, args), window))
    if chance(rng, 0.5):
        found = columns(ctx, is_comparable)
        call = FuncCall("count", (Star(),))
        if found and chance(rng, 0.6):
            call = FuncCall(rng.choice(("min", "max", "count")), (rng.choice(found).expr,))
        frame = random_frame(ctx, bare.order_by)
        order_by = bare.order_by
        if not ctx.scope.witnessed and not _range_offsets(frame):
            order_by = total_order(order_by, ctx.scope.row_key)
        out.append(WindowExpr(call, replace(bare, order_by=order_by, frame=frame)))
    return out


def _range_offsets(frame: Frame) -> bool:
    return frame.mode is FrameMode.RANGE and any(b.offset is not None for b in (frame.start, frame.end))


def top_filter(ctx: Context, ranked: Expr) -> BinaryOp:
    """`ranked <= k`, `< k`, `= 1` or `k >= ranked`, k in 1..3."""
    rng = ctx.rng
    k = integer(rng.choice((1, 1, 2, 3)))
    form = rng.choice(("le", "le", "lt", "eq", "ge"))
    if form == "lt":
        return BinaryOp(BinaryOperator.LT, ranked, integer(rng.choice((2, 3, 4))))
    if form == "eq":
        return BinaryOp(BinaryOperator.EQ, ranked, integer(1))
    if form == "ge":
        return BinaryOp(BinaryOperator.GE, k, ranked)
    return BinaryOp(BinaryOperator.LE, ranked, k)


def lookahead_call(ctx: Context) -> tuple[FuncCall, bool] | None:
    """lead or lag (an offset sometimes, a default sometimes) or nth_value, over
    a column; True when it needs a frame that reaches past the current row."""
    found = columns(ctx, is_comparable)
    if not found:
        return None
    column = ctx.rng.choice(found)
    name = ctx.rng.choice(("lead", "lead", "lag", "nth_value"))
    if name == "nth_value":
        return FuncCall(name, (column.expr, small_count(ctx, 1))), True
    args: list[Expr] = [column.expr]
    if chance(ctx.rng, 0.6):
        args.append(small_count(ctx, 1))
        if chance(ctx.rng, 0.3) and has_literals(column.type):
            args.append(random_literal(ctx, column.type, null_chance=0.2))
    return FuncCall(name, tuple(args)), False
