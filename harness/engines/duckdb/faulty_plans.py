"""Deliberately faulty engines whose bugs live where optimizer and executor bugs do.

The faults of `harness.engines.duckdb.faulty` each break one clause everywhere
it appears. Real window bugs are narrower: they fire under a plan rewrite (a
top-N filter, a LIMIT pushed down), past a size (a partition longer than an
internal buffer, an input of several batches), or only on the plan of the
query as the user wrote it. Each engine here plants one such bug, so a test
can show that the campaign reaches the shape that triggers it and reduces
the finding to that shape.

Every one is the real DuckDB adapter with one alteration (`AlteredDuckDB`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import pyarrow as pa
import pyarrow.compute as pc

from harness.core import types as T
from harness.core.functions import FunctionKind, lookup
from harness.core.model import (
    BinaryOp,
    BinaryOperator,
    Bound,
    BoundKind,
    Case,
    Column,
    Frame,
    FrameMode,
    FuncCall,
    Literal,
    Query,
    Select,
    SubqueryRef,
    WindowExpr,
    WindowSpec,
    With,
    resolve_window,
    walk,
    window_exprs,
)
from harness.engines.duckdb.faulty import AlteredDuckDB, _user_items, _with_column, transform
from reference_impl.rewrite import replace_exprs

RANKING = frozenset({"row_number", "rank", "dense_rank"})


def _is_ranking(expr: object) -> bool:
    return isinstance(expr, WindowExpr) and expr.func.name in RANKING


FRAME_READING_VALUES = frozenset({"first_value", "last_value", "nth_value"})


def _reads_frame(w: WindowExpr) -> bool:
    """An aggregate or a value function that reads the frame: the frame changes its value."""
    return lookup(w.func.name).kind is FunctionKind.AGGREGATE or w.func.name in FRAME_READING_VALUES


def _replace_windows(select: Select, mapping: Mapping[WindowExpr, object]) -> Select:
    if not mapping:
        return select
    return dataclasses.replace(
        select,
        items=tuple(replace_exprs(i, mapping) for i in select.items),
        order_by=tuple(replace_exprs(k, mapping) for k in select.order_by),
    )


# -- a top-N filter ------------------------------------------------------------------


def _unframed_siblings(select: Select) -> Select:
    """`select` with every frame-reading window of its list computed over the
    default frame (its explicit frame, inline or named, dropped)."""
    mapping = {}
    for item in select.items:
        for w in window_exprs(item):
            spec = resolve_window(w.window, select.windows)
            if not _is_ranking(w) and spec.frame is not None and _reads_frame(w):
                mapping[w] = WindowExpr(w.func, dataclasses.replace(spec, base=None, frame=None,
                                                                     parenthesized=False))
    return _replace_windows(select, mapping)


def _filtered_ranks(select: Select) -> set[str]:
    """The output names of `select`'s ranking windows (row_number, rank, dense_rank)."""
    return {item.alias.casefold() for item in select.items
            if item.alias is not None and _is_ranking(item.expr)}


class TopNFrameDuckDB(AlteredDuckDB):
    """A top-N rewrite that forgets the frames of the windows beside the ranking.

    It fires on `QUALIFY rank() OVER (...) <= k` and on `SELECT ... FROM (SELECT
    ..., row_number() OVER (...) AS rn, ...) WHERE <a condition on rn>`: the
    other window expressions of the ranked SELECT then run over the default
    frame, as a plan that computed them inside the top-N operator would.
    """

    name = "duckdb~topn-frame"
    planted = "under a top-N filter on a ranking window, the windows beside it lose their frame"

    def rewrite(self, query: Query) -> Query:
        def fire(node: object) -> object:
            if not isinstance(node, Select):
                return node
            if node.qualify is not None and any(_is_ranking(n) for n in walk(node.qualify)):
                node = _unframed_siblings(node)
            source = node.source
            if isinstance(source, SubqueryRef) and isinstance(source.query, Select) \
                    and node.where is not None:
                ranks = _filtered_ranks(source.query)
                named = {n.name.casefold() for n in walk(node.where) if isinstance(n, Column)}
                if ranks & named:
                    node = dataclasses.replace(
                        node, source=dataclasses.replace(source, query=_unframed_siblings(source.query)))
            return node

        return transform(query, fire)  # type: ignore[return-value]


# -- LIMIT pushed below a look-ahead -------------------------------------------------


class LimitLeadDuckDB(AlteredDuckDB):
    """LIMIT applied before lead() is computed: the last row kept has no row
    after it, so its lead() is NULL. (A pushdown past a window must keep the
    rows a look-ahead reads.)"""

    name = "duckdb~limit-lead"
    planted = "LIMIT is pushed below lead(): the last row returned sees no next row"

    def alter_answer(self, answer: pa.Table, query: Query, sql: str) -> pa.Table:
        while isinstance(query, With):
            query = query.body
        if not isinstance(query, Select) or query.limit is None or answer.num_rows == 0:
            return answer
        for i, item in _user_items(query):
            if isinstance(item.expr, WindowExpr) and item.expr.func.name == "lead":
                values = answer.column(i).to_pylist()
                values[-1] = None
                answer = _with_column(answer, i, values)
        return answer


