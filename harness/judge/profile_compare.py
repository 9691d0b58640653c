"""Profile against profile: a plan-dependent bug shows even where the reference cannot judge.

Two profiles of one engine (`datafusion` and `datafusion[batch_size=1]`) run
one code base under different physical plans. Whatever the reference says
(it may have a gap, or be suspect), their answers must agree on every value
the SQL standard fixes; only values that depend on the order of peers may
differ. So, for each pair of results of one implementation:

- both answered: the user columns that do not depend on peer order must be
  equal, rows paired by the hidden row id when the query has one, else as
  multisets. Equal means the comparator's cell rule (`harness.judge.cells`): NULL
  equals NULL, NaN equals NaN, -0.0 equals 0.0, floats within twice
  `float_tolerance` of the column's scale (each answer may be off by it;
  see `column_scales`);
- one answered and the other failed (an error, crash, timeout, or "not
  implemented"): a disagreement, unless the failure is one its profile
  raises by design (`Profile.tolerated_errors`, e.g. a small memory pool).

A query with LIMIT or OFFSET is skipped: the cut may take different tied
rows, legitimately. So is a query whose every column may depend on peer
order (DISTINCT over an order-sensitive window, a subquery with one).
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

import pyarrow as pa

from harness.core.errors import InvalidInput
from harness.core.functions import FUNCTIONS, is_order_sensitive
from harness.core.model import (
    FuncCall,
    Select,
    SubqueryRef,
    UnionAll,
    WindowExpr,
    children,
    resolve_window,
    walk,
)
from harness.judge.cells import (
    Rows,
    TypeClass,
    cells_equal,
    float_tolerance,
    hashable,
    rows_of,
    type_class,
)
from harness.judge.compare import Verdict
from harness.judge.instrument import Plan
from harness.judge.runner import Result
from reference_impl import Evaluation

# Verdicts of a result that did not answer for a reason of the engine's own.
FAILED = frozenset({Verdict.ERROR, Verdict.CRASH, Verdict.TIMEOUT, Verdict.UNSUPPORTED})


class Kind(Enum):
    VALUES = "values"  # rows paired, a value differs
    ROWS = "rows"  # a row of one answer has no equal in the other
    TYPES = "types"  # a column's logical type class differs
    FAILURE = "failure"  # one failed, the other answered


@dataclass(frozen=True)
class Disagreement:
    case: str
    engines: tuple[str, str]
    kind: Kind
    columns: tuple[str, ...]  # the user columns that differ (empty for a failure)
    detail: str  # the first difference

    def __str__(self) -> str:
        return f"{self.engines[0]} vs {self.engines[1]} ({self.kind.value}): {self.detail}"


def profile_disagreements(
    plan: Plan, results: Sequence[Result], implementations: Mapping[str, str],
    scales: Mapping[int, float] | None = None,
) -> list[Disagreement]:
    """Every disagreement between results of engines with one implementation.

    `implementations`: engine name -> implementation (`Engine.implementation`);
    a result whose engine is not in it (the reference) is not compared.
    `scales`: per user column, the magnitude float differences are judged
    against (`column_scales` gives the reference's); see `_float_scales` for
    the default.
    """
    found = []
    for a, b in sibling_pairs(results, implementations):
        disagreement = _compare_pair(plan, a, b, scales or {})
        if disagreement is not None:
            found.append(disagreement)
    return found


def sibling_pairs(results: Sequence[Result], implementations: Mapping[str, str]) -> list[tuple[Result, Result]]:
    """Each pair of results from one implementation, in the order given."""
    groups: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        if r.engine in implementations:
            groups[implementations[r.engine]].append(r)
    return [pair for group in groups.values() for pair in itertools.combinations(group, 2)]


def column_scales(plan: Plan, evaluation: Evaluation) -> dict[int, float]:
    """`scales` from the reference's evaluation of the same instrumented query:
    per float column, the largest magnitude any of its values was computed from."""
    names = evaluation.table.column_names
    scales = {}
    for c, name in enumerate(names[: plan.visible if plan.visible >= 0 else len(names)]):
        known = [m for m in evaluation.magnitudes.get(name) or () if m is not None and math.isfinite(m)]
        if known:
            scales[c] = max(known)
    return scales


def _compare_pair(plan: Plan, a: Result, b: Result, scales: Mapping[int, float]) -> Disagreement | None:
    if a.answer is None or b.answer is None:
        return _failure(a, b)
    columns = comparable_columns(plan, a.answer.num_columns)
    if columns is None:
        return None
    return _compare_answers(a, b, columns, plan, scales)


def _failure(a: Result, b: Result) -> Disagreement | None:
    """One answered, the other failed by a fault of its own (not by design)."""
    if (a.answer is None) == (b.answer is None):
        return None
    failed, answered = (a, b) if a.answer is None else (b, a)
    if failed.verdict not in FAILED or _tolerated(failed):
        return None
    detail = f"{failed.engine} failed ({failed.verdict.value}: {failed.detail}); {answered.engine} answered"
    return Disagreement(a.case, (a.engine, b.engine), Kind.FAILURE, (), detail)


def _tolerated(result: Result) -> bool:
    from harness.engines.registry import tolerated_errors

    try:
        expected = tolerated_errors(result.engine)
    except InvalidInput:  # not a registry name (a test's own label): nothing is tolerated
        return False
    said = result.facts.message or ""
    return any(message in said for message in expected)


# -- which columns must agree ---------------------------------------------------------


def comparable_columns(plan: Plan, width: int) -> list[int] | None:
    """The user columns two profiles must agree on, or None to skip the query.

    In one SELECT over tables (no subquery, no DISTINCT), a value that depends
    on peer order taints its own column only; elsewhere it may decide which
    rows there are, so any such value anywhere skips the query.
    """
    if plan.limit is not None or plan.offset is not None:
        return None
    user = range(plan.visible if plan.visible >= 0 else width)
    query = plan.query
    if plan.rowid_column is None and not _flat(query):
        return None if _order_dependent(query) else list(user)
    assert isinstance(query, Select)
    return [c for c in user if c not in plan.sensitive_columns
            and not _order_dependent(query.items[c].expr, query)]


def _flat(query: object) -> bool:
    return (isinstance(query, Select) and not query.distinct
            and not any(isinstance(n, SubqueryRef) for n in walk(query.source)))


def _order_dependent(node: object, scope: Select | None = None) -> bool:
    """Whether anything in `node` depends on the order of peers: an
    order-sensitive window, an order-sensitive aggregate (array_agg,
    string_agg), a LIMIT or OFFSET inside. `scope`: the SELECT whose named
    windows `node`'s windows may refer to."""
    if isinstance(node, (Select, UnionAll)) and (node.limit is not None or node.offset is not None):
        return True
    if isinstance(node, Select):
        scope = node
    if isinstance(node, WindowExpr):
        spec = resolve_window(node.window, scope.windows if scope is not None else (), lenient=True)
        if is_order_sensitive(node.func, spec.frame, bool(spec.order_by)):
            return True
    elif isinstance(node, FuncCall) and node.name in FUNCTIONS and FUNCTIONS[node.name].ordered_aggregate:
        return True
    return any(_order_dependent(child, scope) for child in children(node))


# -- comparing two answers -------------------------------------------------------------


@dataclass
class _Pair:
    a: Result
    b: Result
    ra: Rows
    rb: Rows
    columns: list[int]
    scales: dict[int, float]  # per float column, the scale of its tolerance

    def cell_diff(self, c: int, va: object, vb: object) -> bool:
        # Each answer may be off the exact value by the comparator's tolerance,
        # so two answers may be off each other by twice that.
        single = self.ra.single[c] or self.rb.single[c]
        tol = 2 * float_tolerance(_abs(vb), self.scales[c], single) if c in self.scales else 0.0
        return not cells_equal(va, vb, tol)

    def row_diffs(self, x: tuple, y: tuple) -> list[int]:
        return [c for c in self.columns if self.cell_diff(c, x[c], y[c])]

    def show(self, row: tuple) -> tuple:
        return tuple(row[c] for c in self.columns)

    def disagreement(self, kind: Kind, columns: Sequence[int], detail: str) -> Disagreement:
        names = tuple(self.ra.names[c] for c in columns)
        return Disagreement(self.a.case, (self.a.engine, self.b.engine), kind, names, detail)


def _abs(v: object) -> float:
    return abs(v) if isinstance(v, float) and math.isfinite(v) else 0.0


def _compare_answers(a: Result, b: Result, columns: list[int], plan: Plan,
                     scales: Mapping[int, float]) -> Disagreement | None:
    assert a.answer is not None and b.answer is not None
    if a.answer.num_columns != b.answer.num_columns:
        detail = f"{a.engine} returned {a.answer.num_columns} columns, {b.engine} {b.answer.num_columns}"
        return Disagreement(a.case, (a.engine, b.engine), Kind.TYPES, (), detail)
    types = _type_diff(a, b, columns)
    if types is not None:
        return types
    ra, rb = rows_of(a.answer), rows_of(b.answer)
    pair = _Pair(a, b, ra, rb, columns, _float_scales(plan, ra, rb, columns, scales))
    if len(ra.rows) != len(rb.rows):
        detail = f"{a.engine} returned {len(ra.rows)} rows, {b.engine} {len(rb.rows)}"
        return pair.disagreement(Kind.ROWS, (), detail)
    return _by_rowid(pair, plan.rowid_column) if plan.rowid_column is not None else _as_bags(pair)


def _type_diff(a: Result, b: Result, columns: list[int]) -> Disagreement | None:
    assert a.answer is not None and b.answer is not None
    for c in columns:
        ta, tb = a.answer.schema.field(c).type, b.answer.schema.field(c).type
        if type_class(ta) is not type_class(tb) and not (pa.types.is_null(ta) or pa.types.is_null(tb)):
            name = a.answer.column_names[c]
            detail = f"column {name}: {a.engine} {ta}, {b.engine} {tb}"
            return Disagreement(a.case, (a.engine, b.engine), Kind.TYPES, (name,), detail)
    return None


# Aggregates whose rounding error scales with the square of their inputs
# (the reference's magnitude for them is a mean square), which their own value
# does not show: a variance of 1 over values near 1e8 may be off by ~1.
_SQUARED = frozenset({"var_samp", "var_pop", "stddev_samp", "stddev_pop"})


def _float_scales(plan: Plan, ra: Rows, rb: Rows, columns: list[int],
                  scales: Mapping[int, float]) -> dict[int, float]:
    """Per float column, the scale of its tolerance: the given one; else, for
    a variance or standard deviation, infinity (only NULL, NaN and infinities
    are compared); else the column's largest finite absolute value (a frame
    whose values cancel out may exceed that: pass the reference's scales)."""
    out = {}
    for c in columns:
        if TypeClass.FLOAT not in (ra.classes[c], rb.classes[c]):
            continue
        if c in scales:
            out[c] = scales[c]
        elif _computes_squares(plan, c):
            out[c] = math.inf
        else:
            out[c] = max((_abs(r[c]) for r in itertools.chain(ra.rows, rb.rows)), default=0.0)
    return out


def _computes_squares(plan: Plan, column: int) -> bool:
    node = plan.query.items[column].expr if isinstance(plan.query, Select) else plan.query
    return any(isinstance(n, FuncCall) and n.name in _SQUARED for n in walk(node))


def _by_rowid(pair: _Pair, rowid: int) -> Disagreement | None:
    a_rows = {r[rowid]: r for r in pair.ra.rows}
    b_rows = {r[rowid]: r for r in pair.rb.rows}
    if a_rows.keys() != b_rows.keys() or len(a_rows) != len(pair.ra.rows):
        only = sorted(set(a_rows) ^ set(b_rows), key=str)[:3]
        detail = f"the answers hold different input rows (row ids {only} in one only, or repeated)"
        return pair.disagreement(Kind.ROWS, (), detail)
    first, differing = None, set()
    for rid in sorted(a_rows, key=lambda r: (r is None, r)):
        diffs = pair.row_diffs(a_rows[rid], b_rows[rid])
        if diffs and first is None:
            c = diffs[0]
            first = (f"input row {rid + 1 if isinstance(rid, int) else rid}: column {pair.ra.names[c]}: "
                     f"{pair.a.engine} {a_rows[rid][c]!r}, {pair.b.engine} {b_rows[rid][c]!r}")
        differing.update(diffs)
    if first is None:
        return None
    return pair.disagreement(Kind.VALUES, sorted(differing), first)


def _as_bags(pair: _Pair) -> Disagreement | None:
    buckets: dict[tuple, list[tuple]] = defaultdict(list)
    for row in pair.rb.rows:
        buckets[_exact_key(pair, row)].append(row)
    for row in pair.ra.rows:
        bucket = buckets.get(_exact_key(pair, row), [])
        hit = next((i for i, other in enumerate(bucket) if not pair.row_diffs(row, other)), None)
        if hit is None:
            detail = f"{pair.a.engine} row {pair.show(row)} has no equal row in {pair.b.engine}'s answer"
            return pair.disagreement(Kind.ROWS, _column_bag_diffs(pair) or pair.columns, detail)
        bucket.pop(hit)
    return None


def _exact_key(pair: _Pair, row: tuple) -> tuple:
    # Floats are left out of the bucket key: they match within a tolerance.
    return tuple(None if c in pair.scales else hashable(row[c]) for c in pair.columns)


def _column_bag_diffs(pair: _Pair) -> list[int]:
    """The columns whose values differ as multisets (the ones to name)."""
    def bag(rows: list[tuple], c: int) -> list:
        return sorted(repr(hashable(r[c])) for r in rows)

    return [c for c in pair.columns if c not in pair.scales and bag(pair.ra.rows, c) != bag(pair.rb.rows, c)]
