"""Deliberately faulty engines: the proof that the harness has teeth.

These are the only fakes the project allows. Each is the real DuckDB adapter
with exactly one planted bug, so a test can show that the harness catches
that kind of bug (a non-match verdict on the faulty engine, a match on plain
DuckDB for the same case). One more, `duckdb~peer-shuffle`, is a control and
is NOT faulty: it feeds DuckDB its input rows in a fresh order for every
query (and shuffles the output rows when the query has no ORDER BY), so peers
come in an arbitrary order; the harness must never find anything on it.

Names: `duckdb~<variant>`, one scheme for the faults and the control ("DuckDB,
altered"). They are constructible by name through `harness.engines.registry`
(`get_engine`, `get_dialect`, `window-harness run --engines duckdb~ntile`)
but are not listed by `engine_names()`, so no default run includes them.
Their dialect is DuckDB's; their version string says what is planted.

A fault is planted in one of three places, each a hook of `AlteredDuckDB`:
- `rewrite`: the model is changed before rendering (a pure Query -> Query);
- `alter_input`: the tables are changed before loading (row order only);
- `alter_answer`: the answer is changed after running. It needs the query,
  which `render` remembers together with the SQL it returned, since the
  runner calls `render` and then `run` with that SQL. Hidden columns of the
  harness (`__wh_*`, see `harness.judge.instrument`) are never altered.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections.abc import Callable, Mapping
from decimal import Decimal
from random import Random

import pyarrow as pa

from harness.core import types as T
from harness.core.errors import InvalidQuery
from harness.core.model import (
    BinaryOp,
    BinaryOperator,
    Bound,
    BoundKind,
    Exclusion,
    Frame,
    FrameMode,
    FuncCall,
    Interval,
    Literal,
    NullsOrder,
    NullTreatment,
    Query,
    Select,
    SelectItem,
    SortKey,
    Star,
    TableRef,
    WindowExpr,
    WindowSpec,
    With,
    resolve_window,
    window_exprs,
)
from harness.core.names import (
    HIDDEN_PREFIX,  # every hidden column of harness.judge.instrument starts so
)
from harness.engines.base import Engine
from harness.engines.duckdb.adapter import DuckDBEngine
from harness.sql.literals import fits_integer, natural_decimal_type, natural_integer_type
from reference_impl.rewrite import map_children, replace_exprs

PEERS_PREFIX = "__faulty_peers_"  # tie-value's own helper columns, dropped again


def transform(node: object, fn: Callable[[object], object]) -> object:
    """`node` with `fn` applied to every sub-node, children before parents."""
    return fn(map_children(node, lambda child: transform(child, fn)))


class AlteredDuckDB(DuckDBEngine):
    """DuckDB with one alteration; subclasses set `name`, `planted` and a hook."""

    planted: str = ""  # what is wrong, for the version string
    faulty: bool = True

    def __init__(self, config: Mapping[str, str] | None = None) -> None:
        super().__init__(config)
        self._rendered: tuple[str, Query] | None = None

    shares_code_with = "duckdb"  # a planted bug is not a second opinion
    def version(self) -> str:
        label = "FAULTY" if self.faulty else "not faulty"
        return f"{super().version()} ({label} fake: {self.planted})"

    def rewrite(self, query: Query) -> Query:
        return query

    def alter_input(self, tables: Mapping[str, pa.Table], sql: str) -> Mapping[str, pa.Table]:
        return tables

    def alter_answer(self, answer: pa.Table, query: Query, sql: str) -> pa.Table:
        return answer

    def render(self, query: Query) -> str:
        try:
            rewritten = self.rewrite(query)
        except InvalidQuery:
            # A query invalid by definition (an error-conformance case): the planted
            # bug has nothing to act on; the engine itself is to refuse it.
            rewritten = query
        sql = super().render(rewritten)
        self._rendered = (sql, query)
        return sql

    def run(self, tables: Mapping[str, pa.Table], sql: str) -> pa.Table:
        answer = super().run(self.alter_input(tables, sql), sql)
        if self._rendered is not None and self._rendered[0] == sql:
            return self.alter_answer(answer, self._rendered[1], sql)
        return answer


def shuffled(tables: Mapping[str, pa.Table], rng: Random) -> dict[str, pa.Table]:
    """Each table with its rows in a random order."""
    out = {}
    for name, table in tables.items():
        order = list(range(table.num_rows))
        rng.shuffle(order)
        out[name] = table.take(pa.array(order, pa.int64()))
    return out


# -- faults in the model ------------------------------------------------------------


def _plus_one(offset: object) -> object:
    """The offset plus one, its type widened where the sum needs more digits."""
    if isinstance(offset, Interval):
        return dataclasses.replace(offset, count=offset.count + 1)
    if not isinstance(offset, Literal) or offset.type is None or offset.value is None:
        return offset
    t, value = offset.type, offset.value + 1  # type: ignore[operator]
    if t.is_integer and not fits_integer(value, t):
        t = natural_integer_type(value) or t
    elif t.kind is T.TypeKind.DECIMAL:
        assert t.precision is not None and t.scale is not None
        whole = natural_decimal_type(format(value, "f"))
        t = T.decimal(max(t.precision, whole.precision - whole.scale + t.scale), t.scale)
    return Literal(value, t)


def widen_range_preceding(node: object) -> object:
    """RANGE n PRECEDING -> RANGE n+1 PRECEDING (either bound)."""
    if not isinstance(node, Frame) or node.mode is not FrameMode.RANGE:
        return node

    def widen(b: Bound) -> Bound:
        return Bound(b.kind, _plus_one(b.offset)) if b.kind is BoundKind.PRECEDING else b

    return dataclasses.replace(node, start=widen(node.start), end=widen(node.end))


class RangeOffsetDuckDB(AlteredDuckDB):
    name = "duckdb~range-offset"
    planted = "RANGE n PRECEDING runs as n+1 PRECEDING"

    def rewrite(self, query: Query) -> Query:
        return transform(query, widen_range_preceding)  # type: ignore[return-value]


def _flipped(nulls: NullsOrder) -> NullsOrder:
    return NullsOrder.LAST if nulls is NullsOrder.FIRST else NullsOrder.FIRST


def _effective_nulls(key: SortKey, engine: Engine) -> NullsOrder:
    """The null order a key gets on `engine`: its own, else the engine's default."""
    if key.nulls is not None:
        return key.nulls
    first = engine.dialect.default_null_ordering.nulls_first(key.descending)
    return NullsOrder.FIRST if first else NullsOrder.LAST


