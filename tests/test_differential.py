"""The reference against real engines on generated queries (differential testing).

Each seed gives one case (`harness.generate.queries.generate_case`): a random
schema and table, and a window query that renders in the engine's dialect. The
case is judged exactly as the corpus is, by `harness.runner.run_case` (the
instrumented query, the reference under the engine's semantics profile, the
tie-aware comparator). A verdict that does not pass must be explained, else
the test fails and prints the seed, the SQL and the table:

- a known issue (`KNOWN_ISSUES`: an upstream bug or a by-design difference,
  with its reason): the expressions it names are the ones that fail, and the
  query without them passes;
- peer order: the failing column depends on the order of tied rows, and every
  window expression passes on its own. The standard lets each window order its
  peers as it likes; an engine that orders them differently for two windows
  with the same PARTITION BY and ORDER BY (SQLite does, and DuckDB for
  windows without ORDER BY) defeats the comparator's witness order (the
  engine's row_number over the same window), which assumes one order per
  (PARTITION BY, ORDER BY), so the combined query is inconclusive or worse.
  Expressions over one bare named window (`OVER w`, the same window) are
  checked together.

Environment: WH_DIFF_QUERIES (default 200) seeds per engine, from
WH_DIFF_SEED (default 0). Replay one seed with
`generate_case(SEED, get_dialect(ENGINE))`. The summary is printed (`-s`).
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from random import Random

import pyarrow as pa
import pytest

from harness.cases import Case
from harness.compare import PASSING, Verdict
from harness.engines.base import Engine
from harness.engines.registry import get_dialect
from harness.errors import Unsupported
from harness.functions import FUNCTIONS, FunctionKind
from harness.generate.data import MAX_ROWS, DataKnobs, random_knobs, random_table
from harness.generate.queries import ARGUMENTS, GeneratedCase, generate_case, random_query
from harness.generate.schemas import ID, random_schema
from harness.instrument import instrument
from harness.model import (
    BoundKind,
    Column,
    Exclusion,
    Frame,
    FrameMode,
    Literal,
    NullsOrder,
    Select,
    SelectItem,
    SortKey,
    WindowExpr,
    WindowSpec,
    resolve_window,
    walk,
)
from harness.runner import Result, run_case
from harness.sql import parse, write

QUERIES = int(os.environ.get("WH_DIFF_QUERIES", "200"))
FIRST_SEED = int(os.environ.get("WH_DIFF_SEED", "0"))
ENGINES = ["duckdb", "sqlite"]
PEER_ORDER = "peer order differs between windows (by design)"


# -- known issues -------------------------------------------------------------------


@dataclass(frozen=True)
class KnownIssue:
    """A reviewed explanation of disagreements on generated queries.

    `applies` picks the window expressions it is about (by their shape and the
    data). It explains a failing expression only when confirmed: `symptom` (a
    regex) matches the verdict's detail, and/or the query with `workaround`
    applied to the expression matches the reference.
    """

    engine: str | None  # None: any engine (a gap of the reference, say)
    kind: str  # upstream-bug | by-design
    reason: str
    applies: Callable[[WindowExpr, Case], bool]
    symptom: str | None = None
    workaround: Callable[[WindowExpr, Case], WindowExpr] | None = None
    link: str | None = None

    @property
    def label(self) -> str:
        return f"{self.kind}: {self.reason}"


def _frame(expr: WindowExpr, case: Case) -> Frame | None:
    return resolve_window(expr.window, case.query.windows).frame  # type: ignore[union-attr]


def _sliding(expr: WindowExpr, case: Case) -> bool:
    """An explicit frame that does not start at UNBOUNDED PRECEDING and has no
    EXCLUDE: SQLite then updates the aggregate by removing rows (xInverse)."""
    frame = _frame(expr, case)
    return (frame is not None and frame.start.kind is not BoundKind.UNBOUNDED_PRECEDING
            and frame.exclusion is None)


def _argument_values(expr: WindowExpr, case: Case) -> list[object]:
    arg = expr.func.args[0] if expr.func.args else None
    return case.tables["t"].column(arg.name).to_pylist() if isinstance(arg, Column) else []


def _has_non_finite(values: list[object]) -> bool:
    return any(isinstance(v, float) and not math.isfinite(v) for v in values)


def _exclude_no_others(expr: WindowExpr, case: Case) -> WindowExpr:
    """The same window, written inline, with EXCLUDE NO OTHERS (which by the
    standard changes nothing)."""
    window = resolve_window(expr.window, case.query.windows)  # type: ignore[union-attr]
    assert window.frame is not None
    frame = dataclasses.replace(window.frame, exclusion=Exclusion.NO_OTHERS)
    return dataclasses.replace(expr, window=dataclasses.replace(window, frame=frame))


def _ordered_by_id_too(expr: WindowExpr, case: Case) -> WindowExpr:
    """The aggregate with `id` as its last ORDER BY key, which breaks its ties."""
    order_by = (*expr.func.order_by, SortKey(Column(ID), False, NullsOrder.LAST))
    return dataclasses.replace(expr, func=dataclasses.replace(expr.func, order_by=order_by))


KNOWN_ISSUES = [
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
        symptom=r"engine 0\.0, expected nan",
        link="https://github.com/duckdb/duckdb/issues/15520",
    ),
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
    """The case with only the window expressions at `keep` (maybe rewritten)."""
    query = case.query
    assert isinstance(query, Select)
    windows = _window_items(query)
    items = tuple(dataclasses.replace(item, expr=(rewrite or {}).get(i, item.expr))
                  for i, item in enumerate(query.items) if i in keep or i not in windows)
    smaller = dataclasses.replace(query, items=items)
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


def _known_issue(case: Case, group: list[int], alone: Result, engine: Engine) -> KnownIssue | None:
    query = case.query
    assert isinstance(query, Select)
    exprs = [query.items[i].expr for i in group]
    for issue in KNOWN_ISSUES:
        if issue.engine not in (None, engine.name):
            continue
        if any(issue.applies(e, case) for e in exprs) and _confirmed(issue, case, group, alone, engine):  # type: ignore[arg-type]
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
    query = case.query
    assert isinstance(query, Select)
    reasons: set[str] = set()
    for group in _groups(query):
        alone = judge(_only(case, group), engine)
        if alone.verdict is Verdict.MATCH:
            continue
        issue = _known_issue(case, group, alone, engine)
        if issue is None:
            return None
        reasons.add(issue.label)
    if not reasons and not _peer_order(case, result):
        return None
    return "; ".join(sorted(reasons)) or PEER_ORDER


def describe(g: GeneratedCase, engine: Engine, result: Result) -> str:
    rows = "\n".join(f"    {row}" for row in g.case.tables["t"].to_pylist())
    return (f"seed {g.seed} on {engine.name}: {result.verdict.value}: {result.detail}\n"
            f"  replay: generate_case({g.seed}, get_dialect({engine.name!r}))\n"
            f"  canonical SQL:\n    {g.case.sql.replace(chr(10), chr(10) + '    ')}\n"
            f"  {engine.name} ran:\n    {(result.sql or '').replace(chr(10), chr(10) + '    ')}\n"
            f"  table t ({g.knobs}):\n{rows}")


# -- the differential run ----------------------------------------------------------------


@pytest.mark.parametrize("name", ENGINES)
def test_the_reference_agrees_with_the_engine_on_generated_queries(engines, name: str) -> None:
    engine = engines.get(name)
    tally: Counter[str] = Counter()
    rejected: Counter[str] = Counter()
    unexplained: list[str] = []
    for seed in range(FIRST_SEED, FIRST_SEED + QUERIES):
        g = generate_case(seed, engine.dialect)
        rejected.update(g.rejected)
        result = judge(g.case, engine)
        if result.verdict in PASSING:
            suffix = f" ({result.detail})" if result.verdict is Verdict.UNSUPPORTED else ""
            tally[result.verdict.value + suffix] += 1
            continue
        why = explain(g.case, engine, result)
        if why is None:
            unexplained.append(describe(g, engine, result))
        tally[f"{result.verdict.value}, explained: {why}" if why else f"{result.verdict.value}, UNEXPLAINED"] += 1
    summary = (f"{engine.name} {engine.version()}, seeds {FIRST_SEED}..{FIRST_SEED + QUERIES - 1}:\n"
               + "\n".join(f"  {n:5d}  {what}" for what, n in tally.most_common())
               + "\n  draws the dialect refused: " + str(dict(rejected.most_common())))
    print(summary)
    assert not unexplained, summary + "\n\n" + "\n\n".join(unexplained)


# -- the generators themselves ---------------------------------------------------------------


def same_rows(a: pa.Table, b: pa.Table) -> bool:
    """Equal schemas and values, NaN equal to NaN (repr spells each value exactly)."""
    return a.schema == b.schema and repr(a.to_pylist()) == repr(b.to_pylist())


def test_a_seed_replays_the_same_case() -> None:
    dialect = get_dialect("duckdb")
    first, again = generate_case(7, dialect), generate_case(7, dialect)
    assert first.case.sql == again.case.sql
    assert same_rows(first.case.tables["t"], again.case.tables["t"])


def test_the_table_does_not_depend_on_the_dialect() -> None:
    for seed in range(20):
        duck, lite = generate_case(seed, get_dialect("duckdb")), generate_case(seed, get_dialect("sqlite"))
        assert same_rows(duck.case.tables["t"], lite.case.tables["t"])


def test_every_window_function_and_aggregate_has_an_argument_builder() -> None:
    wanted = {s.name for s in FUNCTIONS.values() if s.kind is not FunctionKind.SCALAR}
    assert wanted == set(ARGUMENTS)


@pytest.mark.parametrize("name", ENGINES + ["datafusion", "spark"])
def test_generated_queries_render_in_their_dialect(name: str) -> None:
    dialect = get_dialect(name)
    for seed in range(100):
        g = generate_case(seed, dialect)
        write(g.case.query, dialect)  # raises Unsupported if a draw slipped through
        assert parse(g.case.sql) == g.case.query


def test_tables_have_a_unique_id_and_at_most_max_rows() -> None:
    for seed in range(100):
        schema = random_schema(Random(seed))
        table = random_table(Random(seed), schema, random_knobs(Random(seed)))
        ids = table.column(ID).to_pylist()
        assert len(ids) == len(set(ids)) <= MAX_ROWS and None not in ids
        assert 2 <= len(schema.columns) <= 5


def test_queries_select_id_and_order_by_it() -> None:
    for seed in range(100):
        query = generate_case(seed, get_dialect("duckdb")).case.query
        assert isinstance(query, Select)
        assert query.items[0] == SelectItem(query.items[0].expr) and query.order_by[0].expr == query.items[0].expr
        assert 2 <= len(query.items) <= 4


def test_frame_offsets_follow_the_mode() -> None:
    """ROWS/GROUPS offsets are small non-negative integers; RANGE offsets have
    the key's type and come with exactly one ORDER BY key."""
    seen: set[FrameMode] = set()
    for seed in range(300):
        query = generate_case(seed, get_dialect("duckdb")).case.query
        for node in walk(query):
            if not isinstance(node, WindowExpr):
                continue
            spec = resolve_window(node.window, query.windows)  # type: ignore[union-attr]
            for bound in (spec.frame.start, spec.frame.end) if spec.frame else ():
                if not isinstance(bound.offset, Literal):
                    continue
                seen.add(spec.frame.mode)
                if spec.frame.mode is FrameMode.RANGE:
                    assert len(spec.order_by) == 1
                else:
                    assert type(bound.offset.value) is int and 0 <= bound.offset.value <= 3
    assert seen == set(FrameMode)


def test_a_dialect_that_refuses_everything_is_a_named_error() -> None:
    from harness.dialects.base import Dialect, Feature
    from harness.generate.queries import NothingRenderable

    nothing = Dialect(name="nothing", unsupported=frozenset(Feature),
                      missing_functions=frozenset(FUNCTIONS))
    schema = random_schema(Random(1))
    with pytest.raises(NothingRenderable):
        random_query(Random(1), schema, nothing, DataKnobs(rows=3))


def test_rendering_is_what_refuses() -> None:
    """The SQLite dialect refuses IGNORE NULLS: no generated SQLite query has it,
    and the refusals are counted by feature."""
    refused: Counter[str] = Counter()
    for seed in range(200):
        g = generate_case(seed, get_dialect("sqlite"))
        refused.update(g.rejected)
        assert "IGNORE NULLS" not in g.case.sql and "RESPECT NULLS" not in g.case.sql
    assert refused["null-treatment"] > 0 and refused["function.stddev_samp"] > 0
    with pytest.raises(Unsupported):
        write(parse("SELECT lag(v) IGNORE NULLS OVER (ORDER BY v) FROM t"), get_dialect("sqlite"))
