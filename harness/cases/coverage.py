"""How much of the window-function feature grid the conformance corpus covers.

The grid is a list of cells; each cell is one combination of features that a
case can exercise. It is built from the function table (`harness.core.functions`),
so a function added there appears here at once. Three families:

- ``frame``: for every function that reads the frame (``uses_frame``), each
  frame mode (ROWS, RANGE, GROUPS) times each pair of bound kinds (start,
  end) from unbounded-preceding, preceding (n PRECEDING), current-row,
  following (n FOLLOWING), unbounded-following, with no EXCLUDE clause
  (exclusion "none"). The pairs the standard forbids are "not-defined" with
  the rule as the reason (`FORBIDDEN_BOUND_PAIRS`). Two more cells per
  function cover the default frame (frame_mode, start and end "default"):
  direction "order-by" (the window has an ORDER BY, so the frame is RANGE
  UNBOUNDED PRECEDING .. CURRENT ROW) and "no-order-by" (the whole
  partition). A function that ignores the frame (ranking and offset
  functions) has one cell with frame_mode "none", matched by any window it is
  called over; its cells per frame mode are "not-defined". A function whose
  spec has `full_grid` False (the aggregates issue 16 added: they share the
  frame logic with sum and count) has one cell per frame mode instead, start
  and end "any", matched by any frame of that mode, EXCLUDE or not.
- ``exclusion``: every frame-reading function x frame mode x an explicit
  EXCLUDE (no-others, current-row, group, ties), any bounds (for the
  functions with the full grid).
- ``range-keys``: a RANGE frame with an n PRECEDING or n FOLLOWING bound (start
  and end "any", at least one of them an offset) by the type class of its one
  ORDER BY key (integer, decimal, float, date, timestamp, interval) x ASC/DESC x an
  explicit NULLS FIRST/LAST; any function.

A field that a cell does not constrain holds "any". A case covers a cell when
one of its window expressions, anywhere in the query (subqueries and CTEs
included, named windows resolved), matches the cell; a cell counts cases, not
expressions. Status: "covered" (at least one case), "empty" (none), or
"not-defined" (no valid query can match it; such cells are never a gap).
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields

from harness.cases.case import Case
from harness.core.functions import FUNCTIONS, FunctionKind, FunctionSpec
from harness.core.model import (
    Bound,
    BoundKind,
    Cast,
    Column,
    Exclusion,
    Expr,
    FrameMode,
    Literal,
    Select,
    TableSchema,
    WindowExpr,
    WindowSpec,
    resolve_window,
    walk,
    window_exprs,
)
from harness.core.types import SqlType, TypeKind

ANY = "any"
NONE = "none"
DEFAULT = "default"

FRAME_MODES = ("ROWS", "RANGE", "GROUPS")
BOUND_KINDS = (
    "unbounded-preceding", "preceding", "current-row", "following", "unbounded-following",
)
EXCLUSIONS = ("no-others", "current-row", "group", "ties")
KEY_TYPES = ("integer", "decimal", "float", "date", "timestamp", "interval")
DIRECTIONS = ("asc", "desc")
NULLS = ("first", "last")
DEFAULT_FRAME_DIRECTIONS = ("order-by", "no-order-by")

# (start kinds, end kinds, reason): the bound pairs the standard forbids.
FORBIDDEN_BOUND_PAIRS: tuple[tuple[tuple[str, ...], tuple[str, ...], str], ...] = (
    (("unbounded-following",), BOUND_KINDS, "a frame cannot start at UNBOUNDED FOLLOWING"),
    (BOUND_KINDS, ("unbounded-preceding",), "a frame cannot end at UNBOUNDED PRECEDING"),
    (
        ("current-row",),
        ("preceding",),
        "a frame that starts at CURRENT ROW cannot end at n PRECEDING",
    ),
    (
        ("following",),
        ("preceding", "current-row"),
        "a frame that starts at n FOLLOWING cannot end at n PRECEDING or CURRENT ROW",
    ),
)
IGNORES_FRAME = "ignores the frame"

_BOUND_NAMES = {k: k.value.lower().replace(" ", "-") for k in BoundKind}
_EXCLUSION_NAMES = {e: e.value.lower().replace(" ", "-") for e in Exclusion}
_KEY_CLASSES = {
    **{k: "integer" for k in (TypeKind.INT8, TypeKind.INT16, TypeKind.INT32, TypeKind.INT64)},
    TypeKind.DECIMAL: "decimal",
    TypeKind.FLOAT32: "float",
    TypeKind.FLOAT64: "float",
    TypeKind.DATE: "date",
    TypeKind.TIMESTAMP: "timestamp",
    TypeKind.INTERVAL: "interval",  # a day-time interval key, moved by INTERVAL offsets
}


@dataclass(frozen=True)
class Cell:
    """One combination of features; `reason` is set exactly when it is not defined."""

    family: str
    function: str
    frame_mode: str
    start: str = ANY
    end: str = ANY
    exclusion: str = ANY
    key_type: str = ANY
    direction: str = ANY
    nulls: str = ANY
    reason: str | None = None

    @property
    def key(self) -> tuple[str, ...]:
        return (self.family, self.function, self.frame_mode, self.start, self.end,
                self.exclusion, self.key_type, self.direction, self.nulls)


KEY_FIELDS = tuple(f.name for f in fields(Cell) if f.name != "reason")


@dataclass(frozen=True)
class CellCount:
    cell: Cell
    cases: int

    @property
    def status(self) -> str:
        if self.cell.reason is not None:
            return "not-defined"
        return "covered" if self.cases else "empty"

    def as_json(self) -> dict:
        doc: dict[str, object] = dict(zip(KEY_FIELDS, self.cell.key, strict=True))
        doc.update(cases=self.cases, status=self.status)
        if self.cell.reason is not None:
            doc["reason"] = self.cell.reason
        return doc


# ---------------------------------------------------------------------------
# The grid


def bound_pair_reason(start: str, end: str) -> str | None:
    """Why the standard forbids a frame from `start` to `end`, or None if it allows it."""
    for starts, ends, reason in FORBIDDEN_BOUND_PAIRS:
        if start in starts and end in ends:
            return reason
    return None


def window_functions(functions: Mapping[str, FunctionSpec] = FUNCTIONS) -> list[FunctionSpec]:
    """The functions that can be called with OVER, in table order."""
    return [s for s in functions.values() if s.kind is not FunctionKind.SCALAR]


def grid(functions: Mapping[str, FunctionSpec] = FUNCTIONS) -> list[Cell]:
    """Every cell of the three families, in a stable order."""
    specs = window_functions(functions)
    cells = [c for s in specs for c in _frame_cells(s)]
    cells += [
        Cell("exclusion", s.name, mode, exclusion=excl)
        for s in specs if s.uses_frame and s.full_grid
        for mode in FRAME_MODES for excl in EXCLUSIONS
    ]
    cells += [
        Cell("range-keys", ANY, "RANGE", key_type=k, direction=d, nulls=n)
        for k in KEY_TYPES for d in DIRECTIONS for n in NULLS
    ]
    return cells


@functools.cache
def defined_cells() -> frozenset[tuple[str, ...]]:
    """The keys of the grid's cells that are defined (no reason to leave them out):
    what a campaign's coverage counts."""
    return frozenset(c.key for c in grid() if c.reason is None)


