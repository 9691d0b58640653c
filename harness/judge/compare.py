"""Decide a verdict: is an engine's answer one the SQL standard allows?

The rules (DESIGN.md, "Comparison"), each in one place:
- values: NULL equals NULL, NaN equals NaN, -0.0 equals 0.0 (noted);
  integers, decimals and HUGEINT compare as exact numbers; floats within
  `float_tolerance`, a bound scaled by the magnitude of what was aggregated;
- types: compared by logical class (`TypeClass`); a class difference is a
  type-mismatch;
- rows: matched by the hidden row id when the query carries one, else as a
  multiset (never a set);
- top-level ORDER BY: the engine's rows must be sorted by the keys; rows tied
  on the keys may come in any order, and under LIMIT any of the tied rows at
  the cut may be the ones returned;
- ties inside windows: when order-sensitive window values differ, look for a
  witness order of the peers under which the reference reproduces the
  engine's answer: first the engine's own row_number order, then every
  permutation while their number is within SEARCH_BUDGET. Exhausted without
  a witness: mismatch. Too many to try: inconclusive, which is never a pass.
  Each order-sensitive column may have its own order (the expressions of one
  column share one). In a row-level query without LIMIT, OFFSET or QUALIFY
  the search goes one column within one partition at a time
  (`harness.judge.peer_search`), the budget then counting the orders of one
  partition; other queries are searched whole.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
import time
from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

import pyarrow as pa
import pyarrow.compute  # noqa: F401 (pa.compute)

from harness.cases.case import Expected
from harness.core.dialect import NullOrdering
from harness.core.errors import InvalidCase, ReferenceTimeout
from harness.judge.cells import (  # noqa: F401 (float_tolerance and type_class are part of this API)
    Rows,
    TypeClass,
    cell_tolerance,
    cells_equal,
    float_tolerance,
    hashable,
    rows_of,
    type_class,
    zero_sign_note,
)
from harness.judge.columnar import takeable
from harness.judge.instrument import OrderKey, Plan
from harness.judge.list_orders import list_orders
from harness.judge.oracle import Oracle
from harness.judge.partitions import (
    decide,
    local_key,
    merged_notes,
    order_by_positions,
    order_note,
    restrict,
    rows_of_partitions,
)
from harness.judge.peer_search import SAMPLE_SECONDS, SAMPLES, search_units
from reference_impl import Evaluation, PeerOrder

UNCHECKED_ORDER = "the row order was not checked: an ORDER BY key is no column of the answer"

# Permutations of tied rows the search may try before it gives up (inconclusive).
SEARCH_BUDGET = 5040


class Verdict(Enum):
    MATCH = "match"
    MISMATCH = "mismatch"
    TYPE_MISMATCH = "type-mismatch"
    ERROR = "error"
    UNSUPPORTED = "unsupported"
    CRASH = "crash"
    TIMEOUT = "timeout"
    SUSPECT_REFERENCE = "suspect-reference"
    INCONCLUSIVE = "inconclusive"
    # Identical runs of one query on one engine (and profile) were judged differently.
    NONDETERMINISTIC = "nondeterministic"
    # Error conformance. A query invalid by definition (ntile(0), a frame from
    # UNBOUNDED FOLLOWING) must be refused: refusing it conforms, answering it
    # does not. A valid query refused in the engine's words for a construct
    # its dialect lists in `refusals` (the empty frame ROWS BETWEEN 2
    # FOLLOWING AND 1 FOLLOWING) is wrongly rejected.
    REJECTED_AS_EXPECTED = "rejected-as-expected"
    WRONGLY_ACCEPTED = "wrongly-accepted"
    WRONGLY_REJECTED = "wrongly-rejected"


# The engine did what the definition requires: the reference's answer, or a refusal.
CONFORMING = frozenset({Verdict.MATCH, Verdict.REJECTED_AS_EXPECTED})
PASSING = CONFORMING | {Verdict.UNSUPPORTED}


@dataclass(frozen=True)
class Outcome:
    verdict: Verdict
    detail: str = ""
    notes: tuple[str, ...] = ()
    # The column the shown difference is pinned on (see `_Diff`), else None.
    column: str | None = None
    # The difference itself as shown, without the column's name or the row's
    # context (`engine 0.0, expected nan`), else None: what a baseline entry's
    # `error` pattern reads for a wrong value.
    difference: str | None = None


@dataclass(frozen=True)
class _Diff:
    """Why an answer does not match, for people (`text`), and the column it is
    pinned on: the first column in select order that differs in the row shown."""

    text: str
    column: str | None = None
    difference: str | None = None  # the text itself, unless context was added around it

    @property
    def bare(self) -> str:
        return self.text if self.difference is None else self.difference

    def within(self, before: str, after: str = "") -> _Diff:
        return _Diff(f"{before}{self.text}{after}", self.column, self.bare)

    def outcome(self, verdict: Verdict = Verdict.MISMATCH, after: str = "") -> Outcome:
        return Outcome(verdict, self.text + after, column=self.column, difference=self.bare)


# ---------------------------------------------------------------------------
# Matching one answer against one reference evaluation


@dataclass
class _Matcher:
    actual: Rows
    expected: Rows
    columns: Sequence[int]  # the user's columns (or the subset being judged)
    rowid: int | None
    notes: list[str]

    def row_diff(self, a: int, e: int) -> _Diff | None:
        for c in self.columns:  # in select order: the first that differs is the one pinned
            av, ev = self.actual.rows[a][c], self.expected.rows[e][c]
            if self._differs(a, e, c):
                name = self.actual.names[c]
                return _Diff(f"column {name}: engine {av!r}, expected {ev!r}", name,
                             f"engine {av!r}, expected {ev!r}")
            note = zero_sign_note(av, ev)
            if note and note not in self.notes:
                self.notes.append(note)
        return None

    def match_group(self, actual: list[int], expected: list[int], need: int) -> _Diff | None:
        if len(actual) != need:
            return _Diff(f"{len(actual)} rows where {need} were expected ({self._show(actual, expected)})")
        if self.rowid is not None:
            return self._match_by_rowid(actual, expected)
        return self._match_as_bag(actual, expected)

    def _match_by_rowid(self, actual: list[int], expected: list[int]) -> _Diff | None:
        by_id = {self.expected.rows[e][self.rowid]: e for e in expected}
        seen: set[object] = set()
        for a in actual:
            rid = self.actual.rows[a][self.rowid]
            if rid in seen or rid not in by_id:
                what = "twice" if rid in seen else "but it is not in the expected rows here"
                return _Diff(f"input row {_ordinal(rid)} returned {what}: {self._user(self.actual, a)}")
            seen.add(rid)
            diff = self.row_diff(a, by_id[rid])
            if diff:
                return diff.within(f"input row {_ordinal(rid)}: ", f"; engine row {self._user(self.actual, a)}")
        return None

    def _match_as_bag(self, actual: list[int], expected: list[int]) -> _Diff | None:
        # Expected rows not yet matched, bucketed by their exact (non-float) values,
        # in order (a dict, so a match leaves its bucket at once); and by every value,
        # floats too: an engine row equal to an expected one in every cell is matched
        # without a scan, so a bag of 10^4 rows whose non-float values repeat (ranks,
        # counts) is no quadratic search. Each pairing is still checked by `row_diff`.
        buckets: dict[tuple, dict[int, None]] = defaultdict(dict)
        identical: dict[tuple, deque[int]] = defaultdict(deque)
        for e in expected:
            buckets[self._exact_key(self.expected, e)][e] = None
            identical[self._every_value(self.expected, e)].append(e)
        sizes = {key: len(bucket) for key, bucket in buckets.items()}
        for a in actual:
            key = self._exact_key(self.actual, a)
            bucket = buckets.get(key, {})
            hit = self._identical(a, identical, bucket)
            if hit is None:
                hit = next((e for e in bucket if self.row_diff(a, e) is None), None)
            if hit is None:
                missing = f"engine row {self._user(self.actual, a)} is not among the expected rows"
                pinned = self._pinned(a, list(bucket), sizes.get(key, 0), missing)
                if pinned.column is not None:
                    return pinned
                return self._nearest(a, [e for rest in buckets.values() for e in rest], missing)
            del bucket[hit]
        return None

    def _identical(self, a: int, identical: dict[tuple, deque[int]], bucket: dict[int, None]) -> int | None:
        """The first unmatched expected row holding the engine row's very values."""
        same = identical.get(self._every_value(self.actual, a))
        while same:
            e = same.popleft()
            if e in bucket and self.row_diff(a, e) is None:
                return e
        return None

    def _pinned(self, a: int, bucket: list[int], size: int, missing: str) -> _Diff:
        """A row missing from the bag, pinned on a column when its counterpart is
        certain: exactly one expected row has the row's exact (non-float) values,
        and no other engine row took it. Then only its float columns differ, and
        the first of them is the one pinned (a derived table's columns have no
        row ids to pair rows by, but a unique key such as `id` does as well)."""
        if size != 1 or len(bucket) != 1:
            return _Diff(missing)
        diff = self.row_diff(a, bucket[0])
        assert diff is not None  # it is no hit
        return diff.within(f"{missing}; the one expected row with its other values differs in ",
                           f": {self._user(self.expected, bucket[0])}")

    def _nearest(self, a: int, left: list[int], missing: str) -> _Diff:
        """Without row ids, the difference pinned on one column when the engine
        row is one value away from expected rows not yet matched and every such
        row tells the same difference (one column, one expected value), as row
        ids would have pinned it: `...; the nearest expected rows differ only in
        column w1: engine None, expected 0`. Unpinned when no expected row is
        that close, or the close ones disagree."""
        near = {}
        for e in left:
            differing = [c for c in self.columns if self._differs(a, e, c)]
            if len(differing) == 1:
                near[(differing[0], hashable(self.expected.rows[e][differing[0]]))] = e
        if len(near) != 1:
            return _Diff(missing)
        (c, _), e = next(iter(near.items()))
        name, av, ev = self.actual.names[c], self.actual.rows[a][c], self.expected.rows[e][c]
        bare = f"engine {av!r}, expected {ev!r}"
        return _Diff(f"{missing}; the nearest expected rows differ only in column {name}: {bare}", name, bare)

    def _differs(self, a: int, e: int, c: int) -> bool:
        av, ev = self.actual.rows[a][c], self.expected.rows[e][c]
        single = self.actual.single[c] or self.expected.single[c]
        return not cells_equal(av, ev, cell_tolerance(self.expected, c, e, single))

    def _every_value(self, rows: Rows, r: int) -> tuple:
        return tuple(hashable(rows.rows[r][c]) for c in self.columns)

    def _exact_key(self, rows: Rows, r: int) -> tuple:
        # Floats are left out of the bucket key: they match within a tolerance.
        return tuple(
            None if rows.classes[c] is TypeClass.FLOAT else hashable(rows.rows[r][c])
            for c in self.columns
        )

    def _user(self, rows: Rows, r: int) -> tuple:
        return tuple(rows.rows[r][c] for c in self.columns)

    def _show(self, actual: list[int], expected: list[int]) -> str:
        a = [self._user(self.actual, i) for i in actual[:3]]
        e = [self._user(self.expected, i) for i in expected[:3]]
        return f"engine {a}{'...' if len(actual) > 3 else ''}, expected {e}{'...' if len(expected) > 3 else ''}"


