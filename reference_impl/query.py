"""Queries: the SELECT pipeline, UNION ALL and WITH.

A SELECT is evaluated in the standard's logical order: FROM, WHERE, GROUP BY,
HAVING, the window operator, QUALIFY (not the standard's: a WHERE over the
window functions' results), the select list, DISTINCT, ORDER BY, then OFFSET
and LIMIT. GROUP BY ALL and ORDER BY ALL are first spelled out as keys.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import pyarrow as pa

from harness.core.all_keys import expand_all_keys
from harness.core.errors import EvaluationError, InvalidQuery, ReferenceGap
from harness.core.model import (
    AllColumns,
    Column,
    Expr,
    Literal,
    Query,
    Select,
    SortKey,
    Star,
    UnionAll,
    Values,
    With,
    key_position,
    window_exprs,
)
from harness.core.model import rewrite as rewrite_model
from harness.core.semantics import SemanticsProfile
from harness.core.types import FLOAT64, INT32
from reference_impl.casts import cast_value
from reference_impl.compiled import Compiled
from reference_impl.context import Context
from reference_impl.evaluation import Evaluation, PeerOrder
from reference_impl.expressions import compile_expr, compile_predicate
from reference_impl.grouping import group, needs_grouping, with_group_positions
from reference_impl.ordering import SortSpec, compare_keys, sort_spec, stable_sort
from reference_impl.output import to_evaluation
from reference_impl.profile import using_profile
from reference_impl.relation import Field, Relation, Row
from reference_impl.rewrite import Rewrite, identity
from reference_impl.sources import renamed, scan_source
from reference_impl.sqltypes import common_type
from reference_impl.subqueries import running
from reference_impl.values import row_key
from reference_impl.windows import apply_windows


def evaluate_query(
    query: Query,
    tables: Mapping[str, pa.Table],
    *,
    profile: SemanticsProfile,
    peer_order: PeerOrder | None,
) -> Evaluation:
    ctx = Context(tables=tables, profile=profile, peer_order=peer_order)
    with using_profile(profile):
        return to_evaluation(run_query(query, ctx), ctx.peer_groups)


def run_query(query: Query, ctx: Context) -> Relation:
    # Subqueries in expressions, compiled below, run in this query's context.
    with running(ctx, run_query):
        if isinstance(query, Select):
            return _run_select(query, ctx)
        if isinstance(query, UnionAll):
            return _run_union_all(query, ctx)
        if isinstance(query, With):
            return _run_with(query, ctx)
        if isinstance(query, Values):
            return _run_values(query)
    raise InvalidQuery(f"unknown query node {query!r}")


# ---------------------------------------------------------------------------
# SELECT


@dataclass(frozen=True)
class OutputColumn:
    name: str
    expr: Expr  # rewritten to read the window operator's output
    compiled: Compiled
    magnitude: int | None  # the input field holding this column's magnitudes


def _run_select(select: Select, ctx: Context) -> Relation:
    select, rel, rewrite = window_input(select, ctx)
    rel, rewrite = apply_windows(rel, select, rewrite, ctx)
    if select.qualify is not None:
        rel = _qualify(rel, select, rewrite)
    columns = _output_columns(select, rel, rewrite)
    out = _project(rel, columns)
    keys = [_order_key(k, columns, rel, rewrite, select.distinct) for k in select.order_by]
    key_rows = [
        tuple(key(row, out_row) for key in keys)
        for row, out_row in zip(rel.rows, out.rows, strict=True)
    ]
    if select.distinct:
        out.rows, key_rows = _distinct(out, key_rows)
    specs = [sort_spec(k, ctx.profile) for k in select.order_by]
    out.rows = _order_and_limit(out.rows, key_rows, specs, select.limit, select.offset)
    return out


def window_input(select: Select, ctx: Context) -> tuple[Select, Relation, Rewrite]:
    """FROM, WHERE, GROUP BY and HAVING: the window operator's input, the query
    with GROUP BY ALL spelled out, and the rewrite that reads the groups."""
    select = with_group_positions(select)
    rel = scan_source(select.source, ctx, run_query)
    select = _spelled_out(select, rel)
    if select.where is not None:
        rel = _filter(rel, select.where)
    rewrite: Rewrite = identity
    if needs_grouping(select):
        rel, rewrite = group(rel, select, ctx)
        if select.having is not None:
            rel = _filter(rel, rewrite(select.having))
    return select, rel, rewrite


@dataclass(frozen=True)
class AnswerTrace:
    """Where each row of a SELECT's answer comes from (for `explain`): `cells`
    holds the select list's values of every row of the window operator's output
    (its rows in input order), `answer` the index of each answer row among them
    (QUALIFY, ORDER BY, OFFSET and LIMIT applied; no DISTINCT)."""

    names: list[str]
    cells: list[Row]
    answer: list[int]


def trace_answer(select: Select, windowed: Relation, rewrite: Rewrite, ctx: Context) -> AnswerTrace:
    """The answer of `select` (as `window_input` returned it) over the window
    operator's output `windowed`, as indexes into it."""
    columns = _output_columns(select, windowed, rewrite)
    cells = _project(windowed, columns).rows
    kept = list(range(len(windowed.rows)))
    if select.qualify is not None:
        passed = {id(row) for row in _qualify(windowed, select, rewrite).rows}
        kept = [i for i in kept if id(windowed.rows[i]) in passed]
    keys = [_order_key(k, columns, windowed, rewrite, select.distinct) for k in select.order_by]
    key_rows = [tuple(key(windowed.rows[i], cells[i]) for key in keys) for i in kept]
    specs = [sort_spec(k, ctx.profile) for k in select.order_by]
    if specs:
        kept = [kept[j] for j in stable_sort(list(range(len(kept))), key_rows, specs)]
    start = select.offset or 0
    stop = len(kept) if select.limit is None else start + select.limit
    return AnswerTrace([c.name for c in columns], cells, kept[start:stop])


