"""Scalar subqueries over window results, for the generated queries.

Two shapes people write: a filter over a derived table that compares a
window's rank to a count (`WHERE q.rn <= (SELECT count(*) / 2 FROM t)`, the
top half), and a flag beside the windows comparing a value with an aggregate
of the whole table (`CASE WHEN x = (SELECT max(x) FROM t) THEN 1 ELSE 0
END`; an integer, since SQLite has no boolean type). Both are uncorrelated:
every engine takes them in those places. A query holding one runs unbatched
(`harness.campaign.batching`).

Why not `x - (SELECT avg(x) FROM t)`: the mean of a BIGINT column near 2^63 is
a double whose rounding differs by engine (DataFusion and SQLite sum in
floating point; measured 0.35 and 0.0 for an exact 0.85), and the comparator's
float bound scales with the magnitude of what an aggregate summed, which a
value computed from a subquery does not carry: it would report those as
mismatches. The corpus case `subqueries/scalar_deviation_beside_rank` keeps
that shape over small values.
"""

from __future__ import annotations

from harness.core.model import (
    BinaryOp,
    BinaryOperator,
    Case,
    Column,
    Expr,
    FuncCall,
    Literal,
    ScalarSubquery,
    Select,
    SelectItem,
    Star,
    TableRef,
)
from harness.core.types import INT32, SqlType
from harness.generate.context import Context, column_of
from harness.generate.swarm import Swarm

# How often a query that may have one gets one.
RATE = 0.3


def _over(table: str, value: Expr) -> ScalarSubquery:
    return ScalarSubquery(Select((SelectItem(value),), TableRef(table)))


def top_fraction_filter(ctx: Context, table: str, ranks: list[Column]) -> Expr | None:
    """`rank_column <= (SELECT count(*) / 2 FROM table)` over one of `ranks` (the
    derived table's integer window columns). An odd count gives n / 2 = k under
    integer division and k + 0.5 where `/` gives a double: the same rows either
    way. Simpler means no filter."""
    if not ranks or not ctx.flag(Swarm.SCALAR_SUBQUERY, RATE):
        return None
    column = ctx.rng.choice(ranks)
    half = BinaryOp(BinaryOperator.DIV, FuncCall("count", (Star(),)), Literal(2, INT32))
    return BinaryOp(BinaryOperator.LE, column, _over(table, half))


def max_flag_item(ctx: Context, table: str) -> Expr | None:
    """`CASE WHEN x = (SELECT max(x) FROM table) THEN 1 ELSE 0 END` for an integer
    column x of the scope: exact, whatever the values. Simpler means none."""
    if not ctx.flag(Swarm.SCALAR_SUBQUERY, RATE):
        return None
    column = column_of(ctx, _is_integer, plain=True)
    if column is None:
        return None
    x = column.expr
    is_max = BinaryOp(BinaryOperator.EQ, x, _over(table, FuncCall("max", (x,))))
    return Case(((is_max, Literal(1, INT32)),), Literal(0, INT32))


def _is_integer(t: SqlType) -> bool:
    return t.is_integer