def _ordinal(rowid: object) -> object:
    """Row ids count from 0; people count rows from 1."""
    return rowid + 1 if isinstance(rowid, int) else rowid


# ---------------------------------------------------------------------------
# ORDER BY and LIMIT


def _sort_token(v: object, descending: bool, nulls_first: bool) -> tuple:
    if v is None:
        return (0 if nulls_first else 2,)
    # NaN sorts above every other value.
    rank = (1, 1, 0.0) if isinstance(v, float) and math.isnan(v) else (1, 0, v)
    return rank if not descending else (rank[0], _Desc(rank[1:]))


class _Desc:
    """Inverts the order of what it wraps, for DESC keys."""

    def __init__(self, value: tuple) -> None:
        self.value = value

    def __lt__(self, other: _Desc) -> bool:
        return other.value < self.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and other.value == self.value


def _order_token(row: tuple, keys: Sequence[OrderKey], nulls: NullOrdering) -> tuple:
    return tuple(
        _sort_token(
            row[k.column],
            k.descending,
            nulls.nulls_first(k.descending) if k.nulls_first is None else k.nulls_first,
        )
        for k in keys
    )


def _key_of(row: tuple, keys: Sequence[OrderKey]) -> tuple:
    return tuple(hashable(row[k.column]) for k in keys)


