"""Steer generation towards the least-covered cells of the feature grid.

The campaign keeps the grid's counts (`harness.cases.coverage`: function x frame
mode x bound kinds x exclusion, and RANGE key type x direction x NULLS
placement), plus the shape of the data under each expression (ties among
the ORDER BY keys, NULLs in them). For every window expression it
generates, the generator draws a dozen candidates and asks `pick` which to
keep: the one whose cells have been seen least (counting the cells of the
slots already chosen in the same query). The choices are stored
with each case (`picks`), so a case reproduces from its seed and picks
without the campaign's history.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import pyarrow as pa

from harness.cases.case import Case
from harness.cases.coverage import expression_keys
from harness.core.errors import InvalidQuery
from harness.core.model import (
    Column,
    NamedWindow,
    Select,
    TableSchema,
    WindowExpr,
    resolve_window,
    walk,
    window_exprs,
)

CellKey = tuple[str, ...]


class CoverageSteer:
    """Counts of grid cells seen so far; `pick` prefers the rarest."""

    def __init__(self) -> None:
        self.cells: Counter[CellKey] = Counter()
        self.shapes: Counter[str] = Counter()
        # The cells of this query's slots chosen so far: a later slot prefers others.
        self.chosen: Counter[CellKey] = Counter()

    def begin_query(self) -> None:
        self.chosen.clear()

    def pick(self, candidates: Sequence[WindowExpr], windows: tuple[NamedWindow, ...],
             schemas: tuple[TableSchema, ...]) -> int:
        def rarity(i: int) -> tuple[int, int, int]:
            if keys_of[i] is None:  # a window name the candidate cannot resolve: never preferred
                return (1 << 30, 0, i)
            counts = [self.cells[k] + self.chosen[k] for k in keys_of[i]]
            # The rarest cell first; among equals, the candidate with more cells that rare.
            rarest = min(counts, default=1 << 20)
            return (rarest, -counts.count(rarest), i)

        keys_of = [self._keys(c, windows, schemas) for c in candidates]
        best = min(range(len(candidates)), key=rarity)
        self.chosen.update(keys_of[best] or ())
        return best

    @staticmethod
    def _keys(expr: WindowExpr, windows: tuple[NamedWindow, ...],
              schemas: tuple[TableSchema, ...]) -> list[CellKey] | None:
        try:
            spec = resolve_window(expr.window, windows, lenient=True)
        except InvalidQuery:
            return None
        return list(expression_keys(expr, spec, schemas))

    def record(self, cells: Iterable[str], shapes: Iterable[str] = ()) -> None:
        """Count one case's cells (as `cell_text` strings) and data shapes."""
        self.cells.update(tuple(c.split("|")) for c in cells)
        self.shapes.update(shapes)


def case_cells(case: Case) -> list[str]:
    """The grid cells a case covers, as stable strings (stored per case, so a
    resumed campaign rebuilds its counts)."""
    from harness.cases.coverage import case_keys

    return sorted("|".join(k) for k in case_keys(case))


def data_shapes(case: Case) -> list[str]:
    """Per window function: whether its ORDER BY keys had ties and NULLs in this
    case's data, e.g. `rank:ties`, `rank:nulls` (or `rank:distinct`)."""
    shapes: set[str] = set()
    for node in walk(case.query):
        if not isinstance(node, Select):
            continue
        for expr in window_exprs(node):
            spec = resolve_window(expr.window, node.windows, lenient=True)
            keys = [k.expr.name for k in spec.order_by if isinstance(k.expr, Column)]
            table = _table_with(case.tables, keys)
            if table is None or not keys:
                continue
            rows = list(zip(*(table.column(k).to_pylist() for k in keys), strict=True))
            name = expr.func.name
            shapes.add(f"{name}:ties" if len(set(map(repr, rows))) < len(rows) else f"{name}:distinct")
            if any(v is None for row in rows for v in row):
                shapes.add(f"{name}:nulls")
    return sorted(shapes)


def _table_with(tables: dict[str, pa.Table], columns: list[str]) -> pa.Table | None:
    return next((t for t in tables.values() if all(c in t.column_names for c in columns)), None)
