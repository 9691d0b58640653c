"""Schema-aware window queries that a given engine can run, and whole cases.

Plain functions over a `random.Random` that the caller creates and seeds: a
case is replayed from its seed and the target dialect alone
(`generate_case(seed, dialect)`). Unlike `model_strategies` (structure only,
for SQL-level tests), these queries are typed against their schema and run:

    SELECT id, <1-3 window expressions> FROM t [WHERE <predicate>]
    [WINDOW w AS (...)] ORDER BY id ASC NULLS LAST

`id` is unique, so the answer's row order is fixed. The window expressions
call every window function and aggregate of `harness.functions`, with
PARTITION BY, ORDER BY keys that always say NULLS FIRST/LAST (the engines'
defaults differ), the default frame or an explicit one of every mode, bound
kind and exclusion, IGNORE/RESPECT NULLS, FROM FIRST/LAST, DISTINCT, FILTER
and ordered aggregates. Frame offsets are small non-negative integers for
ROWS and GROUPS, and values of the key's type for RANGE (one numeric key).

What a dialect supports is never listed here: each drawn part is rendered in
the target dialect, and a part that raises Unsupported is counted in
`rejected` (by feature) and drawn again. Swarm testing: `random_swarm`
switches a random subset of constructs off per query.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum
from random import Random
from typing import TypeVar

from harness import types as T
from harness.cases import Case
from harness.dialects.base import Dialect
from harness.errors import HarnessError, Unsupported
from harness.functions import FUNCTIONS, FunctionKind, FunctionSpec
from harness.generate.data import DataKnobs, random_knobs, random_table, random_value
from harness.generate.schemas import ID, TABLE, random_schema, value_columns
from harness.model import (
    BinaryOp,
    BinaryOperator,
    Bound,
    BoundKind,
    Column,
    ColumnDef,
    Exclusion,
    Expr,
    Frame,
    FrameMode,
    FuncCall,
    IsNull,
    Literal,
    NamedWindow,
    NullsOrder,
    NullTreatment,
    Select,
    SelectItem,
    SortKey,
    Star,
    TableRef,
    TableSchema,
    WindowExpr,
    WindowSpec,
)
from harness.sql.literals import natural_integer_type
from harness.sql.writer import write
from harness.types import SqlType, TypeKind

# Draws of one part before giving up on a dialect (see NothingRenderable).
ATTEMPTS = 50
WINDOW_NAME = "w"
P = TypeVar("P")


class NothingRenderable(HarnessError):
    """No draw of a required part rendered in the dialect: its feature table is
    narrower than the generator can work with (the `rejected` counts say why)."""


class Swarm(Enum):
    """Constructs that swarm testing switches off for a whole query."""

    PARTITION_BY = "PARTITION BY"
    ORDER_BY = "window ORDER BY"
    FRAMES = "explicit frames"
    GROUPS = "GROUPS frames"
    OFFSETS = "n PRECEDING/FOLLOWING"
    EXCLUSION = "EXCLUDE"
    NULL_TREATMENT = "IGNORE/RESPECT NULLS"
    FROM_LAST = "FROM FIRST/LAST"
    DISTINCT = "DISTINCT"
    FILTER = "FILTER"
    ORDERED_AGGREGATE = "aggregate ORDER BY"
    NAMED_WINDOW = "WINDOW clause"
    WHERE = "WHERE"


def random_swarm(rng: Random) -> frozenset[Swarm]:
    """The constructs switched on: each independently, with probability 3/4.
    Simpler means fewer on (though a reducer removes constructs, not flags)."""
    return frozenset(s for s in Swarm if rng.random() < 0.75)


@dataclass
class QueryContext:
    rng: Random
    schema: TableSchema
    dialect: Dialect
    knobs: DataKnobs
    on: frozenset[Swarm]
    rejected: Counter[str] = field(default_factory=Counter)
    named: tuple[NamedWindow, ...] = ()

    def flag(self, swarm: Swarm, chance: float) -> bool:
        return swarm in self.on and self.rng.random() < chance


# -- the query ---------------------------------------------------------------------


def random_query(
    rng: Random,
    schema: TableSchema,
    dialect: Dialect,
    knobs: DataKnobs | None = None,
    rejected: Counter[str] | None = None,
) -> Select:
    """A query over `schema` that renders in `dialect`; `knobs` shape its literals
    (as they shaped the data), `rejected` collects what the dialect refused.

    Simpler means fewer window expressions, no WHERE and no WINDOW clause; each
    window expression's own notion of simpler is in `random_window_expr`.
    """
    ctx = QueryContext(rng, schema, dialect, knobs or DataKnobs(rows=0), random_swarm(rng))
    ctx.named = _named_windows(ctx)
    where = _where(ctx)
    items = [SelectItem(Column(ID))]
    for i in range(rng.randint(1, 3)):
        items.append(SelectItem(_renderable(ctx, where), f"w{i + 1}"))
    if rejected is not None:
        rejected.update(ctx.rejected)
    return _select(ctx, tuple(items), where)


def _select(ctx: QueryContext, items: tuple[SelectItem, ...], where: Expr | None) -> Select:
    return Select(items, TableRef(ctx.schema.name), where, windows=ctx.named,
                  order_by=(SortKey(Column(ID), False, NullsOrder.LAST),))


def _renders(ctx: QueryContext, query: Select) -> bool:
    try:
        write(query, ctx.dialect)
    except Unsupported as e:
        ctx.rejected[e.feature] += 1
        return False
    return True


def _first_that_renders(ctx: QueryContext, draw: Callable[[], P], probe: Callable[[P], Select]) -> P | None:
    """The first of up to ATTEMPTS draws whose probe query renders (refusals counted)."""
    for _ in range(ATTEMPTS):
        part = draw()
        if _renders(ctx, probe(part)):
            return part
    return None


def _renderable(ctx: QueryContext, where: Expr | None) -> WindowExpr:
    expr = _first_that_renders(ctx, lambda: random_window_expr(ctx),
                               lambda e: _select(ctx, (SelectItem(e),), where))
    if expr is None:
        raise NothingRenderable(f"no window expression renders in {ctx.dialect.name}: {dict(ctx.rejected)}")
    return expr


def _probe(ctx: QueryContext, **clauses: object) -> Select:
    return Select((SelectItem(Column(ID)),), TableRef(ctx.schema.name), **clauses)  # type: ignore[arg-type]


def _named_windows(ctx: QueryContext) -> tuple[NamedWindow, ...]:
    """No WINDOW clause, or one window `w` that some expressions use."""
    if not ctx.flag(Swarm.NAMED_WINDOW, 0.3):
        return ()
    named = _first_that_renders(ctx, lambda: (NamedWindow(WINDOW_NAME, random_window_spec(ctx)),),
                                lambda n: _probe(ctx, windows=n))
    return named or ()


def _where(ctx: QueryContext) -> Expr | None:
    if not ctx.flag(Swarm.WHERE, 0.3):
        return None
    return _first_that_renders(ctx, lambda: random_predicate(ctx), lambda p: _probe(ctx, where=p))


# -- window expressions --------------------------------------------------------------


def random_window_expr(ctx: QueryContext) -> WindowExpr:
    """A window function or aggregate over a window: the named one (as is, or
    refined by a frame), else an inline one. Simpler means a function without
    arguments or clauses, over `OVER ()`."""
    call = random_call(ctx)
    if ctx.named and ctx.rng.random() < 0.5:
        return WindowExpr(call, _over_named(ctx))
    return WindowExpr(call, random_window_spec(ctx))


def _over_named(ctx: QueryContext) -> WindowSpec:
    base = ctx.named[0].spec
    if base.frame is None and ctx.flag(Swarm.FRAMES, 0.5):
        return WindowSpec(WINDOW_NAME, frame=random_frame(ctx, base.order_by))
    return WindowSpec(WINDOW_NAME)


_WINDOW_FUNCTIONS = tuple(s for s in FUNCTIONS.values()
                          if s.kind in (FunctionKind.WINDOW, FunctionKind.AGGREGATE))


def random_call(ctx: QueryContext) -> FuncCall:
    """A call of any window function or aggregate, with arguments of fitting
    types and the clauses it takes. Simpler: no clauses."""
    while True:
        spec = ctx.rng.choice(_WINDOW_FUNCTIONS)
        build = ARGUMENTS.get(spec.name)
        if build is None:
            raise HarnessError(f"no argument builder for {spec.name}() in {__name__}.ARGUMENTS")
        args = build(ctx)
        if args is not None:  # None: no column of a type the function takes
            return FuncCall(spec.name, args, **_clauses(ctx, spec, args))


def _clauses(ctx: QueryContext, spec: FunctionSpec, args: tuple[Expr, ...]) -> dict[str, object]:
    out: dict[str, object] = {}
    if spec.ignore_nulls and ctx.flag(Swarm.NULL_TREATMENT, 0.5):
        out["null_treatment"] = ctx.rng.choice(list(NullTreatment))
    if spec.from_last and ctx.flag(Swarm.FROM_LAST, 0.5):
        out["from_last"] = ctx.rng.random() < 0.5
    if spec.kind is not FunctionKind.AGGREGATE:
        return out
    if spec.ordered_aggregate and ctx.flag(Swarm.ORDERED_AGGREGATE, 0.5):
        out["order_by"] = random_sort_keys(ctx, at_least=1)
    elif args != (Star(),) and ctx.flag(Swarm.DISTINCT, 0.25):
        out["distinct"] = True
    if ctx.flag(Swarm.FILTER, 0.25):
        out["filter"] = random_predicate(ctx)
    return out


# -- arguments, by function -------------------------------------------------------------

ArgumentBuilder = Callable[[QueryContext], "tuple[Expr, ...] | None"]


def _columns(ctx: QueryContext, fits: Callable[[SqlType], bool]) -> list[ColumnDef]:
    return [c for c in ctx.schema.columns if fits(c.type)]


def _column_of(ctx: QueryContext, fits: Callable[[SqlType], bool] = lambda t: True) -> ColumnDef | None:
    """A random column whose type fits, preferring value columns over `id`."""
    found = _columns(ctx, fits)
    values = [c for c in found if c.name != ID]
    pool = values if values and ctx.rng.random() < 0.9 else found
    return ctx.rng.choice(pool) if pool else None


def _no_args(ctx: QueryContext) -> tuple[Expr, ...]:
    return ()


def _one_column(ctx: QueryContext) -> tuple[Expr, ...] | None:
    column = _column_of(ctx)
    return None if column is None else (Column(column.name),)


def _numeric_column(ctx: QueryContext) -> tuple[Expr, ...] | None:
    column = _column_of(ctx, lambda t: t.is_numeric)
    return None if column is None else (Column(column.name),)


def _ntile_args(ctx: QueryContext) -> tuple[Expr, ...]:
    return (integer(ctx.rng.randint(1, 6)),)


def _offset_args(ctx: QueryContext) -> tuple[Expr, ...] | None:
    """lag/lead: a column, maybe an offset 0..3, maybe a default of its type."""
    column = _column_of(ctx)
    if column is None:
        return None
    args: list[Expr] = [Column(column.name)]
    arity = ctx.rng.randint(1, 3)
    if arity >= 2:
        args.append(integer(ctx.rng.randint(0, 3)))
    if arity == 3:
        args.append(random_literal(ctx, column.type, null_chance=0.2))
    return tuple(args)


def _nth_value_args(ctx: QueryContext) -> tuple[Expr, ...] | None:
    column = _column_of(ctx)
    return None if column is None else (Column(column.name), integer(ctx.rng.randint(1, 4)))


def _count_args(ctx: QueryContext) -> tuple[Expr, ...] | None:
    return (Star(),) if ctx.rng.random() < 0.3 else _one_column(ctx)


def _boolean_arg(ctx: QueryContext) -> tuple[Expr, ...] | None:
    return (random_predicate(ctx),)


def _string_agg_args(ctx: QueryContext) -> tuple[Expr, ...] | None:
    column = _column_of(ctx, lambda t: t.kind is TypeKind.STRING)
    separator = Literal(ctx.rng.choice((",", "", " | ")), T.STRING)
    return None if column is None else (Column(column.name), separator)


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
    "bool_and": _boolean_arg,
    "bool_or": _boolean_arg,
    "string_agg": _string_agg_args,
    "array_agg": _one_column,
}


# -- windows -----------------------------------------------------------------------------


def random_window_spec(ctx: QueryContext) -> WindowSpec:
    """PARTITION BY 0-2 value columns, ORDER BY 0-3 keys, the default frame or an
    explicit one. Simpler means `OVER ()`."""
    partition: tuple[Expr, ...] = ()
    if Swarm.PARTITION_BY in ctx.on:
        columns = value_columns(ctx.schema)
        count = min(len(columns), ctx.rng.choice((0, 0, 1, 1, 2)))
        partition = tuple(Column(c.name) for c in ctx.rng.sample(columns, count))
    order_by = random_sort_keys(ctx) if Swarm.ORDER_BY in ctx.on else ()
    frame = random_frame(ctx, order_by) if ctx.flag(Swarm.FRAMES, 0.7) else None
    return WindowSpec(partition_by=partition, order_by=order_by, frame=frame)


def random_sort_keys(ctx: QueryContext, at_least: int = 0) -> tuple[SortKey, ...]:
    """`at_least`-3 keys on distinct columns (`id` among them sometimes, which
    breaks every tie), each ASC or DESC with an explicit NULLS FIRST/LAST.
    Simpler means fewer keys, ASC NULLS LAST."""
    columns = list(ctx.schema.columns)
    count = min(len(columns), max(at_least, ctx.rng.choice((0, 1, 1, 1, 2, 2, 3))))
    return tuple(
        SortKey(Column(c.name), ctx.rng.random() < 0.5, ctx.rng.choice(list(NullsOrder)))
        for c in ctx.rng.sample(columns, count)
    )


_START_KINDS = (BoundKind.UNBOUNDED_PRECEDING, BoundKind.PRECEDING, BoundKind.CURRENT_ROW,
                BoundKind.FOLLOWING)
_END_KINDS = (BoundKind.PRECEDING, BoundKind.CURRENT_ROW, BoundKind.FOLLOWING,
              BoundKind.UNBOUNDED_FOLLOWING)
_ORDER = {kind: i for i, kind in enumerate(BoundKind)}
_OFFSET_KINDS = (BoundKind.PRECEDING, BoundKind.FOLLOWING)


def random_frame(ctx: QueryContext, order_by: tuple[SortKey, ...]) -> Frame:
    """A frame valid for these ORDER BY keys: ROWS or RANGE, GROUPS with keys;
    offsets unless RANGE lacks exactly one numeric key; start not after end by
    kind (by offset it may be, giving an empty frame); an EXCLUDE sometimes.
    Simpler means ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW."""
    modes = [FrameMode.ROWS, FrameMode.RANGE]
    if order_by and Swarm.GROUPS in ctx.on:
        modes.append(FrameMode.GROUPS)
    mode = ctx.rng.choice(modes)
    key_type = _range_key_type(ctx, order_by) if mode is FrameMode.RANGE else None
    offsets = Swarm.OFFSETS in ctx.on and (mode is not FrameMode.RANGE or key_type is not None)
    allowed = [k for k in BoundKind if offsets or k not in _OFFSET_KINDS]
    start = ctx.rng.choice([k for k in _START_KINDS if k in allowed])
    end = ctx.rng.choice([k for k in _END_KINDS if k in allowed and _ORDER[k] >= _ORDER[start]])
    exclusion = ctx.rng.choice([None, *Exclusion]) if ctx.flag(Swarm.EXCLUSION, 0.5) else None
    return Frame(mode, _bound(ctx, start, key_type), _bound(ctx, end, key_type), exclusion)


def _range_key_type(ctx: QueryContext, order_by: tuple[SortKey, ...]) -> SqlType | None:
    """The type of the single numeric ORDER BY key a RANGE offset needs, or None."""
    if len(order_by) != 1 or not isinstance(order_by[0].expr, Column):
        return None
    t = ctx.schema.column(order_by[0].expr.name).type
    return t if t.is_numeric else None


def _bound(ctx: QueryContext, kind: BoundKind, key_type: SqlType | None) -> Bound:
    if kind not in _OFFSET_KINDS:
        return Bound(kind)
    if key_type is None:  # ROWS and GROUPS count rows or peer groups
        return Bound(kind, integer(ctx.rng.randint(0, 3)))
    return Bound(kind, range_offset(ctx, key_type))


def range_offset(ctx: QueryContext, t: SqlType) -> Literal:
    """A finite, non-negative RANGE offset of the key's type. Simpler means 0."""
    rng = ctx.rng
    if t.is_integer:
        return integer(rng.choice((0, 1, 1, 2, 3, 5)))
    if t.kind is TypeKind.DECIMAL:
        return Literal(Decimal(rng.randint(0, 300)).scaleb(-2), t)
    # No infinite offsets: key +- inf is NaN for an infinite key, the standard
    # does not say which rows that takes, and the reference declines them.
    return Literal(rng.choice((0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 10.0)), t)