def _check_sorted(rows: Rows, keys: Sequence[OrderKey], nulls: NullOrdering) -> str | None:
    tokens = [_order_token(r, keys, nulls) for r in rows.rows]
    for i in range(1, len(tokens)):
        try:
            if tokens[i] < tokens[i - 1]:
                return f"rows {i} and {i + 1} are out of ORDER BY order"
        except TypeError:  # an engine's interval with months beside day-time ones (`CalendarInterval`)
            return f"rows {i} and {i + 1} hold ORDER BY values that do not compare"
    return None


def _groups(expected: Rows, keys: Sequence[OrderKey]) -> list[list[int]]:
    """The reference's rows in order, grouped into runs tied on the ORDER BY keys."""
    groups: list[list[int]] = []
    last: object = object()
    for i, row in enumerate(expected.rows):
        key = _key_of(row, keys)
        if not groups or key != last:
            groups.append([])
            last = key
        groups[-1].append(i)
    return groups


def _needs(groups: list[list[int]], offset: int | None, limit: int | None) -> list[int]:
    """How many rows of each tied group fall into [offset, offset + limit)."""
    lo = offset or 0
    hi = math.inf if limit is None else lo + limit
    needs, start = [], 0
    for g in groups:
        end = start + len(g)
        needs.append(max(0, min(end, hi) - max(start, lo)))
        start = end
    return needs