def _spelled_out(select: Select, rel: Relation) -> Select:
    """GROUP BY ALL and ORDER BY ALL as their keys (`harness.core.all_keys`)."""
    order_all = any(isinstance(k.expr, AllColumns) for k in select.order_by)
    if AllColumns() not in select.group_by and not order_all:
        return select
    spelled = expand_all_keys(select, lambda star: list(_star_columns(star, rel)))
    if any(isinstance(k, AllColumns) for k in spelled.group_by) or any(
            isinstance(k.expr, AllColumns) for k in spelled.order_by):
        raise InvalidQuery("ALL must be the only key of GROUP BY or ORDER BY")
    return spelled


def _qualify(rel: Relation, select: Select, rewrite: Rewrite) -> Relation:
    # DuckDB, DataFusion and Spark all refuse a QUALIFY with no window function
    # to filter on (in QUALIFY or the select list); it would be a WHERE.
    assert select.qualify is not None
    if not window_exprs(select.qualify) and not any(window_exprs(i.expr) for i in select.items):
        raise EvaluationError("QUALIFY needs a window function in the select list or in QUALIFY")
    return _filter(rel, rewrite(_with_aliases(select.qualify, select, rel)))


def _with_aliases(expr: Expr, select: Select, rel: Relation) -> Expr:
    """QUALIFY may name a select item by its alias (`QUALIFY rn = 1`), as DuckDB,
    DataFusion and Spark read it; a column of the input of that name wins."""
    aliases = {i.alias: i.expr for i in select.items if i.alias is not None}

    def alias_of(node: object) -> Expr | None:
        if not isinstance(node, Column) or node.table is not None or node.name not in aliases:
            return None
        try:
            rel.resolve(node)
        except InvalidQuery:
            return aliases[node.name]
        return None

    return rewrite_model(expr, alias_of)  # type: ignore[return-value]


def _filter(rel: Relation, condition: Expr) -> Relation:
    keep = compile_predicate(condition, rel)
    return Relation(rel.fields, [row for row in rel.rows if keep(row) is True])


def _output_columns(select: Select, rel: Relation, rewrite: Rewrite) -> list[OutputColumn]:
    columns: list[OutputColumn] = []
    for item in select.items:
        if isinstance(item.expr, Star):
            for expr in _star_columns(item.expr, rel):
                columns.append(_output_column(expr.name, expr, rel))
            continue
        written = item.expr
        name = item.alias or (
            written.name if isinstance(written, Column) else f"_col{len(columns)}"
        )
        columns.append(_output_column(name, rewrite(written), rel))
    return columns


