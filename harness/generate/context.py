"""What every query generator draws against: the scope of a SELECT, the random
stream, the data knobs and the swarm, plus the leaves (typed literals and
predicates) that several generators share.

A scope lists the expressions a SELECT's window expressions may read, with
their types: the table's columns for a plain scan, both tables' (qualified)
columns for a join, the group keys and aggregate calls after GROUP BY, the
subquery's output columns over a subquery. Generators pick from it by type
(`column_of`), so they work for every `TypeKind` a schema may hold.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from harness.core import types as T
from harness.core.functions import lookup
from harness.core.model import (
    COMPARISONS,
    BinaryOp,
    BinaryOperator,
    Column,
    Expr,
    FuncCall,
    IsNull,
    Literal,
    TableSchema,
    UnaryOp,
    UnaryOperator,
    WindowExpr,
)
from harness.core.types import SqlType, TypeKind
from harness.generate.data import DataKnobs, random_value
from harness.generate.draws import Draws, chance
from harness.generate.swarm import Swarm
from harness.sql.literals import natural_integer_type

_ORDERED_COMPARISONS = tuple(sorted(COMPARISONS, key=lambda op: op.value))
_DATETIME = (TypeKind.DATE, TypeKind.TIMESTAMP)


@dataclass(frozen=True)
class ScopeColumn:
    """An expression a window may read: a column, or an aggregate after GROUP BY.

    `unique` marks a column of the row key (`id`, mostly without ties), which
    generators use less than the others for values, partitions and sort keys. An `exact` column
    holds the same values in every engine; an inexact one (a float an engine
    computed: avg, stddev, a sum of floats) is selected, never read: as a
    key it would split or merge peers by rounding, and as an argument its
    rounding error would be judged by a tolerance that does not know of it.
    """

    expr: Expr
    type: SqlType
    unique: bool = False
    exact: bool = True


@dataclass(frozen=True)
class Scope:
    """The expressions a SELECT reads, and which of them identify a row.

    `row_key` together is unique per row: ordering by it leaves no ties.
    `schemas` describe the scope's columns for the coverage grid (the steer
    reads RANGE key types from them). `witnessed`: the instrumenter reveals
    each engine's order of tied rows here (a plain table scan, see
    `harness.judge.instrument`); elsewhere ties under order-sensitive functions
    can only be searched, which gives up on large peer groups.
    """

    columns: tuple[ScopeColumn, ...]
    row_key: tuple[Expr, ...]
    schemas: tuple[TableSchema, ...]
    witnessed: bool = False

    def type_of(self, expr: Expr) -> SqlType | None:
        for c in self.columns:
            if c.expr == expr:
                return c.type
        return None


@dataclass
class Context:
    """One query's draws: the stream, the scope being generated, knobs, swarm."""

    rng: Draws
    scope: Scope
    knobs: DataKnobs
    on: frozenset[Swarm]

    def flag(self, swarm: Swarm, p: float) -> bool:
        """True when `swarm` is on and a draw says so, with chance `p` (no draw when it
        is off). Simpler means False."""
        return swarm in self.on and chance(self.rng, p)

    def within(self, scope: Scope) -> Context:
        return replace(self, scope=scope)


# -- types ----------------------------------------------------------------------


def is_comparable(t: SqlType) -> bool:
    """A type that sorts, groups and compares in every engine (not a list)."""
    return t.kind is not TypeKind.LIST


def is_range_key(t: SqlType) -> bool:
    """A type that a RANGE offset can move: a number, a date, a timestamp or a
    (day-time) interval."""
    return t.is_numeric or t.kind in _DATETIME or t.kind is TypeKind.INTERVAL


def has_literals(t: SqlType) -> bool:
    """A type whose values the generator writes as literals. Not an interval: the
    model writes an interval as a constant of one unit (INTERVAL '3' HOUR), and
    engines type such a constant by its unit (Spark's lag(iv, 1, INTERVAL '1'
    HOUR) over an INTERVAL DAY TO SECOND column is a type mismatch)."""
    return t.kind is not TypeKind.INTERVAL


# Aggregates whose DOUBLE result each engine rounds its own way (an ORDER BY
# over them groups rows by equal values, which such floats never are).
_INEXACT = frozenset({"avg", "stddev_samp", "stddev_pop", "var_samp", "var_pop", "median",
                      "quantile_cont", "percentile_cont", "covar_pop", "covar_samp", "corr",
                      "regr_slope", "regr_intercept"})


def is_exact(expr: Expr, scope: Scope) -> bool:
    """Does every engine compute the same value (no float rounding of its own)?

    avg is inexact even over decimals: some engines compute it as a double.
    """
    for c in scope.columns:
        if c.expr == expr:
            return c.exact
    call = expr.func if isinstance(expr, WindowExpr) else expr
    if not isinstance(call, FuncCall):
        return True
    if call.name in _INEXACT:
        return False
    if call.name == "sum":
        t = expr_type(call.args[0], scope)
        return t is None or not t.is_float
    return all(is_exact(a, scope) for a in call.args)


