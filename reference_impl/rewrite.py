"""Pure rewrites of expressions: substitute computed sub-expressions by columns.

After GROUP BY, each group key and each aggregate call becomes a column of
the grouped relation; after the window operator, each window expression
becomes a column. The select list, HAVING and ORDER BY are then rewritten to
read those columns, which is how the standard's "the value of the aggregate
for the group" reads as plain evaluation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from harness.core.functions import is_aggregate
from harness.core.model import (
    SUBQUERY_EXPRS,
    Expr,
    FuncCall,
    InSubquery,
    Select,
    UnionAll,
    Values,
    WindowExpr,
    With,
    children,
)
from reference_impl.memo import per_node

Rewrite = Callable[[Expr], Expr]


def identity(expr: Expr) -> Expr:
    return expr


class Replacement:
    """The rewrite `replace_exprs(before(expr), dict(pairs))`.

    Built once per query node (see `memo.py`) and then asked about the same
    expression objects at every evaluation, so it remembers its answer per
    object (by identity: hashing a model tree by value walks all of it).
    """

    _MAX_ANSWERS = 1024  # a query has far fewer expressions; this only bounds misuse

    def __init__(self, pairs: Sequence[tuple[Expr, Expr]], before: Rewrite = identity) -> None:
        self.keys = _Keys(pairs)
        self.before = before
        self._answers: dict[int, tuple[Expr, Expr]] = {}

    def __call__(self, expr: Expr) -> Expr:
        known = self._answers.get(id(expr))
        if known is not None and known[0] is expr:
            return known[1]
        answer = _replace(self.before(expr), self.keys)
        if len(self._answers) < self._MAX_ANSWERS:
            self._answers[id(expr)] = (expr, answer)  # holds expr, so its id stays its own
        return answer  # type: ignore[return-value]


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
    return _replace(node, _Keys(list(mapping.items()), mapping))


class _Keys:
    """The keys of `dict(pairs)`, looked up without hashing where that is not
    needed: hashing a model node walks its whole sub-tree, at every level of
    the rewrite.

    A node equals a key only if it is of the key's class (model nodes are
    dataclasses), and a node that is a key object itself is found by its id.
    The dict is made when a lookup by value needs it (`mapping`: the dict,
    when the caller has it).
    """

    def __init__(
        self, pairs: Sequence[tuple[object, Expr]], mapping: Mapping[object, Expr] | None = None
    ) -> None:
        self._pairs = list(pairs)
        self._mapping = mapping
        self.types = frozenset(type(key) for key, _ in self._pairs)
        # While no two keys are equal, each key object stands for itself; else
        # the dict decides which object and which value an equal key keeps.
        equal_keys = mapping is None and any(
            type(a) is type(b) and a == b
            for i, (a, _) in enumerate(self._pairs)
            for b, _ in self._pairs[:i]
        )
        items = self.mapping.items() if equal_keys else self._pairs
        self.by_id = {id(key): (key, value) for key, value in items}

    @property
    def mapping(self) -> Mapping[object, Expr]:
        if self._mapping is None:
            self._mapping = dict(self._pairs)
        return self._mapping

    def find(self, node: object) -> tuple[bool, object]:
        """(True, replacement) when `node` is a key, else (False, None)."""
        if type(node) not in self.types:
            return False, None
        known = self.by_id.get(id(node))
        if known is not None and known[0] is node:
            return True, known[1]
        if _in(node, self.mapping):
            return True, self.mapping[node]
        return False, None


def _replace(node: object, keys: _Keys) -> object:
    found, replacement = keys.find(node)
    if found:
        return replacement
    if isinstance(node, WindowExpr):
        func = map_children(node.func, lambda c: _replace(c, keys))
        return WindowExpr(func, _replace(node.window, keys))  # type: ignore[arg-type]
    if isinstance(node, SUBQUERY_EXPRS):  # the subquery's own clauses are its own
        return map_children(node, lambda c: c if isinstance(c, _QUERIES) else _replace(c, keys))
    return map_children(node, lambda c: _replace(c, keys))


_QUERIES = (Select, UnionAll, With, Values)


def outer_children(node: object) -> tuple[object, ...]:
    """The direct sub-nodes of an expression that belong to its query: a
    subquery in it is a query of its own (only IN's operand is outside)."""
    if isinstance(node, InSubquery):
        return (node.operand,)
    if isinstance(node, SUBQUERY_EXPRS):
        return ()
    return children(node)


def _in(node: object, mapping: Mapping[object, Expr]) -> bool:
    try:
        return node in mapping
    except TypeError:  # an unhashable value inside a node cannot be a key either
        return False


@per_node
def aggregate_calls(node: object) -> tuple[FuncCall, ...]:
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
        for c in outer_children(n):
            visit(c)

    visit(node)
    return tuple(found)