# -- a long partition ----------------------------------------------------------------

LONG = 1024  # the partition row past which the frame end slips


def _one_further(end: Bound) -> Bound | None:
    """The frame end one row later, or None where it cannot be written so."""
    if end.kind is BoundKind.CURRENT_ROW:
        return Bound(BoundKind.FOLLOWING, Literal(1, T.INT64))
    offset = end.offset
    if not isinstance(offset, Literal) or not isinstance(offset.value, int) or isinstance(offset.value, bool):
        return None
    if end.kind is BoundKind.FOLLOWING:
        return Bound(BoundKind.FOLLOWING, Literal(offset.value + 1, T.INT64))
    if end.kind is BoundKind.PRECEDING:
        if offset.value == 1:
            return Bound(BoundKind.CURRENT_ROW)
        if offset.value > 1:
            return Bound(BoundKind.PRECEDING, Literal(offset.value - 1, T.INT64))
    return None


def _slipping(w: WindowExpr, spec: WindowSpec) -> Case | None:
    """`CASE WHEN row_number() OVER (p ORDER BY o) > 1024 THEN <w, its ROWS frame
    ending one row later> ELSE w END`, or None when `w` has no such frame."""
    frame = spec.frame
    if frame is None or frame.mode is not FrameMode.ROWS or not _reads_frame(w):
        return None
    end = _one_further(frame.end)
    if end is None:
        return None
    later = WindowExpr(w.func, dataclasses.replace(spec, base=None, parenthesized=False,
                                                   frame=Frame(frame.mode, frame.start, end, frame.exclusion)))
    position = WindowExpr(FuncCall("row_number"),
                          WindowSpec(partition_by=spec.partition_by, order_by=spec.order_by))
    past = BinaryOp(BinaryOperator.GT, position, Literal(LONG, T.INT64))
    return Case(((past, later),), w)


class LongPartitionDuckDB(AlteredDuckDB):
    """A ROWS frame's end slips one row further for the rows past the 1,024th of
    their partition (as a bug in a buffer of 1,024 rows would make it). Found
    only by a case with a partition that long."""

    name = "duckdb~long-partition"
    planted = f"past row {LONG} of a partition, a ROWS frame ends one row later"

    def rewrite(self, query: Query) -> Query:
        def fire(node: object) -> object:
            if not isinstance(node, Select):
                return node
            mapping = {}
            for item in node.items:
                for w in window_exprs(item):
                    slipped = _slipping(w, resolve_window(w.window, node.windows))
                    if slipped is not None:
                        mapping[w] = slipped
            return _replace_windows(node, mapping)

        return transform(query, fire)  # type: ignore[return-value]


# -- a batch boundary ----------------------------------------------------------------

BATCH = 2048  # DuckDB's vector size


def _window_order_columns(query: Query) -> set[str]:
    """The columns named by any window's ORDER BY keys (case-folded)."""
    names = set()
    for node in walk(query):
        if isinstance(node, WindowSpec):
            for key in node.order_by:
                names |= {n.name.casefold() for n in walk(key.expr) if isinstance(n, Column)}
    return names


class BatchNullPeersDuckDB(AlteredDuckDB):
    """Rows whose window ORDER BY key is NULL are lost when they arrive in a
    later batch than the first (past the first 2,048 input rows): as a sort
    that merges its runs and drops the NULL run of every run but the first."""

    name = "duckdb~batch-null-peers"
    planted = f"rows with a NULL window ORDER BY key past input row {BATCH} are dropped"

    def run(self, tables: Mapping[str, pa.Table], sql: str) -> pa.Table:
        if self._rendered is not None and self._rendered[0] == sql:
            keys = _window_order_columns(self._rendered[1])
            tables = {name: _dropping_late_nulls(t, keys) for name, t in tables.items()}
        return super().run(tables, sql)


def _dropping_late_nulls(table: pa.Table, keys: set[str]) -> pa.Table:
    columns = [n for n in table.column_names if n.casefold() in keys]
    if table.num_rows <= BATCH or not columns:
        return table
    null_key = pc.is_null(table.column(columns[0]))
    for c in columns[1:]:
        null_key = pc.or_(null_key, pc.is_null(table.column(c)))
    late = pa.array([i >= BATCH for i in range(table.num_rows)])
    return table.filter(pc.invert(pc.and_(late, null_key)))


FAULTY_PLANS = (TopNFrameDuckDB, LimitLeadDuckDB, LongPartitionDuckDB, BatchNullPeersDuckDB)