def expr_type(expr: Expr, scope: Scope) -> SqlType | None:
    """The (standard) type of an expression the generators built over `scope`."""
    found = scope.type_of(expr)
    if found is not None:
        return found
    if isinstance(expr, Literal):
        return expr.type
    if isinstance(expr, (BinaryOp, IsNull, UnaryOp)):
        return T.BOOL  # generated predicates only
    if isinstance(expr, WindowExpr):
        expr = expr.func
    if isinstance(expr, FuncCall):
        # An ordered-set aggregate's type rule reads its WITHIN GROUP value first.
        values = [k.expr for k in expr.within_group] + list(expr.args)
        return lookup(expr.name).result(tuple(expr_type(a, scope) for a in values))
    return None


# -- picking columns ------------------------------------------------------------------


def columns(ctx: Context, fits: Callable[[SqlType], bool]) -> list[ScopeColumn]:
    return [c for c in ctx.scope.columns if c.exact and fits(c.type)]


def column_of(ctx: Context, fits: Callable[[SqlType], bool] = is_comparable,
              plain: bool = False) -> ScopeColumn | None:
    """A random scope column whose type fits, mostly not a row key (`id`);
    `plain`: a column, not an aggregate. Simpler means the first fitting column."""
    found = [c for c in columns(ctx, fits) if not plain or isinstance(c.expr, Column)]
    values = [c for c in found if not c.unique]
    pool = found if not values or chance(ctx.rng, 0.1) else values
    return ctx.rng.choice(pool) if pool else None


def fresh_name(name: str, taken: set[str]) -> str:
    """`name`, or `name_2`, `name_3`...: unused, case-insensitively (engines fold
    identifiers), and now taken."""
    out, n = name, 1
    while out.casefold() in taken:
        n += 1
        out = f"{name}_{n}"
    taken.add(out.casefold())
    return out


# -- literals -----------------------------------------------------------------------


def integer(n: int) -> Literal:
    """An integer literal of the type a bare number is read as (so it needs no CAST)."""
    t = natural_integer_type(n)
    if t is None:
        raise ValueError(f"{n} does not fit a BIGINT literal")
    return Literal(n, t)


def random_literal(ctx: Context, t: SqlType, null_chance: float = 0.0) -> Literal:
    """A literal of type `t` drawn like the data (so comparisons hit values that
    occur), or a typed NULL. Simpler means not NULL, and what `random_value`
    calls simpler."""
    if chance(ctx.rng, null_chance):
        return Literal(None, t)
    value = random_value(ctx.rng, t, ctx.knobs)
    if t.is_integer:
        return integer(value)  # type: ignore[arg-type]
    if t.is_float and not math.isfinite(value):  # type: ignore[arg-type]
        # Non-finite literals need Feature.NAN_LITERAL; the data has them anyway.
        value = 0.5
    return Literal(value, t)


# -- predicates ------------------------------------------------------------------------


def random_predicate(ctx: Context, plain: bool = False) -> Expr | None:
    """A condition on one scope column: `c IS [NOT] NULL`, `c <op> literal`, a
    boolean column itself, sometimes two of these joined by AND/OR (for WHERE,
    HAVING, FILTER and bool_and/bool_or). Simpler means `c IS NULL`.

    `plain`: read only columns, never an aggregate of the grouped scope (a
    FILTER holding an aggregate is rejected by PostgreSQL and Spark, and the
    standard's rules for it are not ones the reference models); None when
    the scope has no such column."""
    rng = ctx.rng
    if chance(rng, 0.15):
        op = rng.choice((BinaryOperator.AND, BinaryOperator.OR))
        left, right = _condition(ctx, plain), _condition(ctx, plain)
        return None if left is None or right is None else BinaryOp(op, left, right)
    return _condition(ctx, plain)


def _condition(ctx: Context, plain: bool = False) -> Expr | None:
    rng = ctx.rng
    column = column_of(ctx, is_comparable, plain)
    if column is None and plain:
        return None
    if column is None:  # only list columns: a scope always has something else
        raise ValueError("a scope without a comparable column")
    shape = rng.random()
    if shape < 0.25 or not has_literals(column.type):
        return IsNull(column.expr, negated=chance(rng, 0.5))
    if column.type.kind is TypeKind.BOOL and shape < 0.6:
        return UnaryOp(UnaryOperator.NOT, column.expr) if chance(rng, 0.5) else column.expr
    op = rng.choice(_ORDERED_COMPARISONS)
    return BinaryOp(op, column.expr, random_literal(ctx, column.type))