class DescNullsDuckDB(AlteredDuckDB):
    """An unwritten null order on a DESC key is written out as the opposite of
    DuckDB's default, so the fault fires whether or not the case spells it."""

    name = "duckdb~desc-nulls"
    planted = "window ORDER BY ... DESC puts NULLs at the other end"

    def rewrite(self, query: Query) -> Query:
        def flip(node: object) -> object:
            if not isinstance(node, WindowSpec):
                return node
            keys = tuple(
                dataclasses.replace(k, nulls=_flipped(_effective_nulls(k, self))) if k.descending else k
                for k in node.order_by
            )
            return dataclasses.replace(node, order_by=keys)

        return transform(query, flip)  # type: ignore[return-value]


def drop_exclude_ties(node: object) -> object:
    """EXCLUDE TIES -> no EXCLUDE clause."""
    if isinstance(node, Frame) and node.exclusion is Exclusion.TIES:
        return dataclasses.replace(node, exclusion=None)
    return node


class ExcludeTiesDuckDB(AlteredDuckDB):
    name = "duckdb~exclude-ties"
    planted = "EXCLUDE TIES excludes nothing"

    def rewrite(self, query: Query) -> Query:
        return transform(query, drop_exclude_ties)  # type: ignore[return-value]


def drop_ignore_nulls(node: object) -> object:
    """IGNORE NULLS -> no null treatment (RESPECT NULLS, the default)."""
    if isinstance(node, FuncCall) and node.null_treatment is NullTreatment.IGNORE:
        return dataclasses.replace(node, null_treatment=None)
    return node


class IgnoreNullsDuckDB(AlteredDuckDB):
    name = "duckdb~ignore-nulls"
    planted = "IGNORE NULLS is ignored"

    def rewrite(self, query: Query) -> Query:
        return transform(query, drop_ignore_nulls)  # type: ignore[return-value]