# -- predicates and literals -----------------------------------------------------------


_COMPARISONS = (BinaryOperator.EQ, BinaryOperator.NE, BinaryOperator.LT, BinaryOperator.LE,
                BinaryOperator.GT, BinaryOperator.GE)


def random_predicate(ctx: QueryContext) -> Expr:
    """`c IS [NOT] NULL` or `c <op> literal` on a value column (for WHERE, FILTER
    and bool_and/bool_or). Simpler means `c IS NULL`."""
    column = _column_of(ctx)
    assert column is not None  # every schema has `id`
    if ctx.rng.random() < 0.3:
        return IsNull(Column(column.name), negated=ctx.rng.random() < 0.5)
    op = ctx.rng.choice(_COMPARISONS)
    return BinaryOp(op, Column(column.name), random_literal(ctx, column.type))


def random_literal(ctx: QueryContext, t: SqlType, null_chance: float = 0.0) -> Literal:
    """A literal of type `t` drawn like the data (so comparisons hit values that
    occur), or a typed NULL. Simpler means NULL, then values near zero."""
    if ctx.rng.random() < null_chance:
        return Literal(None, t)
    value = random_value(ctx.rng, t, ctx.knobs)
    return integer(value) if t.is_integer else Literal(value, t)  # type: ignore[arg-type]


def integer(n: int) -> Literal:
    """An integer literal of the type a bare number is read as (no CAST)."""
    return Literal(n, natural_integer_type(n))


# -- whole cases --------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class GeneratedCase:
    """A case drawn from a seed for one dialect, and the draws the dialect refused."""

    seed: int
    case: Case
    knobs: DataKnobs
    rejected: Counter[str]


def generate_case(seed: int, dialect: Dialect) -> GeneratedCase:
    """The case for `seed`: schema, data and query each from their own stream, so
    the table is the same for every dialect, and so is the query where the
    dialects accept the same draws."""
    schema = random_schema(Random(f"{seed}/schema"))
    knobs = random_knobs(Random(f"{seed}/knobs"))
    table = random_table(Random(f"{seed}/data"), schema, knobs)
    rejected: Counter[str] = Counter()
    query = random_query(Random(f"{seed}/query"), schema, dialect, knobs, rejected)
    case = Case(
        id=f"generated/{seed}",
        description=f"generated from seed {seed} for {dialect.name}",
        tags=("generated",),
        schemas=(schema,),
        tables={TABLE: table},
        sql=write(query),
        query=query,
    )
    return GeneratedCase(seed, case, knobs, rejected)
