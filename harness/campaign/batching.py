"""Batching: many cases of one query shape answered by one query.

A tiny window query costs Spark about 150 ms whatever its size, so cases
that share a query (and table schemas) but not rows are stacked: every
table gets a case-id column, each case's rows tagged with its position in
the batch, and the query is rewritten so that no row of one case can meet
a row of another:

- every window's PARTITION BY starts with the case id (a window without
  PARTITION BY gets one);
- every GROUP BY starts with it;
- every join matches it (l.case = r.case AND <the join condition>);
- every select list carries it, last, so each derived table passes it on
  and the answer can be split by it;
- a LIMIT/OFFSET is applied per case: row_number() OVER (PARTITION BY case
  ORDER BY <the query's ORDER BY>) in a derived table, filtered outside.

Split by the case id, the answer of the batched query is then, case by case,
an answer of the original query (`tests/test_batching.py` proves it on the
reference). Batching changes the plan, though (a query without PARTITION BY
gets one), so campaigns still run a share of cases unbatched, and every
finding is confirmed unbatched before it is reported.

Some shapes cannot be stacked without changing their meaning; `batch_query`
raises `NotBatchable` for them and the case runs on its own:

- an aggregate without GROUP BY (it answers one row even for an empty case);
- a LIMIT without ORDER BY (per case it would need an unordered row_number,
  which some engines reject);
- `SELECT *` over a derived table or join, FULL joins, UNION ALL and WITH;
- a query that reads no stacked table (only VALUES or table functions), and
  an outer join whose preserved side is such a constant source (its
  unmatched rows would belong to no case).

A constant source (a VALUES table, generate_series, range) is the same in
every case, so it is joined as it is and the case id comes from the other
side.
- a subquery in an expression (scalar, IN, EXISTS), anywhere in the query: it
  would read every case's rows. Correlating it by the case id would make it
  a correlated subquery, which engines support in fewer places than
  uncorrelated ones, so the case runs on its own instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import pyarrow as pa
import pyarrow.compute as pc

from harness.core.all_keys import expand_all_keys
from harness.core.errors import HarnessError
from harness.core.functions import contains_aggregate
from harness.core.model import (
    SUBQUERY_EXPRS,
    AllColumns,
    BinaryOp,
    BinaryOperator,
    Column,
    Expr,
    FuncCall,
    Join,
    JoinKind,
    Literal,
    NamedWindow,
    Query,
    Select,
    SelectItem,
    Source,
    Star,
    SubqueryRef,
    TableFunctionRef,
    TableRef,
    Values,
    WindowExpr,
    WindowSpec,
    key_position,
    walk,
)
from harness.core.types import INT64
from reference_impl.rewrite import map_children

CASE_ID = "__wh_case"  # the case-id column, in every stacked table and every select list
_ITEM = "__wh_b"  # the select items of a derived table under a per-case LIMIT
_LIMIT_ROW = "__wh_lrn"  # its row_number
_INNER, _OUTER = "__wh_q", "__wh_l"  # the aliases of the two derived tables


class NotBatchable(HarnessError):
    """The query's meaning would change if cases were stacked; it runs on its own."""


@dataclass(frozen=True)
class Batch:
    """One query over stacked tables that answers `size` cases at once."""

    query: Query
    tables: dict[str, pa.Table]
    size: int

    def split(self, answer: pa.Table) -> list[pa.Table]:
        return split_answer(answer, self.size)


def make_batch(query: Query, per_case: Sequence[Mapping[str, pa.Table]]) -> Batch:
    """The batched form of `query` over the stacked tables of each case."""
    return Batch(batch_query(query), stack_tables(per_case), len(per_case))


def batch_query(query: Query) -> Select:
    """The rewrite described in the module doc; the case id is the last output column."""
    if not isinstance(query, Select):
        raise NotBatchable(f"a {type(query).__name__} query is not batched")
    return _select(query)


def stack_tables(per_case: Sequence[Mapping[str, pa.Table]]) -> dict[str, pa.Table]:
    """Each table name's tables, one per case, tagged with the case's position and stacked."""
    if not per_case:
        raise ValueError("a batch needs at least one case")
    names = list(per_case[0])
    if any(list(tables) != names for tables in per_case):
        raise NotBatchable("the cases of a batch read different tables")
    stacked = {}
    for name in names:
        parts = [tables[name] for tables in per_case]
        schema = parts[0].schema
        if any(p.schema != schema for p in parts):
            raise NotBatchable(f"the cases of a batch give table {name!r} different column types")
        tagged = [p.append_column(CASE_ID, pa.array([i] * p.num_rows, pa.int64()))
                  for i, p in enumerate(parts)]
        # One chunk: PySpark 4.3.0's createDataFrame(pyarrow.Table) silently drops
        # every row after an empty chunk (a case with no rows) — measured here.
        stacked[name] = pa.concat_tables(tagged).combine_chunks()
    return stacked