class NtileDuckDB(AlteredDuckDB):
    """ntile(n) OVER w runs as n + 1 - ntile(n) OVER (w in reverse order): the
    same buckets on an even split, but the larger buckets come last."""

    name = "duckdb~ntile"
    planted = "ntile puts the larger buckets last"

    def rewrite(self, query: Query) -> Query:
        def reverse_ntile(node: object) -> object:
            if not isinstance(node, Select):
                return node
            mapping = {
                w: self._reversed_ntile(w, resolve_window(w.window, node.windows))
                for item in (*node.items, *node.order_by)
                for w in window_exprs(item)
                if w.func.name == "ntile"
            }
            if not mapping:
                return node
            return dataclasses.replace(
                node,
                items=tuple(replace_exprs(i, mapping) for i in node.items),
                order_by=tuple(replace_exprs(k, mapping) for k in node.order_by),
            )

        return transform(query, reverse_ntile)  # type: ignore[return-value]

    def _reversed_ntile(self, w: WindowExpr, spec: WindowSpec) -> BinaryOp:
        reverse = tuple(
            SortKey(k.expr, not k.descending, _flipped(_effective_nulls(k, self)))
            for k in spec.order_by
        )
        ntile = WindowExpr(w.func, dataclasses.replace(spec, order_by=reverse))
        n_plus_one = BinaryOp(BinaryOperator.ADD, w.func.args[0], Literal(1, T.INT32))
        return BinaryOp(BinaryOperator.SUB, n_plus_one, ntile)


# -- faults in the answer -----------------------------------------------------------


def _is_row_level(query: Query) -> bool:
    return isinstance(query, Select) and isinstance(query.source, TableRef) \
        and not query.group_by and query.having is None and not query.distinct


def _user_items(query: Select) -> list[tuple[int, SelectItem]]:
    return [(i, item) for i, item in enumerate(query.items)
            if not (item.alias or "").startswith(HIDDEN_PREFIX)]


def _with_column(answer: pa.Table, i: int, values: list[object]) -> pa.Table:
    return answer.set_column(i, answer.field(i), pa.array(values, answer.field(i).type))


def _fits(value: object, arrow_type: pa.DataType) -> bool:
    try:
        pa.scalar(value, arrow_type)
    except (pa.ArrowInvalid, OverflowError):
        return False
    return True


