"""Schema-aware window queries, the same for every engine.

    SELECT <row key>, [<columns>], <1-6 window expressions>
    FROM <a table | a join | grouped rows | a subquery with its own windows
          | t joined to a VALUES table or to generate_series/range
          | a UNION ALL of two selects of t>
    [WHERE ...] [GROUP BY ... [HAVING ...]] [WINDOW ...] [QUALIFY <top-N>]
    [ORDER BY <output columns>, <row key>] [LIMIT n [OFFSET m]]

or that query (with a ranking column `rn`) as a derived table under a top-N
filter: `SELECT * FROM (...) AS ranked WHERE rn <= k [ORDER BY ...] [LIMIT ...]`.
A top-N filter's ranking has other windows beside it over its window
(`topn`); a LIMIT may sit over a lead/lag/nth_value ordered as the query.

A query depends only on its random stream: no dialect is consulted. An engine
that cannot express a drawn construct gets the verdict `unsupported` when its
dialect refuses to render it; swarm testing (`harness.generate.swarm`)
switches constructs off per query so that every engine still runs a good
share. The parts: `sources` (the FROM side and its scope), `windows` (specs,
expressions, steering), `frames`, `calls` (functions and their arguments),
`context` (scope, literals, predicates).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from harness.core.model import (
    CURRENT_ROW,
    UNBOUNDED_FOLLOWING,
    Column,
    Expr,
    Frame,
    FrameMode,
    FuncCall,
    Select,
    SelectItem,
    SortKey,
    Star,
    SubqueryRef,
    TableSchema,
    WindowExpr,
    WindowSpec,
    following,
    resolve_window,
)
from harness.generate.context import (
    Context,
    Scope,
    column_of,
    expr_type,
    fresh_name,
    is_comparable,
    is_exact,
)
from harness.generate.data import DataKnobs
from harness.generate.draws import Draws, chance, weighted
from harness.generate.frames import count_offset
from harness.generate.sources import (
    Body,
    Shape,
    constant_join_body,
    group_body,
    join_body,
    random_shape,
    subquery_body,
    table_body,
    union_body,
)
from harness.generate.subqueries import max_flag_item
from harness.generate.swarm import Swarm, random_swarm
from harness.generate.topn import lookahead_call, ranking_siblings, top_filter
from harness.generate.windows import (
    Chooser,
    WindowPool,
    random_sort_key,
    random_sort_keys,
    random_window_pool,
    total_order,
    used_windows,
    window_slots,
)


@dataclass(frozen=True)
class GeneratedQuery:
    query: Select
    shape: Shape
    swarm: frozenset[Swarm]
    tables: tuple[str, ...]  # the tables it reads


def random_query(
    rng: Draws,
    schemas: Sequence[TableSchema],
    knobs: DataKnobs,
    chooser: Chooser | None = None,
    swarm: frozenset[Swarm] | None = None,
    window_count: int | None = None,
) -> GeneratedQuery:
    """A query over `schemas` (t, and u for joins); `knobs` shape its literals as
    they shaped the data; `chooser` keeps one candidate per window slot (the
    first, without one); `swarm` (else drawn) says which constructs may appear;
    `window_count` (else drawn) fixes how many window expressions the outer select has.

    Simpler means a plain table, fewer window expressions, no WHERE, no
    WINDOW clause, ORDER BY the row key alone and no LIMIT; each part's own
    notion of simpler is in its generator's docstring.
    """
    on = random_swarm(rng) if swarm is None else swarm
    chooser = chooser or Chooser()
    t = schemas[0]
    taken = {c.name.casefold() for s in schemas for c in s.columns}
    ctx = Context(rng, Scope((), (), ()), knobs, on)  # each body draws against its own scope
    limit, offset = _limit(ctx)
    qualifying = ctx.flag(Swarm.QUALIFY, 0.3)
    top_n = not qualifying and ctx.flag(Swarm.TOP_N, 0.3)
    lookahead = not (qualifying or top_n) and ctx.flag(Swarm.LOOKAHEAD_LIMIT, 0.3)
    if lookahead and limit is None:
        limit, offset = rng.choice((1, 2, 3, 5)), rng.choice((None, None, 1, 2))
    body = _body(ctx, random_shape(ctx), schemas, taken, chooser)
    # Under LIMIT (and QUALIFY, and a filter over a derived table) the witness
    # columns of the rows left out are missing, so the engine's order of tied
    # rows is not revealed (and those rows' order still moves lag, ntile... of
    # the rows kept): judge as without a witness.
    witnessed = body.scope.witnessed and limit is None and not qualifying and not top_n
    ctx = ctx.within(replace(body.scope, witnessed=witnessed))
    pool = random_window_pool(ctx, taken)
    count = _window_count(ctx, body.shape)  # drawn even when fixed: the stream stays aligned
    windows = window_slots(ctx, pool, window_count or count, chooser)
    ranking = _ranking(ctx, pool) if qualifying or top_n else None
    if ranking is not None:  # other windows over the ranking's window
        windows += ranking_siblings(ctx, resolve_window(ranking.window, pool.named))
    ahead = _lookahead(ctx) if lookahead else None
    if ahead is not None:
        windows.append(ahead[0])
    extra = _extra_columns(ctx, body, taken)
    items = (*body.items, *extra,
             *(SelectItem(w, fresh_name(f"w{i + 1}", taken)) for i, w in enumerate(windows)))
    rn = None
    if top_n and ranking is not None:
        rn = fresh_name("rn", taken)
        items = (*items, SelectItem(ranking, rn))
    order_by = ahead[1] if ahead is not None else _top_order_by(ctx, body, items, hidden=rn is None)
    qualify = top_filter(ctx, ranking) if qualifying and ranking is not None else None
    if body.shape is Shape.TABLE:  # drawn after ORDER BY, which keeps its stream
        flag = max_flag_item(ctx, t.name)
        if flag is not None:
            items = (*items, SelectItem(flag, fresh_name("is_max", taken)))
    named = used_windows([*windows, *([ranking] if ranking is not None else [])], pool)
    query = Select(items, body.source, body.where, body.group_by, body.having,
                   named, order_by, limit, offset, qualify=qualify)
    if rn is not None:
        query = _top_n(ctx, query, rn, taken)
    tables = (t.name, schemas[1].name) if body.shape is Shape.JOIN else (t.name,)
    return GeneratedQuery(query, body.shape, on, tables)


def _body(ctx: Context, shape: Shape, schemas: Sequence[TableSchema], taken: set[str],
          chooser: Chooser) -> Body:
    t = schemas[0]
    if shape is Shape.JOIN:
        return join_body(ctx, t, schemas[1], taken)
    if shape is Shape.GROUP_BY:
        return group_body(ctx, t, taken)
    if shape is Shape.SUBQUERY:
        return subquery_body(ctx, t, taken, chooser)
    if shape is Shape.CONSTANT_JOIN:
        return constant_join_body(ctx, t, taken)
    if shape is Shape.UNION:
        return union_body(ctx, t, taken)
    return table_body(ctx, t, taken)


def _window_count(ctx: Context, shape: Shape) -> int:
    """1-8 expressions, about 4 on average (1-3 over a subquery, which has its
    own). More expressions per query cover more grid cells per query shape, and
    an engine that cannot write one of them still runs the others (restriction);
    one or two stay common, as a lone window is a plan of its own."""
    if shape is Shape.SUBQUERY:
        return ctx.rng.choice((1, 2, 2, 3))
    return weighted(ctx.rng, ((1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (6, 2), (7, 2), (8, 1)))


def _extra_columns(ctx: Context, body: Body, taken: set[str]) -> list[SelectItem]:
    """0-2 scope columns beside the row key (plain columns; group keys and
    aggregates are selected already). Simpler means none."""
    if body.shape is Shape.GROUP_BY:
        return []
    selected = {item.expr for item in body.items}
    plain = [c for c in body.scope.columns
             if isinstance(c.expr, Column) and not c.unique and c.expr not in selected]
    count = min(len(plain), ctx.rng.choice((0, 0, 1, 2)))
    picked = ctx.rng.sample(plain, count)
    if body.shape not in (Shape.JOIN, Shape.CONSTANT_JOIN):
        return [SelectItem(c.expr) for c in picked]
    return [SelectItem(c.expr, fresh_name(f"{c.expr.table}_{c.expr.name}", taken))  # type: ignore[union-attr]
            for c in picked]


# -- ORDER BY and LIMIT -------------------------------------------------------------------


def _top_order_by(ctx: Context, body: Body, items: Sequence[SelectItem],
                  hidden: bool = True) -> tuple[SortKey, ...]:
    """Output columns in random directions, then (mostly) the row key, which
    leaves no ties; sometimes no ORDER BY. The draws do not depend on the types
    of the chosen window expressions: keys are drawn for positions of a random
    permutation, and positions whose type does not sort are skipped after.
    `hidden`: a plain table's other columns may be keys too. Simpler means
    ORDER BY the row key ascending."""
    rng = ctx.rng
    if chance(rng, 0.1):
        return ()
    scope = body.scope
    refs = [(_reference(item), _sorts(item.expr, scope)) for item in items]
    if body.shape is Shape.TABLE and hidden:  # hidden ORDER BY keys: the instrumenter selects them
        refs += [(c.expr, _sorts(c.expr, scope)) for c in scope.columns if not c.unique]
    order = rng.sample(range(len(refs)), len(refs))
    drawn = [random_sort_key(ctx, None) for _ in range(rng.choice((0, 0, 1, 1, 2)))]
    sortable = [refs[i][0] for i in order if refs[i][1]]
    keys = [replace(k, expr=e) for k, e in zip(drawn, sortable, strict=False)]
    if not chance(rng, 0.2):
        tail = random_sort_key(ctx, None)
        keys += [replace(tail, expr=Column(n)) for n in body.row_key
                 if all(k.expr != Column(n) for k in keys)]
    return tuple(keys)


def _reference(item: SelectItem) -> Expr:
    """How ORDER BY names an output column: its alias, else the column itself."""
    if item.alias is not None:
        return Column(item.alias)
    return item.expr


def _sorts(expr: Expr, scope: Scope) -> bool:
    """Can the comparator check the order by this output? It must sort, and be
    exact: rows are grouped by equal ORDER BY values, and a float that each
    engine rounds its own way is never equal."""
    t = expr_type(expr, scope)
    return t is not None and is_comparable(t) and is_exact(expr, scope)


def _ranking(ctx: Context, pool: WindowPool) -> WindowExpr:
    """The ranking a top-N filter reads (QUALIFY, or WHERE over a derived table):
    row_number/rank/dense_rank() OVER a window of the pool (by name
    sometimes), its frame dropped (ranking functions ignore it) and an ORDER
    BY added if it has none; without a witness, row_number's ORDER BY ends
    with the row key, so ties cannot decide which rows are kept (rank and
    dense_rank give peers one value)."""
    rng = ctx.rng
    func = FuncCall(rng.choice(("row_number", "rank", "dense_rank")))
    i = rng.randint(0, len(pool.resolved) - 1)
    name, spec = pool.names[i], replace(pool.resolved[i], frame=None)
    order_by = spec.order_by or random_sort_keys(ctx, at_least=1, expressions=True)
    if not ctx.scope.witnessed and func.name == "row_number":
        order_by = total_order(order_by, ctx.scope.row_key)
    by_name = name is not None and pool.resolved[i] == replace(spec, order_by=order_by) \
        and chance(rng, 0.5)
    return WindowExpr(func, WindowSpec(base=name) if by_name else replace(spec, order_by=order_by))


def _top_n(ctx: Context, inner: Select, rn: str, taken: set[str]) -> Select:
    """`SELECT * FROM (inner) AS ranked WHERE rn <= k [ORDER BY ...] [LIMIT ...]`:
    the inner query's ORDER BY (over its output names) and LIMIT move out."""
    source = SubqueryRef(replace(inner, order_by=(), limit=None, offset=None), fresh_name("ranked", taken))
    return Select((SelectItem(Star()),), source, top_filter(ctx, Column(rn)),
                  order_by=inner.order_by, limit=inner.limit, offset=inner.offset)