def _star_columns(star: Star, rel: Relation) -> list[Column]:
    picked = [rel.fields[i] for i in rel.visible() if star.table in (None, rel.fields[i].table)]
    if star.table is not None and not picked:
        raise InvalidQuery(f"{star.table}.* names no table of the FROM clause")
    return [Column(f.name, f.table) for f in picked]


def _output_column(name: str, expr: Expr, rel: Relation) -> OutputColumn:
    compiled = compile_expr(expr, rel)
    # A column of an enclosing query (a correlated subquery's item) is not in rel.
    index = rel.find(expr) if isinstance(expr, Column) else None
    magnitude = rel.magnitude_index(index) if index is not None else None
    return OutputColumn(name, expr, compiled, magnitude)


def _project(rel: Relation, columns: list[OutputColumn]) -> Relation:
    """The select list's values, plus hidden magnitude columns where an input has them."""
    fields = [Field(c.name, c.compiled.type) for c in columns]
    carried = [(i, c.magnitude) for i, c in enumerate(columns) if c.magnitude is not None]
    fields += [
        Field(f"#magnitude{i}", FLOAT64, hidden=True, magnitude_of=fields[i].uid)
        for i, _ in carried
    ]
    fns = [c.compiled.fn for c in columns]
    rows = [tuple([f(row) for f in fns] + [row[m] for _, m in carried]) for row in rel.rows]
    return Relation(tuple(fields), rows)


OrderKey = Callable[[Row, Row], object]  # (input row, output row) -> key value


def _order_key(
    key: SortKey, columns: list[OutputColumn], rel: Relation, rewrite: Rewrite, distinct: bool
) -> OrderKey:
    """An ORDER BY key: an output column (by position, name or same expression),
    else an expression over the input (not allowed with DISTINCT)."""
    index = _output_position(key.expr, [c.name for c in columns])
    if index is None:
        expr = rewrite(key.expr)
        index = next((i for i, c in enumerate(columns) if c.expr == expr), None)
    if index is not None:
        return lambda row, out, i=index: out[i]
    if distinct:
        raise EvaluationError(
            "with SELECT DISTINCT, ORDER BY expressions must be in the select list"
        )
    fn = compile_expr(rewrite(key.expr), rel).fn
    return lambda row, out: fn(row)


def _output_position(expr: Expr, names: list[str]) -> int | None:
    position = key_position(expr)  # a bare integer; CAST(2 AS BIGINT) is a constant
    if position is not None:
        if not 1 <= position <= len(names):
            raise EvaluationError(f"ORDER BY position {position} is not in the select list")
        return position - 1
    if isinstance(expr, Column) and expr.table is None and names.count(expr.name) == 1:
        return names.index(expr.name)
    return None


def _distinct(out: Relation, key_rows: list[tuple]) -> tuple[list[Row], list[tuple]]:
    """The first row of each set of rows whose visible values are not distinct."""
    visible = out.visible()
    seen: set[tuple] = set()
    rows, keys = [], []
    for row, key in zip(out.rows, key_rows, strict=True):
        identity_key = row_key(tuple(row[i] for i in visible))
        if identity_key not in seen:
            seen.add(identity_key)
            rows.append(row)
            keys.append(key)
    return rows, keys


def _order_and_limit(
    rows: list[Row], keys: list[tuple], specs: list[SortSpec], limit: int | None, offset: int | None
) -> list[Row]:
    if specs:
        order = stable_sort(list(range(len(rows))), keys, specs)
        rows, keys = [rows[i] for i in order], [keys[i] for i in order]
    start = offset or 0
    stop = len(rows) if limit is None else min(len(rows), start + limit)
    for cut in (start, stop):
        if 0 < cut < len(rows) and not _cut_is_determined(rows, keys, specs, cut):
            raise ReferenceGap(
                "LIMIT/OFFSET splits rows the ORDER BY does not order: "
                "which of them are returned is not determined"
            )
    return rows[start:stop]


