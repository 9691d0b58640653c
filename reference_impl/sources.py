"""FROM: table scans (or common table expressions), subqueries and joins.

A join pairs every left row with every right row and keeps the pairs whose ON
condition is true (not NULL: NULL keys never match); LEFT/RIGHT/FULL add the
unmatched rows of their side padded with NULLs.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.errors import EvaluationError, InvalidQuery
from harness.model import Join, JoinKind, Query, Source, SubqueryRef, TableRef
from reference_impl.context import Context
from reference_impl.expressions import compile_predicate
from reference_impl.relation import Relation, from_arrow_table

RunQuery = Callable[[Query, Context], Relation]


def scan_source(source: Source | None, ctx: Context, run_query: RunQuery) -> Relation:
    if source is None:
        return Relation((), [()])  # SELECT without FROM reads one empty row
    if isinstance(source, TableRef):
        return _table(source, ctx).qualified(source.alias or source.name)
    if isinstance(source, SubqueryRef):
        return run_query(source.query, ctx).qualified(source.alias)
    if isinstance(source, Join):
        return _join(source, ctx, run_query)
    raise InvalidQuery(f"unknown source {source!r}")


def _table(ref: TableRef, ctx: Context) -> Relation:
    if ref.name in ctx.ctes:
        return ctx.ctes[ref.name]
    if ref.name in ctx.tables:
        return from_arrow_table(ctx.tables[ref.name], ref.name)
    folded = [name for name in ctx.tables if name.lower() == ref.name.lower()]
    if len(folded) == 1:
        return from_arrow_table(ctx.tables[folded[0]], folded[0])
    raise InvalidQuery(f"table {ref.name!r} does not exist (tables: {sorted(ctx.tables)})")


def _join(join: Join, ctx: Context, run_query: RunQuery) -> Relation:
    left = scan_source(join.left, ctx, run_query)
    right = scan_source(join.right, ctx, run_query)
    combined = Relation(left.fields + right.fields, [])
    if join.kind is JoinKind.CROSS:
        combined.rows = [lr + rr for lr in left.rows for rr in right.rows]
        return combined
    if join.on is None:
        raise EvaluationError(f"{join.kind.value} JOIN needs an ON condition")
    on = compile_predicate(join.on, combined)
    left_nulls, right_nulls = (None,) * len(left.fields), (None,) * len(right.fields)
    matched_right: set[int] = set()
    for lr in left.rows:
        matches = [j for j, rr in enumerate(right.rows) if on(lr + rr) is True]
        combined.rows += [lr + right.rows[j] for j in matches]
        matched_right.update(matches)
        if not matches and join.kind in (JoinKind.LEFT, JoinKind.FULL):
            combined.rows.append(lr + right_nulls)
    if join.kind in (JoinKind.RIGHT, JoinKind.FULL):
        unmatched = [rr for j, rr in enumerate(right.rows) if j not in matched_right]
        combined.rows += [left_nulls + rr for rr in unmatched]
    return combined
