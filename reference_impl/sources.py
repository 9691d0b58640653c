"""FROM: table scans (or common table expressions), subqueries, table
functions and joins.

A derived table's column list (`AS q(a, b)`) renames its columns, and must
name each of them: the standard's rule (PostgreSQL and DuckDB also take a
shorter list; DataFusion and Spark do not). generate_series and range read
integer arguments and give BIGINT values (`harness.core.table_functions`); a NULL
argument gives no rows (PostgreSQL, DuckDB, DataFusion), a step of 0 is an
error.

A join pairs every left row with every right row and keeps the pairs whose ON
condition is true (not NULL: NULL keys never match); LEFT/RIGHT/FULL add the
unmatched rows of their side padded with NULLs.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.core import types as T
from harness.core.errors import EvaluationError, InvalidQuery, ReferenceGap
from harness.core.model import (
    Join,
    JoinKind,
    Query,
    Source,
    SubqueryRef,
    TableFunctionRef,
    TableRef,
)
from harness.core.table_functions import check_table_function, column_name, table_name
from reference_impl.context import Context
from reference_impl.expressions import compile_expr, compile_predicate
from reference_impl.relation import Field, Relation, from_arrow_table

# More rows than a table function may give the reference (it holds them all).
MAX_SERIES_ROWS = 1_000_000

RunQuery = Callable[[Query, Context], Relation]


def scan_source(source: Source | None, ctx: Context, run_query: RunQuery) -> Relation:
    if source is None:
        return Relation((), [()])  # SELECT without FROM reads one empty row
    if isinstance(source, TableRef):
        return _table(source, ctx).qualified(source.alias or source.name)
    if isinstance(source, SubqueryRef):
        return renamed(run_query(source.query, ctx), source.columns).qualified(source.alias)
    if isinstance(source, TableFunctionRef):
        return _table_function(source)
    if isinstance(source, Join):
        return _join(source, ctx, run_query)
    raise InvalidQuery(f"unknown source {source!r}")


def renamed(rel: Relation, columns: tuple[str, ...]) -> Relation:
    """`rel` with its visible columns named by a column list (none: as they are)."""
    if not columns:
        return rel
    visible = rel.visible()
    if len(columns) != len(visible):
        raise EvaluationError(
            f"a column list of {len(columns)} names for a table of {len(visible)} columns")
    names = dict(zip(visible, columns, strict=True))
    fields = tuple(
        Field(names[i], f.type, f.table, f.hidden, f.magnitude_of, f.uid) if i in names else f
        for i, f in enumerate(rel.fields))
    return Relation(fields, rel.rows)


def _table_function(ref: TableFunctionRef) -> Relation:
    spec = check_table_function(ref)
    args = [_integer_argument(a) for a in ref.args]
    field = Field(column_name(ref), T.INT64, table_name(ref))
    if any(a is None for a in args):
        return Relation((field,), [])
    if len(args) == 3 and args[2] == 0:
        raise EvaluationError(f"{ref.name}: the step cannot be 0")
    series = spec.series(*args)  # type: ignore[arg-type]
    if len(series) > MAX_SERIES_ROWS:
        raise ReferenceGap(f"{ref.name} of {len(series)} rows is more than the reference holds")
    return Relation((field,), [(v,) for v in series])


def _integer_argument(arg: object) -> int | None:
    """A table function's argument: an integer expression over constants (the
    FROM items beside it are not in scope), or NULL."""
    compiled = compile_expr(arg, Relation((), [()]))  # type: ignore[arg-type]
    if compiled.type is not None and not compiled.type.is_integer:
        raise ReferenceGap(f"table function arguments of type {compiled.type}")
    value = compiled.fn(())
    assert value is None or isinstance(value, int)
    return value


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
