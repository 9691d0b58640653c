"""The third opinion: a source's recorded answer beside the reference's.

A case imported from an engine's own test suite carries the answer that suite
recorded (`source_answer`, cases/README.md). `run` compares it with the
reference's answer under the source engine's semantics profile (the answer
the reference says that engine should give) and shows a disagreement beside
the engines' verdicts. It never changes a verdict and is never the expected
rows: a suite's answer may be the very bug the harness looks for.

Rows are compared as the source compares them (`sort`): `rowsort` as a bag
of rows, `valuesort` as a bag of values, `nosort` in order where the query
has a top-level ORDER BY (rows tied on its keys in any order among
themselves), else as a bag. Values are read in the reference's column types
(`harness.judge.source_cells`). Where the reference's answer depends on the
order of tied rows (a window over peers, a LIMIT cutting ties), a
disagreement is checked again by the comparator's search over peer orders
(`compare_expected`), so an answer some order of ties gives agrees.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

import pyarrow as pa

from harness.cases.case import Expected
from harness.core.errors import ReferenceTimeout
from harness.core.semantics import SemanticsProfile
from harness.judge.cells import type_class
from harness.judge.compare import Judgement, Verdict, compare_expected
from harness.judge.instrument import Plan
from harness.judge.oracle import Oracle, search_limit
from harness.judge.source_cells import cell_agrees, shown, sort_token, value_token
from harness.judge.source_values import typed_rows

SHOWN_ROWS = 50  # rows of each answer kept for people (the report, run.json)


class SourceVerdict(Enum):
    AGREES = "agrees"
    DISAGREES = "disagrees"
    SOURCE_ERROR = "source-error-reference-answers"
    REFERENCE_ERROR = "reference-error-source-answers"
    NOT_COMPARABLE = "not-comparable"


@dataclass(frozen=True)
class SourceResult:
    """A case's source answer judged against the reference under the source's profile."""

    case: str
    engine: str  # whose suite recorded the answer
    verdict: SourceVerdict
    detail: str = ""
    origin: str | None = None
    profile: str = ""
    # Both answers for people: the source's as recorded (rows or error), the
    # reference's rows as text (at most SHOWN_ROWS) or why it has none.
    source: Mapping = field(default_factory=dict)
    reference_rows: tuple[tuple[str, ...], ...] | None = None
    reference_error: str | None = None

    @property
    def disagrees(self) -> bool:
        return self.verdict in (SourceVerdict.DISAGREES, SourceVerdict.SOURCE_ERROR,
                                SourceVerdict.REFERENCE_ERROR)

    def as_json(self) -> dict:
        source = {k: self.source.get(k) for k in ("format", "sort", "columns", "types", "rows", "error")
                  if k in self.source}
        if "rows" in source:
            source["rows"] = source["rows"][:SHOWN_ROWS]
        return {"case": self.case, "engine": self.engine, "origin": self.origin, "profile": self.profile,
                "verdict": self.verdict.value, "detail": self.detail, "source": source,
                "reference": ({"error": self.reference_error} if self.reference_rows is None
                              else {"rows": [list(r) for r in self.reference_rows]})}


@dataclass(frozen=True)
class ReferenceSide:
    """The reference under the source's profile: its oracle and the plan it
    evaluated (the instrumented query: hidden columns past `plan.visible`), or
    why it has no rows (`invalid`: refused by definition; `gap`: it cannot say)."""

    plan: Plan
    oracle: Oracle
    profile: SemanticsProfile
    invalid: Exception | None = None
    gap: Exception | None = None


def judge_source(case_id: str, answer: Mapping, ref: ReferenceSide) -> SourceResult:
    """Compare the source's recorded `answer` with the reference's (see the module doc)."""
    made = _Made(case_id, answer, ref)
    if ref.gap is not None:
        return made(SourceVerdict.NOT_COMPARABLE, f"the reference cannot evaluate this query: {ref.gap}")
    if ref.invalid is not None:
        if "error" in answer:
            return made(SourceVerdict.AGREES, f"both refuse the query (reference: {ref.invalid})")
        return made(SourceVerdict.REFERENCE_ERROR,
                    f"the source recorded {len(answer['rows'])} rows; the reference refuses the query "
                    f"under the {ref.profile.name} profile: {ref.invalid}")
    if "error" in answer:
        return made(SourceVerdict.SOURCE_ERROR,
                    f"the source expected an error ({answer['error'] or 'any'}); the reference answers "
                    f"{_reference_table(ref).num_rows} rows")
    verdict, detail = compare_rows(answer, ref)
    return made(verdict, detail)


@dataclass
class _Made:
    case_id: str
    answer: Mapping
    ref: ReferenceSide

    def __call__(self, verdict: SourceVerdict, detail: str) -> SourceResult:
        rows, error = _reference_shown(self.ref)
        return SourceResult(self.case_id, str(self.answer.get("engine")), verdict, detail,
                            self.answer.get("origin"), self.ref.profile.name, self.answer, rows, error)


def _reference_table(ref: ReferenceSide) -> pa.Table:
    """The reference's answer: the user's columns, LIMIT and OFFSET applied where
    the query orders its rows (the oracle evaluates the query without them)."""
    table = ref.oracle.answer()
    plan = ref.plan
    if (plan.limit is not None or plan.offset is not None) and plan.order_keys:
        start = plan.offset or 0
        table = table.slice(start, plan.limit if plan.limit is not None else None)
    return table


def _width(ref: ReferenceSide, table: pa.Table) -> int:
    return ref.plan.visible if ref.plan.visible >= 0 else table.num_columns


def _reference_shown(ref: ReferenceSide) -> tuple[tuple[tuple[str, ...], ...] | None, str | None]:
    if ref.gap is not None or ref.invalid is not None:
        return None, str(ref.gap or ref.invalid)
    table = _reference_table(ref)
    rows = _columns_as_rows(table, _width(ref, table))[:SHOWN_ROWS]
    return tuple(tuple(shown(v) for v in row) for row in rows), None


def _columns_as_rows(table: pa.Table, width: int) -> list[tuple]:
    columns = [table.column(c).to_pylist() for c in range(width)]
    return list(zip(*columns, strict=True)) if columns else [() for _ in range(table.num_rows)]


# -- rows ------------------------------------------------------------------------------


# The first column (of `columns`, else of every one) where a printed row and a
# reference row differ, or None.
Cells = Callable[..., int | None]


def compare_rows(answer: Mapping, ref: ReferenceSide) -> tuple[SourceVerdict, str]:
    table = _reference_table(ref)
    width = _width(ref, table)
    printed: list[list[str | None]] = answer["rows"]
    wrong = _wrong_width(answer, printed, width)
    if wrong:
        return SourceVerdict.DISAGREES, wrong
    expected = _columns_as_rows(table, width)
    differs = _cell_rule(answer, table, width)
    if answer["sort"] == "valuesort":
        detail = _bag_of_values(printed, expected, table, answer)
    elif answer["sort"] == "nosort" and _ordered(ref):
        detail = _in_order(printed, expected, _tie_groups(ref), differs, table)
    elif ref.plan.limit is not None and not ref.plan.order_keys:
        detail = _as_bag(printed, expected, differs, table, part=True)
    else:
        detail = _as_bag(printed, expected, differs, table)
    if detail is None:
        return SourceVerdict.AGREES, ""
    in_order = answer["sort"] != "nosort" or not _ordered(ref) or _keys_in_order(printed, expected, ref, differs)
    if in_order and _tie_dependent(ref) and _some_order_agrees(answer, ref, table, width):
        return SourceVerdict.AGREES, "under another order of tied rows than the reference's own"
    return SourceVerdict.DISAGREES, detail


def _wrong_width(answer: Mapping, printed: list[list[str | None]], width: int) -> str | None:
    types = answer.get("types")
    if types is not None and len(types) != width:
        return f"the source has {len(types)} columns, the reference {width}"
    if answer["sort"] == "valuesort":
        return None  # values, not rows: their count is checked with them
    for i, row in enumerate(printed):
        if len(row) != width:
            return f"source row {i + 1} has {len(row)} values, the reference's rows {width}"
    return None


def _cell_rule(answer: Mapping, table: pa.Table, width: int) -> Cells:
    classes = [type_class(table.schema.field(c).type) for c in range(width)]
    types = answer.get("types") or ()
    rounded = [c < len(types) and types[c] == "R" for c in range(width)]
    fmt = answer["format"]

    def first_difference(row: Sequence[str | None], values: tuple, columns: Sequence[int] | None = None) -> int | None:
        return next((c for c in (range(width) if columns is None else columns)
                     if not cell_agrees(row[c], values[c], classes[c], fmt, rounded[c])), None)

    return first_difference


def _ordered(ref: ReferenceSide) -> bool:
    return bool(getattr(ref.plan.query, "order_by", ()))


def _tie_groups(ref: ReferenceSide) -> list[range] | None:
    """Runs of the reference's rows tied on the ORDER BY keys (None: the keys are not
    columns of the answer, so rows are compared as a bag)."""
    keys = ref.plan.order_keys
    if not keys:
        return None
    table = _reference_table(ref)
    values = [table.column(k.column).to_pylist() for k in keys]
    tokens = [repr(tuple(v[i] for v in values)) for i in range(table.num_rows)]
    groups, start = [], 0
    for i in range(1, len(tokens) + 1):
        if i == len(tokens) or tokens[i] != tokens[start]:
            groups.append(range(start, i))
            start = i
    return groups


def _in_order(printed: list, expected: list[tuple], groups: list[range] | None, differs: Cells,
              table: pa.Table) -> str | None:
    if groups is None or len(printed) != len(expected):
        return _as_bag(printed, expected, differs, table)
    for group in groups:
        found = _match(printed, expected, list(group), list(group), differs, table)
        if found is not None:
            return found + " (in ORDER BY order)"
    return None


def _as_bag(printed: list, expected: list[tuple], differs: Cells, table: pa.Table, part: bool = False) -> str | None:
    """`printed` as a bag of `expected`'s rows (`part`: a sub-bag of them, as many
    as LIMIT and OFFSET take without an ORDER BY to say which)."""
    found = _match(printed, expected, list(range(len(printed))), list(range(len(expected))), differs, table,
                   extra_ok=part)
    if found is None and part and len(printed) > len(expected):
        return f"the source has {len(printed)} rows, the reference's query has {len(expected)} to take from"
    return found


def _match(printed: list, expected: list[tuple], mine: list[int], theirs: list[int], differs: Cells,
           table: pa.Table, extra_ok: bool = False) -> str | None:
    """Pair each printed row with an unpaired reference row it agrees with; the first
    that has none is the difference (shown against the nearest reference row)."""
    free = sorted(theirs, key=lambda e: [value_token(v) for v in expected[e]])
    for i in sorted(mine, key=lambda s: [sort_token(v) for v in printed[s]]):
        pair = next((e for e in free if differs(printed[i], expected[e]) is None), None)
        if pair is None:
            return _unpaired(i, printed[i], [expected[e] for e in free], differs, table)
        free.remove(pair)
    if free and not extra_ok:
        return (f"the reference has {len(free)} more rows than the source, first "
                f"{_shown_row(expected[min(free)])}")
    return None


def _unpaired(i: int, row: Sequence[str | None], left: list[tuple], differs: Cells, table: pa.Table) -> str:
    if not left:
        return f"source row {i + 1} {_printed_row(row)} has no row of the reference's left to match"
    nearest = max(left, key=lambda values: _closeness(row, values, differs))
    c = differs(row, nearest)
    assert c is not None  # it agrees with no row left
    value = "NULL" if row[c] is None else row[c]
    return (f"source row {i + 1}, column {table.column_names[c]}: source {value}, reference "
            f"{shown(nearest[c])} (nearest reference row {_shown_row(nearest)})")


def _closeness(row: Sequence[str | None], values: tuple, differs: Cells) -> int:
    """How close a reference row is to a printed one: its leading columns that agree."""
    c = differs(row, values)
    return len(values) if c is None else c


def _bag_of_values(printed: list, expected: list[tuple], table: pa.Table, answer: Mapping) -> str | None:
    """slt's valuesort: every printed value paired with one of the reference's, any column."""
    fmt = answer["format"]
    width = len(expected[0]) if expected else 0
    classes = [type_class(table.schema.field(c).type) for c in range(width)]
    free = [(c, v) for row in expected for c, v in enumerate(row)]
    values = [v for row in printed for v in row]
    if len(values) != len(free):
        return f"the source has {len(values)} values, the reference {len(free)}"
    for n, v in enumerate(values):
        pair = next((k for k, (c, e) in enumerate(free) if cell_agrees(v, e, classes[c], fmt, True)), None)
        if pair is None:
            return f"source value {n + 1} ({v}) is none of the reference's values left"
        free.pop(pair)
    return None


def _shown_row(values: tuple) -> str:
    return "[" + ", ".join(shown(v) for v in values) + "]"


def _printed_row(row: Sequence[str | None]) -> str:
    return "[" + ", ".join("NULL" if v is None else v for v in row) + "]"


# -- ties ------------------------------------------------------------------------------


def _keys_in_order(printed: list, expected: list[tuple], ref: ReferenceSide, differs: Cells) -> bool:
    """The ORDER BY keys' values, row by row, are the reference's: the order is right
    whatever ties do to other columns (not checkable where a key is not a column)."""
    keys = [k.column for k in ref.plan.order_keys or ()]
    if not keys or max(keys) >= len(expected[0] if expected else ()) or len(printed) != len(expected):
        return False
    return all(differs(row, values, keys) is None for row, values in zip(printed, expected, strict=True))


def _tie_dependent(ref: ReferenceSide) -> bool:
    """Whether another order of tied rows may change the reference's answer."""
    return bool(ref.plan.sensitive_columns) or ref.plan.limit is not None or ref.plan.offset is not None


def _some_order_agrees(answer: Mapping, ref: ReferenceSide, table: pa.Table, width: int) -> bool:
    """The comparator's search over peer orders, on the source's rows read as values."""
    rows = typed_rows(answer, table, width)
    if rows is None or answer["sort"] == "valuesort":
        return False
    expected = Expected(tuple(table.column_names[:width]), rows)
    try:
        with search_limit():
            outcome = compare_expected(expected, Judgement(ref.plan, ref.profile.null_ordering), ref.oracle)
    except ReferenceTimeout:  # the search gave up: the disagreement stands, as found
        return False
    return outcome.verdict is Verdict.MATCH


__all__ = ["ReferenceSide", "SourceResult", "SourceVerdict", "judge_source"]