def _cut_is_determined(rows: list[Row], keys: list[tuple], specs: list[SortSpec], cut: int) -> bool:
    """True when the rows on both sides of a cut differ in ORDER BY keys, or the
    rows tied across it are identical (so any choice among them looks the same)."""
    if not specs:
        return len({row_key(r) for r in rows}) == 1
    if compare_keys(keys[cut - 1], keys[cut], specs) != 0:
        return True
    tied = [r for r, k in zip(rows, keys, strict=True) if compare_keys(k, keys[cut], specs) == 0]
    return len({row_key(r) for r in tied}) == 1


# ---------------------------------------------------------------------------
# UNION ALL and WITH


def _run_union_all(union: UnionAll, ctx: Context) -> Relation:
    left, right = run_query(union.left, ctx), run_query(union.right, ctx)
    lv, rv = left.visible(), right.visible()
    if len(lv) != len(rv):
        raise EvaluationError(f"UNION ALL of {len(lv)} and {len(rv)} columns")
    types = [
        common_type([left.fields[i].type, right.fields[j].type])
        for i, j in zip(lv, rv, strict=True)
    ]
    fields = tuple(Field(left.fields[i].name, t) for i, t in zip(lv, types, strict=True))
    rows = _converted_rows(left, lv, types) + _converted_rows(right, rv, types)
    out = Relation(fields, rows)
    names = [f.name for f in fields]
    order_by = _all_positions(union.order_by, len(names))
    keys = [_union_order_key(k, out, names) for k in order_by]
    key_rows = [tuple(key(row) for key in keys) for row in rows]
    specs = [sort_spec(k, ctx.profile) for k in order_by]
    out.rows = _order_and_limit(rows, key_rows, specs, union.limit, union.offset)
    return out


def _all_positions(keys: tuple[SortKey, ...], width: int) -> tuple[SortKey, ...]:
    """ORDER BY ALL over `width` columns as the positions 1..width."""
    if not any(isinstance(k.expr, AllColumns) for k in keys):
        return keys
    if len(keys) != 1:
        raise InvalidQuery("ALL must be the only key of ORDER BY")
    return tuple(dataclasses.replace(keys[0], expr=Literal(i, INT32)) for i in range(1, width + 1))


def _converted_rows(rel: Relation, indexes: list[int], types: list) -> list[Row]:
    def convert(value: object, i: int, t: object) -> object:
        return value if rel.fields[i].type == t else cast_value(value, t)  # type: ignore[arg-type]

    return [
        tuple(convert(row[i], i, t) for i, t in zip(indexes, types, strict=True))
        for row in rel.rows
    ]


def _union_order_key(key: SortKey, out: Relation, names: list[str]) -> Callable[[Row], object]:
    index = _output_position(key.expr, names)
    if index is not None:
        return lambda row, i=index: row[i]
    return compile_expr(key.expr, out).fn


def _run_values(values: Values) -> Relation:
    """VALUES rows: each column of the common type of its values (as UNION ALL
    gives), named column1, column2, ..."""
    if not values.rows or not values.rows[0]:
        raise InvalidQuery("VALUES needs at least one row of at least one value")
    width = len(values.rows[0])
    if any(len(row) != width for row in values.rows):
        raise InvalidQuery("VALUES rows must have one length")
    empty = Relation((), [()])  # the values read no column
    compiled = [[compile_expr(e, empty) for e in row] for row in values.rows]
    types = [common_type([row[i].type for row in compiled]) for i in range(width)]

    def value(c: Compiled, t: object) -> object:
        v = c.fn(())
        return v if c.type == t or v is None else cast_value(v, t)  # type: ignore[arg-type]

    rows = [tuple(value(c, t) for c, t in zip(row, types, strict=True)) for row in compiled]
    fields = tuple(Field(f"column{i + 1}", t) for i, t in enumerate(types))
    return Relation(fields, rows)


def _run_with(with_: With, ctx: Context) -> Relation:
    # Each CTE sees the ones before it; the scope ends with this query.
    inner = dataclasses.replace(ctx, ctes=dict(ctx.ctes))
    for cte in with_.ctes:
        inner.ctes[cte.name] = renamed(run_query(cte.query, inner), cte.columns)
    return run_query(with_.body, inner)