def _frame_cells(spec: FunctionSpec) -> list[Cell]:
    if not spec.uses_frame:
        none = Cell("frame", spec.name, NONE, NONE, NONE, NONE)
        return [none] + [Cell("frame", spec.name, m, reason=IGNORES_FRAME) for m in FRAME_MODES]
    if not spec.full_grid:
        return [Cell("frame", spec.name, mode, exclusion=NONE) for mode in FRAME_MODES]
    cells = [
        Cell("frame", spec.name, mode, start, end, NONE, reason=bound_pair_reason(start, end))
        for mode in FRAME_MODES for start in BOUND_KINDS for end in BOUND_KINDS
    ]
    cells += [
        Cell("frame", spec.name, DEFAULT, DEFAULT, DEFAULT, NONE, direction=d)
        for d in DEFAULT_FRAME_DIRECTIONS
    ]
    return cells


# ---------------------------------------------------------------------------
# Matching cases to cells


def expression_keys(
    expr: WindowExpr, spec: WindowSpec, schemas: tuple[TableSchema, ...] = (),
    functions: Mapping[str, FunctionSpec] = FUNCTIONS,
) -> set[tuple[str, ...]]:
    """The keys of the cells one window expression matches; `spec` is its resolved window."""
    fn = functions.get(expr.func.name)
    if fn is None or fn.kind is FunctionKind.SCALAR:
        return set()
    if not fn.uses_frame:
        return {Cell("frame", fn.name, NONE, NONE, NONE, NONE).key}
    frame = spec.frame
    if not fn.full_grid:
        keys = set() if frame is None else {Cell("frame", fn.name, frame.mode.value,
                                                  exclusion=NONE).key}
        range_key = _range_key_cell(spec, schemas)
        return keys if range_key is None else keys | {range_key.key}
    if frame is None:
        direction = "order-by" if spec.order_by else "no-order-by"
        return {Cell("frame", fn.name, DEFAULT, DEFAULT, DEFAULT, NONE, direction=direction).key}
    mode = frame.mode.value
    if frame.exclusion is None:
        start, end = _BOUND_NAMES[frame.start.kind], _BOUND_NAMES[frame.end.kind]
        keys = {Cell("frame", fn.name, mode, start, end, NONE).key}
    else:
        keys = {Cell("exclusion", fn.name, mode, exclusion=_EXCLUSION_NAMES[frame.exclusion]).key}
    range_key = _range_key_cell(spec, schemas)
    if range_key is not None:
        keys.add(range_key.key)
    return keys


