"""Metamorphic relations that change the input rows: partition-restriction
(only one partition's rows) and batching (the table stacked with a shuffled
copy, told apart by a new leading partition key). Each is a `Subject -> Check
| None` function; `harness.judge.metamorphic` registers them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import pyarrow as pa

from harness.core import types as T
from harness.core.model import (
    BinaryOp,
    BinaryOperator,
    Column,
    ColumnDef,
    IsNull,
    SubqueryRef,
    TableSchema,
    WindowExpr,
)
from harness.core.types import TypeKind
from harness.judge.metamorphic_build import (
    Pair,
    collect,
    column_alias,
    conj,
    fresh_name,
    make_check,
    same,
    scale_of,
    select,
    side,
)
from harness.judge.metamorphic_check import ID, Check
from harness.judge.metamorphic_draw import Subject, literal, random_window_expr

# -- partition restriction -------------------------------------------------------------


def partition_restriction(s: Subject) -> Check | None:
    """Left: every window partitioned by p (first), filtered to p = v outside (a
    subquery); right: the same windows over the rows WHERE p = v. v is a value
    of p in the table (not NaN), or NULL (then p IS NULL)."""
    columns = [c for c in s.schema.columns
               if c.name != ID and c.type.kind not in (TypeKind.LIST, TypeKind.INTERVAL)]  # p = v needs a literal
    if s.table.num_rows == 0 or not columns:
        return None
    p = s.rng.choice(columns)
    v = s.rng.choice(s.table.column(p.name).to_pylist())
    if isinstance(v, float) and math.isnan(v):
        return None
    pred = IsNull(Column(p.name)) if v is None else BinaryOp(BinaryOperator.EQ, Column(p.name), literal(v, p.type))

    def draw() -> Pair | None:
        e = random_window_expr(s)
        if e is None:
            return None
        if Column(p.name) not in e.window.partition_by:
            e = replace(e, window=replace(e.window, partition_by=(Column(p.name), *e.window.partition_by)))
        return same(s, e)

    def build(pairs: Sequence[Pair]) -> Check:
        exprs = [q[0] for q in pairs]
        inner = replace(select(s, exprs, s.where, extra=[p.name]), order_by=())
        outer = select(s, [Column(column_alias(s, i + 1)) for i in range(len(exprs))], pred,
                       source=SubqueryRef(inner, fresh_name(s.schema, "mr_sub")))
        right = select(s, exprs, conj(s.where, pred))
        return make_check(s, "partition-restriction", pairs, side(s, "left", outer), side(s, "right", right))

    return collect(s, draw, build)


# -- batching --------------------------------------------------------------------------------


def _stacked(s: Subject, batch: str) -> tuple[TableSchema, pa.Table]:
    """The table (b = 0) and a copy with each value column shuffled on its own
    (b = 1), rows interleaved at random."""
    n = s.table.num_rows
    copy = s.table
    for i, name in enumerate(s.table.column_names):
        if name != ID:
            order = s.rng.sample(range(n), n)
            copy = copy.set_column(i, name, s.table.column(name).take(pa.array(order, pa.int64())))
    both = pa.concat_tables([s.table.append_column(batch, pa.array([0] * n, pa.int64())),
                             copy.append_column(batch, pa.array([1] * n, pa.int64()))])
    both = both.take(pa.array(s.rng.sample(range(2 * n), 2 * n), pa.int64()))
    schema = TableSchema(s.schema.name, (*s.schema.columns, ColumnDef(batch, T.INT64, nullable=False)))
    return schema, both


def batched(expr: WindowExpr, batch: str) -> WindowExpr:
    spec = expr.window
    return replace(expr, window=replace(spec, partition_by=(Column(batch), *spec.partition_by)))


def batching(s: Subject) -> Check | None:
    """Left: the query over t; right: the query over t stacked with a shuffled
    copy, `b` first in every PARTITION BY; the right's b = 0 rows compared."""
    batch = fresh_name(s.schema, "mr_batch")
    schema, stacked = _stacked(s, batch)
    pool = list(s.base)

    def draw() -> Pair | None:
        e = pool.pop(0) if pool else random_window_expr(s)
        return None if e is None else (e, batched(e, batch), scale_of(s, e))

    def build(pairs: Sequence[Pair]) -> Check:
        left = select(s, [p[0] for p in pairs], s.where)
        right = select(s, [p[1] for p in pairs], s.where, extra=[batch])
        return make_check(s, "batching", pairs, side(s, "left", left),
                          side(s, "right", right, schema, stacked), right_filter=(batch, 0))

    return collect(s, draw, build)