def split_answer(answer: pa.Table, size: int) -> list[pa.Table]:
    """The rows of each case, in the order the engine gave them, without the case id."""
    if answer.num_columns == 0:
        raise NotBatchable("the batched answer has no columns")
    ids = answer.column(answer.num_columns - 1)
    body = answer.remove_column(answer.num_columns - 1)
    if body.num_rows == 0:
        return [body] * size
    # A stable sort by case id keeps each case's rows in the engine's order.
    order = pc.sort_indices(ids)
    ordered_ids = ids.take(order).to_pylist()
    ordered = body.take(order)
    out, start = [], 0
    for case in range(size):
        end = start
        while end < len(ordered_ids) and ordered_ids[end] == case:
            end += 1
        out.append(ordered.slice(start, end - start))
        start = end
    if start != len(ordered_ids):
        raise NotBatchable(f"the batched answer has rows of unknown cases: {ordered_ids[start]!r}")
    return out


# -- the rewrite ----------------------------------------------------------------------


def _select(sel: Select) -> Select:
    if any(isinstance(item.expr, Star) for item in sel.items):
        raise NotBatchable("SELECT * is not batched (the case id would be selected twice)")
    # GROUP BY ALL stays: the case id, a select item without aggregate, joins
    # its keys by itself. Without keys it is no GROUP BY at all.
    if not expand_all_keys(sel).group_by and _has_plain_aggregate(sel):
        raise NotBatchable("an aggregate without GROUP BY answers one row even for an empty case")
    if sel.source is None:
        raise NotBatchable("a query without FROM reads no stacked table")
    if any(isinstance(node, SUBQUERY_EXPRS) for node in walk(sel)):
        raise NotBatchable("a subquery in an expression is not batched (it would read "
                           "every case's rows)")
    source, case = _source(sel.source)
    if case is None:
        raise NotBatchable("a query over VALUES or table functions only reads no stacked table")
    batched = replace(
        sel,
        items=(*(_partitioned(item, case) for item in sel.items), SelectItem(case, CASE_ID)),
        source=source,
        where=_partitioned(sel.where, case),
        group_by=_group_by(sel.group_by, case),
        having=_partitioned(sel.having, case),
        windows=tuple(NamedWindow(w.name, _spec(w.spec, case)) for w in sel.windows),
        order_by=tuple(_partitioned(k, case) for k in sel.order_by),
        # QUALIFY's windows are partitioned like the others, so it filters per case.
        qualify=_partitioned(sel.qualify, case),
    )
    if sel.limit is None and sel.offset is None:
        return batched  # ORDER BY ALL also sorts by the case id, last: still each case's order
    return _per_case_limit(_order_by_items(batched))


def _source(source: Source) -> tuple[Source, Expr | None]:
    """The source over stacked tables, and the expression of its case id (None
    for a constant source, the same in every case)."""
    if isinstance(source, TableRef):
        return source, Column(CASE_ID, source.alias or source.name)
    if isinstance(source, TableFunctionRef) or (
            isinstance(source, SubqueryRef) and isinstance(source.query, Values)):
        return source, None
    if isinstance(source, SubqueryRef):
        columns = (*source.columns, CASE_ID) if source.columns else ()
        batched = replace(source, query=batch_query(source.query), columns=columns)
        return batched, Column(CASE_ID, source.alias)
    if isinstance(source, Join):
        return _join(source)
    raise NotBatchable(f"a {type(source).__name__} source is not batched")


def _join(join: Join) -> tuple[Source, Expr | None]:
    left, lcase = _source(join.left)
    right, rcase = _source(join.right)
    if join.kind is JoinKind.FULL:
        raise NotBatchable("a FULL join is not batched (its case id would need COALESCE)")
    if lcase is None or rcase is None:
        # A constant side meets the stacked rows of every case alike; only a
        # side whose unmatched rows are kept must carry the case id.
        kept_constant = (join.kind is JoinKind.LEFT and lcase is None) or (
            join.kind is JoinKind.RIGHT and rcase is None)
        if kept_constant and (lcase, rcase) != (None, None):
            raise NotBatchable("an outer join keeping a constant source's rows is not batched")
        return replace(join, left=left, right=right), lcase if rcase is None else rcase
    if _unqualified(lcase) or _unqualified(rcase):
        raise NotBatchable("a derived table without alias in a join: its case id is ambiguous")
    same = BinaryOp(BinaryOperator.EQ, lcase, rcase)
    kind = JoinKind.INNER if join.kind is JoinKind.CROSS else join.kind
    on = same if join.on is None else BinaryOp(BinaryOperator.AND, same, join.on)
    return Join(kind, left, right, on), rcase if kind is JoinKind.RIGHT else lcase


def _unqualified(case: Expr) -> bool:
    return isinstance(case, Column) and case.table is None


