"""What the windows of a query run over: the FROM side and its scope.

Four shapes, each with a row identity the comparator can lean on:

- table: `FROM t [WHERE p]`; the row key is `id` (the instrumenter adds its
  hidden row id and witness columns to these queries);
- join: `FROM t [INNER|LEFT] JOIN u ON t.a = u.b [WHERE p]`, columns
  qualified; the row key is (t.id, u.id), both selected;
- group-by: `FROM t [WHERE p] GROUP BY k [, k2] [HAVING p]`; windows read the
  group keys and aggregate calls (`rank() OVER (ORDER BY sum(v))`); the row
  key is the group keys, all selected;
- subquery: `FROM (SELECT id, <1-3 columns>, <windows> FROM t [WHERE p]) AS q
  [WHERE p]`; the outer windows read the inner ones (windows over windows);
  the row key is `id`, selected.
- constant join: `FROM t CROSS JOIN generate_series(a, b[, s]) AS g(x)` (or
  range), or `FROM t {CROSS JOIN | JOIN ... ON t.c = v.y} (VALUES (1, y1),
  ...) AS v(k, y)`, columns qualified; the row key is (t.id, g.x) or (t.id,
  v.k), both selected.
- union: `FROM (SELECT id, <1-3 columns>, 1 AS src FROM t [WHERE p] UNION ALL
  SELECT id, <the same columns>, 2 FROM t [WHERE p]) AS q [WHERE p]`; the row
  key is (id, src), both selected.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from harness.core.model import (
    BinaryOp,
    BinaryOperator,
    Column,
    ColumnDef,
    Expr,
    FuncCall,
    Join,
    JoinKind,
    Literal,
    Select,
    SelectItem,
    Source,
    Star,
    SubqueryRef,
    TableFunctionRef,
    TableRef,
    TableSchema,
    UnionAll,
    Values,
)
from harness.core.types import INT64, SqlType, TypeKind
from harness.generate.context import (
    Context,
    Scope,
    ScopeColumn,
    column_of,
    expr_type,
    fresh_name,
    has_literals,
    integer,
    is_comparable,
    is_exact,
    random_literal,
    random_predicate,
)
from harness.generate.draws import chance, weighted
from harness.generate.schemas import ID
from harness.generate.subqueries import top_fraction_filter
from harness.generate.swarm import Swarm
from harness.generate.windows import Chooser, random_window_pool, used_windows, window_slots

SUBQUERY_ALIAS = "q"


class Shape(Enum):
    TABLE = "table"
    JOIN = "join"
    GROUP_BY = "group-by"
    SUBQUERY = "subquery"
    CONSTANT_JOIN = "constant-join"
    UNION = "union"


_SHAPE_FLAGS = {Shape.JOIN: Swarm.JOIN, Shape.GROUP_BY: Swarm.GROUP_BY, Shape.SUBQUERY: Swarm.SUBQUERY,
                Shape.CONSTANT_JOIN: Swarm.CONSTANT_SOURCES, Shape.UNION: Swarm.UNION_SOURCE}


@dataclass(frozen=True)
class Body:
    """The outer SELECT without its windows: FROM, WHERE, GROUP BY, HAVING, the
    scope its windows read, and the leading select items (row key first)."""

    shape: Shape
    source: Source
    scope: Scope
    items: tuple[SelectItem, ...]
    row_key: tuple[str, ...]  # output names that together identify a row
    where: Expr | None = None
    group_by: tuple[Expr, ...] = ()
    having: Expr | None = None


def random_shape(ctx: Context) -> Shape:
    """A plain table most often, else one of the shapes the swarm left on.
    Simpler means a plain table."""
    weights = [3] + [1 if _SHAPE_FLAGS[s] in ctx.on else 0 for s in _SHAPE_FLAGS]
    return weighted(ctx.rng, list(zip(Shape, weights, strict=True)))


def table_scope(schema: TableSchema, qualifier: str | None = None, witnessed: bool = False) -> Scope:
    cols = tuple(ScopeColumn(Column(c.name, qualifier), c.type, unique=c.name == ID) for c in schema.columns)
    return Scope(cols, (Column(ID, qualifier),), (schema,), witnessed)


def _where(ctx: Context) -> Expr | None:
    return random_predicate(ctx) if ctx.flag(Swarm.WHERE, 0.4) else None


# -- table ------------------------------------------------------------------------------


def table_body(ctx: Context, t: TableSchema, taken: set[str]) -> Body:
    scope = table_scope(t, witnessed=True)
    where = _where(ctx.within(scope))
    return Body(Shape.TABLE, TableRef(t.name), scope, (SelectItem(Column(ID)),), (ID,), where)


# -- join ---------------------------------------------------------------------------------


def _type_class(t: SqlType) -> str:
    if t.is_integer:
        return "integer"
    return "float" if t.is_float else t.kind.value


def joinable(a: SqlType, b: SqlType) -> bool:
    """Types of one class, and for decimals a common type within 38 digits
    (DuckDB casts both sides to one of them, and fails when it is too narrow)."""
    if not is_comparable(a) or _type_class(a) != _type_class(b):
        return False
    if a.kind is not TypeKind.DECIMAL:
        return True
    whole = max(a.precision - a.scale, b.precision - b.scale)  # type: ignore[operator]
    return whole + max(a.scale, b.scale) <= 38  # type: ignore[type-var]


def _join_columns(ctx: Context, t: TableSchema, u: TableSchema) -> tuple[ColumnDef, ColumnDef]:
    """A pair of columns of one type class to join on; ids when nothing else fits."""
    pairs = [(a, b) for a in t.columns for b in u.columns
             if joinable(a.type, b.type) and (a.name, b.name) != (ID, ID)]
    if not pairs or chance(ctx.rng, 0.1):
        return t.column(ID), u.column(ID)
    return ctx.rng.choice(pairs)


def join_body(ctx: Context, t: TableSchema, u: TableSchema, taken: set[str]) -> Body:
    a, b = _join_columns(ctx, t, u)
    kind = JoinKind.LEFT if chance(ctx.rng, 0.4) else JoinKind.INNER
    on = BinaryOp(BinaryOperator.EQ, Column(a.name, t.name), Column(b.name, u.name))
    left, right = table_scope(t, t.name), table_scope(u, u.name)
    scope = Scope(left.columns + right.columns, left.row_key + right.row_key, (t, u))
    names = (fresh_name(f"{t.name}_{ID}", taken), fresh_name(f"{u.name}_{ID}", taken))
    items = tuple(SelectItem(key, name) for key, name in zip(scope.row_key, names, strict=True))
    source = Join(kind, TableRef(t.name), TableRef(u.name), on)
    return Body(Shape.JOIN, source, scope, items, names, _where(ctx.within(scope)))


# -- group by -------------------------------------------------------------------------------


def group_body(ctx: Context, t: TableSchema, taken: set[str]) -> Body:
    rows = ctx.within(table_scope(t))
    where = _where(rows)
    keys: list[ScopeColumn] = []
    for _ in range(rows.rng.choice((1, 1, 1, 2))):
        key = column_of(rows, is_comparable)
        if key is not None and key not in keys:
            keys.append(key)
    aggregates = [_group_aggregate(rows) for _ in range(rows.rng.choice((1, 1, 2, 3)))]
    aggregates = list(dict.fromkeys(aggregates))
    unique = len(keys) == 1
    columns = [ScopeColumn(k.expr, k.type, unique=unique or k.unique) for k in keys]
    columns += [ScopeColumn(a, expr_type(a, rows.scope) or _never(a), exact=is_exact(a, rows.scope))
                for a in aggregates]
    scope = Scope(tuple(columns), tuple(k.expr for k in keys), (t,))
    items = [SelectItem(k.expr) for k in keys]
    items += [SelectItem(a, fresh_name(f"a{i + 1}", taken)) for i, a in enumerate(aggregates)]
    having = random_predicate(ctx.within(scope)) if ctx.flag(Swarm.WHERE, 0.25) else None
    names = tuple(k.expr.name for k in keys)  # type: ignore[attr-defined]
    return Body(Shape.GROUP_BY, TableRef(t.name), scope, tuple(items), names, where,
                tuple(k.expr for k in keys), having)


def _group_aggregate(ctx: Context) -> FuncCall:
    """count(*), count/min/max of any column, sum/avg of a number.
    Simpler means count(*)."""
    name = ctx.rng.choice(("count", "count", "sum", "avg", "min", "max"))
    numeric = name in ("sum", "avg")
    column = column_of(ctx, (lambda t: t.is_numeric) if numeric else is_comparable)
    if column is None or (name == "count" and chance(ctx.rng, 0.4)):
        return FuncCall("count", (Star(),))
    return FuncCall(name, (column.expr,))


def _never(expr: Expr) -> SqlType:
    raise AssertionError(f"no type for {expr}")


# -- subquery --------------------------------------------------------------------------------


def subquery_body(ctx: Context, t: TableSchema, taken: set[str], chooser: Chooser) -> Body:
    inner_ctx = ctx.within(table_scope(t))
    pool = random_window_pool(inner_ctx, taken)
    windows = window_slots(inner_ctx, pool, ctx.rng.choice((1, 1, 2, 3)), chooser)
    aliases = [fresh_name(f"iw{i + 1}", taken) for i in range(len(windows))]
    inner_where = _where(inner_ctx)
    values = [c for c in t.columns if c.name != ID]
    passed = [t.column(ID), *ctx.rng.sample(values, min(len(values), ctx.rng.choice((1, 1, 2, 3))))]
    items = [SelectItem(Column(c.name)) for c in passed]
    items += [SelectItem(w, a) for w, a in zip(windows, aliases, strict=True)]
    inner = Select(tuple(items), TableRef(t.name), inner_where, windows=used_windows(windows, pool))
    columns = [ScopeColumn(Column(c.name), c.type, unique=c.name == ID) for c in passed]
    for w, a in zip(windows, aliases, strict=True):
        wt = expr_type(w, inner_ctx.scope)
        if wt is not None and wt.kind is not TypeKind.LIST:
            columns.append(ScopeColumn(Column(a), wt, exact=is_exact(w, inner_ctx.scope)))
    q_schema = TableSchema(SUBQUERY_ALIAS, tuple(ColumnDef(c.expr.name, c.type) for c in columns))  # type: ignore[attr-defined]
    scope = Scope(tuple(columns), (Column(ID),), (t, q_schema))
    outer_where = _where(ctx.within(scope)) if inner_where is None else None
    if outer_where is None:
        ranks = [c.expr for c in columns[len(passed):] if c.type.is_integer]
        outer_where = top_fraction_filter(ctx, t.name, ranks)  # type: ignore[arg-type]
    selected = (SelectItem(Column(ID)), *(SelectItem(Column(a)) for a in aliases))
    return Body(Shape.SUBQUERY, SubqueryRef(inner, SUBQUERY_ALIAS), scope, selected, (ID,), outer_where)


# -- constant join --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Constant:
    """A source the same in every case: its reference, scope columns and key."""

    source: Source
    columns: tuple[ScopeColumn, ...]
    key: Column
    schema: TableSchema
    on: Expr | None = None


def constant_join_body(ctx: Context, t: TableSchema, taken: set[str]) -> Body:
    """t joined to a small series or VALUES table. Simpler means a CROSS JOIN
    with generate_series(1, 1)."""
    const = _values_table(ctx, t, taken) if chance(ctx.rng, 0.5) else _series(ctx, taken)
    left = table_scope(t, t.name)
    scope = Scope(left.columns + const.columns, (*left.row_key, const.key), (t, const.schema))
    names = (fresh_name(f"{t.name}_{ID}", taken), fresh_name(f"{const.key.table}_{const.key.name}", taken))
    items = tuple(SelectItem(key, name) for key, name in zip(scope.row_key, names, strict=True))
    kind = JoinKind.CROSS if const.on is None else JoinKind.INNER
    source = Join(kind, TableRef(t.name), const.source, const.on)
    return Body(Shape.CONSTANT_JOIN, source, scope, items, names, _where(ctx.within(scope)))


def _series(ctx: Context, taken: set[str]) -> _Constant:
    """generate_series or range of 1-4 values, by a step of 1, 2 or -1 (or the
    default). Simpler means generate_series(1, 1)."""
    rng = ctx.rng
    name = "range" if chance(rng, 0.5) else "generate_series"
    start, count = rng.choice((1, 0, -2, 5)), rng.choice((1, 2, 3, 4))
    step = rng.choice((None, 1, 2, -1))
    stop = start + (step or 1) * (count - 1 if name == "generate_series" else count)
    args = (integer(start), integer(stop), *(() if step is None else (integer(step),)))
    alias, column = fresh_name("g", taken), fresh_name("x", taken)
    key = Column(column, alias)
    schema = TableSchema(alias, (ColumnDef(column, INT64),))
    return _Constant(TableFunctionRef(name, args, alias, (column,)),
                     (ScopeColumn(key, INT64, unique=True),), key, schema)


def _values_table(ctx: Context, t: TableSchema, taken: set[str]) -> _Constant:
    """(VALUES (1, y1), ..., (n, yn)) AS v(k, y): 1-4 rows, y of the type of a
    column c of t (NULL sometimes), joined ON t.c = v.y or crossed. Simpler
    means one row, crossed."""
    rng = ctx.rng
    values = [c for c in t.columns
              if c.name != ID and is_comparable(c.type) and has_literals(c.type)] or [t.column(ID)]
    c = rng.choice(values)
    count = rng.choice((1, 2, 3, 4))
    ys = [_typed(random_literal(ctx, c.type, null_chance=0.2), c.type) for _ in range(count)]
    rows = tuple((integer(i + 1), y) for i, y in enumerate(ys))
    alias, k, y = fresh_name("v", taken), fresh_name("k", taken), fresh_name("y", taken)
    key = Column(k, alias)
    schema = TableSchema(alias, (ColumnDef(k, INT64), ColumnDef(y, c.type)))
    columns = (ScopeColumn(key, INT64, unique=True), ScopeColumn(Column(y, alias), c.type))
    on = None
    if chance(rng, 0.5) and joinable(c.type, c.type):
        on = BinaryOp(BinaryOperator.EQ, Column(c.name, t.name), Column(y, alias))
    return _Constant(SubqueryRef(Values(rows), alias, (k, y)), columns, key, schema, on)


def _typed(lit: Literal, t: SqlType) -> Literal:
    """The literal at the column's own type (an integer literal is drawn at the
    type a bare number reads as), so every row of VALUES has one type."""
    return Literal(lit.value, t) if t.is_integer and lit.value is not None else lit


# -- union ------------------------------------------------------------------------------------


def union_body(ctx: Context, t: TableSchema, taken: set[str]) -> Body:
    """Two selects of t, each filtered sometimes, tagged 1 and 2 (the tag and
    id identify a row). Simpler means both unfiltered, one column beside id."""
    rows = ctx.within(table_scope(t))
    values = [c for c in t.columns if c.name != ID]
    passed = [t.column(ID), *ctx.rng.sample(values, min(len(values), ctx.rng.choice((1, 1, 2, 3))))]
    tag = fresh_name("src", taken)
    branches = []
    for n in (1, 2):
        items = (*(SelectItem(Column(c.name)) for c in passed), SelectItem(integer(n), tag))
        branches.append(Select(items, TableRef(t.name), _where(rows)))
    columns = [ScopeColumn(Column(c.name), c.type, unique=c.name == ID) for c in passed]
    columns.append(ScopeColumn(Column(tag), integer(1).type))  # type: ignore[arg-type]
    q_schema = TableSchema(SUBQUERY_ALIAS, tuple(ColumnDef(c.expr.name, c.type) for c in columns))  # type: ignore[attr-defined]
    scope = Scope(tuple(columns), (Column(ID), Column(tag)), (t, q_schema))
    items = (SelectItem(Column(ID)), SelectItem(Column(tag)))
    source = SubqueryRef(UnionAll(branches[0], branches[1]), SUBQUERY_ALIAS)
    return Body(Shape.UNION, source, scope, items, (ID, tag), _where(ctx.within(scope)))
