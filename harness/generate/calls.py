"""Calls of window functions and aggregates, typed against the scope.

Every function of `harness.core.functions` that can take OVER has an argument
builder in `ARGUMENTS` (checked when this module is imported). A builder
returns None when the scope has no column of a type the function takes
(`string_agg` without a string column); the function is then drawn again.
Types decide what fits: sum/avg/stddev/var take numbers, bool_and/bool_or a
boolean column or a predicate, string_agg a string, the others any column
that compares.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.core import types as T
from harness.core.errors import HarnessError
from harness.core.functions import FUNCTIONS, FunctionKind, FunctionSpec
from harness.core.model import (
    BinaryOp,
    BinaryOperator,
    Expr,
    FuncCall,
    Literal,
    NullsOrder,
    NullTreatment,
    SortKey,
    Star,
)
from harness.core.types import SqlType, TypeKind
from harness.generate.context import (
    Context,
    column_of,
    has_literals,
    integer,
    random_literal,
    random_predicate,
)
from harness.generate.draws import chance, weighted
from harness.generate.swarm import Swarm

WINDOW_FUNCTIONS: tuple[FunctionSpec, ...] = tuple(
    s for s in FUNCTIONS.values() if s.kind is not FunctionKind.SCALAR
)
# Function families the swarm switches off as a whole; the others are always on.
FAMILIES: dict[Swarm, frozenset[str]] = {
    Swarm.STATISTICS: frozenset({"stddev_samp", "stddev_pop", "var_samp", "var_pop"}),
    Swarm.BOOLEAN_AGGREGATES: frozenset({"bool_and", "bool_or"}),
    Swarm.COLLECTING: frozenset({"array_agg", "string_agg"}),
    Swarm.QUANTILES: frozenset({"median", "quantile_cont", "quantile_disc", "percentile_cont",
                                "percentile_disc"}),
    Swarm.PAIR_STATISTICS: frozenset({"covar_pop", "covar_samp", "corr", "regr_slope",
                                      "regr_intercept", "regr_count"}),
    Swarm.MORE_AGGREGATES: frozenset({"mode", "first", "last", "any_value", "bit_and", "bit_or",
                                      "bit_xor", "count_if"}),
}
# The share of draws that keep a function of these three families (each has
# many members, which would otherwise crowd out the window functions).
NEW_FAMILY_WEIGHT = 0.3
_NEW_FAMILIES = FAMILIES[Swarm.QUANTILES] | FAMILIES[Swarm.PAIR_STATISTICS] | \
    FAMILIES[Swarm.MORE_AGGREGATES]


def available_functions(on: frozenset[Swarm]) -> tuple[FunctionSpec, ...]:
    """The window functions and aggregates whose family the swarm left on."""
    off = {name for flag, names in FAMILIES.items() if flag not in on for name in names}
    return tuple(s for s in WINDOW_FUNCTIONS if s.name not in off)


ArgumentBuilder = Callable[[Context], "tuple[Expr, ...] | None"]


def random_call(ctx: Context) -> FuncCall:
    """A call of any window function or aggregate, with arguments of fitting
    types and, sometimes, the clauses it takes. Simpler means an earlier
    function of the table (row_number first) without clauses."""
    functions = available_functions(ctx.on)
    while True:
        spec = ctx.rng.choice(functions)
        if spec.name in _NEW_FAMILIES and not chance(ctx.rng, NEW_FAMILY_WEIGHT):
            continue
        args = ARGUMENTS[spec.name](ctx)
        if args is None:
            continue
        if spec.takes_within_group:  # the builder gave (value, p...): the value is the key
            key = SortKey(args[0], chance(ctx.rng, 0.5), ctx.rng.choice((NullsOrder.LAST, NullsOrder.FIRST)))
            return FuncCall(spec.name, args[1:], within_group=(key,), **_clauses(ctx, spec, args))
        return FuncCall(spec.name, args, **_clauses(ctx, spec, args))


def _clauses(ctx: Context, spec: FunctionSpec, args: tuple[Expr, ...]) -> dict[str, object]:
    out: dict[str, object] = {}
    if spec.ignore_nulls and ctx.flag(Swarm.NULL_TREATMENT, 0.5):
        out["null_treatment"] = ctx.rng.choice((NullTreatment.IGNORE, NullTreatment.RESPECT))
    if spec.from_last and ctx.flag(Swarm.FROM_LAST, 0.5):
        out["from_last"] = chance(ctx.rng, 0.5)
    if spec.kind is not FunctionKind.AGGREGATE:
        return out
    if spec.takes_within_group:  # an ordered-set aggregate takes FILTER, no DISTINCT or ORDER BY
        condition = random_predicate(ctx, plain=True) if ctx.flag(Swarm.FILTER, 0.25) else None
        return out if condition is None else {**out, "filter": condition}
    distinct = args != (Star(),) and ctx.flag(Swarm.DISTINCT, 0.25)
    if spec.ordered_aggregate and ctx.flag(Swarm.ORDERED_AGGREGATE, 0.5):
        out["order_by"] = _aggregate_order(ctx, args, distinct)
    elif spec.ordered_aggregate and distinct:
        # The distinct elements' order is then up to the engine (hash order,
        # say): always order them, or drop DISTINCT when aggregate ORDER BY is off.
        if Swarm.ORDERED_AGGREGATE in ctx.on:
            out["order_by"] = _aggregate_order(ctx, args, distinct)
        else:
            distinct = False
    if distinct:
        out["distinct"] = True
    if ctx.flag(Swarm.FILTER, 0.25):
        condition = random_predicate(ctx, plain=True)
        if condition is not None:
            out["filter"] = condition
    return out


def _aggregate_order(ctx: Context, args: tuple[Expr, ...], distinct: bool) -> tuple[SortKey, ...]:
    """1-2 keys, then the row key: the comparator searches orders of a window's
    peers, not of elements tied on the aggregate's own ORDER BY, so such ties
    could only give false mismatches. With DISTINCT only the argument itself
    (the standard's rule; the elements are distinct, so never tied)."""
    exprs: list[Expr] = [args[0]]
    if not distinct:
        exprs = []
        for _ in range(ctx.rng.choice((1, 1, 2))):
            column = column_of(ctx)
            if column is not None and column.expr not in exprs:
                exprs.append(column.expr)
    keys = tuple(SortKey(e, chance(ctx.rng, 0.5), ctx.rng.choice((NullsOrder.LAST, NullsOrder.FIRST)))
                 for e in exprs)
    if distinct:
        return keys
    present = {k.expr for k in keys}
    return keys + tuple(SortKey(e, False, NullsOrder.LAST) for e in ctx.scope.row_key if e not in present)


# -- arguments, by function -------------------------------------------------------------


def _no_args(ctx: Context) -> tuple[Expr, ...]:
    return ()


def _one_column(ctx: Context) -> tuple[Expr, ...] | None:
    column = column_of(ctx)
    return None if column is None else (column.expr,)


def _numeric_column(ctx: Context) -> tuple[Expr, ...] | None:
    column = column_of(ctx, lambda t: t.is_numeric)
    return None if column is None else (column.expr,)


def small_count(ctx: Context, low: int) -> Literal:
    """A count argument (ntile's buckets, an offset, nth_value's n): mostly small,
    sometimes larger than any partition. Simpler means `low`."""
    n = weighted(ctx.rng, ((0, 3), (1, 3), (2, 2), (3, 1), (5, 1), (50, 1)))
    return integer(low + n)


def _ntile_args(ctx: Context) -> tuple[Expr, ...]:
    return (small_count(ctx, 1),)


def _offset_args(ctx: Context) -> tuple[Expr, ...] | None:
    """lag/lead: a column, maybe an offset (0 or more), maybe a default of its
    type. The offset is sometimes past the largest INTEGER (near 2^63), a NULL,
    or read from the row (`k`, `k % 3`: negative ones look the other way), and
    the default sometimes a column of the value's type, when the swarm allows."""
    column = column_of(ctx)
    if column is None:
        return None
    arity = ctx.rng.choice((1, 2, 3))
    if not has_literals(column.type):
        arity = min(arity, 2)  # no default: see `has_literals`
    args: list[Expr] = [column.expr]
    if arity >= 2:
        args.append(_lag_offset(ctx))
    if arity == 3:
        same = column_of(ctx, lambda t: t == column.type) if ctx.flag(Swarm.ROW_OFFSETS, 0.3) else None
        args.append(same.expr if same is not None else random_literal(ctx, column.type, null_chance=0.2))
    return tuple(args)


# Offsets at the edges of the integer types: past every partition, and past
# what a 32-bit or 64-bit position plus the offset holds.
EXTREME_COUNTS = (2**31 - 1, 2**31, 2**32, 2**62, 2**63 - 2, 2**63 - 1)


def extreme_count(ctx: Context) -> Literal:
    """An offset near 2^31 or 2^63 (2^63 - 1 most often). Simpler means 2^31 - 1."""
    return integer(weighted(ctx.rng, tuple((n, 3 if n == 2**63 - 1 else 1) for n in EXTREME_COUNTS)))


def _lag_offset(ctx: Context) -> Expr:
    """A lag/lead offset: mostly `small_count`; near 2^63, NULL, or per row
    (an integer column, or it modulo 3) when the swarm allows."""
    if ctx.flag(Swarm.EXTREME_OFFSETS, 0.2):
        return extreme_count(ctx)
    if ctx.flag(Swarm.ROW_OFFSETS, 0.4):
        column = column_of(ctx, lambda t: t.is_integer and t.kind is not TypeKind.INT128)
        if column is None or chance(ctx.rng, 0.2):
            return Literal(None, T.INT64)
        if chance(ctx.rng, 0.5):
            return column.expr
        return BinaryOp(BinaryOperator.MOD, column.expr, integer(3))
    return small_count(ctx, 0)


def _nth_value_args(ctx: Context) -> tuple[Expr, ...] | None:
    column = column_of(ctx)
    return None if column is None else (column.expr, small_count(ctx, 1))


def _count_args(ctx: Context) -> tuple[Expr, ...] | None:
    return (Star(),) if chance(ctx.rng, 0.3) else _one_column(ctx)


def _boolean_args(ctx: Context) -> tuple[Expr, ...]:
    column = column_of(ctx, lambda t: t.kind is TypeKind.BOOL)
    if column is not None and chance(ctx.rng, 0.5):
        return (column.expr,)
    return (random_predicate(ctx),)


def _string_agg_args(ctx: Context) -> tuple[Expr, ...] | None:
    column = column_of(ctx, lambda t: t.kind is TypeKind.STRING)
    separator = Literal(ctx.rng.choice((",", "", " | ")), T.STRING)
    return None if column is None else (column.expr, separator)


def _interpolable(t: SqlType) -> bool:
    """Integers and floats: DuckDB and DataFusion keep DECIMAL for median and
    quantile_cont (measured), the standard and PostgreSQL give DOUBLE."""
    return t.is_integer or t.is_float


# Fractions with a short binary expansion: a double p such as 0.1 is not 1/10,
# and ceil(p * n) would then depend on how each engine rounds p * n.
FRACTIONS = (0.0, 0.125, 0.25, 0.375, 0.5, 0.75, 1.0)


def _fraction(ctx: Context) -> Literal:
    return Literal(ctx.rng.choice(FRACTIONS), T.FLOAT64)


def _quantile_args(fits: Callable[[SqlType], bool]) -> ArgumentBuilder:
    """(a column, a constant p) for quantiles; (value, p) for the WITHIN GROUP ones too."""
    def build(ctx: Context) -> tuple[Expr, ...] | None:
        column = column_of(ctx, fits)
        return None if column is None else (column.expr, _fraction(ctx))

    return build


def _interpolable_column(ctx: Context) -> tuple[Expr, ...] | None:
    column = column_of(ctx, _interpolable)
    return None if column is None else (column.expr,)


def _pair_args(ctx: Context) -> tuple[Expr, ...] | None:
    """(y, x): two numbers, maybe the same column."""
    y, x = column_of(ctx, _interpolable), column_of(ctx, _interpolable)
    return None if y is None or x is None else (y.expr, x.expr)


UNDRAWN = frozenset({"any_value"})


def _undetermined(ctx: Context) -> None:
    """Never drawn: any_value over distinct values has several right answers,
    for which the reference raises ReferenceGap (engines pick differently), and
    every generated case must be one the reference evaluates. The corpus covers
    it on frames with one right answer. (mode is drawn in its WITHIN GROUP
    form, whose order breaks ties.)"""
    return None


def _integer_column(ctx: Context) -> tuple[Expr, ...] | None:
    column = column_of(ctx, lambda t: t.is_integer)
    return None if column is None else (column.expr,)


ARGUMENTS: dict[str, ArgumentBuilder] = {
    **{name: _no_args for name in ("row_number", "rank", "dense_rank", "percent_rank", "cume_dist")},
    "ntile": _ntile_args,
    "lag": _offset_args,
    "lead": _offset_args,
    "first_value": _one_column,
    "last_value": _one_column,
    "nth_value": _nth_value_args,
    "count": _count_args,
    **{name: _numeric_column for name in ("sum", "avg", "stddev_samp", "stddev_pop", "var_samp", "var_pop")},
    "min": _one_column,
    "max": _one_column,
    "bool_and": _boolean_args,
    "bool_or": _boolean_args,
    "string_agg": _string_agg_args,
    "array_agg": _one_column,
    "median": _interpolable_column,
    "quantile_cont": _quantile_args(_interpolable),
    "quantile_disc": _quantile_args(lambda t: t.is_numeric),
    "percentile_cont": _quantile_args(_interpolable),
    "percentile_disc": _quantile_args(lambda t: t.is_numeric),
    **{name: _one_column for name in ("first", "last", "mode")},
    **{name: _undetermined for name in UNDRAWN},
    **{name: _pair_args for name in ("covar_pop", "covar_samp", "corr", "regr_slope",
                                     "regr_intercept", "regr_count")},
    **{name: _integer_column for name in ("bit_and", "bit_or", "bit_xor")},
    "count_if": _boolean_args,
}

_MISSING = {s.name for s in WINDOW_FUNCTIONS} - set(ARGUMENTS)
if _MISSING:
    raise HarnessError(f"no argument builder in {__name__}.ARGUMENTS for {sorted(_MISSING)}")
