"""Orders of tied rows read from the engine's own collected lists.

`array_agg(x) OVER w` and `string_agg(x, sep) OVER w` (no ORDER BY, DISTINCT
or FILTER inside) list their frame's values of x in the order the engine put
the rows of w, peers included. Where the answer cannot be split by row id
(derived tables, unions, grouped queries) and the peers are too many to try
every order, the lists name the order outright: the peers of each group are
laid out so that their values of x read as a run of a list that holds
exactly them (a frame of whole peer groups), or else as the longest run at
a list's start or end made of their values (a frame from the current row
to the partition's end shows the tail of the order). Rows with equal x keep
input order among themselves. These are candidate orders like any other: one
that makes the reference reproduce the answer is a witness, and one that
does not decides nothing.
"""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from collections.abc import Sequence

from harness.core.model import Column, Literal, Select, WindowExpr, resolve_window, walk
from harness.judge.cells import Rows, hashable
from reference_impl import PeerOrder

COLLECTING = ("array_agg", "string_agg")


def list_orders(rows: Rows, query: object) -> list[PeerOrder]:
    """Candidate peer orders, two per collecting window column of the answer."""
    out: list[PeerOrder] = []
    for select in (n for n in walk(query) if isinstance(n, Select)):
        for item in select.items:
            expr = item.expr
            if not (isinstance(expr, WindowExpr) and item.alias in rows.names and _plain_list(expr)):
                continue
            spec = resolve_window(expr.window, select.windows, lenient=True)
            key = (spec.partition_by, spec.order_by)
            lists = _lists(rows, rows.names.index(item.alias), expr)
            if lists:
                arg = expr.func.args[0]
                text = expr.func.name == "string_agg"
                out += [_laid_out(key, lists, arg, text, at_end) for at_end in (False, True)]
    return out


def _plain_list(expr: WindowExpr) -> bool:
    f = expr.func
    if f.name not in COLLECTING or f.distinct or f.filter is not None or f.order_by or not f.args:
        return False
    if not isinstance(f.args[0], Column):
        return False
    return f.name == "array_agg" or (len(f.args) == 2 and isinstance(f.args[1], Literal)
                                     and isinstance(f.args[1].value, str) and f.args[1].value != "")


def _lists(rows: Rows, column: int, expr: WindowExpr) -> list[list[object]]:
    """The column's distinct lists, longest first, as lists of hashable values."""
    sep = expr.func.args[1].value if expr.func.name == "string_agg" else None
    found: dict[tuple, None] = {}
    for row in rows.rows:
        cell = row[column]
        if cell is None:
            continue
        values = cell.split(sep) if sep is not None and isinstance(cell, str) else cell
        if isinstance(values, list):
            found.setdefault(tuple(hashable(v) for v in values), None)
    return sorted((list(v) for v in found), key=len, reverse=True)


def _laid_out(key: object, lists: list[list[object]], arg: Column, text: bool, at_end: bool) -> PeerOrder:
    """Each peer group of `key` in the order of the first list that shows all of
    it as one run (a frame of whole peer groups), else of the longest run at a
    list's start (`at_end`: end) made of its values (a frame that cuts it)."""

    def value(row: dict) -> object:
        v = row.get(arg.name, row.get(f"{arg.table}.{arg.name}") if arg.table else None)
        return str(v) if text and v is not None and not isinstance(v, str) else hashable(v)

    # The reference asks for the peer groups in window order, so a list's runs
    # are looked for past the last run taken from it (values repeat across groups).
    cursors = [0] * len(lists)

    def order(k: object, group: Sequence[dict]) -> Sequence[int]:
        if k != key or len(group) < 2:
            return range(len(group))
        values = [value(r) for r in group]
        run = _whole_run(lists, values, cursors) or _edge_run(lists, values, at_end)
        if not run:
            return range(len(group))
        pool: dict[object, deque[int]] = defaultdict(deque)
        for i, v in enumerate(values):
            pool[v].append(i)
        placed = [pool[v].popleft() for v in run]
        taken = set(placed)
        rest = [i for i in range(len(group)) if i not in taken]
        return [*rest, *placed] if at_end else [*placed, *rest]

    return order


def _whole_run(lists: list[list[object]], values: list[object], cursors: list[int]) -> list[object] | None:
    """The first run of len(values) consecutive elements of a list, at or past
    its cursor, that holds exactly these values; the cursor moves past it."""
    want, n = Counter(values), len(values)
    for j, lst in enumerate(lists):
        if len(lst) < n:
            break  # longest first
        start = cursors[j]
        window = Counter(lst[start:start + n])
        for i in range(start, len(lst) - n + 1):
            if i > start:
                window[lst[i - 1]] -= 1
                window[lst[i + n - 1]] += 1
            if +window == want:
                cursors[j] = i + n
                return lst[i:i + n]
    return None


def _edge_run(lists: list[list[object]], values: list[object], at_end: bool) -> list[object] | None:
    """The longest run at a list's start (or end) made of these values, at least two."""
    best: list[object] = []
    for lst in lists:
        left = Counter(values)
        run = []
        for v in (reversed(lst) if at_end else lst):
            if left[v] <= 0:
                break
            left[v] -= 1
            run.append(v)
        if len(run) > len(best):
            best = run[::-1] if at_end else run
    return best if len(best) >= 2 else None