# ---------------------------------------------------------------------------
# The verdict


@dataclass(frozen=True)
class Judgement:
    """How to judge one answer: the plan, and the null order the answer used."""

    plan: Plan
    null_ordering: NullOrdering
    check_order: bool = True  # False for a case's expected rows, whose order is documentation


def compare(actual: pa.Table, judgement: Judgement, oracle: Oracle) -> Outcome:
    """Judge an engine's answer to the instrumented query against the reference."""
    plan = judgement.plan
    engine_schema = actual.schema  # as the engine typed it, for the type check's words
    actual = takeable(actual)  # DataFusion's string views: rows Arrow can take and compare
    user = range(plan.visible if plan.visible >= 0 else actual.num_columns)
    quick = oracle.answer()
    if actual.num_columns == quick.num_columns and identical_answer(actual, quick, plan, user):
        return _with_order_note(Outcome(Verdict.MATCH), judgement)
    reference = oracle.evaluate()
    if actual.num_columns != reference.table.num_columns:
        return Outcome(
            Verdict.MISMATCH,
            f"engine returned {actual.num_columns} columns, expected {reference.table.num_columns}",
        )
    mismatched = _type_mismatches(engine_schema, reference.table.schema, user)
    if mismatched:
        return Outcome(Verdict.TYPE_MISMATCH, mismatched)
    if judgement.check_order and plan.order_keys:
        unsorted = _check_sorted(*_key_rows(actual, plan.order_keys), judgement.null_ordering)
        if unsorted:
            return Outcome(Verdict.MISMATCH, unsorted)
    by_partitions = _judge_partitions(actual, judgement, oracle, user)
    if by_partitions is not None:
        return _with_order_note(by_partitions, judgement)
    return _with_order_note(_judge_with_ties(rows_of(actual), judgement, oracle, user), judgement)


def _key_rows(actual: pa.Table, keys: Sequence[OrderKey]) -> tuple[Rows, list[OrderKey]]:
    """The ORDER BY key columns alone as Python rows (what `_check_sorted` reads), and the keys renumbered."""
    columns = list(dict.fromkeys(k.column for k in keys))
    return (rows_of(actual.select(columns)),
            [dataclasses.replace(k, column=columns.index(k.column)) for k in keys])


