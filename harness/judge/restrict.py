"""What an engine runs of a query its dialect cannot write as it is.

One window expression a dialect cannot write (a DISTINCT window aggregate on
Spark) would make the whole query `unsupported` for that engine, and its
other windows would go untested. Instead the engine runs the query
*restricted* to the top-level SELECT items it can write, and is judged
against the reference evaluated on that same restricted query:

1. first, spellings that mean the same by definition (tried beside the query
   as it is, the one leaving out fewer items wins): a window refining a
   named window (`OVER (w ORDER BY x)`), on a dialect without refinements, is
   written with the named window resolved inline (the standard's rule,
   `resolve_window`); a refinement the standard forbids is left as it is;
   `generate_series(a, b) AS g(x)` over integer literals is written
   `range(a, b + 1) AS g(x)` (`b - 1` for a negative step), which holds the
   same integers (`harness.core.table_functions`);
2. then each item holding a window expression is rendered alone beside the
   items without one (never guessed from feature tables: the engine's own
   `render` decides); an item that raises `Unsupported` is left out, with
   the feature it needs;
3. the rest of the query is unchanged: FROM, WHERE, GROUP BY, HAVING,
   QUALIFY (never dropped: it filters rows), LIMIT, windows inside derived
   tables and subqueries. A top-level ORDER BY key naming a left-out item
   is left out too, and said (the reference orders the same restricted
   query, so the order judged is the order asked for); a positional key
   (ORDER BY 3, GROUP BY 2) is renumbered. Named windows no kept item uses
   are left out of the WINDOW clause (an unused definition changes nothing).

There is no restriction (`restrict` gives None, the verdict stays
`unsupported` as before) when the query is not a SELECT (or a WITH over one),
when no item holding a window can be written, or when the restricted query
still cannot be (the refusal is outside the window items: QUALIFY, a FULL
JOIN, a scalar subquery in a kept item...).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from harness.core.errors import InvalidQuery, Unsupported
from harness.core.model import (
    SUBQUERY_EXPRS,
    Column,
    Literal,
    NamedWindow,
    Query,
    Select,
    SelectItem,
    SortKey,
    Star,
    SubqueryRef,
    TableFunctionRef,
    UnionAll,
    Values,
    WindowExpr,
    WindowSpec,
    With,
    key_position,
    resolve_window,
    rewrite,
    walk,
    window_exprs,
)
from harness.core.types import INT32, INT64
from harness.sql.literals import fits_integer, natural_integer_type
from harness.sql.writer import write_expr

Render = Callable[[Query], str]


@dataclass(frozen=True)
class Restriction:
    """The query an engine runs instead of the case's, and what differs."""

    query: Query  # before instrumenting
    # Each left-out item: its output column (alias, else its canonical SQL) and
    # the feature the engine's dialect lacks for it.
    left_out: tuple[tuple[str, str], ...] = ()
    # Top-level ORDER BY keys left out with the items they name (canonical SQL).
    order_keys_left_out: tuple[str, ...] = ()
    # Spellings that differ from the case's but mean the same by definition.
    respelled: tuple[str, ...] = ()

    @property
    def note(self) -> str:
        """For people: what the engine ran instead of the case's query."""
        parts = []
        if self.left_out:
            items = ", ".join(f"{column} ({feature})" for column, feature in self.left_out)
            parts.append(f"restricted: {items} left out")
        if self.order_keys_left_out:
            parts.append(f"ORDER BY key{'s' if len(self.order_keys_left_out) > 1 else ''} "
                         f"{', '.join(self.order_keys_left_out)} left out with {'them' if len(self.left_out) > 1 else 'it'}")
        if self.left_out:
            parts.append("judged against the reference on the same restricted query")
        parts.extend(self.respelled)
        return "; ".join(parts)


def restrict(query: Query, render: Render) -> Restriction | None:
    """What the engine whose `render` this is runs of `query`: None when it
    writes the query as it is, or cannot write enough of it (see the module)."""
    select = _top_select(query)
    if select is None or _writes(query, render):
        return None
    try:
        return _best(query, render)
    except InvalidQuery:  # a harness bug: rendering the query as it is says so
        return None


def _best(query: Query, render: Render) -> Restriction | None:
    """The restriction that leaves out the fewest items: of the query as it is
    (preferred on a tie), or of its respelling."""
    options = [(query, ())]
    respelled, notes = _respelled(query)
    if respelled != query:
        options.append((respelled, notes))
    best = None
    for q, said in options:
        select = _top_select(q)
        found = None if select is None else _restricted(q, select, render, said)
        if found is not None and (best is None or len(found.left_out) < len(best.left_out)):
            best = found
        if best is not None and not best.left_out:
            break
    return best


