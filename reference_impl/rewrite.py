"""Pure rewrites of expressions: substitute computed sub-expressions by columns.

After GROUP BY, each group key and each aggregate call becomes a column of
the grouped relation; after the window operator, each window expression
becomes a column. The select list, HAVING and ORDER BY are then rewritten to
read those columns, which is how the standard's "the value of the aggregate
for the group" reads as plain evaluation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from harness.functions import is_aggregate
from harness.model import Expr, FuncCall, WindowExpr, children

Rewrite = Callable[[Expr], Expr]


def identity(expr: Expr) -> Expr:
    return expr


def map_children(node: object, fn: Callable[[object], object]) -> object:
    """`node` with `fn` applied to each direct sub-node (tuples rebuilt as needed)."""
    if not dataclasses.is_dataclass(node):
        return node
    changes = {}
    for f in dataclasses.fields(node):
        old = getattr(node, f.name)
        new = _map_value(old, fn)
        if new is not old:
            changes[f.name] = new
    return dataclasses.replace(node, **changes) if changes else node


def _map_value(value: object, fn: Callable[[object], object]) -> object:
    if isinstance(value, tuple):
        mapped = tuple(_map_value(v, fn) for v in value)
        return value if all(a is b for a, b in zip(mapped, value, strict=True)) else mapped
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return fn(value)
    return value


def replace_exprs(node: object, mapping: Mapping[object, Expr]) -> object:
    """Replace every sub-node found in `mapping`, outermost first.

    The function of a window expression is never replaced as a whole (in
    `sum(x) OVER w`, `sum(x)` is the window aggregate, not a group
    aggregate); its arguments are.
    """
    if _in(node, mapping):
        return mapping[node]
    if isinstance(node, WindowExpr):
        func = map_children(node.func, lambda c: replace_exprs(c, mapping))
        return WindowExpr(func, replace_exprs(node.window, mapping))  # type: ignore[arg-type]
    return map_children(node, lambda c: replace_exprs(c, mapping))


def _in(node: object, mapping: Mapping[object, Expr]) -> bool:
    try:
        return node in mapping
    except TypeError:  # an unhashable value inside a node cannot be a key either
        return False


def aggregate_calls(node: object) -> list[FuncCall]:
    """The aggregate calls in `node` that aggregate over groups (not window aggregates)."""
    found: list[FuncCall] = []

    def visit(n: object) -> None:
        if isinstance(n, FuncCall) and is_aggregate(n.name):
            found.append(n)
            return
        if isinstance(n, WindowExpr):
            # The window's own function is skipped; its arguments are searched.
            for c in (*children(n.func), n.window):
                visit(c)
            return
        for c in children(n):
            visit(c)

    visit(node)
    return found
