"""GROUP BY: one row per group, holding the group keys and the aggregates.

Rows whose GROUP BY values are not distinct from each other form one group
(NULL with NULL, NaN with NaN). A query with aggregates but no GROUP BY has
exactly one group, even over no rows. The select list, HAVING, ORDER BY and
window expressions then read the grouped relation through a rewrite that
turns each aggregate call (and each non-column group key) into a column.
"""

from __future__ import annotations

import dataclasses

from harness.core.errors import EvaluationError, ReferenceGap
from harness.core.model import (
    Column,
    Expr,
    FuncCall,
    Literal,
    Select,
    Star,
    key_position,
    window_exprs,
)
from harness.core.types import FLOAT64
from reference_impl.aggregates import CompiledAggregate, compile_aggregate
from reference_impl.compiled import Compiled
from reference_impl.context import Context
from reference_impl.expressions import compile_expr
from reference_impl.memo import per_node
from reference_impl.relation import Field, Relation, Row
from reference_impl.rewrite import Replacement, Rewrite, aggregate_calls
from reference_impl.values import row_key


@per_node
def with_group_positions(select: Select) -> Select:
    """`select` with each GROUP BY position (GROUP BY 2, a bare integer) replaced by
    the select item it names, as PostgreSQL reads it."""
    if all(key_position(e) is None for e in select.group_by):
        return select
    if any(isinstance(item.expr, Star) for item in select.items):
        raise ReferenceGap("GROUP BY a position with * in the select list")
    return dataclasses.replace(select, group_by=tuple(_group_key(e, select) for e in select.group_by))


def _group_key(expr: Expr, select: Select) -> Expr:
    position = key_position(expr)
    if position is None:
        return expr
    if not 1 <= position <= len(select.items):
        raise EvaluationError(f"GROUP BY position {position} is not in the select list")
    item = select.items[position - 1].expr
    if aggregate_calls(item) or window_exprs(item):
        raise EvaluationError(f"GROUP BY position {position} names an aggregate or window function")
    return item


def needs_grouping(select: Select) -> bool:
    return bool(select.group_by) or select.having is not None or bool(_aggregate_calls(select))


@per_node
def _aggregate_calls(select: Select) -> tuple[FuncCall, ...]:
    nodes: list[object] = [item.expr for item in select.items]
    nodes += [select.having, *select.order_by, *select.windows, select.qualify]
    found: list[FuncCall] = []
    for node in nodes:
        for call in aggregate_calls(node):
            if call not in found:
                found.append(call)
    return tuple(found)


def group(rel: Relation, select: Select, ctx: Context) -> tuple[Relation, Rewrite]:
    """The grouped relation and the rewrite that reads it."""
    if any(isinstance(e, Literal) for e in select.group_by):
        raise ReferenceGap("GROUP BY a constant")
    keys = [compile_expr(e, rel) for e in select.group_by]
    calls = _aggregate_calls(select)
    aggs = [compile_aggregate(c, rel, ctx.profile) for c in calls]
    key_fields = _key_fields(select.group_by, keys, rel)
    agg_fields, magnitude_of = _aggregate_fields(aggs)
    groups: dict[tuple, list[Row]] = {} if select.group_by else {(): []}
    for row in rel.rows:
        groups.setdefault(row_key(tuple(k.fn(row) for k in keys)), []).append(row)
    rows = [_group_row(members, keys, aggs, magnitude_of) for members in groups.values()]
    return Relation(tuple(key_fields + agg_fields), rows), grouping_rewrite(select)


@per_node
def grouping_rewrite(select: Select) -> Rewrite:
    """The rewrite that reads the grouped relation: each group key that is not
    a column, and each aggregate call, becomes its hidden column (see
    `_key_fields`, `_aggregate_fields`). It depends on the query alone."""
    pairs: list[tuple[Expr, Expr]] = []
    for j, expr in enumerate(select.group_by):
        if not isinstance(expr, Column):
            pairs.append((expr, Column(_group_column(j))))
    for k, call in enumerate(_aggregate_calls(select)):
        pairs.append((call, Column(_aggregate_column(k))))
    return Replacement(pairs)


def _group_column(j: int) -> str:
    return f"#group{j}"


def _aggregate_column(k: int) -> str:
    return f"#agg{k}"


def _key_fields(exprs: tuple[Expr, ...], keys: list[Compiled], rel: Relation) -> list[Field]:
    """A group key that is a column keeps its name; any other becomes a hidden column."""
    fields: list[Field] = []
    for j, (expr, key) in enumerate(zip(exprs, keys, strict=True)):
        if isinstance(expr, Column):
            source = rel.fields[rel.resolve(expr)]
            fields.append(Field(source.name, key.type, table=source.table))
        else:
            fields.append(Field(_group_column(j), key.type, hidden=True))
    return fields


def _aggregate_fields(aggs: list[CompiledAggregate]) -> tuple[list[Field], list[int | None]]:
    """A hidden column per aggregate, then one per float aggregate for its magnitudes."""
    fields: list[Field] = []
    magnitude_of: list[int | None] = []
    for k, agg in enumerate(aggs):
        field = Field(_aggregate_column(k), agg.result_type, hidden=True)
        fields.append(field)
        is_float = agg.result_type is not None and agg.result_type.is_float
        magnitude_of.append(field.uid if is_float else None)
    fields += [
        Field(f"#agg{k}.magnitude", FLOAT64, hidden=True, magnitude_of=uid)
        for k, uid in enumerate(magnitude_of)
        if uid is not None
    ]
    return fields, magnitude_of


def _group_row(
    members: list[Row],
    keys: list[Compiled],
    aggs: list[CompiledAggregate],
    magnitude_of: list[int | None],
) -> Row:
    # The group's key values are those of its first row (all are not distinct).
    key_values = tuple(k.fn(members[0]) for k in keys) if members else ()
    results = [agg.evaluate([agg.prepare(r) for r in members]) for agg in aggs]
    magnitudes = tuple(
        m for (_, m), uid in zip(results, magnitude_of, strict=True) if uid is not None
    )
    return key_values + tuple(v for v, _ in results) + magnitudes
