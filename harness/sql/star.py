"""`*` and `t.*` in a select list, expanded into the columns they stand for.

The instrumenter judges an answer column by column, so it must know how many
columns the user's select list has: a `*` over a derived table, a join or a
CTE stands for every column of its source, not for one. The names follow the
model's rules: a derived table's or CTE's output names (renamed by its column
list), VALUES' column1..N, a table function's column list or else its name.

A star whose columns cannot be named (a derived table's `x + 1` has no name
an outer query can write; two columns named alike on one side are ambiguous)
is not expanded: `expand_stars` returns None and the caller must judge every
column of the answer instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from harness.core.model import (
    Column,
    CommonTable,
    Join,
    Query,
    Select,
    SelectItem,
    Source,
    Star,
    SubqueryRef,
    TableFunctionRef,
    TableRef,
    TableSchema,
    UnionAll,
    Values,
    With,
)
from harness.core.table_functions import column_name

Names = tuple[str | None, ...]  # a query's output names; None: a column without one


@dataclass(frozen=True)
class SourceColumn:
    qualifier: str | None  # what `q.*` and `q.c` name it by; None for an unaliased derived table
    name: str | None


@dataclass(frozen=True)
class Scope:
    tables: Mapping[str, TableSchema]
    ctes: Mapping[str, Names | None]  # a CTE hides a table of the same name; None: unknown

    def with_ctes(self, ctes: Mapping[str, Names | None]) -> Scope:
        return Scope(self.tables, {**self.ctes, **ctes})


def expand_stars(select: Select, tables: Mapping[str, TableSchema],
                 ctes: Mapping[str, Names | None] | None = None) -> Select | None:
    """`select` with each `*` and `t.*` of its select list replaced by the columns
    it stands for; None when one of them cannot be written as columns."""
    if not any(isinstance(i.expr, Star) for i in select.items):
        return select
    scope = Scope(tables, ctes or {})
    columns = source_columns(select.source, scope)
    if columns is None:
        return None
    items: list[SelectItem] = []
    for item in select.items:
        if not isinstance(item.expr, Star):
            items.append(item)
            continue
        expanded = _star_columns(item.expr, columns, single=isinstance(select.source, TableRef))
        if expanded is None:
            return None
        items.extend(SelectItem(c) for c in expanded)
    return replace(select, items=tuple(items))


def _star_columns(star: Star, columns: list[SourceColumn], single: bool) -> list[Column] | None:
    picked = [c for c in columns if star.table is None or c.qualifier == star.table]
    if not picked:
        return None  # `q.*` naming no source: the reference refuses it
    names = [c.name for c in columns]
    out = []
    for c in picked:
        if c.name is None:
            return None
        same_side = [d for d in columns if d.qualifier == c.qualifier and d.name == c.name]
        if len(same_side) > 1 or (c.qualifier is None and names.count(c.name) > 1):
            return None  # no reference to it would be unambiguous
        # One table scanned: its columns need no qualifier (the plain spelling).
        out.append(Column(c.name, None if single else c.qualifier))
    return out


def source_columns(source: Source | None, scope: Scope) -> list[SourceColumn] | None:
    """The columns a FROM clause provides, in `*` order; None when unknown."""
    if source is None:
        return []
    if isinstance(source, Join):
        left, right = source_columns(source.left, scope), source_columns(source.right, scope)
        return None if left is None or right is None else left + right
    if isinstance(source, TableRef):
        names = _table_names(source.name, scope)
        qualifier = source.alias or source.name
    elif isinstance(source, SubqueryRef):
        names = _renamed(query_names(source.query, scope), source.columns)
        qualifier = source.alias
    elif isinstance(source, TableFunctionRef):
        names = (column_name(source),)
        qualifier = source.alias or source.name
    else:
        return None
    return None if names is None else [SourceColumn(qualifier, n) for n in names]


def _table_names(name: str, scope: Scope) -> Names | None:
    if name in scope.ctes:
        return scope.ctes[name]
    schema = scope.tables.get(name)
    return None if schema is None else tuple(c.name for c in schema.columns)


def _renamed(names: Names | None, columns: tuple[str, ...]) -> Names | None:
    """A column list renames the first columns (PostgreSQL allows fewer names than columns)."""
    if names is None or len(columns) > len(names):
        return None
    return tuple(columns) + names[len(columns):]


def query_names(query: Query, scope: Scope) -> Names | None:
    """The output names of a query, as an outer query reads them; None when unknown."""
    if isinstance(query, Values):
        return tuple(f"column{i + 1}" for i in range(len(query.rows[0]))) if query.rows else None
    if isinstance(query, UnionAll):
        return query_names(query.left, scope)
    if isinstance(query, With):
        return query_names(query.body, scope.with_ctes(cte_names(query.ctes, scope)))
    if isinstance(query, Select):
        return _select_names(query, scope)
    return None


def cte_names(ctes: tuple[CommonTable, ...], scope: Scope) -> dict[str, Names | None]:
    """The output names of each CTE; each sees the ones before it."""
    names: dict[str, Names | None] = {}
    for cte in ctes:
        names[cte.name] = _renamed(query_names(cte.query, scope.with_ctes(names)), cte.columns)
    return names


def _select_names(select: Select, scope: Scope) -> Names | None:
    expanded = expand_stars(select, scope.tables, scope.ctes)
    if expanded is None:
        return None
    return tuple(_item_name(item) for item in expanded.items)


def _item_name(item: SelectItem) -> str | None:
    if item.alias is not None:
        return item.alias
    return item.expr.name if isinstance(item.expr, Column) else None
