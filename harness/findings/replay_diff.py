"""An engine's answer beside the reference's, and a diff between them.

The diff is a human aid and never decides anything (the verdict is the
comparator's): rows are paired by the hidden input row id when both answers
carry it, otherwise equal rows are paired first and the rest by position
after sorting. Cells are compared under the reference's float tolerance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal

import pyarrow as pa

from harness.findings.show import show
from harness.judge.cells import cell_tolerance, cells_equal, float_tolerance, rows_of
from harness.judge.instrument import Plan


@dataclass
class Answer:
    """The user's columns of an answer; `rowids` when the query carries them."""

    columns: list[str]
    rows: list[tuple]
    rowids: list[object] | None = None
    # Per row and column, how far a float may be from this (reference) value.
    tolerances: list[tuple[float, ...]] | None = None

    def tolerance(self, row: int, col: int) -> float:
        if self.tolerances is not None:
            return self.tolerances[row][col]
        value = self.rows[row][col]
        return float_tolerance(value, None, False) if isinstance(value, float) else 0.0


@dataclass
class Changed:
    label: str  # "#3" (input row 3) or "row 3" (position in the engine's answer)
    reference: tuple
    engine: tuple
    columns: list[int]  # the differing columns


@dataclass
class Diff:
    against: str
    aligned_by: str
    changed: list[Changed] = field(default_factory=list)
    missing: list[tuple] = field(default_factory=list)  # in the reference only
    extra: list[tuple] = field(default_factory=list)  # in the engine's answer only
    problem: str = ""  # when the answers cannot be aligned at all

    @property
    def empty(self) -> bool:
        return not (self.changed or self.missing or self.extra or self.problem)


def user_answer(table: pa.Table, plan: Plan, magnitudes: dict | None = None) -> Answer:
    """An instrumented answer without its hidden columns (kept: the row ids)."""
    width = plan.visible if plan.visible >= 0 else table.num_columns
    width = min(width, table.num_columns)
    full = rows_of(table, magnitudes)
    rows = [tuple(r[:width]) for r in full.rows]
    rowids = None
    if plan.rowid_column is not None and plan.rowid_column < table.num_columns:
        rowids = [r[plan.rowid_column] for r in full.rows]
    tolerances = None
    if magnitudes is not None:
        tolerances = [
            tuple(cell_tolerance(full, c, i, full.single[c]) for c in range(width))
            for i in range(len(rows))
        ]
    return Answer(full.names[:width], rows, rowids, tolerances)


def diff(reference: Answer, engine: Answer, against: str) -> Diff:
    if len(reference.columns) != len(engine.columns):
        return Diff(against, "-", problem=f"the engine returned {len(engine.columns)} columns, "
                                          f"the reference {len(reference.columns)}")
    if reference.rowids is not None and engine.rowids is not None:
        return _diff_by_rowid(reference, engine, Diff(against, "input row id"))
    return _diff_as_bag(reference, engine, Diff(against, "equal rows, then position after sorting"))


def _differing(reference: Answer, r: int, engine: Answer, e: int) -> list[int]:
    return [
        c for c, (ev, rv) in enumerate(zip(engine.rows[e], reference.rows[r], strict=True))
        if not cells_equal(ev, rv, reference.tolerance(r, c))
    ]


def _diff_by_rowid(reference: Answer, engine: Answer, out: Diff) -> Diff:
    assert reference.rowids is not None and engine.rowids is not None
    where = {rid: i for i, rid in enumerate(reference.rowids)}
    seen: set[object] = set()
    for e, rid in enumerate(engine.rowids):
        r = where.get(rid)
        if r is None or rid in seen:
            out.extra.append(engine.rows[e])
            continue
        seen.add(rid)
        columns = _differing(reference, r, engine, e)
        if columns:
            label = f"#{rid + 1}" if isinstance(rid, int) else str(rid)
            out.changed.append(Changed(label, reference.rows[r], engine.rows[e], columns))
    out.missing = [reference.rows[i] for i, rid in enumerate(reference.rowids) if rid not in seen]
    return out


def _diff_as_bag(reference: Answer, engine: Answer, out: Diff) -> Diff:
    left = list(range(len(reference.rows)))
    unmatched = []
    for e in range(len(engine.rows)):
        hit = next((r for r in left if not _differing(reference, r, engine, e)), None)
        if hit is None:
            unmatched.append(e)
        else:
            left.remove(hit)
    left.sort(key=lambda r: _row_token(reference.rows[r]))
    unmatched.sort(key=lambda e: _row_token(engine.rows[e]))
    for r, e in zip(left, unmatched, strict=False):
        columns = _differing(reference, r, engine, e)
        out.changed.append(Changed(f"row {e + 1}", reference.rows[r], engine.rows[e], columns))
    out.missing = [reference.rows[r] for r in left[len(unmatched):]]
    out.extra = [engine.rows[e] for e in unmatched[len(left):]]
    return out


def _row_token(row: tuple) -> tuple:
    return tuple(_value_token(v) for v in row)


def _value_token(v: object) -> tuple:
    """A sort key for any cell: NULL first, then numbers (NaN last), then the rest as text."""
    if v is None:
        return (0, 0, 0.0, "")
    if isinstance(v, (bool, int, float, Decimal)):
        f = float(v)
        return (1, 1, 0.0, "") if math.isnan(f) else (1, 0, f, "")
    return (2, 0, 0.0, show(v))