def _judge_partitions(actual: pa.Table, judgement: Judgement, oracle: Oracle, user: range) -> Outcome | None:
    """The fast path at scale (`harness.judge.partitions`): the partitions Arrow
    decides, and the row-by-row judgement of the others over their rows only;
    None where it does not apply (the row-by-row comparator judges it all)."""
    plan = judgement.plan
    if plan.rowid_column is None or plan.limit is not None or plan.offset is not None:
        return None
    hidden = [k.column for k in plan.order_keys or () if k.column not in user]
    decided = decide(actual, plan, oracle, [*user, *dict.fromkeys(hidden)])
    if decided is None:
        return None
    if decided.undecided is None:
        return Outcome(Verdict.MATCH, notes=order_note(decided.candidates))
    key = local_key(plan, dict(oracle.tables))
    assert key is not None  # partitions were told apart by it
    tables = restrict(dict(oracle.tables), key, decided.undecided)
    rows = rows_of(rows_of_partitions(actual, plan.rowid_column, tables, key))
    outcome = _judge_with_ties(rows, judgement, Oracle(oracle.query, tables, oracle.profile), user)
    if outcome.verdict is not Verdict.MATCH:
        return outcome
    return dataclasses.replace(outcome, notes=merged_notes(outcome.notes, decided.candidates))


def _with_order_note(outcome: Outcome, judgement: Judgement) -> Outcome:
    if judgement.check_order and judgement.plan.order_keys is None and outcome.verdict is Verdict.MATCH:
        # Said, never silent: the rows were judged, their order was not.
        return dataclasses.replace(outcome, notes=(*outcome.notes, UNCHECKED_ORDER))
    return outcome


def identical_answer(actual: pa.Table, reference: pa.Table, plan: Plan, user: Sequence[int]) -> bool:
    """The fast path: the answer is the reference's own, bit for bit, in every
    user column, the row id and the hidden ORDER BY key columns: then it
    matches, with nothing to note, and no row needs to become Python values.

    Rows are aligned as the reference gave them, or by the row id where the
    query has one and no ORDER BY (with one, the answer's order is its own
    to check: only the reference's very order is taken as read). Under LIMIT
    or OFFSET (the reference is evaluated without them) the answer must be
    the reference's rows from the offset on, in its order, and the ORDER BY
    keys columns of the answer. Types must be the reference's, but for
    integers of another width or sign holding the same values (one class to
    the full comparison). A float is compared by its bits, so -0.0 beside 0.0
    (equal, but noted) and any NaN go the slow way. False says nothing:
    `compare` then judges the answer in full."""
    if plan.limit is not None or plan.offset is not None:
        if not plan.order_keys:
            return False
        start = plan.offset or 0
        end = reference.num_rows if plan.limit is None else min(reference.num_rows, start + plan.limit)
        reference = reference.slice(start, max(0, end - start))
    if actual.num_rows != reference.num_rows:
        return False
    # The user's columns, the row id, and the ORDER BY keys the instrumenter added
    # as hidden columns: the full comparison checks the order and groups rows by them.
    keys = [k.column for k in plan.order_keys or () if k.column not in user]
    columns = [*user, *([plan.rowid_column] if plan.rowid_column is not None else []), *keys]
    if plan.rowid_column is not None and not plan.order_keys and actual.num_rows > 1:
        actual = actual.take(pa.compute.sort_indices(actual.column(plan.rowid_column)))
        reference = reference.take(pa.compute.sort_indices(reference.column(plan.rowid_column)))
    return all(_same_bits(actual.column(c), reference.column(c)) for c in columns)


def _same_bits(a: pa.ChunkedArray, b: pa.ChunkedArray) -> bool:
    a, b = a.combine_chunks(), b.combine_chunks()
    if a.type != b.type:
        if not (pa.types.is_integer(a.type) and pa.types.is_integer(b.type)):
            return False
        try:
            a = a.cast(b.type)  # safe: a value the reference's type cannot hold raises
        except (pa.ArrowInvalid, OverflowError):
            return False
    if pa.types.is_floating(a.type):
        width = {16: pa.int16(), 32: pa.int32(), 64: pa.int64()}[a.type.bit_width]
        a, b = a.view(width), b.view(width)
    return a.equals(b)


