"""Subqueries in expressions: scalar, IN and EXISTS, correlated included.

A subquery is a query evaluated where the expression holding it is; it may
read columns of the queries around it (a correlated subquery). The
expression compilers sit many calls below `run_query` and take (expr, rel)
only, so the evaluation under way travels in a context variable, the way the
semantics profile does (`profile.py`): `running` (entered by
`query.run_query`) records the Context (tables, CTEs in scope) and the query
runner; a subquery's compiled function runs its query with one more outer
scope, the enclosing relation and its current row.

Name resolution follows the standard: a column is looked up in the query's own
FROM first, then in the enclosing queries from the nearest outwards
(`outer_column`, the fallback of `expressions._column`).

Cost: the subquery is first run over an outer row of NULLs, which gives its
column types (a compiled expression declares its type before any row). If that
run read no outer column, its result is the subquery's value for every outer
row (it depends on no outer value), so an uncorrelated subquery runs once.
Otherwise it runs once per distinct outer row. Outer reads are counted when
they happen, so a read made only on some paths is never missed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from harness.core.errors import EvaluationError, ReferenceGap
from harness.core.model import Column, Query
from harness.core.types import BOOL, SqlType
from reference_impl.compiled import Compiled
from reference_impl.context import Context
from reference_impl.relation import Relation, Row
from reference_impl.values import row_key

Runner = Callable[[Query, Context], Relation]


class OuterScope:
    """An enclosing query's relation, and the row a subquery is run for."""

    def __init__(self, rel: Relation) -> None:
        self.rel = rel
        self.row: Row = ()
        self.reads = 0  # outer values read so far: tells correlated from not

    def reader(self, index: int) -> Callable[[Row], object]:
        def read(_inner_row: Row) -> object:
            self.reads += 1
            return self.row[index]

        return read


@dataclass(frozen=True)
class _Running:
    ctx: Context
    run: Runner
    scopes: tuple[OuterScope, ...]  # the enclosing queries, innermost last


_RUNNING: ContextVar[_Running | None] = ContextVar("running_query", default=None)


@contextmanager
def running(ctx: Context, run: Runner) -> Iterator[None]:
    """The query being run has `ctx`; the outer scopes stay those in force."""
    current = _RUNNING.get()
    scopes = current.scopes if current is not None else ()
    token = _RUNNING.set(_Running(ctx, run, scopes))
    try:
        yield
    finally:
        _RUNNING.reset(token)


def outer_column(column: Column) -> Compiled | None:
    """A column of an enclosing query, nearest first; None when none has it."""
    current = _RUNNING.get()
    for scope in reversed(current.scopes if current is not None else ()):
        index = scope.rel.find(column)
        if index is not None:
            return Compiled(scope.reader(index), scope.rel.fields[index].type)
    return None


class Subquery:
    """A subquery compiled in an expression over `rel`: its rows per outer row."""

    def __init__(self, query: Query, rel: Relation) -> None:
        current = _RUNNING.get()
        if current is None:
            raise ReferenceGap("a subquery outside the evaluation of a query")
        self.query = query
        self.scope = OuterScope(rel)
        self.running = _Running(current.ctx, current.run, (*current.scopes, self.scope))
        self.cache: dict[tuple, Relation] = {}
        probe = self._typing_run(tuple(None for _ in rel.fields))
        self.columns = probe.visible()
        self.types = [probe.fields[i].type for i in self.columns]
        self.constant = probe if self.scope.reads == 0 else None

    def _typing_run(self, nulls: Row) -> Relation:
        try:
            return self._run(nulls)
        except (EvaluationError, ReferenceGap) as e:
            # The run over NULLs is ours, not the query's: its failure says
            # nothing of the query's validity.
            raise ReferenceGap(f"a subquery that fails over an outer row of NULLs: {e}") from None

    def _run(self, row: Row) -> Relation:
        self.scope.row = row
        token = _RUNNING.set(self.running)
        try:
            return self.running.run(self.query, self.running.ctx)
        finally:
            _RUNNING.reset(token)

    def rows(self, row: Row) -> list[Row]:
        """The subquery's rows for the outer row `row` (visible columns only)."""
        if self.constant is not None:
            return self._visible(self.constant)
        key = row_key(row)
        result = self.cache.get(key)
        if result is None:
            result = self.cache[key] = self._run(row)
        return self._visible(result)

    def _visible(self, rel: Relation) -> list[Row]:
        return [tuple(r[i] for i in self.columns) for r in rel.rows]

    def one_column(self, what: str) -> SqlType | None:
        if len(self.columns) != 1:
            raise EvaluationError(f"{what} must return one column, got {len(self.columns)}")
        return self.types[0]


def compile_scalar(query: Query, rel: Relation) -> Compiled:
    """`(SELECT ...)`: its one value; NULL without rows; an error past one row."""
    sub = Subquery(query, rel)
    result_type = sub.one_column("a scalar subquery")

    def fn(row: Row) -> object:
        rows = sub.rows(row)
        if len(rows) > 1:
            raise EvaluationError("more than one row returned by a subquery used as an expression")
        return rows[0][0] if rows else None

    return Compiled(fn, result_type)


def compile_exists(query: Query, negated: bool, rel: Relation) -> Compiled:
    sub = Subquery(query, rel)
    return Compiled(lambda row: bool(sub.rows(row)) != negated, BOOL)


def in_values(query: Query, rel: Relation) -> tuple[Subquery, SqlType | None]:
    """The subquery of `x IN (SELECT ...)`, which must have one column."""
    sub = Subquery(query, rel)
    return sub, sub.one_column("the subquery of IN")

