"""The bare query: the case's own query, run beside the instrumented one.

The instrumenter (`harness.judge.instrument`) adds a hidden row id and
row_number witnesses so each answer can be pinned row by row. That makes
another query for an engine's optimizer: a rewrite that fires only on the
user's query (a single window, a top-N filter, LIMIT pushed down) does not
fire on the instrumented one, and its bug would hide. So a share of cases
(and every finding, and every replay) also runs the query as written
(`instrument.bare_plan`), over the tables without the row id.

Without row ids the answer is judged as the comparator judges any query
without a witness: rows as a multiset, in order by the ORDER BY keys that are
output columns (rows tied on them in any order; under LIMIT any of the tied
rows at the cut), and where order-sensitive values differ, some order of
the peers of every window must make the reference produce them; past the
search's budget the verdict is `inconclusive`, never a pass. One more rule
that needs no row id: in a row-level query (one table scanned, no GROUP BY,
LIMIT or peer-dependent QUALIFY), the columns that no order of peers can
change must match as a multiset on their own, so a wrong value there is a
mismatch even where the search over peer orders gives up.

The verdict carries `facts.bare` (True); the runner keeps it beside the
instrumented verdict of the same engine (`Result.bare`), and a bare verdict
that fails where the instrumented one passed is a finding of its own kind
(its signature's verdict reads `bare-mismatch`, `harness.findings.signature`).
"""

from __future__ import annotations

from dataclasses import replace

import pyarrow as pa

from harness.judge.cells import rows_of
from harness.judge.compare import Comparator, Judgement, Outcome, Verdict, _attempt, compare
from harness.judge.oracle import Oracle


def bare_comparator(row_level: bool) -> Comparator:
    """The comparator for a bare answer; `row_level`: the query scans one table
    row by row (the instrumenter would give it a row id)."""

    def judge(actual: pa.Table, judgement: Judgement, oracle: Oracle) -> Outcome:
        outcome = compare(actual, judgement, oracle)
        if outcome.verdict is Verdict.INCONCLUSIVE and row_level:
            outcome = _steady_difference(actual, judgement, oracle) or outcome
        if outcome.verdict is Verdict.MISMATCH and outcome.column is None:
            return _pinned(outcome, actual, judgement, oracle)
        return outcome

    return judge


def _steady_difference(actual: pa.Table, judgement: Judgement, oracle: Oracle) -> Outcome | None:
    """A mismatch in the columns no peer order changes, judged as a multiset alone;
    None when they match, or when which rows are returned may depend on peer order."""
    plan = judgement.plan
    if plan.limit is not None or plan.offset is not None or plan.order_keys is None \
            or any(k.column in plan.sensitive_columns for k in plan.order_keys):
        return None
    width = plan.visible if plan.visible >= 0 else actual.num_columns
    steady = [c for c in range(width) if c not in plan.sensitive_columns]
    if not steady:
        return None
    diff, _ = _attempt(rows_of(actual), judgement, oracle.evaluate(), steady)
    return None if diff is None else diff.outcome(
        after=" (a column no order of tied rows changes)")


def _pinned(outcome: Outcome, actual: pa.Table, judgement: Judgement, oracle: Oracle) -> Outcome:
    """Without row ids a wrong row is not pinned on a column. Name the one column
    whose leaving out makes the rest match (the reference's own peer order), so
    the finding's signature names the expression that differed, as with row ids."""
    plan = judgement.plan
    width = plan.visible if plan.visible >= 0 else actual.num_columns
    if width < 2 or actual.num_columns != oracle.evaluate().table.num_columns:
        return outcome
    rows, evaluation = rows_of(actual), oracle.evaluate()
    keys = {k.column for k in plan.order_keys or ()}
    for c in range(width):
        if c in keys:
            continue  # the rows are grouped by it: without it they would not line up
        if _attempt(rows, judgement, evaluation, [k for k in range(width) if k != c])[0] is None:
            return replace(outcome, column=actual.column_names[c])
    return outcome