_INLINE = ("respelled: windows refining a named window are written with the named window "
           "inline (the same window by definition)")
_SERIES = ("respelled: generate_series(a, b) is written range(a, b + 1) (b - 1 for a negative step): "
           "the same integers by definition")


def _respelled(query: Query) -> tuple[Query, tuple[str, ...]]:
    """The query in spellings that mean the same by definition, and what changed."""
    notes = []
    select = _top_select(query)
    if select is not None:
        inlined = _inline_refinements(select)
        if inlined != select:
            query, notes = _with_select(query, inlined), [_INLINE]
    ranged = rewrite(query, _as_range)
    if ranged != query:
        query, notes = ranged, [*notes, _SERIES]  # type: ignore[assignment]
    return query, tuple(notes)


def _as_range(node: object) -> object | None:
    """generate_series(a, b[, step]) AS alias... as range(a, b ± 1[, step]) AS alias...:
    only with an alias (without one the column is named after the function), and
    integer literal arguments whose shifted stop keeps its type."""
    if not isinstance(node, TableFunctionRef) or node.name != "generate_series" or node.alias is None:
        return None
    if not all(isinstance(a, Literal) and type(a.value) is int and a.type is not None and a.type.is_integer
               for a in node.args) or len(node.args) not in (2, 3):
        return None
    stop = node.args[1]
    step = node.args[2].value if len(node.args) == 3 else 1
    if step == 0:
        return None
    shifted = stop.value + (1 if step > 0 else -1)
    bare = stop.type == natural_integer_type(stop.value)  # written without a CAST: must stay so
    if not fits_integer(shifted, stop.type) or (bare and natural_integer_type(shifted) != stop.type):
        return None
    return replace(node, name="range", args=(node.args[0], replace(stop, value=shifted), *node.args[2:]))


def _restricted(query: Query, select: Select, render: Render, notes: tuple[str, ...]) -> Restriction | None:
    """The items of `select` the engine writes, each tried alone beside the items
    without a window; None when none, or when the kept ones together do not write."""
    if _writes(_with_select(query, select), render):
        return Restriction(_with_select(query, select), respelled=notes)
    windowed = [i for i, item in enumerate(select.items) if window_exprs(item.expr)]
    plain = [i for i in range(len(select.items)) if i not in windowed]
    kept, left_out = [], []
    for i in windowed:
        candidate = _keep(select, sorted([*plain, i]))
        if candidate is None:
            return None
        try:
            render(_with_select(query, candidate[0]))
            kept.append(i)
        except Unsupported as e:
            left_out.append((_column_name(select.items[i]), e.feature))
    if not kept or not left_out:
        return None
    restricted = _keep(select, sorted([*plain, *kept]))
    if restricted is None or not _writes(_with_select(query, restricted[0]), render):
        return None
    return Restriction(_with_select(query, restricted[0]), tuple(left_out), restricted[1], notes)


def _writes(query: Query, render: Render) -> bool:
    try:
        render(query)
        return True
    except Unsupported:
        return False


def _top_select(query: Query) -> Select | None:
    if isinstance(query, With):
        return _top_select(query.body)
    return query if isinstance(query, Select) else None


def _with_select(query: Query, select: Select) -> Query:
    if isinstance(query, With):
        return replace(query, body=_with_select(query.body, select))
    return select


def _column_name(item: SelectItem) -> str:
    return item.alias if item.alias is not None else write_expr(item.expr)


# -- keeping some items --------------------------------------------------------------


