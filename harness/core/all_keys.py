"""GROUP BY ALL and ORDER BY ALL spelled out as ordinary keys.

`GROUP BY ALL` groups by every select item that holds no aggregate (as DuckDB,
DataFusion and Spark read it); `ORDER BY ALL` sorts by every output column,
left to right, in the key's direction and null order. Spelled out, the query
means the same with keys every other part of the harness already knows:
item expressions for GROUP BY, positions (1, 2, ...) for ORDER BY.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from harness.core.functions import contains_aggregate
from harness.core.model import (
    AllColumns,
    Expr,
    Literal,
    Select,
    Star,
)
from harness.core.types import INT32

StarColumns = Callable[[Star], list[Expr]]


def expand_all_keys(select: Select, star_columns: StarColumns | None = None) -> Select:
    """`select` with GROUP BY ALL and ORDER BY ALL replaced by their keys.

    A `*` item is spelled out by `star_columns`; without it (the source's
    columns are not known), a query with `*` is returned as it is.
    """
    items = _item_exprs(select, star_columns)
    if items is None:
        return select
    if select.group_by == (AllColumns(),):
        select = replace(select, group_by=_group_keys(items))
    if len(select.order_by) == 1 and isinstance(select.order_by[0].expr, AllColumns):
        key = select.order_by[0]
        positions = [Literal(i, INT32) for i in range(1, len(items) + 1)]
        select = replace(select, order_by=tuple(replace(key, expr=p) for p in positions))
    return select


def _item_exprs(select: Select, star_columns: StarColumns | None) -> list[Expr] | None:
    out: list[Expr] = []
    for item in select.items:
        if not isinstance(item.expr, Star):
            out.append(item.expr)
        elif star_columns is None:
            return None
        else:
            out.extend(star_columns(item.expr))
    return out


def _group_keys(items: list[Expr]) -> tuple[Expr, ...]:
    # A constant item splits no group, so it is left out when another key
    # remains (a Literal key would read as a position). When only constants
    # remain, grouping by one still makes no row out of no input, unlike no
    # GROUP BY at all: the key is then the first constant's position.
    keys = [(p, e) for p, e in enumerate(items, 1) if not contains_aggregate(e)]
    varying = tuple(e for _, e in keys if not isinstance(e, Literal))
    return varying or tuple(Literal(p, INT32) for p, _ in keys[:1])
