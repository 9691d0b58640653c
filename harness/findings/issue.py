"""A finding as a bug report for an engine's tracker (the command `window-harness
export CASE --to issue` is harness/cli/export.py; the Markdown: `issue_text`).

The report holds what maintainers ask for: the versions; a reproduction in the
engine's own SQL (`reproduction`); the engine's answer to it, run now, beside
the reference's (the expected answer, under the engine's semantics profile, as
an exported test expects it); the reference's derivation of the first
differing cell (`explain`), with the first step at which a variation of the
reference gives the engine's value; the other engines' answers, from the
finding record or run now; and the case exported to the engine's own test
format, as a proposed regression test.

The engine runs the bare query (the one pasted), over the case's tables as its
adapter loads them; the cells are paired with the reference's as `replay`
pairs a bare answer (equal rows first, then by position after sorting).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pyarrow as pa

import harness
from harness.cases.case import Case
from harness.core.errors import EngineError, InvalidInput, Unsupported
from harness.core.model import Select, WindowExpr, resolve_window, walk
from harness.core.semantics import SemanticsProfile
from harness.engines.base import Engine
from harness.findings.explain import Explanation, explain
from harness.findings.export_expect import Expectation, case_location, expectation
from harness.findings.export_file import export_case, finding_record
from harness.findings.export_formats import FORMATS
from harness.findings.replay import finding_engines
from harness.findings.replay_diff import Answer, Changed, Diff, diff
from harness.findings.reproduction import reproduction
from harness.judge.cells import rows_of
from harness.judge.runner import profile_named
from harness.sql import write
from harness.sql.writer import write_expr
from reference_impl.explain import CellAt


@dataclass(frozen=True)
class Outcome:
    """An answer (columns and rows) or an error message."""

    answer: Answer | None = None
    error: str | None = None


@dataclass(frozen=True)
class FirstDifference:
    column: str
    answer_row: int  # 1-based, in the reference's answer
    reference: object
    engine: object


@dataclass(frozen=True)
class OtherAnswer:
    engine: str
    version: str
    verdict: str  # "same as the reference", "differs", or the finding record's verdict
    outcome: Outcome


@dataclass(frozen=True)
class RegressionTest:
    format: str
    text: str | None  # None: not exportable, `note` says why
    note: str = ""


@dataclass
class Issue:
    case: Case
    engine: str
    product: str
    client: str
    version: str
    harness_version: str
    title: str
    statements: list[str]
    actual: Outcome
    expected: Outcome
    expected_profile: str | None  # the engine's semantics profile, where it changes the standard's answer
    ordered: bool
    first: FirstDifference | None
    explanation: Explanation | None
    explanation_gap: str  # why no explanation, when there is none
    others_source: str
    others: list[OtherAnswer] = field(default_factory=list)
    tests: list[RegressionTest] = field(default_factory=list)


def build_issue(case: Case, engine: Engine, others: Sequence[Engine] | None = None,
                source: str | None = None) -> Issue:
    """The report of `case` on `engine` (started here; the caller closes it).
    `others`: engines to run for context, when the case has no finding record
    naming other engines (None: the record's only)."""
    dialect = engine.dialect
    try:
        engine.check_tables(case.tables)
    except Unsupported as e:  # a difference its dialect declares: no bug to report
        raise InvalidInput(f"{engine.name}: {e}: not a bug to report", case_location(case)) from None
    statements = reproduction(case, dialect)
    engine.start()
    actual = run_bare(engine, case)
    if actual.error is not None and dialect.says_not_implemented(actual.error):
        raise InvalidInput(f"{engine.name} does not implement this query ({actual.error}): "
                           "not a bug to report", case_location(case))
    expected = expectation(case, dialect.semantics)
    reference = _outcome(expected)
    found = _difference(reference, actual)
    if found is None or found.empty:
        raise InvalidInput(f"{engine.name} gives the reference's answer to this query: nothing to report",
                           case_location(case))
    first = _first_cell(reference, found)
    explained, gap = _explain(case, first, engine)
    source_note, context = _others(case, engine, others)
    return Issue(case, engine.name, engine.product or engine.name, engine.client or engine.name,
                 engine.version(), harness.__version__,
                 title(case, engine, actual, reference, first), statements, actual, reference,
                 _by_design(case, expected, dialect.semantics), expected.ordered, first, explained, gap, source_note, context,
                 _tests(case, engine.name, source))


def _by_design(case: Case, expected: Expectation, profile: SemanticsProfile) -> str | None:
    standard = _outcome(expectation(case, profile_named(case.profile)))
    found = _difference(standard, _outcome(expected))
    return None if found is None or found.empty else profile.name


def run_bare(engine: Engine, case: Case) -> Outcome:
    """The engine's answer to the bare query, over the case's tables."""
    try:
        table = engine.run(case.tables, write(case.query, engine.dialect))
    except EngineError as e:
        return Outcome(error=e.message)
    return Outcome(answer=_answer(table))


def _answer(table: pa.Table) -> Answer:
    rows = rows_of(table)
    return Answer(rows.names, rows.rows)


def _outcome(expected: Expectation) -> Outcome:
    if expected.table is None:
        return Outcome(error=expected.error)
    return Outcome(answer=_answer(expected.table))


def _difference(reference: Outcome, actual: Outcome) -> Diff | None:
    if reference.answer is None or actual.answer is None:
        same = reference.answer is None and actual.answer is None
        return None if same else Diff("reference", "-", problem="one answer is an error")
    return diff(reference.answer, actual.answer, "reference")


def _first_cell(reference: Outcome, found: Diff) -> FirstDifference | None:
    if reference.answer is None or not found.changed:
        return None
    change: Changed = found.changed[0]
    row = next(i for i, r in enumerate(reference.answer.rows) if r is change.reference)
    column = change.columns[0]
    return FirstDifference(reference.answer.columns[column], row + 1, change.reference[column],
                           change.engine[column])


def _explain(case: Case, first: FirstDifference | None, engine: Engine) -> tuple[Explanation | None, str]:
    if first is None:
        return None, "the answers differ in their rows or in an error, not in one cell"
    if not isinstance(case.query, Select):
        return None, "explain takes a SELECT query (not WITH, UNION ALL or VALUES)"
    column = [item.alias or getattr(item.expr, "name", None) for item in case.query.items].index(first.column)
    try:
        return explain(case, CellAt(column, first.answer_row, False), engine), ""
    except InvalidInput as e:
        return None, str(e)


# ---------------------------------------------------------------------------
# The title


def title(case: Case, engine: Engine, actual: Outcome, reference: Outcome, first: FirstDifference | None) -> str:
    """'DuckDB 2.0.1: sum() OVER (ROWS ... EXCLUDE TIES) returns 13 where the SQL standard gives 9'."""
    from harness.findings.show import show

    head = f"{engine.product or engine.name} {engine.version()}: {window_phrase(case, first)}"
    if actual.error is not None:
        return f"{head} fails ({_short(actual.error)}) where the SQL standard gives an answer"
    if reference.error is not None:
        return f"{head} returns rows where the SQL standard raises an error ({_short(reference.error)})"
    if first is not None:
        return f"{head} returns {show(first.engine)} where the SQL standard gives {show(first.reference)}"
    assert actual.answer is not None and reference.answer is not None
    return (f"{head} returns {len(actual.answer.rows)} rows where the SQL standard gives "
            f"{len(reference.answer.rows)}")


def _short(text: str, limit: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else text
    return line if len(line) <= limit else line[: limit - 3] + "..."


def window_phrase(case: Case, first: FirstDifference | None) -> str:
    """The window expression of the differing column (else the query's first):
    `max() FILTER (...) OVER (RANGE BETWEEN UNBOUNDED PRECEDING AND 0 PRECEDING)`."""
    query = case.query
    windows = [n for n in walk(query) if isinstance(n, WindowExpr)]
    if isinstance(query, Select) and first is not None:
        for item in query.items:
            if (item.alias or getattr(item.expr, "name", None)) == first.column:
                windows = [n for n in walk(item.expr) if isinstance(n, WindowExpr)] or windows
    if not windows:
        return "the query"
    w = windows[0]
    named = query.windows if isinstance(query, Select) else ()
    spec = resolve_window(w.window, named, lenient=True)
    call = f"{w.func.name}({'DISTINCT ...' if w.func.distinct else ''})"
    if w.func.filter is not None:
        call += " FILTER (WHERE ...)"
    if w.func.null_treatment is not None:
        call += f" {w.func.null_treatment.value}"
    return f"{call} OVER ({_frame(spec)})"


def _frame(spec: object) -> str:
    frame = getattr(spec, "frame", None)
    if frame is None:
        return "ORDER BY ..." if getattr(spec, "order_by", ()) else ""
    bounds = [f"{write_expr(b.offset)} {b.kind.value}" if b.offset is not None else b.kind.value
              for b in (frame.start, frame.end)]
    text = f"{frame.mode.value} BETWEEN {bounds[0]} AND {bounds[1]}"
    return text + (f" EXCLUDE {frame.exclusion.value}" if frame.exclusion is not None else "")


# ---------------------------------------------------------------------------
# The other engines, and the proposed regression test


def _others(case: Case, engine: Engine, others: Sequence[Engine] | None) -> tuple[str, list[OtherAnswer]]:
    recorded = [n for n in finding_engines(case.finding) if n != engine.name and n != "reference"]
    if recorded:
        return "from the finding record", [_recorded(case.finding, n) for n in recorded]
    if not others:
        return "none run", []
    return "run now, on the same bare query in each engine's dialect", [_run_other(case, e) for e in others]


def _recorded(finding: dict | None, name: str) -> OtherAnswer:
    record = finding_record(finding, name) or {}
    answer = record.get("answer", record.get("rows"))
    rows = answer.get("rows") if isinstance(answer, dict) else answer
    columns = answer.get("columns") if isinstance(answer, dict) else None
    outcome = Outcome(error=str(record.get("detail") or "no answer recorded"))
    if isinstance(rows, list):
        width = len(rows[0]) if rows and isinstance(rows[0], list) else 0
        outcome = Outcome(Answer(list(columns or [f"column{i + 1}" for i in range(width)]),
                                 [tuple(r) for r in rows if isinstance(r, list)]))
    return OtherAnswer(name, str(record.get("version", "")), str(record.get("verdict", "?")), outcome)


def _run_other(case: Case, engine: Engine) -> OtherAnswer:
    from harness.core.errors import Unsupported

    try:
        engine.start()
        outcome = run_bare(engine, case)
    except Unsupported as e:
        return OtherAnswer(engine.name, "", "cannot express the query", Outcome(error=str(e.feature)))
    reference = _outcome(expectation(case, engine.dialect.semantics))
    found = _difference(reference, outcome)
    verdict = "same as the reference" if found is None or found.empty else "differs from the reference"
    return OtherAnswer(engine.product or engine.name, engine.version(), verdict, outcome)


def _tests(case: Case, engine: str, source: str | None) -> list[RegressionTest]:
    out = []
    for fmt in FORMATS.values():
        if fmt.engine != engine:
            continue
        try:
            out.append(RegressionTest(fmt.name, export_case(case, fmt, source=source)))
        except InvalidInput as e:
            out.append(RegressionTest(fmt.name, None, str(e)))
    return out