def _lookahead(ctx: Context) -> tuple[WindowExpr, tuple[SortKey, ...]] | None:
    """lead/lag/nth_value over a total order, and the query's ORDER BY: the
    window's keys (its PARTITION BY key first, when it has one), the trigger
    of a LIMIT pushed below the window, which must still see the rows after."""
    made = lookahead_call(ctx)
    if made is None:
        return None
    call, framed = made
    keys = total_order(random_sort_keys(ctx, at_least=1, expressions=True), ctx.scope.row_key)
    partition_by: tuple[Expr, ...] = ()
    top = keys
    column = column_of(ctx, is_comparable)
    if column is not None and ctx.flag(Swarm.PARTITION_BY, 0.3):
        partition_by = (column.expr,)
        top = (random_sort_key(ctx, column.expr), *keys)
    frame = None
    if framed:  # nth_value reads the frame: one that reaches past the current row
        end = following(count_offset(ctx)) if chance(ctx.rng, 0.5) else UNBOUNDED_FOLLOWING
        frame = Frame(FrameMode.ROWS, CURRENT_ROW, end)
    return WindowExpr(call, WindowSpec(partition_by=partition_by, order_by=keys, frame=frame)), top


def _limit(ctx: Context) -> tuple[int | None, int | None]:
    """LIMIT 0-10, sometimes with OFFSET. Simpler means neither."""
    if not ctx.flag(Swarm.LIMIT, 0.4):
        return None, None
    limit = ctx.rng.choice((0, 1, 2, 3, 5, 10))
    offset = ctx.rng.choice((None, None, 0, 1, 3))
    return limit, offset
