"""Keeping some items of a SELECT (`harness.judge.restrict`): the SELECT
without the others, its ORDER BY, GROUP BY and WINDOW clauses made to fit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from harness.core.errors import Unsupported
from harness.core.model import (
    Column,
    Literal,
    NamedWindow,
    Query,
    Select,
    SelectItem,
    SortKey,
    Star,
    key_position,
    walk,
    window_exprs,
)
from harness.core.types import INT32, INT64
from harness.sql.writer import write_expr

Render = Callable[[Query], str]


def writes(query: Query, render: Render) -> bool:
    try:
        render(query)
        return True
    except Unsupported:
        return False


def column_name(item: SelectItem) -> str:
    """How a left-out item is named: its alias, else its canonical SQL."""
    return item.alias if item.alias is not None else write_expr(item.expr)


def keep(select: Select, kept: list[int],
         reads: Callable[[object], bool] | None = None) -> tuple[Select, tuple[str, ...]] | None:
    """`select` with only the items at `kept` (in order), its ORDER BY keys naming
    a left-out item left out (and listed), positions renumbered, unused named
    windows left out. None when a GROUP BY position names a left-out item, when
    positions stand beside a `*`, or when QUALIFY names a left-out item's alias.
    `reads`: whether an expression reads a column left out of a source (a
    derived table's, `harness.judge.restrict_inner`); an ORDER BY key that does
    is left out too, unless it names a kept item."""
    renumber = {old + 1: new + 1 for new, old in enumerate(kept)}
    dropped = [item for i, item in enumerate(select.items) if i not in kept]
    positional = any(key_position(k.expr) is not None for k in select.order_by) or any(
        key_position(e) is not None for e in select.group_by)
    if positional and any(isinstance(item.expr, Star) for item in select.items):
        return None  # a `*` stands for several positions: do not guess them
    aliases = {item.alias for item in dropped if item.alias is not None}
    if select.qualify is not None and any(isinstance(n, Column) and n.table is None and n.name in aliases
                                          for n in walk(select.qualify)):
        return None  # QUALIFY naming a left-out item (DuckDB's alias rule): it filters rows, never dropped
    kept_items = tuple(select.items[i] for i in kept)
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
        elif _names_dropped(key, dropped, kept_names) or (
                reads is not None and not _names_kept(key, kept_names) and reads(key.expr)):
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


def _names_kept(key: SortKey, kept_names: set[str]) -> bool:
    return isinstance(key.expr, Column) and key.expr.table is None and key.expr.name in kept_names


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