def _corrupted(value: object, arrow_type: pa.DataType) -> object | None:
    """A value far from `value` of the same type, or None when there is none."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, float):
        return value + 1000.0 if math.isfinite(value) else None
    if isinstance(value, str):
        return value + "~faulty"
    if isinstance(value, (int, Decimal)):
        shifts = (1000, -1000, 100, -100, 10, -10)
        return next((value + s for s in shifts if _fits(value + s, arrow_type)), None)
    if isinstance(value, (dt.date, dt.datetime)):
        return value + dt.timedelta(days=1000)
    return None


class TieValueDuckDB(AlteredDuckDB):
    """Shuffles the input (peers come in any order), then gives one row that has a
    peer a value in one window column that no order of the peers can produce.

    The peers are found by DuckDB itself: for each candidate column (a window
    expression with an ORDER BY) a helper column counts the rows sharing the
    row's partition and ORDER BY values; it is dropped from the answer.
    """

    name = "duckdb~tie-value"
    planted = "one row inside a tie group gets a value no peer order gives"

    def alter_input(self, tables: Mapping[str, pa.Table], sql: str) -> Mapping[str, pa.Table]:
        return shuffled(tables, Random(sql))

    def rewrite(self, query: Query) -> Query:
        if not _is_row_level(query):
            return query
        assert isinstance(query, Select)
        peers = [
            SelectItem(WindowExpr(FuncCall("count", (Star(),)), self._peer_window(spec)), f"{PEERS_PREFIX}{i}")
            for i, spec in self._candidates(query)
        ]
        return dataclasses.replace(query, items=query.items + tuple(peers))

    @staticmethod
    def _candidates(query: Select) -> list[tuple[int, WindowSpec]]:
        out = []
        for i, item in _user_items(query):
            if isinstance(item.expr, WindowExpr):
                spec = resolve_window(item.expr.window, query.windows)
                if spec.order_by:
                    out.append((i, spec))
        return out

    @staticmethod
    def _peer_window(spec: WindowSpec) -> WindowSpec:
        return WindowSpec(partition_by=spec.partition_by + tuple(k.expr for k in spec.order_by))

    def alter_answer(self, answer: pa.Table, query: Query, sql: str) -> pa.Table:
        helpers = [n for n in answer.column_names if n.startswith(PEERS_PREFIX)]
        for name in helpers:
            column = int(name.removeprefix(PEERS_PREFIX))
            corrupted = self._corrupt_one(answer, column, answer.column(name).to_pylist())
            if corrupted is not None:
                answer = corrupted
                break
        return answer.drop_columns(helpers) if helpers else answer

    @staticmethod
    def _corrupt_one(answer: pa.Table, column: int, peer_counts: list[int]) -> pa.Table | None:
        values = answer.column(column).to_pylist()
        for row, (value, peers) in enumerate(zip(values, peer_counts, strict=True)):
            bad = _corrupted(value, answer.field(column).type) if peers > 1 else None
            if bad is not None:
                values[row] = bad
                return _with_column(answer, column, values)
        return None


def _six_digits(value: object) -> object:
    if isinstance(value, float) and math.isfinite(value):
        return float(f"{value:.6g}")
    return value


class FloatSumDuckDB(AlteredDuckDB):
    name = "duckdb~float-sum-6"
    planted = "float results of window sum/avg keep only 6 significant digits"

    def alter_answer(self, answer: pa.Table, query: Query, sql: str) -> pa.Table:
        if not isinstance(query, Select):
            return answer
        for i, item in _user_items(query):
            summed = any(w.func.name in ("sum", "avg") for w in window_exprs(item.expr))
            if summed and pa.types.is_floating(answer.field(i).type):
                answer = _with_column(answer, i, [_six_digits(v) for v in answer.column(i).to_pylist()])
        return answer


class FlakyDuckDB(AlteredDuckDB):
    """DuckDB whose integer window results are off by one on every other query it
    runs (a counter, so runs are reproducible): identical runs disagree, which
    the reruns of a finding must report as `nondeterministic`."""

    name = "duckdb~flaky"
    planted = "integer window results off by one on every second query"

    def __init__(self, config: Mapping[str, str] | None = None) -> None:
        super().__init__(config)
        self._queries = 0

    def alter_answer(self, answer: pa.Table, query: Query, sql: str) -> pa.Table:
        self._queries += 1
        if self._queries % 2 == 1 or not isinstance(query, Select):
            return answer
        for i, item in _user_items(query):
            if window_exprs(item.expr) and pa.types.is_integer(answer.field(i).type):
                values = answer.column(i).to_pylist()
                return _with_column(answer, i, [None if v is None else v + 1 for v in values])
        return answer


class SingleWindowDuckDB(AlteredDuckDB):
    """DuckDB with a planted "single window" rewrite: a query whose select list
    holds exactly one window expression and no hidden column of the harness
    gets one wrong value in that window's column (its first row that has a
    value to corrupt). The instrumented query (a row id, row_number witnesses:
    more columns, more windows) never meets it, so only the bare query
    (`harness.judge.bare`) can find it."""

    name = "duckdb~single-window"
    planted = "a query with a single window expression (and nothing hidden) gets one wrong window value"

    def alter_answer(self, answer: pa.Table, query: Query, sql: str) -> pa.Table:
        while isinstance(query, With):
            query = query.body
        if not isinstance(query, Select) or len(_user_items(query)) != len(query.items):
            return answer  # a hidden column: the instrumented query
        windowed = [i for i, item in enumerate(query.items) if window_exprs(item.expr)]
        if sum(len(window_exprs(item.expr)) for item in query.items) != 1 or windowed[0] >= answer.num_columns:
            return answer
        column = windowed[0]
        values = answer.column(column).to_pylist()
        for row, value in enumerate(values):
            bad = _corrupted(value, answer.field(column).type)
            if bad is not None:
                values[row] = bad
                return _with_column(answer, column, values)
        return answer


# -- the control --------------------------------------------------------------------


class PeerShuffleDuckDB(AlteredDuckDB):
    """Correct DuckDB whose input rows come in a fresh order for every query.

    The order is seeded from the SQL text and a per-adapter counter, so a run
    is reproducible. Without a top-level ORDER BY the output rows are shuffled
    too (any order is then allowed).
    """

    name = "duckdb~peer-shuffle"
    planted = "input rows in a fresh random order per query; otherwise correct"
    faulty = False

    def __init__(self, config: Mapping[str, str] | None = None) -> None:
        super().__init__(config)
        self._queries = 0

    def _rng(self, sql: str) -> Random:
        self._queries += 1
        return Random(f"{sql}/{self._queries}")

    def alter_input(self, tables: Mapping[str, pa.Table], sql: str) -> Mapping[str, pa.Table]:
        return shuffled(tables, self._rng(sql))

    def alter_answer(self, answer: pa.Table, query: Query, sql: str) -> pa.Table:
        while isinstance(query, With):
            query = query.body
        if query.order_by:
            return answer
        return shuffled({"answer": answer}, self._rng(sql))["answer"]


# The fakes of this module, by engine name (`harness.engines.duckdb.faults` lists them all).
CLAUSE_FAULTS: dict[str, type[Engine]] = {
    cls.name: cls
    for cls in (
        RangeOffsetDuckDB, DescNullsDuckDB, ExcludeTiesDuckDB, TieValueDuckDB,
        NtileDuckDB, IgnoreNullsDuckDB, FloatSumDuckDB, FlakyDuckDB, PeerShuffleDuckDB,
        SingleWindowDuckDB,
    )
}