def compare_expected(expected: Expected, judgement: Judgement, oracle: Oracle) -> Outcome:
    """Judge the reference itself against a case's hand-derived rows."""
    reference = oracle.evaluate().table
    user = range(len(expected.columns))
    # Not instrumented (visible -1): every column of the reference's answer is the user's.
    width = judgement.plan.visible if judgement.plan.visible >= 0 else reference.num_columns
    if width != len(expected.columns):
        return Outcome(
            Verdict.MISMATCH,
            f"the case expects {len(expected.columns)} columns, the query has {width}",
        )
    try:
        table = _expected_table(expected, reference, user)
    except InvalidCase as e:
        return Outcome(Verdict.MISMATCH, f"the case's rows do not fit the reference's types: {e}")
    keys = judgement.plan.order_keys or ()
    visible_keys = keys if all(k.column < len(user) for k in keys) else ()
    plan = Plan(
        judgement.plan.query,
        visible=len(user),
        order_keys=visible_keys,
        limit=judgement.plan.limit,
        offset=judgement.plan.offset,
        sensitive_columns=judgement.plan.sensitive_columns,
    )
    return _judge_with_ties(rows_of(table), Judgement(plan, judgement.null_ordering, False), oracle, user)


def _expected_table(expected: Expected, reference: pa.Table, user: range) -> pa.Table:
    from harness.cases.case import coerce_value
    from harness.core.types import from_arrow

    arrays = []
    for c in user:
        t = reference.schema.field(c).type
        logical = None if pa.types.is_null(t) else from_arrow(t)
        values = [
            row[c] if logical is None else coerce_value(row[c], logical, f"expected row {i + 1}")
            for i, row in enumerate(expected.rows)
        ]
        arrays.append(pa.array(values, type=t))
    return pa.Table.from_arrays(arrays, names=[f"c{c}" for c in user])


def _type_mismatches(actual: pa.Schema, expected: pa.Schema, columns: range) -> str:
    problems = []
    for c in columns:
        a, e = type_class(actual.field(c).type), type_class(expected.field(c).type)
        if a is not e and TypeClass.NULL not in (a, e):
            problems.append(
                f"column {c + 1} ({expected.field(c).name}): engine {actual.field(c).type} "
                f"({a.value}), reference {expected.field(c).type} ({e.value})"
            )
    return "; ".join(problems)


def _attempt(
    rows: Rows, judgement: Judgement, evaluation: Evaluation, user: Sequence[int]
) -> tuple[_Diff | None, list[str]]:
    """One try: does the answer match this evaluation of the reference?"""
    return _attempt_rows(rows, judgement, rows_of(evaluation.table, evaluation.magnitudes), user)


def _attempt_rows(
    rows: Rows, judgement: Judgement, expected: Rows, user: Sequence[int]
) -> tuple[str | None, list[str]]:
    """`_attempt` on the evaluation's rows, read once for every subset of columns tried."""
    plan = judgement.plan
    matcher = _Matcher(rows, expected, user, plan.rowid_column, [])
    keys = plan.order_keys or ()
    groups = _groups(expected, keys)
    needs = _needs(groups, plan.offset, plan.limit)
    by_key: dict[tuple, list[int]] = defaultdict(list)
    for a, row in enumerate(rows.rows):
        by_key[_key_of(row, keys)].append(a)
    for group, need in zip(groups, needs, strict=True):
        key = _key_of(expected.rows[group[0]], keys)
        actual = by_key.pop(key, [])
        diff = matcher.match_group(actual, group, need)
        if diff and len(actual) != need:
            return _moved(diff, matcher, plan, len(rows.rows), actual, group, need), matcher.notes
        if diff:
            return _pinned(diff, matcher, plan, len(rows.rows)), matcher.notes
    if by_key:
        extra = next(iter(by_key.values()))[0]
        return _Diff(f"engine row {matcher._user(rows, extra)} is not in the expected result"), matcher.notes
    return None, matcher.notes


