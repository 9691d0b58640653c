"""Window keys where optimizer bugs live (issue 19): keys and specs that
rewrites treat specially, each behind its swarm flag.

- expression keys (`Swarm.EXPRESSION_KEYS`): `PARTITION BY x % 3`, `ORDER BY
  -x`, `ORDER BY x + y`, `ORDER BY CASE ...`, written so that no data makes
  them overflow (siblings of a batched case bring rows of their own): a
  negation or a sum of integers reads them widened to BIGINT, or (BIGINT
  itself) their remainder by 1000 first;
- degenerate ORDER BY (`Swarm.DEGENERATE_ORDER`): NULL, a constant (an integer
  literal inside OVER is a constant, never a position: checked on DuckDB,
  DataFusion and SQLite), or a duplicate of a PARTITION BY key, alone or
  beside the drawn keys;
- shared PARTITION BY prefixes (`Swarm.SHARED_PARTITIONS`): the specs of a
  pool partitioned by `a`, `a, b`, `a, b` (sort reuse);

The top of the query (top-N filters, LIMIT over look-ahead) is in `topn`.
"""

from __future__ import annotations

from harness.core import types as T
from harness.core.model import (
    BinaryOp,
    BinaryOperator,
    Case,
    Cast,
    Expr,
    IsNull,
    Literal,
    NullsOrder,
    SortKey,
    UnaryOp,
    UnaryOperator,
)
from harness.core.types import TypeKind
from harness.generate.context import (
    Context,
    ScopeColumn,
    columns,
    has_literals,
    integer,
    is_comparable,
    random_literal,
)
from harness.generate.draws import chance
from harness.generate.swarm import Swarm

# How often a key is an expression when Swarm.EXPRESSION_KEYS is on.
EXPRESSION_KEY_RATE = 0.3
# How often a window's ORDER BY is degenerate when Swarm.DEGENERATE_ORDER is on.
DEGENERATE_RATE = 0.3
_NARROW = (TypeKind.INT8, TypeKind.INT16, TypeKind.INT32)


_NULLS = (NullsOrder.LAST, NullsOrder.FIRST)


def random_sort_key(ctx: Context, expr: object) -> SortKey:
    """ASC or DESC, and NULLS LAST/FIRST or (when the swarm allows) the default."""
    descending = chance(ctx.rng, 0.5)
    nulls: NullsOrder | None = ctx.rng.choice(_NULLS)
    if ctx.flag(Swarm.DEFAULT_NULLS, 0.3):
        nulls = None
    return SortKey(expr, descending, nulls)  # type: ignore[arg-type]


# -- expression keys ----------------------------------------------------------------------


def maybe_expression_key(ctx: Context, column: ScopeColumn) -> Expr:
    """`column`'s expression, or (when the swarm allows, sometimes) an expression
    over it (and another column). Simpler means the column itself."""
    if not ctx.flag(Swarm.EXPRESSION_KEYS, EXPRESSION_KEY_RATE):
        return column.expr
    t = column.type
    forms = ["case"] if not t.is_float and has_literals(t) else []
    if t.is_integer:
        forms += ["mod", "negate", "sum"]
    elif t.is_float or t.kind is TypeKind.DECIMAL:
        forms += ["negate", "sum"]
    form = ctx.rng.choice(forms) if forms else None
    if form == "mod":
        return BinaryOp(BinaryOperator.MOD, column.expr, integer(ctx.rng.choice((2, 3, 5))))
    if form == "negate":
        return UnaryOp(UnaryOperator.NEG, _widened(column))
    if form == "sum":
        others = [c for c in columns(ctx, lambda u: _summable(t, u)) if c.expr != column.expr]
        other = ctx.rng.choice(others) if others else column
        return BinaryOp(BinaryOperator.ADD, _widened(column), _widened(other))
    if form == "case":
        return _bucket(ctx, column)
    return column.expr


def _summable(t: T.SqlType, u: T.SqlType) -> bool:
    """Two integers, or two DOUBLEs (one correctly rounded addition, the same in
    every engine); never decimals (a sum of two DECIMAL(38, s) may not fit)."""
    if t.is_integer:
        return u.is_integer
    return t.kind is TypeKind.FLOAT64 and u.kind is TypeKind.FLOAT64


def _widened(column: ScopeColumn) -> Expr:
    """An integer that neither negation nor a sum of two can overflow: a narrow
    one as BIGINT, a wider one's remainder by 1000. Other numbers as they are
    (negating a decimal or a float never overflows)."""
    t = column.type
    if not t.is_integer:
        return column.expr
    if t.kind in _NARROW:
        return Cast(column.expr, T.INT64)
    return BinaryOp(BinaryOperator.MOD, column.expr, integer(1000))


def _bucket(ctx: Context, column: ScopeColumn) -> Expr:
    """CASE WHEN c IS NULL THEN 0 WHEN c < literal THEN 1 ELSE 2 END."""
    bound = random_literal(ctx, column.type)
    less = BinaryOp(BinaryOperator.LT, column.expr, bound)
    return Case(((IsNull(column.expr), integer(0)), (less, integer(1))), integer(2))


# -- degenerate ORDER BY ----------------------------------------------------------------


def maybe_degenerate_order(ctx: Context, partition_by: tuple, order_by: tuple[SortKey, ...]
                           ) -> tuple[tuple, tuple[SortKey, ...]]:
    """(PARTITION BY, ORDER BY) as drawn, or (when the swarm allows, sometimes)
    with a key that orders nothing added among the ORDER BY keys: NULL, an
    integer constant, or a PARTITION BY key (one is drawn when there is none),
    in a random direction. Simpler means as drawn."""
    if not ctx.flag(Swarm.DEGENERATE_ORDER, DEGENERATE_RATE):
        return partition_by, order_by
    rng = ctx.rng
    form = rng.choice(("null", "constant", "partition-key"))
    if form == "null":
        expr: Expr = Literal(None, None)
    elif form == "constant":
        expr = integer(rng.choice((1, 1, 2, 0)))
    else:
        if not partition_by:
            found = columns(ctx, is_comparable)
            if not found:
                return partition_by, order_by
            partition_by = (rng.choice(found).expr,)
        expr = rng.choice(partition_by)
    at = rng.randint(0, len(order_by))
    return partition_by, (*order_by[:at], random_sort_key(ctx, expr), *order_by[at:])


# -- shared PARTITION BY prefixes ---------------------------------------------------------


def shared_prefixes(ctx: Context) -> list[tuple[Expr, ...]] | None:
    """PARTITION BY a; a, b; a, b (for the specs of a pool, in turn), when the
    swarm allows it (sometimes) and the scope has two comparable columns."""
    if not ctx.flag(Swarm.SHARED_PARTITIONS, 0.3):
        return None
    found = [c for c in columns(ctx, is_comparable) if not c.unique]
    if len(found) < 2:
        return None
    a, b = ctx.rng.sample(found, 2)
    return [(a.expr,), (a.expr, b.expr), (a.expr, b.expr)]
