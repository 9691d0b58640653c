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
   tables and subqueries (but see 4). A top-level ORDER BY key naming a left-out item
   is left out too, and said (the reference orders the same restricted
   query, so the order judged is the order asked for); a positional key
   (ORDER BY 3, GROUP BY 2) is renumbered. Named windows no kept item uses
   are left out of the WINDOW clause (an unused definition changes nothing);
4. when that finds nothing (the refusal is inside a derived table or a WITH
   query), the same inside first (`harness.judge.restrict_inner`): an inner
   window item the engine cannot write is left out (`s.d`), with every item
   and ORDER BY key around that reads its column, unless something that
   filters or changes the rows reads it; then steps 2 and 3 at the top.

There is no restriction (`restrict` gives None, the verdict stays
`unsupported` as before) when the query is not a SELECT (or a WITH over one),
when no window expression is left anywhere, or when the restricted query
still cannot be (the refusal is outside the window items: QUALIFY, a FULL
JOIN, a scalar subquery in a kept item...).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from harness.core.errors import InvalidQuery, Unsupported
from harness.core.model import (
    SUBQUERY_EXPRS,
    Literal,
    NamedWindow,
    Query,
    Select,
    SubqueryRef,
    TableFunctionRef,
    UnionAll,
    Values,
    WindowExpr,
    WindowSpec,
    With,
    resolve_window,
    rewrite,
    walk,
    window_exprs,
)
from harness.judge.restrict_inner import Inner, restrict_inner
from harness.judge.restrict_keep import Render, column_name, keep, writes
from harness.sql.literals import fits_integer, natural_integer_type


@dataclass(frozen=True)
class Restriction:
    """The query an engine runs instead of the case's, and what differs."""

    query: Query  # before instrumenting
    # Each left-out item: its output column (alias, else its canonical SQL;
    # `s.d` inside the derived table or WITH query `s`) and the feature the
    # engine's dialect lacks for it (`reads left-out s.d`: it reads one that was).
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
    if select is None or writes(query, render):
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
        if found is None and select is not None:
            found = _restricted_inside(q, render, said)
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


def _restricted_inside(query: Query, render: Render, notes: tuple[str, ...]) -> Restriction | None:
    """`query` restricted inside its derived tables and WITH queries first
    (`harness.judge.restrict_inner`), then at its top level."""
    inner = restrict_inner(query, render)
    select = None if inner is None else _top_select(inner.query)
    if inner is None or select is None:
        return None
    return _restricted(inner.query, select, render, notes, inner)


def _restricted(query: Query, select: Select, render: Render, notes: tuple[str, ...],
                inner: Inner | None = None) -> Restriction | None:
    """The items of `select` the engine writes, each tried alone beside the items
    without a window; None when none (and no window is left inside), or when the
    kept ones together do not write. `inner`: what was left out inside before."""
    before, keys_before = (inner.left_out, inner.order_keys_left_out) if inner is not None else ((), ())
    if writes(_with_select(query, select), render):
        if inner is not None and not _has_window(_with_select(query, select)):
            return None
        return Restriction(_with_select(query, select), before, keys_before, notes)
    windowed = [i for i, item in enumerate(select.items) if window_exprs(item.expr)]
    plain = [i for i in range(len(select.items)) if i not in windowed]
    kept, left_out = [], []
    for i in windowed:
        candidate = keep(select, sorted([*plain, i]))
        if candidate is None:
            return None
        try:
            render(_with_select(query, candidate[0]))
            kept.append(i)
        except Unsupported as e:
            left_out.append((column_name(select.items[i]), e.feature))
    if not left_out:
        return None
    restricted = keep(select, sorted([*plain, *kept]))
    if restricted is None or not restricted[0].items or not writes(_with_select(query, restricted[0]), render):
        return None
    if not kept and not _has_window(_with_select(query, restricted[0])):
        return None
    return Restriction(_with_select(query, restricted[0]), (*before, *left_out), (*keys_before, *restricted[1]),
                       notes)


def _has_window(query: Query) -> bool:
    """Whether any window expression is left, at the top level or inside."""
    return any(isinstance(node, WindowExpr) for node in walk(query))


def _top_select(query: Query) -> Select | None:
    if isinstance(query, With):
        return _top_select(query.body)
    return query if isinstance(query, Select) else None


def _with_select(query: Query, select: Select) -> Query:
    if isinstance(query, With):
        return replace(query, body=_with_select(query.body, select))
    return select


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
