"""The explanation a replay gives after an engine's diff: `explain`'s derivation of
the first differing cell (the first few are tried: a cell outside any window
function has no derivation), under the engine's profile, with the engine's
value as the replay got it; nothing is run on the engine again."""

from __future__ import annotations

from dataclasses import dataclass

from harness.cases.case import Case
from harness.core.errors import InvalidInput
from harness.core.semantics import SemanticsProfile
from harness.findings.explain import Explanation, explain_value
from harness.findings.explain_variations import same_value
from harness.findings.replay_diff import Answer, Changed, Diff
from reference_impl.explain import CellAt

MAX_CELLS_TRIED = 3  # differing cells tried, in the diff's order, before giving up


@dataclass(frozen=True)
class CellExplanation:
    """The explanation of one differing cell, or why none was given."""

    row: str  # as `explain --row` takes it: "#3" (input row 3) or "3" (row 3 of the answer)
    column: str
    explanation: Explanation | None = None
    problem: str = ""


def first_explained(case: Case, d: Diff, reference: Answer, engine: str,
                    profile: SemanticsProfile) -> CellExplanation | None:
    """The first differing cell of `d` that has a derivation; None when no cell differs."""
    cells = [(c, column) for c in d.changed for column in c.columns][:MAX_CELLS_TRIED]
    if not cells:
        return None
    problems: list[CellExplanation] = []
    for changed, column in cells:
        at = _cell_at(changed, column, reference)
        found = _explained(case, at, changed, column, reference.columns[column], engine, profile)
        if found.explanation is not None:
            return found
        problems.append(found)
    return problems[0]


def _explained(case: Case, at: CellAt, changed: Changed, column: int, name: str, engine: str,
               profile: SemanticsProfile) -> CellExplanation:
    row = f"#{at.row}" if at.by_input else str(at.row)
    try:
        found = explain_value(case, at, engine, changed.engine[column], profile)
    except InvalidInput as e:
        return CellExplanation(row, name, problem=str(e))
    if not same_value(changed.reference[column], found.derivation.value):
        return CellExplanation(row, name, problem="the derivation's row is not the row the diff paired")
    return CellExplanation(row, name, found)


def _cell_at(changed: Changed, column: int, reference: Answer) -> CellAt:
    """The cell as `explain` names it: by input row when the diff paired rows by it,
    else by the reference row's place in the answer."""
    if changed.label.startswith("#") and changed.label[1:].isdigit():
        return CellAt(column, int(changed.label[1:]), by_input=True)
    place = next(i for i, row in enumerate(reference.rows) if row is changed.reference)
    return CellAt(column, place + 1)