def _moved(diff: _Diff, matcher: _Matcher, plan: Plan, count: int, actual: list[int], group: list[int],
           need: int) -> _Diff:
    """`diff`, an ORDER BY group of `actual` rows where `need` of `group` were expected, said as
    what it is. When the answer has every expected row (no LIMIT or OFFSET, as many
    rows), no row is missing: a value an ORDER BY reads differs and moved its row
    out of its group. Then the text names it a value difference in an ORDER BY
    column (which column, which row, when the whole answer matched at once pins
    it), never a row count."""
    everything = len(matcher.expected.rows)
    if plan.limit is not None or plan.offset is not None or count != everything:
        return diff  # rows may be missing or extra: the count is the difference
    keys = plan.order_keys or ()
    names = [matcher.expected.names[k.column] if k.column in matcher.columns else f"#{k.column + 1}"
             for k in keys]
    order_by = ", ".join(names)
    whole = matcher.match_group(list(range(count)), list(range(everything)), everything)
    if whole is not None and whole.column is not None:
        where = "ORDER BY column" if whole.column in names else "column"
        return whole.within(f"a value difference in {where} {whole.column} (ORDER BY {order_by}; "
                            "it moves its row in the order), not in the row count: ")
    values = tuple(matcher.expected.rows[group[0]][k.column] for k in keys)
    return _Diff(f"a value difference in the ORDER BY columns ({order_by}), not in the row count "
                 f"(the answer has all {everything} rows): {len(actual)} rows hold the ORDER BY values "
                 f"{values!r} where {need} should ({matcher._show(actual, group)})")


def _pinned(diff: _Diff, matcher: _Matcher, plan: Plan, count: int) -> _Diff:
    """A difference pinned on no column, when the answer has every expected row
    (no LIMIT or OFFSET, as many rows): the whole answer matched at once, which
    pins a wrong value that moved its row out of its ORDER BY group (`0 rows
    where 1 were expected` because an ORDER BY column is NULL where 0 was
    expected). The verdict is the same; the facts name the column."""
    everything = len(matcher.expected.rows)
    if diff.column is not None or plan.limit is not None or plan.offset is not None or count != everything:
        return diff
    whole = matcher.match_group(list(range(count)), list(range(everything)), everything)
    if whole is None or whole.column is None:
        return diff
    return whole.within(f"{diff.text}; over the whole answer: ")


def _judge_with_ties(rows: Rows, judgement: Judgement, oracle: Oracle, user: range) -> Outcome:
    evaluation = oracle.evaluate()
    first_diff, notes = _attempt(rows, judgement, evaluation, user)
    if first_diff is None:
        return Outcome(Verdict.MATCH, notes=tuple(notes))
    if not evaluation.peer_groups:
        return first_diff.outcome()
    by_units = _judge_by_units(rows, judgement, oracle, user, evaluation, first_diff)
    if by_units is not None:
        return by_units
    # Some engines order tied rows differently for each expression over the same
    # window (SQLite does); the standard leaves peer order to the implementation,
    # so each order-sensitive column may also find a witness order of its own.
    sensitive = [c for c in user if c in judgement.plan.sensitive_columns]
    steady = [c for c in user if c not in judgement.plan.sensitive_columns]
    pending = set(sensitive)
    for candidate in itertools.chain([evaluation], _candidates(rows, judgement.plan, oracle, evaluation)):
        expected = rows_of(candidate.table, candidate.magnitudes)
        diff, notes = _attempt_rows(rows, judgement, expected, user)
        if diff is None and candidate is not evaluation:
            return Outcome(Verdict.MATCH, notes=tuple(notes + ["matched under another order of tied rows"]))
        if len(sensitive) < 2:
            continue  # one order-sensitive column: the whole answer, tried above, is its test
        pending = {c for c in pending if _attempt_rows(rows, judgement, expected, [*steady, c])[0]}
        if not pending:
            note = "each order-sensitive expression matched under its own order of tied rows"
            return Outcome(Verdict.MATCH, notes=(note,))
    # A column that does not depend on peer order and still differs is the
    # clearest report (and the one a finding's signature should name). Only
    # in a row-level query: over a subquery, an outer column may still depend
    # on the order of the inner query's peers.
    # Rows tied at a LIMIT cut, or grouped by an ORDER BY key that itself
    # depends on peer order, would make that column differ for no fault.
    plan = judgement.plan
    independent = (
        plan.rowid_column is not None and plan.limit is None and plan.offset is None
        and plan.order_keys is not None
        and not any(k.column in plan.sensitive_columns for k in plan.order_keys)
    )
    steady_diff = _attempt(rows, judgement, evaluation, steady)[0] if steady and independent else None
    if steady_diff is not None:
        return steady_diff.outcome()
    if _permutation_count(evaluation) > SEARCH_BUDGET:
        return first_diff.outcome(
            Verdict.INCONCLUSIVE, f"; too many orders of tied rows to search (more than {SEARCH_BUDGET})")
    return first_diff.outcome(after=" (under every order of tied rows)")