def _keep(select: Select, keep: list[int]) -> tuple[Select, tuple[str, ...]] | None:
    """`select` with only the items at `keep` (in order), its ORDER BY keys naming
    a left-out item left out (and listed), positions renumbered, unused named
    windows left out. None when a GROUP BY position names a left-out item, when
    positions stand beside a `*`, or when QUALIFY names a left-out item's alias."""
    renumber = {old + 1: new + 1 for new, old in enumerate(keep)}
    dropped = [item for i, item in enumerate(select.items) if i not in keep]
    positional = any(key_position(k.expr) is not None for k in select.order_by) or any(
        key_position(e) is not None for e in select.group_by)
    if positional and any(isinstance(item.expr, Star) for item in select.items):
        return None  # a `*` stands for several positions: do not guess them
    aliases = {item.alias for item in dropped if item.alias is not None}
    if select.qualify is not None and any(isinstance(n, Column) and n.table is None and n.name in aliases
                                          for n in walk(select.qualify)):
        return None  # QUALIFY naming a left-out item (DuckDB's alias rule): it filters rows, never dropped
    kept_items = tuple(select.items[i] for i in keep)
    kept_names = {item.alias for item in kept_items if item.alias is not None}
    order_by, left_out = [], []
    for key in select.order_by:
        position = key_position(key.expr)
        if position is not None:
            if position in renumber:
                order_by.append(replace(key, expr=_position(renumber[position])))
            elif 1 <= position <= len(select.items):
                left_out.append(_key_text(key))
            else:
                order_by.append(key)  # out of range: the engine must refuse it as before
        elif _names_dropped(key, dropped, kept_names):
            left_out.append(_key_text(key))
        else:
            order_by.append(key)
    group_by = []
    for e in select.group_by:
        position = key_position(e)
        if position is not None and 1 <= position <= len(select.items):
            if position not in renumber:
                return None
            e = _position(renumber[position])
        group_by.append(e)
    restricted = replace(select, items=kept_items, order_by=tuple(order_by), group_by=tuple(group_by))
    return replace(restricted, windows=_used_windows(restricted)), tuple(left_out)


def _names_dropped(key: SortKey, dropped: list[SelectItem], kept_names: set[str]) -> bool:
    """Whether a top-level ORDER BY key names a left-out item: its alias (an
    output name comes before a source column of that name, so once the item
    is gone the key would silently mean another column), or its expression."""
    e = key.expr
    if isinstance(e, Column) and e.table is None and e.name not in kept_names and any(
            item.alias == e.name for item in dropped):
        return True
    return any(item.expr == e for item in dropped)


def _position(n: int) -> Literal:
    return Literal(n, INT32 if n < 2 ** 31 else INT64)


def _key_text(key: SortKey) -> str:
    text = f"{write_expr(key.expr)} {'DESC' if key.descending else 'ASC'}"
    return text if key.nulls is None else f"{text} {key.nulls.value}"


def _used_windows(select: Select) -> tuple[NamedWindow, ...]:
    """The named windows the SELECT still uses, directly or through another's
    definition (in the WINDOW clause's order)."""
    if not select.windows:
        return ()
    by_name = {w.name: w for w in select.windows}
    wanted = {w.window.base for w in window_exprs(replace(select, windows=())) if w.window.base is not None}
    todo = list(wanted)
    while todo:
        base = by_name.get(todo.pop())
        if base is not None and base.spec.base is not None and base.spec.base not in wanted:
            wanted.add(base.spec.base)
            todo.append(base.spec.base)
    return tuple(w for w in select.windows if w.name in wanted)


# -- spellings that mean the same --------------------------------------------------


def _inline_refinements(select: Select) -> Select:
    """Each window of the SELECT that refines a named window (`OVER (w ORDER BY
    x)`, `WINDOW w2 AS (w ROWS ...)`) with the named window resolved inline, by
    the standard's rule; one the standard forbids (a framed base, an ORDER BY
    over the base's) stays as it is, for the engine and the reference to judge."""
    named = select.windows
    root = replace(select, windows=())

    def inline(node: object) -> object | None:
        if isinstance(node, (SubqueryRef, Select, UnionAll, With, Values, *SUBQUERY_EXPRS)) and node is not root:
            return node  # a nested query's windows are its own
        if isinstance(node, WindowExpr) and _refines(node.window):
            resolved = _resolved(node.window, named)
            return None if resolved is None else replace(node, window=resolved)
        return None

    windows = []
    for w in named:
        resolved = _resolved(w.spec, named) if w.spec.base is not None else None
        windows.append(w if resolved is None else replace(w, spec=resolved))
    items_and_rest = rewrite(root, inline)
    assert isinstance(items_and_rest, Select)
    return replace(items_and_rest, windows=tuple(windows))


def _refines(spec: WindowSpec) -> bool:
    """`OVER (w ...)`: not the bare `OVER w`, which every dialect with named windows writes."""
    return spec.base is not None and spec != WindowSpec(base=spec.base)


def _resolved(spec: WindowSpec, named: tuple[NamedWindow, ...]) -> WindowSpec | None:
    try:
        return resolve_window(spec, named)
    except InvalidQuery:
        return None