def _partitioned(node, case: Expr):
    """`node` with every window of this query level partitioned by the case id first."""
    if node is None or isinstance(node, (Select, SubqueryRef)):
        return node
    if isinstance(node, WindowExpr):
        func = map_children(node.func, lambda c: _partitioned(c, case))
        return WindowExpr(func, _spec(node.window, case))  # type: ignore[arg-type]
    return map_children(node, lambda c: _partitioned(c, case))


def _spec(spec: WindowSpec, case: Expr) -> WindowSpec:
    # A window refining a named one cannot add PARTITION BY: its base has it.
    if spec.base is not None:
        return spec
    return replace(spec, partition_by=(case, *spec.partition_by))


def _has_plain_aggregate(sel: Select) -> bool:
    nodes = (*sel.items, sel.having, *sel.order_by, *sel.windows, sel.qualify)
    return any(contains_aggregate(n) for n in nodes if n is not None)


def _group_by(keys: tuple[Expr, ...], case: Expr) -> tuple[Expr, ...]:
    if not keys or keys == (AllColumns(),):
        return keys
    return (case, *keys)


def _order_by_items(sel: Select) -> Select:
    """ORDER BY ALL as the expressions of the items before the case id, which a
    per-case LIMIT can select again; a constant item orders nothing and is left out."""
    if not any(isinstance(k.expr, AllColumns) for k in sel.order_by):
        return sel
    key = sel.order_by[0]
    exprs = [item.expr for item in sel.items[:-1] if not isinstance(item.expr, Literal)]
    return replace(sel, order_by=tuple(replace(key, expr=e) for e in exprs))


def _per_case_limit(sel: Select) -> Select:
    """SELECT .. FROM (SELECT q.*, row_number() OVER (PARTITION BY case ORDER BY keys)
    FROM (sel without ORDER BY and LIMIT) q) l WHERE offset < rn <= offset + limit ORDER BY keys."""
    if not sel.order_by:
        raise NotBatchable("a LIMIT without ORDER BY is not batched (per case it needs an "
                           "unordered row_number)")
    items = list(sel.items)
    keys = []
    for key in sel.order_by:
        position = _output_position(key.expr, items)
        if position is None:  # a key that is not an output column: select it, hidden
            position = len(items)
            items.append(SelectItem(key.expr))
        keys.append((position, key))
    inner = replace(sel, items=tuple(SelectItem(item.expr, f"{_ITEM}{i}") for i, item in enumerate(items)),
                    order_by=(), limit=None, offset=None)
    case_at = len(sel.items) - 1

    def column(i: int, table: str) -> Column:
        return Column(f"{_ITEM}{i}", table)

    row = WindowExpr(FuncCall("row_number"), WindowSpec(
        partition_by=(column(case_at, _INNER),),
        order_by=tuple(replace(k, expr=column(i, _INNER)) for i, k in keys)))
    middle = Select(
        items=(*(SelectItem(column(i, _INNER), f"{_ITEM}{i}") for i in range(len(items))),
               SelectItem(row, _LIMIT_ROW)),
        source=SubqueryRef(inner, _INNER))
    first = sel.offset or 0
    rn = Column(_LIMIT_ROW, _OUTER)
    where: Expr = BinaryOp(BinaryOperator.GT, rn, Literal(first, INT64))
    if sel.limit is not None:
        where = BinaryOp(BinaryOperator.AND, where,
                         BinaryOp(BinaryOperator.LE, rn, Literal(first + sel.limit, INT64)))
    return Select(
        items=tuple(SelectItem(column(i, _OUTER), name) for i, name in enumerate(_output_names(sel.items))),
        source=SubqueryRef(middle, _OUTER),
        where=where,
        order_by=tuple(replace(k, expr=column(i, _OUTER)) for i, k in keys),
    )


def _output_names(items: Sequence[SelectItem]) -> list[str]:
    """The names the columns had before the rewrite, where they had one of their
    own (a plain column's); a nameless or repeated one gets a fresh name."""
    names: list[str] = []
    for i, item in enumerate(items):
        name = item.alias or (item.expr.name if isinstance(item.expr, Column) else None)
        names.append(name if name is not None and name not in names else f"{_ITEM}{i}")
    return names


def _output_position(expr: Expr, items: Sequence[SelectItem]) -> int | None:
    """The select-list position an ORDER BY key names: a position (the case id,
    last, is no user column), an alias, or the same expression."""
    position = key_position(expr)
    if position is not None:
        if not 1 <= position < len(items):
            raise NotBatchable(f"ORDER BY position {position} is not in the select list")
        return position - 1
    for i, item in enumerate(items):
        if isinstance(expr, Column) and expr.table is None and item.alias == expr.name:
            return i
    for i, item in enumerate(items):
        if item.expr == expr:
            return i
    return None

