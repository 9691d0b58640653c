"""The reference against real engines on generated queries (differential testing).

Each seed gives one case (`harness.generate.cases.generate_case`): random
tables and a window query that do not depend on the engine. The case is
judged exactly as the corpus is, by `harness.judge.runner.run_case` (the
instrumented query, the reference under the engine's semantics profile, the
tie-aware comparator); a query the engine's dialect cannot write is
`unsupported` (counted by feature). A verdict that does not pass must be
explained, else the test fails and prints the seed, the SQL and the tables:

- a known issue (`KNOWN_ISSUES`: an upstream bug, a by-design difference or
  a harness bug awaiting its fix, with its reason): either its symptom shows
  in the verdict and it applies to a window expression anywhere in the
  query, or the expressions it names are the ones that fail and the query
  without them (or with its workaround) passes;
- peer order: the failing column depends on the order of tied rows, and every
  window expression passes on its own. The standard lets each window order its
  peers as it likes; an engine that orders them differently for two windows
  with the same PARTITION BY and ORDER BY (SQLite does, and DuckDB for
  windows without ORDER BY) defeats the comparator's witness order (the
  engine's row_number over the same window), which assumes one order per
  (PARTITION BY, ORDER BY), so the combined query is inconclusive or worse.
  Expressions over one bare named window (`OVER w`, the same window) are
  checked together.

Environment: WH_DIFF_QUERIES (default 200) seeds per engine, "S/0" .. "S/n-1"
with S = WH_DIFF_SEED (default 0). Replay one with `generate_case("S/i")`.
The summary is printed (`-s`).
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from harness.cases.case import Case
from harness.core.errors import Unsupported
from harness.core.functions import FUNCTIONS
from harness.core.model import (
    BoundKind,
    Column,
    Exclusion,
    Frame,
    FrameMode,
    Literal,
    NullsOrder,
    Select,
    SortKey,
    WindowExpr,
    WindowSpec,
    resolve_window,
    walk,
    window_exprs,
)
from harness.core.types import TypeKind
from harness.engines.base import Engine
from harness.engines.registry import get_dialect
from harness.generate.cases import GeneratedCase, generate_case
from harness.generate.schemas import ID
from harness.judge.compare import PASSING, Verdict
from harness.judge.instrument import instrument
from harness.judge.runner import Result, run_case
from harness.sql import write

QUERIES = int(os.environ.get("WH_DIFF_QUERIES", "200"))
CAMPAIGN_SEED = os.environ.get("WH_DIFF_SEED", "0")
ENGINES = ["duckdb", "sqlite"]
PEER_ORDER = "peer order differs between windows (by design)"


# -- known issues -------------------------------------------------------------------


@dataclass(frozen=True)
class KnownIssue:
    """A reviewed explanation of disagreements on generated queries.

    `applies` picks the window expressions it is about (by their shape and the
    data). It explains a failing expression only when confirmed: `symptom` (a
    regex) matches the verdict's detail, and/or the query with `workaround`
    applied to the expression matches the reference. An issue with a symptom
    (or `whole_query`) also explains a whole failing query when it applies to
    any window expression in it, subqueries included.
    """

    engine: str | None  # None: any engine (a gap of the reference, say)
    kind: str  # upstream-bug | by-design | harness-bug
    reason: str
    applies: Callable[[WindowExpr, Case], bool]
    symptom: str | None = None
    workaround: Callable[[WindowExpr, Case], WindowExpr] | None = None
    link: str | None = None
    # Explains any failing verdict of a query it applies to (for issues that
    # spoil the whole query, such as a literal spelled wrongly).
    whole_query: bool = False

    @property
    def label(self) -> str:
        return f"{self.kind}: {self.reason}"


def _select_of(expr: WindowExpr, case: Case) -> Select:
    """The SELECT (the outer query or a subquery) whose window expression `expr` is."""
    for node in walk(case.query):
        if isinstance(node, Select) and any(w is expr or w == expr for w in window_exprs(node)):
            return node
    raise AssertionError(f"{expr} is not in the case's query")


def _resolved(expr: WindowExpr, case: Case) -> WindowSpec:
    return resolve_window(expr.window, _select_of(expr, case).windows)


def _frame(expr: WindowExpr, case: Case) -> Frame | None:
    return _resolved(expr, case).frame


def _sliding(expr: WindowExpr, case: Case) -> bool:
    """An explicit frame that does not start at UNBOUNDED PRECEDING and has no
    EXCLUDE: SQLite then updates the aggregate by removing rows (xInverse)."""
    frame = _frame(expr, case)
    return (frame is not None and frame.start.kind is not BoundKind.UNBOUNDED_PRECEDING
            and frame.exclusion is None)


def _argument_values(expr: WindowExpr, case: Case) -> list[object]:
    """The values of the column the expression's first argument names, in the
    table it qualifies (else the first that has it); [] for anything else."""
    arg = expr.func.args[0] if expr.func.args else None
    if not isinstance(arg, Column):
        return []
    tables = [case.tables[arg.table]] if arg.table in case.tables else list(case.tables.values())
    table = next((t for t in tables if arg.name in t.column_names), None)
    return [] if table is None else table.column(arg.name).to_pylist()


def _has_non_finite(values: list[object]) -> bool:
    return any(isinstance(v, float) and not math.isfinite(v) for v in values)


def _has_huge(values: list[object]) -> bool:
    return any(isinstance(v, float) and math.isfinite(v) and abs(v) > 1e150 for v in values)


def _has_scale_38_literal(case: Case) -> bool:
    return any(isinstance(n, Literal) and n.type is not None and n.type.kind is TypeKind.DECIMAL
               and n.type.scale == 38 for n in walk(case.query))


def _is_wide_decimal(expr: WindowExpr, case: Case) -> bool:
    arg = expr.func.args[0] if expr.func.args else None
    if not isinstance(arg, Column):
        return False
    schemas = [s for s in case.schemas if arg.table in (None, s.name)]
    types = [c.type for s in schemas for c in s.columns if c.name == arg.name]
    return any(t.kind is TypeKind.DECIMAL and t.precision == 38 for t in types)


def _exclude_no_others(expr: WindowExpr, case: Case) -> WindowExpr:
    """The same window, written inline, with EXCLUDE NO OTHERS (which by the
    standard changes nothing)."""
    window = _resolved(expr, case)
    assert window.frame is not None
    frame = dataclasses.replace(window.frame, exclusion=Exclusion.NO_OTHERS)
    return dataclasses.replace(expr, window=dataclasses.replace(window, frame=frame))


def _ordered_by_id_too(expr: WindowExpr, case: Case) -> WindowExpr:
    """The aggregate with `id` as its last ORDER BY key, which breaks its ties."""
    order_by = (*expr.func.order_by, SortKey(Column(ID), False, NullsOrder.LAST))
    return dataclasses.replace(expr, func=dataclasses.replace(expr.func, order_by=order_by))


def _range_offset(expr: WindowExpr, case: Case) -> bool:
    frame = _frame(expr, case)
    return frame is not None and frame.mode is FrameMode.RANGE and any(
        b.offset is not None for b in (frame.start, frame.end))


KNOWN_ISSUES = [
    KnownIssue(
        "duckdb", "by-design",
        "a RANGE offset frame's bound K + offset is computed in the key's type, and raises past "
        "BIGINT's range (baseline: duckdb-range-bound-overflows-key-type)",
        _range_offset, symptom="Overflow in (addition|subtraction) of ",
    ),
    KnownIssue(
        "duckdb", "upstream-bug",
        "corr and regr_slope are NaN where the standard gives NULL (no spread in the values; "
        "baseline: duckdb-corr-slope-nan-at-zero-variance)",
        # Over a derived table no column is named: the engine row shows the nan.
        lambda e, c: e.func.name in ("corr", "regr_slope"),
        symptom=r"engine nan, expected None|engine row \(.*\bnan\b.*\) is not among",
    ),
    KnownIssue(
        "sqlite", "upstream-bug",
        "min/max ignore FILTER over a frame that does not start at UNBOUNDED PRECEDING and has "
        "no EXCLUDE (SQLite 3.40.1; EXCLUDE NO OTHERS, which changes nothing, avoids it)",
        lambda e, c: e.func.name in ("min", "max") and e.func.filter is not None and _sliding(e, c),
        workaround=_exclude_no_others,
        link="https://sqlite.work/filter-clause-ignored-in-sqlite-window-functions-with-min-max-"
             "and-non-unbounded-frames",
    ),
    KnownIssue(
        "sqlite", "upstream-bug",
        "sum/avg over a sliding frame return NULL once an infinity has entered the running sum "
        "(SQLite 3.40.1 subtracts rows that leave the frame: inf - inf is NaN, stored as NULL; "
        "EXCLUDE NO OTHERS, which changes nothing, avoids it)",
        lambda e, c: e.func.name in ("sum", "avg") and _sliding(e, c)
        and _has_non_finite(_argument_values(e, c)),
        workaround=_exclude_no_others,
    ),
    KnownIssue(
        "sqlite", "upstream-bug",
        "group_concat (string_agg) OVER a window returns NULL instead of '' when every value it "
        "concatenates is '' (SQLite 3.40.1; the plain aggregate returns '')",
        lambda e, c: e.func.name == "string_agg",
        symptom=r"engine None, expected ''",
    ),
    KnownIssue(
        "duckdb", "upstream-bug",
        "var_pop/stddev_pop of a single non-finite value (inf, -inf, NaN) is 0.0 instead of NaN "
        "(DuckDB 2.0.0; PostgreSQL and the definition give NaN)",
        lambda e, c: e.func.name in ("var_pop", "stddev_pop") and _has_non_finite(_argument_values(e, c)),
        # (as the comparator words it by row id, or in a bag of rows)
        symptom=r"engine 0\.0, expected nan|engine row \(.*\b0\.0\b.*\) is not among the expected rows",
        link="https://github.com/duckdb/duckdb/issues/15520",
    ),
    KnownIssue(
        "duckdb", "harness-bug",
        "DuckDB reads a numeric literal with 38 digits after the point as a DOUBLE, so "
        "CAST(0.79000000000000000000000000000000000000 AS DECIMAL(38,38)) is not 0.79 (or fails "
        "to cast at all); the DuckDB dialect should spell DECIMAL literals as CAST('...' AS ...)",
        lambda e, c: _has_scale_38_literal(c),
        whole_query=True,
    ),
    KnownIssue(
        "duckdb", "by-design",
        "avg/sum over DECIMAL(38,s) values near the type's limits overflow DuckDB's 128-bit "
        "accumulator (an error where the exact answer fits the result type)",
        lambda e, c: e.func.name in ("avg", "sum") and _is_wide_decimal(e, c),
        symptom=r"Overflow in HUGEINT",
    ),
    KnownIssue(
        None, "by-design",
        "var/stddev of doubles near 1e300 overflow the squares an engine sums in doubles "
        "(inf where the exact result is finite)",
        lambda e, c: e.func.name.startswith(("var", "stddev")) and _has_huge(_argument_values(e, c)),
        symptom=r"engine inf",
    ),
    *(KnownIssue(
        name, "by-design",
        f"{name} accepts a GROUPS frame without ORDER BY (every row one peer group), which the "
        f"standard's syntax rules refuse (baseline: {name}-groups-without-order-by)",
        lambda e, c: e.window.frame is not None and e.window.frame.mode.value == "GROUPS",
        symptom=r"a GROUPS frame needs an ORDER BY",
    ) for name in ("duckdb", "sqlite")),
    KnownIssue(
        None, "by-design",
        "string_agg/array_agg elements tied on the aggregate's own ORDER BY (or all of them, "
        "without one) may come in any order; the comparator's witness search permutes only a "
        "window's peers (confirmed: with `id` as the last aggregate ORDER BY key the engine matches)",
        lambda e, c: FUNCTIONS[e.func.name].ordered_aggregate,
        workaround=_ordered_by_id_too,
    ),
]


# -- judging and explaining ----------------------------------------------------------------


def judge(case: Case, engine: Engine) -> Result:
    return run_case(case, [engine])[0]


def _window_items(query: Select) -> list[int]:
    return [i for i, item in enumerate(query.items) if isinstance(item.expr, WindowExpr)]


def _only(case: Case, keep: list[int], rewrite: dict[int, WindowExpr] | None = None) -> Case:
    """The case with only the window expressions at `keep` (maybe rewritten), and
    without the ORDER BY keys that name the others."""
    query = case.query
    assert isinstance(query, Select)
    windows = _window_items(query)
    items = tuple(dataclasses.replace(item, expr=(rewrite or {}).get(i, item.expr))
                  for i, item in enumerate(query.items) if i in keep or i not in windows)
    dropped = {Column(query.items[i].alias) for i in windows if i not in keep and query.items[i].alias}
    order_by = tuple(k for k in query.order_by if k.expr not in dropped)
    smaller = dataclasses.replace(query, items=items, order_by=order_by)
    return dataclasses.replace(case, query=smaller, sql=write(smaller))


def _groups(query: Select) -> list[list[int]]:
    """Window expressions to check apart: one each, but those over one bare
    named window (`OVER w`, the same window by the standard) together."""
    groups: dict[object, list[int]] = {}
    for i in _window_items(query):
        window = query.items[i].expr.window  # type: ignore[union-attr]
        key = window.base if window == WindowSpec(base=window.base) and window.base else i
        groups.setdefault(key, []).append(i)
    return list(groups.values())


def _confirmed(issue: KnownIssue, case: Case, group: list[int], alone: Result, engine: Engine) -> bool:
    if issue.symptom is not None and not re.search(issue.symptom, alone.detail):
        return False
    if issue.workaround is None:
        return True
    query = case.query
    assert isinstance(query, Select)
    rewrite = {i: issue.workaround(query.items[i].expr, case) for i in group  # type: ignore[arg-type]
               if issue.applies(query.items[i].expr, case)}  # type: ignore[arg-type]
    return judge(_only(case, group, rewrite), engine).verdict is Verdict.MATCH


def _issues_for(engine: Engine) -> list[KnownIssue]:
    return [issue for issue in KNOWN_ISSUES if issue.engine in (None, engine.name)]


def _known_issue(case: Case, group: list[int], alone: Result, engine: Engine) -> KnownIssue | None:
    query = case.query
    assert isinstance(query, Select)
    exprs = [query.items[i].expr for i in group]
    for issue in _issues_for(engine):
        if any(issue.applies(e, case) for e in exprs) and _confirmed(issue, case, group, alone, engine):  # type: ignore[arg-type]
            return issue
    return None


def _whole_query_issue(case: Case, engine: Engine, result: Result) -> KnownIssue | None:
    """An issue whose symptom shows (or that spoils the whole query) and that
    applies to some window expression of the query, subqueries included."""
    exprs = [n for n in walk(case.query) if isinstance(n, WindowExpr)]
    for issue in _issues_for(engine):
        shows = issue.whole_query or (issue.symptom is not None and re.search(issue.symptom, result.detail))
        if shows and any(issue.applies(e, case) for e in exprs):
            return issue
    return None


def _failing_column_is_order_sensitive(case: Case, result: Result) -> bool:
    match = re.search(r"column (\S+?): engine", result.detail)
    if match is None or not isinstance(case.query, Select):
        return False
    plan = instrument(case.query, case.schemas)
    names = [item.alias for item in case.query.items]
    return match.group(1) in names and names.index(match.group(1)) in plan.sensitive_columns


def _peer_order(case: Case, result: Result) -> bool:
    """Can the order of peers alone explain this verdict, given each expression passed?"""
    if result.verdict is Verdict.INCONCLUSIVE:
        return True
    return result.verdict is Verdict.MISMATCH and _failing_column_is_order_sensitive(case, result)


def explain(case: Case, engine: Engine, result: Result) -> str | None:
    """Why a verdict that does not pass is not a finding, or None (see the module doc)."""
    whole = _whole_query_issue(case, engine, result)
    if whole is not None:
        return whole.label
    query = case.query
    assert isinstance(query, Select)
    reasons: set[str] = set()
    for group in _groups(query):
        alone = judge(_only(case, group), engine)
        if alone.verdict in PASSING:
            continue
        if alone.verdict is Verdict.INCONCLUSIVE:
            # The tie search gave up (never a pass): the order of peers is all
            # that is left to explain, as for an inconclusive whole query.
            reasons.add(PEER_ORDER)
            continue
        issue = _whole_query_issue(case, engine, alone) or _known_issue(case, group, alone, engine)
        if issue is None:
            return None
        reasons.add(issue.label)
    if not reasons and not _peer_order(case, result):
        return None
    return "; ".join(sorted(reasons)) or PEER_ORDER


def describe(g: GeneratedCase, engine: Engine, result: Result) -> str:
    tables = "\n".join(
        f"  table {name} ({g.knobs[name]}):\n" + "\n".join(f"    {row}" for row in table.to_pylist())
        for name, table in g.case.tables.items())
    return (f"seed {g.seed} on {engine.name}: {result.verdict.value}: {result.detail}\n"
            f"  replay: generate_case({g.seed!r})\n"
            f"  canonical SQL:\n    {g.case.sql.replace(chr(10), chr(10) + '    ')}\n"
            f"  {engine.name} ran:\n    {(result.sql or '').replace(chr(10), chr(10) + '    ')}\n"
            f"{tables}")


# -- the differential run ----------------------------------------------------------------


@pytest.mark.parametrize("name", ENGINES)
def test_the_reference_agrees_with_the_engine_on_generated_queries(engines, name: str) -> None:
    engine = engines.get(name)
    tally: Counter[str] = Counter()
    unexplained: list[str] = []
    for i in range(QUERIES):
        g = generate_case(f"{CAMPAIGN_SEED}/{i}")
        result = judge(g.case, engine)
        if result.verdict in PASSING:
            suffix = f" ({result.detail})" if result.verdict is Verdict.UNSUPPORTED else ""
            tally[result.verdict.value + suffix] += 1
            continue
        why = explain(g.case, engine, result)
        if why is None:
            unexplained.append(describe(g, engine, result))
        tally[f"{result.verdict.value}, explained: {why}" if why else f"{result.verdict.value}, UNEXPLAINED"] += 1
    summary = (f"{engine.name} {engine.version()}, seeds {CAMPAIGN_SEED}/0..{QUERIES - 1}:\n"
               + "\n".join(f"  {n:5d}  {what}" for what, n in tally.most_common()))
    print(summary)
    assert not unexplained, summary + "\n\n" + "\n\n".join(unexplained)
    assert tally["match"] >= QUERIES // 10, summary  # the engine ran a good share of the queries


# -- rendering ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ENGINES + ["datafusion", "spark"])
def test_each_dialect_writes_a_good_share_and_refuses_the_rest_by_name(name: str) -> None:
    """Generation is dialect-independent: a dialect writes a query or raises
    Unsupported (never another error), and the swarm leaves every dialect a
    good share of queries it can write."""
    dialect = get_dialect(name)
    written = 0
    for i in range(200):
        query = generate_case(f"{CAMPAIGN_SEED}/{i}").case.query
        try:
            write(query, dialect)
            written += 1
        except Unsupported:
            pass
    assert written >= 40, f"{name} writes {written} of 200 generated queries"
