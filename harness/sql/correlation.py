"""Which subqueries read the query around them (correlated subqueries), decided
from the model alone.

The writer has no table schemas, so the rule reads qualified names: a column
`q.c` inside a subquery whose qualifier `q` names no source of the subquery's
own FROM clauses (its own, or those of the queries nested in it that enclose
the reference) is an outer reference. An unqualified column is taken to be
local: deciding it would need the tables' columns. The reference resolves
every name exactly (`reference_impl.subqueries`); the generator and the corpus
qualify every outer reference, so the writer's answer and the reference's agree
on them. A model that reads an outer column unqualified is still written
faithfully; only a dialect's refusal of correlation is then not anticipated,
and the engine's own error shows.
"""

from __future__ import annotations

from collections.abc import Iterator

from harness.core.functions import is_aggregate
from harness.core.model import (
    SUBQUERY_EXPRS,
    Column,
    FuncCall,
    Join,
    Query,
    Select,
    SubqueryRef,
    TableRef,
    UnionAll,
    Values,
    WindowExpr,
    With,
    children,
)

# The nodes that start a query of their own: nothing below them is the enclosing query's.
_QUERY_NODES = (*SUBQUERY_EXPRS, SubqueryRef, Select, UnionAll, With, Values)


def source_names(source: object | None) -> frozenset[str]:
    """The names a FROM clause defines: each table's alias, else its name."""
    if source is None:
        return frozenset()
    if isinstance(source, Join):
        return source_names(source.left) | source_names(source.right)
    if isinstance(source, TableRef):
        return frozenset({source.alias or source.name})
    alias = getattr(source, "alias", None)  # a derived table, VALUES, a table function
    return frozenset({alias}) if alias else frozenset()


def outer_references(query: Query) -> frozenset[str]:
    """The qualifiers of the columns `query` reads from queries around it."""
    if isinstance(query, Select):
        local = source_names(query.source)
        found = {c.table for c in _own_columns(query) if c.table is not None}
        for inner in _inner_queries(query):
            found |= outer_references(inner)
        return frozenset(found - local)
    if isinstance(query, UnionAll):
        return outer_references(query.left) | outer_references(query.right)
    if isinstance(query, With):
        found = outer_references(query.body)
        for cte in query.ctes:
            found |= outer_references(cte.query)
        return found
    # VALUES: its rows' expressions may hold subqueries of their own.
    return frozenset(q for inner in _inner_queries(query) for q in outer_references(inner))


def is_correlated(query: Query) -> bool:
    """Does `query` (a subquery) read a column of a query around it?"""
    return bool(outer_references(query))


def is_aggregated(query: Query) -> bool:
    """A SELECT whose items aggregate (one row per group): the shape some
    engines insist on for a correlated scalar subquery."""
    if not isinstance(query, Select):
        return False
    return any(_has_group_aggregate(item.expr) for item in query.items)


def _has_group_aggregate(node: object) -> bool:
    if isinstance(node, FuncCall) and is_aggregate(node.name):
        return True
    if isinstance(node, _QUERY_NODES):
        return False
    if isinstance(node, WindowExpr):  # the window's own function does not group
        return any(_has_group_aggregate(c) for c in (*children(node.func), node.window))
    return any(_has_group_aggregate(c) for c in children(node))


def _own_columns(node: object) -> Iterator[Column]:
    """The columns of a query's own clauses, not of the queries nested in it."""
    for child in children(node):
        if isinstance(child, Column):
            yield child
        elif not isinstance(child, _QUERY_NODES):
            yield from _own_columns(child)


def _inner_queries(node: object) -> Iterator[Query]:
    """The queries directly nested in `node`: subqueries in expressions and in FROM."""
    for child in children(node):
        if isinstance(child, (*SUBQUERY_EXPRS, SubqueryRef)):
            yield child.query
        elif isinstance(child, (Select, UnionAll, With, Values)):
            yield child
        else:
            yield from _inner_queries(child)