def _judge_by_units(rows: Rows, judgement: Judgement, oracle: Oracle, user: range,
                    evaluation: Evaluation, first_diff: _Diff) -> Outcome | None:
    """The search one column within one partition at a time (`peer_search`), where
    the query splits so; None where it does not."""
    plan = judgement.plan
    witness = _rn_order(rows, plan) if plan.witness_columns and plan.rowid_column is not None else None
    found = search_units(rows, plan, oracle, user, witness, SEARCH_BUDGET)
    if found is None:
        return None
    if found.verdict == "match":
        return Outcome(Verdict.MATCH, notes=found.notes)
    if found.cell is None:  # the rows themselves differ
        assert found.verdict == "mismatch"
        return first_diff.outcome(after=" (under every order of tied rows)")
    expected = rows_of(evaluation.table, evaluation.magnitudes)
    matcher = _Matcher(rows, expected, [found.cell.column], plan.rowid_column, [])
    a, e = found.cell.actual_row, found.cell.expected_row
    rid = rows.rows[a][plan.rowid_column]
    diff = matcher.row_diff(a, e) or first_diff
    if diff is not first_diff:
        user_row = tuple(rows.rows[a][c] for c in user)
        diff = diff.within(f"input row {_ordinal(rid)}: ", f"; engine row {user_row}")
    if found.verdict == "mismatch":
        return diff.outcome(after=" (under every order of tied rows)")
    return diff.outcome(Verdict.INCONCLUSIVE,
                        f"; too many orders of tied rows to search in one partition (more than {SEARCH_BUDGET})")


def _candidates(rows: Rows, plan: Plan, oracle: Oracle, evaluation: Evaluation):
    """The reference under each peer order to try: the engine's own row_number
    order, then every permutation of the peer groups (kept by the oracle), or
    when they are too many the orders the engine's own lists name
    (`list_orders`) and SAMPLES random ones."""
    if plan.witness_columns and plan.rowid_column is not None:
        yield oracle.evaluate(_rn_order(rows, plan))
    sizes = [size for _, size in evaluation.peer_groups]
    if _permutation_count(evaluation) > SEARCH_BUDGET:
        for named in list_orders(rows, plan.query):  # the engine's lists name its order
            try:
                yield oracle.evaluate(named)
            except ReferenceTimeout:
                return
    if _permutation_count(evaluation) <= SEARCH_BUDGET:
        for perms in itertools.product(*(itertools.permutations(range(s)) for s in sizes)):
            yield oracle.evaluate_permuted(perms)
        return
    # Too many to try them all: random orders (seeded, as in `peer_search`),
    # any of which that reproduces the answer is a witness.
    rng = random.Random(0)
    stop = time.monotonic() + SAMPLE_SECONDS
    for _ in range(SAMPLES):
        if time.monotonic() > stop:
            return
        try:
            yield oracle.evaluate_permuted(tuple(tuple(rng.sample(range(s), s)) for s in sizes))
        except ReferenceTimeout:
            return  # the search's time is up: undecided


def _permutation_count(evaluation: Evaluation) -> int:
    """Orders of the tied rows, counted only up to just past the budget (a
    group of thousands of peers has a factorial too large to print)."""
    count = 1
    for _, size in evaluation.peer_groups:
        for k in range(2, size + 1):
            count *= k
            if count > SEARCH_BUDGET:
                return SEARCH_BUDGET + 1
    return count


def _rn_order(rows: Rows, plan: Plan) -> PeerOrder:
    """Order each peer group as the engine's row_number over the same window did."""
    positions: dict[object, dict[object, int]] = {}
    for key, column in plan.witness_columns:
        positions[key] = {r[plan.rowid_column]: r[column] for r in rows.rows}
    return order_by_positions(positions)


Comparator = Callable[[pa.Table, Judgement, Oracle], Outcome]
