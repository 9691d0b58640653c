"""Restriction inside derived tables and WITH queries (`harness.judge.restrict`).

A window expression the engine cannot write may sit in a derived table
(`FROM (SELECT ..., count(DISTINCT x) OVER () AS d ...) AS s`) or a WITH
query's body. Its item is left out of that inner SELECT (named `s.d`, with
the feature), and so is everything around that reads the column `s.d`, each
said with the reason (`reads left-out s.d`): an item of the query around it
(in its expression, its window's PARTITION BY or ORDER BY, a named window it
uses), and an ORDER BY key. That item's own column is left out in turn, up
to the top-level SELECT; the rest of the query is unchanged. A `*` over the
derived table keeps standing for the columns that are left.

There is none (`restrict_inner` gives None: the verdict stays `unsupported`)
when a left-out column, or an item left out with it, would change which rows
there are, or their number: read by a WHERE, JOIN ON, GROUP BY, HAVING or
QUALIFY (a top-N filter `WHERE rn <= k` over the derived table included), by
an ORDER BY key under LIMIT or OFFSET, an item of a SELECT DISTINCT or of a
GROUP BY ALL, an item's alias read by another item of its SELECT; also when a
renaming column list (`AS s(a, b)`) or a positional key stands beside a `*`
that would lose a column. A UNION ALL, a VALUES, a subquery in an expression
is left as it is (its windows are all kept or the query is not restricted).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from harness.core.errors import Unsupported
from harness.core.model import (
    AllColumns,
    Column,
    Join,
    Query,
    Select,
    SelectItem,
    Source,
    Star,
    SubqueryRef,
    TableRef,
    WindowExpr,
    With,
    walk,
    window_exprs,
)
from harness.judge.restrict_keep import Render, column_name, keep, writes

# The reason an item is left out because it reads a left-out column (in place of a feature).
READS = "reads left-out "


@dataclass(frozen=True)
class Inner:
    """The query with its derived tables and WITH queries restricted."""

    query: Query
    left_out: tuple[tuple[str, str], ...]
    order_keys_left_out: tuple[str, ...]


class _Refused(Exception):
    """Leaving the item out would change the rows: no restriction."""


@dataclass
class _Said:
    left_out: list[tuple[str, str]] = field(default_factory=list)
    order_keys: list[str] = field(default_factory=list)


# A column left out of a source, as the query around it reads it: (qualifier, name, label).
Gone = tuple[str | None, str, str]


def restrict_inner(query: Query, render: Render) -> Inner | None:
    """`query` with each inner window item the engine cannot write left out, and
    everything of the query around that reads it (its top-level SELECT's own
    window items are `harness.judge.restrict`'s); None when nothing is left
    out, or when leaving it out would change the rows (see the module)."""
    said = _Said()
    try:
        restricted, _ = _query(query, render, {}, said, None)
    except _Refused:
        return None
    if not said.left_out:
        return None
    return Inner(restricted, tuple(said.left_out), tuple(said.order_keys))


def _query(query: Query, render: Render, ctes: dict[str, list[str]], said: _Said,
           label: str | None) -> tuple[Query, list[tuple[int, str | None]]]:
    """The query restricted, and its output columns left out (position, name).
    `label`: the derived table's alias or WITH query's name; None at the top,
    whose own window items are left to `harness.judge.restrict`."""
    if isinstance(query, Select):
        return _select(query, render, ctes, said, label)
    if isinstance(query, With):
        scope, tables = dict(ctes), []
        for cte in query.ctes:
            inner, gone = _query(cte.query, render, scope, said, cte.name)
            columns, names = _renamed(cte.columns, cte.query, gone)
            scope[cte.name] = names
            tables.append(replace(cte, query=inner, columns=columns))
        body, gone = _query(query.body, render, scope, said, label)
        return replace(query, ctes=tuple(tables), body=body), gone
    return query, []  # UNION ALL, VALUES: left as they are


def _renamed(columns: tuple[str, ...], query: Query, gone: list[tuple[int, str | None]]
             ) -> tuple[tuple[str, ...], list[str]]:
    """A renaming list without the left-out positions, and the left-out names as
    read around; a `*` in the renamed SELECT hides the positions: refused."""
    if not columns or not gone:
        return columns, [name for _, name in gone if name is not None]
    if any(isinstance(n, SelectItem) and isinstance(n.expr, Star) for n in walk(query)):
        raise _Refused
    positions = {i for i, _ in gone}
    return (tuple(c for i, c in enumerate(columns) if i not in positions),
            [c for i, c in enumerate(columns) if i in positions])


def _select(select: Select, render: Render, ctes: dict[str, list[str]], said: _Said,
            label: str | None) -> tuple[Select, list[tuple[int, str | None]]]:
    source, gone = _sources(select.source, render, ctes, said)
    select = replace(select, source=source)
    reads = _reader(gone)
    if gone and any(reads(part) for part in (select.where, select.having, select.qualify, select.group_by)):
        raise _Refused  # it filters or groups rows
    tainted = _tainted_windows(select, reads)
    dropped: dict[int, str] = {}
    for i, item in enumerate(select.items):
        if gone and not isinstance(item.expr, Star) and (
                reads(item.expr) or any(w.window.base in tainted for w in _windows_in(item.expr))):
            dropped[i] = READS + _first_read(item.expr, gone, tainted, select)
    if label is not None:
        dropped.update(_unwritable(select, dropped, render))
    if not dropped and not gone:
        return select, []
    return _kept(select, dropped, reads, gone, said, label)


def _kept(select: Select, dropped: dict[int, str], reads, gone: list[Gone], said: _Said,
          label: str | None) -> tuple[Select, list[tuple[int, str | None]]]:
    """`select` without the items at `dropped` (each said), or refused."""
    shrinks = bool(gone) and any(isinstance(item.expr, Star) for item in select.items)
    if (dropped or shrinks) and (select.distinct or any(isinstance(e, AllColumns) for e in select.group_by)):
        raise _Refused  # DISTINCT or GROUP BY ALL over fewer columns: other rows
    aliases = {select.items[i].alias for i in dropped} - {None}
    rest = [item for i, item in enumerate(select.items) if i not in dropped]
    if any(isinstance(n, Column) and n.table is None and n.name in aliases
           for n in _nodes((rest, select.where, select.group_by, select.having, select.windows))):
        raise _Refused  # an alias read by the SELECT's own clauses (DuckDB's lateral aliases)
    kept = keep(select, [i for i in range(len(select.items)) if i not in dropped], reads if gone else None)
    if kept is None or not kept[0].items:
        raise _Refused
    restricted, keys = kept
    if keys and (select.limit is not None or select.offset is not None):
        raise _Refused  # the ORDER BY decides which rows LIMIT keeps
    if shrinks and any(isinstance(k.expr, AllColumns) for k in select.order_by) and (
            select.limit is not None or select.offset is not None):
        raise _Refused
    prefix = "" if label is None else f"{label}."
    said.left_out.extend((prefix + column_name(select.items[i]), why) for i, why in sorted(dropped.items()))
    said.order_keys.extend(keys)
    return restricted, [(i, _output_name(select.items[i])) for i in sorted(dropped)]


def _unwritable(select: Select, dropped: dict[int, str], render: Render) -> dict[int, str]:
    """The inner window items the engine cannot write, each with its feature:
    each rendered alone beside the items without a window, as a query of its own."""
    if writes(select, render):
        return {}
    rest = [i for i in range(len(select.items)) if i not in dropped]
    windowed = [i for i in rest if window_exprs(select.items[i].expr)]
    plain = [i for i in rest if i not in windowed]
    bare = keep(select, plain)
    if bare is None or (plain and not writes(bare[0], render)):
        raise _Refused  # the refusal is outside the window items
    found = {}
    for i in windowed:
        candidate = keep(select, sorted([*plain, i]))
        if candidate is None:
            raise _Refused
        try:
            render(candidate[0])
        except Unsupported as e:
            found[i] = e.feature
    return found


def _sources(source: Source | None, render: Render, ctes: dict[str, list[str]],
             said: _Said) -> tuple[Source | None, list[Gone]]:
    """The FROM clause with its derived tables restricted, and the columns left out of them."""
    if isinstance(source, TableRef):
        qualifier = source.alias or source.name
        return source, [(qualifier, name, f"{source.name}.{name}") for name in ctes.get(source.name, ())]
    if isinstance(source, SubqueryRef):
        name = source.alias or "(subquery)"
        inner, gone = _query(source.query, render, ctes, said, name)
        columns, names = _renamed(source.columns, source.query, gone)
        return (replace(source, query=inner, columns=columns),
                [(source.alias, n, f"{name}.{n}") for n in names])
    if isinstance(source, Join):
        left, gone_left = _sources(source.left, render, ctes, said)
        right, gone_right = _sources(source.right, render, ctes, said)
        gone = gone_left + gone_right
        if gone and _reader(gone)(source.on):
            raise _Refused  # JOIN ON decides which rows there are
        return replace(source, left=left, right=right), gone
    return source, []


def _reader(gone: list[Gone]):
    """Whether an expression (or clause) reads a left-out column: any column of
    that name, unqualified or qualified by its source (case folded: never fewer)."""
    names = {name.casefold() for _, name, _ in gone}
    qualified = {(q.casefold(), name.casefold()) for q, name, _ in gone if q is not None}

    def reads(node: object) -> bool:
        return any(isinstance(n, Column) and n.name.casefold() in names and (
            n.table is None or (n.table.casefold(), n.name.casefold()) in qualified) for n in _nodes(node))
    return reads


def _nodes(part: object):
    """Every node of a clause: an expression, a tuple or list of them, or None."""
    if isinstance(part, (tuple, list)):
        for p in part:
            yield from _nodes(p)
    elif part is not None:
        yield from walk(part)


def _tainted_windows(select: Select, reads) -> set[str]:
    """Named windows whose definition reads a left-out column, directly or through their base."""
    tainted: set[str] = set()
    for w in select.windows:
        if reads(w.spec) or w.spec.base in tainted:
            tainted.add(w.name)
    return tainted


def _windows_in(expr: object) -> list[WindowExpr]:
    return [n for n in walk(expr) if isinstance(n, WindowExpr)]


def _first_read(expr: object, gone: list[Gone], tainted: set[str], select: Select) -> str:
    """The label of the left-out column an item reads (for the reason said):
    in its expression, else in the named windows it uses, through their bases."""
    by_name = {w.name: w.spec for w in select.windows}
    parts = [expr]
    todo = [w.window.base for w in _windows_in(expr) if w.window.base in tainted]
    while todo:
        spec = by_name[todo.pop()]
        parts.append(spec)
        todo.extend([spec.base] if spec.base in tainted else [])
    return next(label for part in parts for g in gone if _reader([g])(part) for label in [g[2]])


def _output_name(item: SelectItem) -> str | None:
    """The column an item gives the query around (None: an engine's own name)."""
    if item.alias is not None:
        return item.alias
    return item.expr.name if isinstance(item.expr, Column) else None
