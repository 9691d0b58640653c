"""`window-harness explain`: the reference's derivation of one cell of a case
(`reference_impl.explain`), and with an engine, its value for the cell and the
first step of the derivation at which an answer like the engine's would have
to differ (`explain_variations`).

A row is named as the case's answer lists it, `N` (1-based, in the answer's
order: the query's ORDER BY, ties in input order), or by its input row, `#N`
(the N-th row of the table as the case file lists it, where the query reads
one table; else the N-th row the window operator reads). A column by its name
or its 1-based number.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.cases.case import Case
from harness.core.errors import HarnessError, InvalidInput
from harness.core.model import Select
from harness.core.semantics import SemanticsProfile
from harness.engines.base import Engine
from harness.findings.explain_variations import (
    Variation,
    first_match,
    peer_orders_searched,
    variations,
)
from harness.findings.replay_diff import user_answer
from harness.judge.instrument import ROWID, instrument, with_rowid
from harness.judge.runner import RunResults, profile_named, run_case, start_engines
from harness.sql.writer import write_expr
from reference_impl.explain import CellAt, CellDerivation, explain_cell


@dataclass(frozen=True)
class EngineView:
    """What an engine answered for the cell, and the variations that give it."""

    engine: str
    value: object = None
    error: str | None = None  # the engine answered no value for the cell: why
    paired_by: str = "input row"
    matches: tuple[Variation, ...] = ()  # in the order of the steps
    reference_agrees: bool = False
    # When no variation gives the engine's value: how many orders of the current
    # row's tied rows were tried, none giving it (the computation itself differs).
    peer_orders_tried: int = 0

    @property
    def first(self) -> Variation | None:
        return self.matches[0] if self.matches else None


@dataclass(frozen=True)
class Explanation:
    case: str
    sql: str
    profile: str
    derivation: CellDerivation
    engine: EngineView | None = None
    tried: tuple[str, ...] = field(default_factory=tuple)  # the variations tried, by name


def parse_cell(case: Case, row: str, column: str) -> CellAt:
    """`--row` and `--column` as a cell; bad ones name themselves."""
    query = case.query
    if not isinstance(query, Select):
        raise InvalidInput("explain takes a SELECT case (not WITH, UNION ALL or VALUES)", case.id)
    names = [item.alias or getattr(item.expr, "name", None) for item in query.items]
    text = row.strip()
    by_input = text.startswith("#")
    digits = text[1:] if by_input else text
    if not digits.isdigit() or int(digits) < 1:
        raise InvalidInput(f"--row {row!r}: give a row of the answer (1, 2, ...) or an input row (#1, #2, ...)",
                           case.id)
    if column.isdigit() and 1 <= int(column) <= len(names):
        return CellAt(int(column) - 1, int(digits), by_input)
    if column in names and names.count(column) == 1:
        return CellAt(names.index(column), int(digits), by_input)
    listed = ", ".join(str(n) for n in names if n is not None)
    raise InvalidInput(f"--column {column!r} is not a column of the answer ({listed}; or 1..{len(names)})",
                       case.id)


def derive(case: Case, at: CellAt, profile: SemanticsProfile, **options: object) -> CellDerivation:
    """The reference's derivation of the cell, under `profile`."""
    plan = instrument(case.query, case.schemas)
    tables = with_rowid(case.tables) if plan.rowid_column is not None else dict(case.tables)
    try:
        return explain_cell(case.query, tables, at, spell=write_expr, profile=profile,
                            rowid=ROWID if plan.rowid_column is not None else None, **options)  # type: ignore[arg-type]
    except HarnessError as e:
        raise InvalidInput(f"cannot explain this cell: {e}", case.id) from e


def explain(case: Case, at: CellAt, engine: Engine | None = None) -> Explanation:
    """The derivation, and with `engine`, its value and the variations that give it."""
    profile = profile_named(case.profile) if engine is None else engine.dialect.semantics
    derivation = derive(case, at, profile)
    if engine is None:
        return Explanation(case.id, case.sql, profile.name, derivation)
    return _with_view(case, at, derivation, _engine_view(case, at, derivation, engine), profile)


def explain_value(case: Case, at: CellAt, engine: str, value: object, profile: SemanticsProfile,
                  derivation: CellDerivation | None = None) -> Explanation:
    """The derivation under `profile` (the engine's; `derivation` when already made),
    and the variations that give `value`, the engine's answer for the cell as already
    recorded (a replay's, a finding's): nothing is run on the engine."""
    derivation = derivation or derive(case, at, profile)
    from harness.findings.explain_variations import same_value

    view = EngineView(engine, value, None, "input row" if at.by_input else "place in the answer", (),
                      same_value(value, derivation.value))
    return _with_view(case, at, derivation, view, profile)


def _with_view(case: Case, at: CellAt, derivation: CellDerivation, view: EngineView,
               profile: SemanticsProfile) -> Explanation:
    tried = variations(case, at, profile)
    if view.error is None and not view.reference_agrees:
        view = dataclasses.replace(view, matches=tuple(first_match(case, at.column, derivation, view.value, tried,
                                                                   profile)))
        if not view.matches:  # last, every order of the current row's ties
            searched, found = peer_orders_searched(case, at.column, derivation, view.value, profile)
            view = dataclasses.replace(view, matches=(found,) if found is not None else (),
                                       peer_orders_tried=0 if found is not None else searched)
    return Explanation(case.id, case.sql, profile.name, derivation, view, tuple(v.name for v in tried))


def _engine_view(case: Case, at: CellAt, derivation: CellDerivation, engine: Engine) -> EngineView:
    run = RunResults(engines={})
    start_engines([engine], run)
    result = run_case(case, [engine])[0]
    if result.answer is None:
        return EngineView(engine.name, error=f"{result.verdict.value}: {result.detail}")
    plan = instrument(case.query, case.schemas)
    answer = user_answer(result.answer, plan)
    if answer.rowids is not None:
        wanted = derivation.input_row - 1
        found = [n for n, rid in enumerate(answer.rowids) if rid == wanted]
        if not found:
            return EngineView(engine.name, error=f"the engine's answer has no row for input row "
                                                 f"#{derivation.input_row}")
        value, paired = answer.rows[found[0]][at.column], "input row"
    else:
        place = derivation.answer_row
        if place is None or place > len(answer.rows):
            return EngineView(engine.name, error="the engine's answer has no such row")
        value, paired = answer.rows[place - 1][at.column], "place in the answer"
    from harness.findings.explain_variations import same_value

    agrees = same_value(value, derivation.value)
    return EngineView(engine.name, value, None, paired, (), agrees)


def explain_engines(names: Sequence[str]) -> list[str]:
    return [n for n in names if n != "reference"]