def _range_key_cell(spec: WindowSpec, schemas: tuple[TableSchema, ...]) -> Cell | None:
    frame = spec.frame
    if frame is None or frame.mode is not FrameMode.RANGE or len(spec.order_by) != 1:
        return None
    if not any(_is_offset(b) for b in (frame.start, frame.end)):
        return None
    key = spec.order_by[0]
    key_type = expr_type(key.expr, schemas)
    key_class = _KEY_CLASSES.get(key_type.kind) if key_type is not None else None
    if key_class is None or key.nulls is None:  # an engine-default null order is no cell
        return None
    direction = "desc" if key.descending else "asc"
    return Cell("range-keys", ANY, "RANGE", key_type=key_class, direction=direction,
                nulls=key.nulls.name.lower())


def _is_offset(bound: Bound) -> bool:
    return bound.kind in (BoundKind.PRECEDING, BoundKind.FOLLOWING)


def expr_type(expr: Expr, schemas: tuple[TableSchema, ...]) -> SqlType | None:
    """The type of an ORDER BY key, as far as it can be read without a planner.

    A column is looked up by name in the case's tables (in the named table when
    it is qualified by a table name); a column found with two types is unknown.
    """
    if isinstance(expr, Cast):
        return expr.to
    if isinstance(expr, Literal):
        return expr.type
    if not isinstance(expr, Column):
        return None
    named = [s for s in schemas if s.name == expr.table] or list(schemas)
    found = {c.type for s in named for c in s.columns if c.name == expr.name}
    return found.pop() if len(found) == 1 else None


def case_keys(
    case: Case, functions: Mapping[str, FunctionSpec] = FUNCTIONS
) -> set[tuple[str, ...]]:
    """The keys of every cell a case covers (each SELECT's windows resolved in that SELECT)."""
    keys: set[tuple[str, ...]] = set()
    for node in walk(case.query):
        if not isinstance(node, Select):
            continue
        for expr in window_exprs(node):
            spec = resolve_window(expr.window, node.windows, lenient=True)
            keys |= expression_keys(expr, spec, case.schemas, functions)
    return keys


def coverage(
    cases: Iterable[Case], functions: Mapping[str, FunctionSpec] = FUNCTIONS
) -> list[CellCount]:
    """The grid with the number of cases that cover each cell."""
    counts: Counter[tuple[str, ...]] = Counter()
    for case in cases:
        counts.update(case_keys(case, functions))
    return [CellCount(cell, counts[cell.key]) for cell in grid(functions)]


