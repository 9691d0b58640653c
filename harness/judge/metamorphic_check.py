"""Checking a metamorphic relation: run its two queries on one engine and
compare the answers (see `harness.judge.metamorphic` for the relations).

`check` runs both sides and judges them (`Status`); `compare` aligns the rows
on the key and compares the named columns cell by cell, floats within a
tolerance scaled by `FloatScale`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum

import pyarrow as pa

from harness.cases.case import Case
from harness.core.errors import (
    EngineError,
    EvaluationError,
    HarnessError,
    ReferenceGap,
    Unsupported,
)
from harness.core.stages import stage
from harness.engines.base import Engine
from harness.judge.cells import Rows, TypeClass, cells_equal, float_tolerance, hashable, rows_of
from harness.judge.facts import Facts

ID = "id"  # the unique row key every relation aligns rows on


@dataclass(frozen=True)
class FloatScale:
    """What a float column was computed from: `magnitude` bounds the sum of |terms|
    of any frame; `root` for the square root of such a sum (stddev)."""

    magnitude: float = 0.0
    root: bool = False


@dataclass(frozen=True, eq=False)
class Check:
    """Two queries that must agree: rows aligned on `key`, `columns` compared by
    name. `right_filter` (column, value): compare only those right rows."""

    relation: str
    left: Case
    right: Case
    columns: tuple[str, ...]
    key: str = ID
    right_filter: tuple[str, object] | None = None
    scales: Mapping[str, FloatScale] = field(default_factory=dict)


class Status(Enum):
    HOLDS = "holds"
    VIOLATED = "violated"
    UNSUPPORTED = "unsupported"
    ERROR = "error"  # one side failed, the other ran
    BOTH_ERROR = "both-error"  # nothing compared; never a pass


@dataclass(frozen=True)
class Difference:
    key: object  # the row's key; None for a column-level difference
    column: str
    left: object
    right: object


@dataclass(frozen=True)
class MetamorphicOutcome:
    relation: str
    engine: str
    status: Status
    detail: str
    left_sql: str
    right_sql: str
    differences: tuple[Difference, ...] = ()
    message: str = ""  # for ERROR: the failing side's own words (the detail shows them)

    @property
    def difference(self) -> str | None:
        """The first difference alone, as the detail shows it (`left None, right ''`)."""
        if not self.differences:
            return None
        d = self.differences[0]
        return f"left {d.left!r}, right {d.right!r}"

    @property
    def facts(self) -> dict:
        """The typed facts of the finding it makes (`harness.judge.facts.Facts`, as JSON)."""
        return Facts(message=self.message or None, difference=self.difference).as_json()


def check(chk: Check, engine: Engine) -> MetamorphicOutcome:
    """Run both sides of `chk` on `engine` and judge them against each other."""
    left, right = _run(engine, chk.left), _run(engine, chk.right)

    def out(status: Status, detail: str, diffs: Sequence[Difference] = (), message: str = "") -> MetamorphicOutcome:
        return MetamorphicOutcome(chk.relation, engine.name, status, detail, left.sql, right.sql, tuple(diffs),
                                  message)

    if left.unsupported or right.unsupported:
        return out(Status.UNSUPPORTED, "; ".join(s.failure for s in (left, right) if s.unsupported))
    if left.failure and right.failure:
        return out(Status.BOTH_ERROR, f"left: {left.failure}; right: {right.failure}")
    if left.failure or right.failure:
        side = "left" if left.failure else "right"
        failure = left.failure or right.failure
        return out(Status.ERROR, f"only the {side} side failed: {failure}", message=failure)
    assert left.answer is not None and right.answer is not None
    diffs = compare(chk, left.answer, right.answer)
    if not diffs:
        return out(Status.HOLDS, f"{left.answer.num_rows} rows agree")
    return out(Status.VIOLATED, _describe(diffs), diffs)


@dataclass
class _Side:
    sql: str
    answer: pa.Table | None = None
    failure: str = ""
    unsupported: bool = False


def _run(engine: Engine, case: Case) -> _Side:
    side = _Side(case.sql)
    try:
        with stage(f"engine {engine.name}"):
            engine.check_tables(case.tables)
            side.sql = engine.render(case.query)
            side.answer = engine.run(case.tables, side.sql)
    except (Unsupported, ReferenceGap) as e:
        side.failure, side.unsupported = str(e), True
    except (EngineError, EvaluationError) as e:
        side.failure = str(e)
    return side


def compare(chk: Check, left: pa.Table, right: pa.Table) -> list[Difference]:
    """The differences between two answers: column types by class, missing or
    extra rows, then cell by cell (see `cell_equal`)."""
    lrows, rrows = rows_of(left), rows_of(right)
    diffs = [d for c in chk.columns if (d := _class_difference(c, lrows, rrows)) is not None]
    by_left = _by_key(lrows, chk.key, None, diffs)
    by_right = _by_key(rrows, chk.key, chk.right_filter, diffs)
    for hashed in sorted(set(by_left) | set(by_right), key=repr):
        lrow, rrow = by_left.get(hashed), by_right.get(hashed)
        key = (lrow or rrow)[lrows.names.index(chk.key) if lrow else rrows.names.index(chk.key)]  # type: ignore[index]
        if lrow is None or rrow is None:
            diffs.append(Difference(key, "(row)", lrow is not None, rrow is not None))
            continue
        for c in chk.columns:
            a, b = lrow[lrows.names.index(c)], rrow[rrows.names.index(c)]
            single = lrows.single[lrows.names.index(c)] or rrows.single[rrows.names.index(c)]
            if not cell_equal(a, b, chk.scales.get(c, FloatScale()), single):
                diffs.append(Difference(key, c, a, b))
    return diffs


def cell_equal(a: object, b: object, scale: FloatScale, single: bool) -> bool:
    """`cells_equal` with a tolerance from the larger value and the scale."""
    numbers = [abs(float(v)) for v in (a, b)
               if isinstance(v, (int, float, Decimal)) and not isinstance(v, bool)]
    size = max((v for v in numbers if math.isfinite(v)), default=0.0)
    tol = float_tolerance(size, scale.magnitude, single)
    if scale.root:  # |sqrt(x) - sqrt(y)| <= sqrt(|x - y|)
        tol = max(tol, math.sqrt(float_tolerance(0.0, scale.magnitude, single)))
    return cells_equal(a, b, tol)


def _class_difference(column: str, left: Rows, right: Rows) -> Difference | None:
    for rows in (left, right):
        if column not in rows.names:
            raise HarnessError(f"metamorphic check: column {column!r} missing from {rows.names}")
    a, b = left.classes[left.names.index(column)], right.classes[right.names.index(column)]
    if a != b and TypeClass.NULL not in (a, b):
        return Difference(None, column, a.value, b.value)
    return None


def _by_key(rows: Rows, key: str, only: tuple[str, object] | None, diffs: list[Difference]) -> dict:
    at = rows.names.index(key)
    keep = None if only is None else (rows.names.index(only[0]), hashable(only[1]))
    out: dict[object, tuple] = {}
    for row in rows.rows:
        if keep is not None and hashable(row[keep[0]]) != keep[1]:
            continue
        k = hashable(row[at])
        if k in out:
            diffs.append(Difference(row[at], "(duplicate key)", out[k], row))
        out[k] = row
    return out


def _describe(diffs: list[Difference], shown: int = 5) -> str:
    parts = [f"{ID}={d.key} {d.column}: left {d.left!r}, right {d.right!r}" for d in diffs[:shown]]
    more = f" (+{len(diffs) - shown} more)" if len(diffs) > shown else ""
    return f"{len(diffs)} difference(s): " + "; ".join(parts) + more

