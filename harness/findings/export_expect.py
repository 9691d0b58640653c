"""What the reference expects an exported test to print, and whether that
answer is the only valid one.

The expected rows are the reference's answer (the oracle), never the
engine's, computed under the engine's semantics profile: the documented
by-design choices (default null order, integer division, ...) that the
engine's verdict is judged under too. `ordered` says the query's ORDER BY
fixes the order of every row (else the test sorts the rows); `ambiguous`
says why another order of tied rows would change the answer (a LIMIT cutting
through tied rows, an order-sensitive window function over peers), since
the test could then fail on a correct engine.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import pyarrow as pa

from harness.cases.case import Case
from harness.core.errors import EvaluationError, InvalidInput, ReferenceGap
from harness.core.semantics import SemanticsProfile
from harness.judge.cells import hashable, rows_of
from harness.judge.instrument import Plan, instrument, with_rowid
from harness.judge.oracle import Oracle


@dataclass(frozen=True)
class Expectation:
    table: pa.Table | None  # the answer to the user's query (LIMIT applied)
    error: str | None = None  # why the query is invalid by definition
    ordered: bool = False  # a total ORDER BY fixes the order of every row
    ambiguous: str | None = None  # why another answer would be as valid


def expectation(case: Case, profile: SemanticsProfile) -> Expectation:
    try:
        table = Oracle(case.query, case.tables, profile).evaluate().table
    except EvaluationError as e:
        return Expectation(None, error=str(e))
    except ReferenceGap as e:
        raise InvalidInput(f"the reference cannot evaluate this query: {e}",
                           case_location(case)) from None
    plan = instrument(case.query, case.schemas)
    tables = with_rowid(case.tables) if plan.rowid_column is not None else dict(case.tables)
    oracle = Oracle(plan.unlimited, tables, profile)
    full = oracle.evaluate()
    return Expectation(table, ordered=_total_order(full.table, plan),
                       ambiguous=_peer_dependence(oracle, plan) or _limit_cut(full.table, plan))


def case_location(case: Case) -> str:
    return str(case.path) if case.path else case.id


def _order_tokens(table: pa.Table, plan: Plan) -> list[tuple] | None:
    if not plan.order_keys:
        return None
    return [tuple(hashable(row[k.column]) for k in plan.order_keys) for row in rows_of(table).rows]


def _total_order(table: pa.Table, plan: Plan) -> bool:
    tokens = _order_tokens(table, plan)
    return tokens is not None and len(set(tokens)) == len(tokens)


def _peer_dependence(oracle: Oracle, plan: Plan) -> str | None:
    """A cheap test, not a proof: does reversing or rotating every group of tied
    rows change an order-sensitive window function's answer?"""
    base = oracle.evaluate()
    if not base.peer_groups:
        return None
    for hook in (lambda key, group: range(len(group))[::-1],
                 lambda key, group: [*range(1, len(group)), 0]):
        if _bag(oracle.evaluate(hook).table, plan) != _bag(base.table, plan):
            return ("the answer depends on the order of tied rows (peers) in a window "
                    "with an order-sensitive function")
    return None


def _bag(table: pa.Table, plan: Plan) -> Counter:
    width = plan.visible if plan.visible >= 0 else table.num_columns
    keep = [*range(width), *([plan.rowid_column] if plan.rowid_column is not None else [])]
    return Counter(tuple(loose(row[c]) for c in keep) for row in rows_of(table).rows)


def loose(v: object) -> object:
    # Floats that differ only in the last bits (summation order) count as equal.
    if isinstance(v, float) and math.isfinite(v):
        return float(f"{v:.12g}")
    return hashable(v)


def _limit_cut(table: pa.Table, plan: Plan) -> str | None:
    if plan.limit is None and not plan.offset:
        return None
    lo = plan.offset or 0
    hi = table.num_rows if plan.limit is None else min(lo + plan.limit, table.num_rows)
    if lo == 0 and hi == table.num_rows:
        return None
    tokens = _order_tokens(table, plan)
    if tokens is None:
        return "LIMIT/OFFSET without an ORDER BY that fixes which rows it keeps"
    for cut in (lo, hi):
        if 0 < cut < len(tokens) and tokens[cut - 1] == tokens[cut]:
            return "the LIMIT/OFFSET cut falls between rows tied on the ORDER BY keys"
    return None
