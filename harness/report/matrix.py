"""The conformance matrix: rows (what is exercised) x engines, each cell the
verdicts counted in that row, the dialect's declaration, and the findings
behind it. Built from the outcomes and the dialects' feature tables only."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from harness.cases.axes import AXES, BOUNDS, axis_of, declared_rows, matches
from harness.core.errors import InvalidInput
from harness.report.model import CELL_BUCKETS, Finding, ReportData

# The order rows take inside an axis where alphabetical order would mislead.
_ORDER = {
    "frame mode": ["ROWS", "RANGE", "GROUPS", "default (no frame clause)"],
    "frame bound": [*BOUNDS.values(), "moving start"],
    "exclusion": ["NO OTHERS", "CURRENT ROW", "GROUP", "TIES"],
}


@dataclass
class Cell:
    counts: Counter = field(default_factory=Counter)  # bucket (CELL_BUCKETS) -> verdicts
    findings: list[Finding] = field(default_factory=list)
    declared: str | None = None  # why the dialect says the engine lacks this row

    @property
    def state(self) -> str:
        """The cell's colour: the worst thing in it."""
        if any(not f.baseline or not f.baseline.explained for f in self.findings):
            return "unexplained"
        failing = ("mismatch", "error", "accepted", "refused")
        if any(self.counts[bucket] for bucket in failing) or self.findings:
            return "explained"
        if self.counts["inconclusive"]:
            return "inconclusive"
        conforming = self.counts["match"] + self.counts["rejected"]
        if conforming and self.counts["unsupported"]:
            return "partial"
        if conforming:
            return "match"
        if self.counts["unsupported"] or self.declared:
            return "unsupported"
        return "empty"


@dataclass
class Matrix:
    engines: list[str]
    rows: list[str]
    cells: dict[tuple[str, str], Cell]

    def cell(self, row: str, engine: str) -> Cell:
        return self.cells.get((row, engine)) or Cell()

    def by_axis(self) -> list[tuple[str, list[str]]]:
        return [(axis, [r for r in self.rows if axis_of(r) == axis]) for axis in AXES
                if any(axis_of(r) == axis for r in self.rows)]


def build_matrix(data: ReportData) -> Matrix:
    engines = list(data.engines)
    cells: dict[tuple[str, str], Cell] = {}
    for outcome in data.outcomes:
        bucket = CELL_BUCKETS.get(outcome.verdict, "error")
        for row in outcome.rows:
            cells.setdefault((row, outcome.engine), Cell()).counts[bucket] += outcome.count
    for finding in data.findings:
        for row in finding.rows:
            cell = cells.setdefault((row, finding.engine), Cell())
            if finding not in cell.findings:
                cell.findings.append(finding)
    _declare(cells, engines)
    rows = sorted({row for row, _ in cells}, key=_row_key)
    return Matrix(engines, rows, cells)


def _declare(cells: dict[tuple[str, str], Cell], engines: list[str]) -> None:
    """Mark what each engine's dialect declares missing, in rows that ran and in
    rows no case reached (a declared gap is shown even where nothing was tried)."""
    from harness.engines.registry import get_dialect

    seen = {row for row, _ in cells}
    for engine in engines:
        try:
            declared = declared_rows(get_dialect(engine))
        except InvalidInput:  # an engine this checkout does not know declares nothing
            continue
        for pattern, why in declared.items():
            hits = [r for r in seen if matches(r, pattern)] if pattern.endswith("/*") else [pattern]
            for row in hits:
                cells.setdefault((row, engine), Cell()).declared = why


def _row_key(row: str) -> tuple:
    axis, _, value = row.partition("/")
    order = _ORDER.get(axis, [])
    rank = order.index(value) if value in order else len(order)
    return (AXES.index(axis) if axis in AXES else len(AXES), rank, value.lower())