def summary(counts: Iterable[CellCount]) -> dict[str, int]:
    tally = Counter(c.status for c in counts)
    return {s: tally[s] for s in ("covered", "empty", "not-defined")}


def to_json(counts: list[CellCount]) -> str:
    doc = {"cells": [c.as_json() for c in counts], "summary": summary(counts)}
    return json.dumps(doc, indent=2)


# ---------------------------------------------------------------------------
# The table for people: one pivot per family part, then the empty cells.

_BOUND_ABBREVIATIONS = {
    "unbounded-preceding": "UP", "preceding": "P", "current-row": "CR",
    "following": "F", "unbounded-following": "UF",
}


def _place(cell: Cell) -> tuple[str, str, str]:
    """(section, row label, column label) of a cell in the table."""
    if cell.family == "exclusion":
        return "exclusion (any bounds)", f"{cell.function} {cell.frame_mode}", cell.exclusion
    if cell.family == "range-keys":
        return ("range-keys (RANGE with an n PRECEDING/FOLLOWING bound, any function)",
                cell.key_type, f"{cell.direction}/nulls-{cell.nulls}")
    if cell.frame_mode == DEFAULT:
        return "frame: default frame", cell.function, cell.direction
    if cell.start == ANY and cell.reason is None:
        return "frame: one cell per frame mode, any bounds", cell.function, cell.frame_mode
    if cell.start in _BOUND_ABBREVIATIONS:
        pair = f"{_BOUND_ABBREVIATIONS[cell.start]}..{_BOUND_ABBREVIATIONS[cell.end]}"
        return "frame: start..end bounds, no EXCLUDE", f"{cell.function} {cell.frame_mode}", pair
    return "frame: functions that ignore the frame", cell.function, cell.frame_mode


def format_table(counts: list[CellCount]) -> str:
    """Pivots of case counts ('.' not defined, '0' empty), the empty cells, the summary."""
    sections: dict[str, dict[str, dict[str, CellCount]]] = {}
    for c in counts:
        section, row, col = _place(c.cell)
        sections.setdefault(section, {}).setdefault(row, {})[col] = c
    lines = ["UP unbounded preceding, P n preceding, CR current row, F n following, "
             "UF unbounded following; '.' not defined, '0' empty"]
    for title, rows in sections.items():
        lines += ["", title, *_pivot(rows)]
    empty = [c for c in counts if c.status == "empty"]
    if empty:
        lines += ["", f"empty cells ({len(empty)}):"]
        lines += ["  " + " ".join(f"{k}={v}" for k, v in zip(KEY_FIELDS, c.cell.key, strict=True)
                                  if v != ANY) for c in empty]
    reasons = Counter(c.cell.reason for c in counts if c.cell.reason is not None)
    if reasons:
        lines += ["", "not-defined cells by reason:"]
        lines += [f"  {n:4}  {reason}" for reason, n in reasons.items()]
    lines += ["", "summary: " + ", ".join(f"{k} {v}" for k, v in summary(counts).items())]
    return "\n".join(lines) + "\n"


def _pivot(rows: dict[str, dict[str, CellCount]]) -> list[str]:
    columns = list(dict.fromkeys(col for cols in rows.values() for col in cols))
    # A column no row defines (a forbidden bound pair) only adds dots.
    columns = [col for col in columns
               if any(col in cols and cols[col].status != "not-defined" for cols in rows.values())]
    width = max(len(r) for r in rows)
    widths = [max(len(col), 3) for col in columns]
    out = [" ".join([" " * width, *(col.rjust(w) for col, w in zip(columns, widths, strict=True))])]
    for label, cols in rows.items():
        marks = [_mark(cols.get(col)).rjust(w) for col, w in zip(columns, widths, strict=True)]
        out.append(" ".join([label.ljust(width), *marks]))
    return out


def _mark(count: CellCount | None) -> str:
    if count is None:
        return ""
    return "." if count.status == "not-defined" else str(count.cases)
