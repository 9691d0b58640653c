"""Reduce a failing case to a small case that still fails.

    shrink(case, holds, *, deadline=None, on_step=None) -> Reduction

`holds(candidate)` says whether the failure (a finding's signature) still
occurs; the campaign supplies it. The shrinker runs the passes of `PASSES` in
turn, each greedily (a candidate that holds becomes the current case at once),
and repeats the whole list until a round accepts nothing: a fixpoint.
`holds` is taken to be deterministic: a candidate that failed is never tried
again (candidates are keyed by SQL, schemas and the tables' bytes). The
passes come cheapest and biggest first: the query's structure, then rows
(which makes every later attempt cheaper), then windows, frames, columns and
values.

Every candidate is a consistent case: the query is rewritten on the model,
`sql` is its canonical text, the tables are Arrow with schemas that follow
dropped columns. Candidates that are invalid by construction (no window
expression left, a table that does not exist, a frame the writer rejects) are
never produced; others that are invalid only by meaning simply fail `holds`.

What "simpler" means, pass by pass, is in each pass's docstring. Every
accepted candidate is strictly simpler by a well-founded measure (fewer
nodes, rows or columns, or a cell or offset strictly lower in
`reduce_data.simplicity`), so the fixpoint is reached.

A case with a `finding` record (a generated case: the reference is its
oracle) has `expected` and `error` cleared, since they would no longer
describe it. A hand-written case keeps them, though after reduction they
describe the original case, not the reduced one: a `holds` for such a case
must judge engines against the reference (e.g. run the candidate with
`expected=None` and a `finding` record), and the reduced case is a lead to
derive new expected rows from, not a finished case file.

The parts: this module drives the search; `reduce_search` holds the current
case and the attempts (and delta debugging); `reduce_query` and `reduce_data`
hold the passes on the query and on the tables.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from harness.cases.case import Case
from harness.core.model import (
    FuncCall,
    Join,
    Select,
    SelectItem,
    SubqueryRef,
    UnionAll,
    WindowExpr,
    With,
)
from harness.findings import reduce_data as data
from harness.findings import reduce_query as query
from harness.findings.reduce_data import MAX_VALUE_TRIES
from harness.findings.reduce_query import on_nodes
from harness.findings.reduce_search import Expired, Holds, OnStep, Pass, Search

__all__ = ["MAX_VALUE_TRIES", "PASSES", "REDUCED", "Holds", "OnStep", "Pass", "Reduction", "shrink"]

REDUCED = " (reduced)"


@dataclass(frozen=True)
class Reduction:
    """The smallest case found, and what it took.

    `steps`: accepted shrinks per pass name (see PASSES); `attempts`: calls of
    `holds`; `timed_out`: the deadline stopped the search before a fixpoint.
    """

    case: Case
    steps: dict[str, int]
    attempts: int
    seconds: float
    timed_out: bool = False


def shrink(case: Case, holds: Holds, *, deadline: float | None = None,
           on_step: OnStep | None = None) -> Reduction:
    """Shrink `case` while `holds` stays true (the caller has seen it hold on `case`).

    `deadline` is a time.monotonic() value; past it the best case so far is
    returned. `on_step(pass_name, case)` is called on each accepted shrink.
    An exception raised by `holds` counts as False. Returns the original case
    object when nothing could be removed.
    """
    t0 = time.monotonic()
    search = Search(_working_copy(case), holds, deadline, on_step)
    timed_out = False
    try:
        if sum(t.num_rows for t in case.tables.values()) > ROWS_FIRST:
            # A batch-scale case: every attempt of a query pass would run on all
            # its rows (the reference over thousands of rows, each time); its rows
            # are shrunk first, so later passes run on what the finding needs.
            search.kind = "rows"
            data.shrink_rows(search)
        while True:
            before = search.accepted
            for name, run in PASSES:
                search.kind = name
                run(search)
            if search.accepted == before:
                break
    except Expired:
        timed_out = True
    best = search.case if search.accepted else case
    return Reduction(best, dict(search.steps), search.attempts, time.monotonic() - t0, timed_out)


def _working_copy(case: Case) -> Case:
    description = case.description.removesuffix(REDUCED) + REDUCED
    if case.finding is not None:
        return replace(case, description=description, expected=None, error=None, path=None)
    return replace(case, description=description, path=None)


# -- the passes, in order --------------------------------------------------------------------

# Past this many rows in its tables a case's rows are shrunk before anything else.
ROWS_FIRST = 2000

PASSES: tuple[tuple[str, Pass], ...] = (
    ("hoist-subquery", query.hoist_subqueries),
    ("union-branch", on_nodes(UnionAll, query.union_variants)),
    ("join-side", on_nodes(Join, query.join_variants)),
    ("inline-subquery", on_nodes(SubqueryRef, query.subquery_variants)),
    ("drop-cte", on_nodes(With, query.with_variants)),
    ("select-items", query.drop_select_items),
    ("item-expressions", on_nodes(SelectItem, query.item_variants)),
    ("where", on_nodes(Select, query.where_variants)),
    ("qualify", on_nodes(Select, query.qualify_variants)),
    ("group-by", on_nodes(Select, query.grouping_variants)),
    ("limit-order-distinct", on_nodes((Select, UnionAll), query.tail_variants)),
    ("rows", data.shrink_rows),
    ("named-windows", on_nodes(Select, query.named_window_variants)),
    ("partition-by", on_nodes(WindowExpr, query.partition_variants)),
    ("window-order-by", on_nodes(WindowExpr, query.order_variants)),
    ("function-clauses", on_nodes(FuncCall, query.call_variants)),
    ("frame", on_nodes(WindowExpr, query.frame_variants)),
    ("frame-bounds", on_nodes(WindowExpr, query.bound_variants)),
    ("tables", data.drop_unused_tables),
    ("columns", data.drop_unused_columns),
    ("values", data.simplify_values),
)
