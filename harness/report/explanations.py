"""The explanation of an engine's first differing cell, as the report shows it:
`explain`'s text (the reference's derivation, with the step at which a variation
of the reference gives the engine's recorded value), folded in a <details>.

Derived from the case the finding saved and the answers it recorded: the
reference is evaluated again (it is pure Python, no engine runs), the engine's
value is the one in the finding record. A recorded answer is a bag of JSON
values, so the cell is named by the reference row's place in its recorded
answer and the engine's value is read back as the derivation's type; when the
derivation's value is not the recorded reference value there, no explanation is
shown rather than a wrong one.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from decimal import Decimal, InvalidOperation

from harness.cases.case import Case
from harness.core.errors import InvalidInput
from harness.core.semantics import SemanticsProfile
from harness.report.markup import Markup, h, slug

# Differing cells tried per engine, in the reference's order, before giving up
# (a cell outside any window function has no derivation).
MAX_CELLS_TRIED = 3


def first_cell_explained(case: Case | None, engine: str, cells: list[tuple[int, int, object, object]],
                         anchor: str) -> Markup | None:
    """The <details> of the first of `cells` (reference row index, column, reference
    value, engine value, as recorded) that has a derivation, with `anchor` as its id."""
    if case is None or not cells:
        return None
    # Named by its file's stem: the case read back from its directory is
    # `findings/KEY`, the one a run holds in memory `KEY`, and both pages must be one.
    case = dataclasses.replace(case, id=case.id.rpartition("/")[2])
    for row, column, expected, got in cells[:MAX_CELLS_TRIED]:
        found = _explained(case, engine, row, column, expected, got)
        if found is not None:
            return _details(found, anchor)
    return None


def cell_anchor(finding_anchor: str, engine: str) -> str:
    return "x-" + slug(f"{finding_anchor}/{engine}")


def _explained(case: Case, engine: str, row: int, column: int, expected: object, got: object):  # type: ignore[no-untyped-def]
    from harness.findings.explain import derive, explain_value
    from harness.findings.explain_variations import same_value
    from reference_impl.explain import CellAt

    profile, at = _profile(engine, case), CellAt(column, row + 1)
    try:
        derivation = derive(case, at, profile)
    except InvalidInput:
        return None
    value = derivation.value
    if not same_value(read_back(expected, value), value):
        return None  # the recorded row is not the row the derivation names
    return explain_value(case, at, engine, read_back(got, value), profile, derivation)


def _profile(engine: str, case: Case) -> SemanticsProfile:
    """The engine's semantics profile (its by-design choices); the case's for a name the
    registry does not know (a labelled build)."""
    from harness.engines.registry import get_dialect
    from harness.judge.runner import profile_named

    try:
        return get_dialect(engine).semantics
    except InvalidInput:
        return profile_named(case.profile)


def read_back(recorded: object, like: object) -> object:
    """A recorded (JSON) value as the type of `like`, the derivation's value: decimals
    and special floats are recorded as strings."""
    if recorded is None or like is None or isinstance(like, bool):
        return recorded
    try:
        if isinstance(like, Decimal):
            return Decimal(str(recorded))
        if isinstance(like, float):
            return float(recorded)  # type: ignore[arg-type]
        if isinstance(like, int) and not isinstance(recorded, bool):
            number = Decimal(str(recorded))
            return int(number) if number == number.to_integral_value() else recorded
        if isinstance(like, dt.date) and isinstance(recorded, str):
            return type(like).fromisoformat(recorded)
    except (ValueError, TypeError, InvalidOperation):
        return recorded
    return recorded


def _details(found, anchor: str) -> Markup:  # type: ignore[no-untyped-def]
    from harness.findings.explain_text import engine_lines, full_text

    d = found.derivation
    lines = engine_lines(found) if found.engine is not None else []
    step = lines[1].strip() if len(lines) > 1 else ""  # the first differing step, or that none was found
    engine = f", not {_short(found.engine.value)} as {found.engine.engine} answered" if found.engine else ""
    summary = f"why the reference's {d.column} is {_short(d.value)} at input row #{d.input_row}{engine}" + (
        f": {step}" if step else "")
    return h("details", {"class": "explain", "id": anchor}, h("summary", {}, summary),
             h("pre", {}, full_text(found).rstrip()))


def _short(value: object) -> str:
    from harness.findings.show import show

    return show(value)
