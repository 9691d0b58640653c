"""Metamorphic relations (`harness.judge.metamorphic`): they hold on every
engine over random tables, they catch planted faults, and they catch the
verified engine bugs recorded below.

The sweep derives one check per (relation, table) for each engine and runs it
on that engine alone. A violation, or an error on one side only, fails the
test unless it is explained: by `KNOWN_BUGS` (verified upstream bugs, each
with a minimal reproduction further down marked xfail), or, for one-sided
errors, by `ENGINE_LIMITS` (a feature the engine lacks for one frame shape but
not for its mirror image). Environment: WH_MR_TABLES (default 30) tables per
relation and engine. The summary is printed (`-s`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from random import Random

import pyarrow as pa
import pytest

from harness.cases.case import Case
from harness.core.model import (
    CURRENT_ROW,
    BoundKind,
    Column,
    ColumnDef,
    Frame,
    FrameMode,
    FuncCall,
    SelectItem,
    SortKey,
    TableSchema,
    WindowExpr,
    WindowSpec,
    preceding,
    walk,
)
from harness.core.types import TypeKind, parse_type_name
from harness.engines.duckdb.adapter import DuckDBEngine
from harness.generate.data import random_knobs, random_table
from harness.generate.schemas import random_schema
from harness.judge.metamorphic import (
    RELATIONS,
    Check,
    Difference,
    FloatScale,
    MetamorphicOutcome,
    Status,
    check,
    check_all,
    compare,
    deterministic,
    integer,
    relation,
)
from harness.sql import parse

TABLES = int(os.environ.get("WH_MR_TABLES", "30"))
ENGINES = ["reference", "duckdb", "datafusion", "sqlite"]
NAMES = [r.name for r in RELATIONS]

# Column types an engine can load, where it cannot load them all. SQLite has
# no DECIMAL, DATE, TIMESTAMP or BOOLEAN type and cannot store NaN: its
# adapter raises Unsupported for such tables, which would leave nothing checked.
LOADABLE = {"sqlite": {TypeKind.INT8, TypeKind.INT16, TypeKind.INT32, TypeKind.INT64,
                       TypeKind.FLOAT32, TypeKind.FLOAT64, TypeKind.STRING}}
NO_NAN = {"sqlite"}

# Pairs whose checks cannot run at all: every check needs a feature the
# dialect declares missing.
NEVER_RUNS = {("datafusion", "exclude-no-others"): "DataFusion has no EXCLUDE"}

# One side failed and the other ran: a feature the engine lacks for one frame
# shape, while the equivalent shape runs. (DataFusion 55 computes a frame
# whose start moves by retracting rows, which DISTINCT aggregates and
# var/stddev(DISTINCT) lack; the mirrored frame, whose start stays put, runs.
# The dialect cannot say so today; see the report.)
ENGINE_LIMITS = {"datafusion": re.compile(r"This feature is not implemented")}


@dataclass(frozen=True)
class KnownBug:
    """A verified engine bug that explains a difference on one compared column."""

    engine: str
    reason: str
    # (the column's window expressions on both sides, the difference, the table)
    applies: Callable[[list[WindowExpr], Difference, pa.Table], bool]
    link: str | None = None


def _sliding(e: WindowExpr) -> bool:
    """An explicit frame whose start moves (not UNBOUNDED PRECEDING), no EXCLUDE."""
    f = e.window.frame
    return f is not None and f.start.kind is not BoundKind.UNBOUNDED_PRECEDING and f.exclusion is None


def _nan_against_number(d: Difference) -> bool:
    values = (d.left, d.right)
    nan = [v for v in values if isinstance(v, float) and math.isnan(v)]
    return len(nan) == 1 and all(isinstance(v, float) for v in values)


def _argument(es: list[WindowExpr], table: pa.Table) -> list[object]:
    args = [e.func.args[0].name for e in es if e.func.args and isinstance(e.func.args[0], Column)]
    return table.column(args[0]).to_pylist() if args and args[0] in table.column_names else []


def _non_finite(values: list[object]) -> bool:
    return any(isinstance(v, float) and not math.isfinite(v) for v in values)


def _null_against_string(d: Difference) -> bool:
    return {type(d.left), type(d.right)} == {type(None), str}


KNOWN_BUGS = [
    KnownBug(
        "sqlite",
        "min/max ignore FILTER over a frame whose start moves and that has no EXCLUDE "
        "(SQLite 3.40.1; also listed in tests/test_differential.py)",
        lambda es, d, t: any(e.func.name in ("min", "max") and e.func.filter is not None and _sliding(e)
                             for e in es),
        "https://sqlite.work/filter-clause-ignored-in-sqlite-window-functions-with-min-max-"
        "and-non-unbounded-frames",
    ),
    KnownBug(
        "sqlite",
        "group_concat (string_agg) OVER a frame whose start moves returns NULL instead of '' when "
        "it concatenates only '', and NULL instead of the values once an '' has left the frame "
        "(SQLite 3.40.1; with EXCLUDE NO OTHERS it is right)",
        lambda es, d, t: any(e.func.name == "string_agg" and _sliding(e) for e in es)
        and _null_against_string(d) and "" in _argument(es, t),
    ),
    KnownBug(
        "datafusion",
        "var_*/stddev_* over a frame whose start moves can go below zero (-8e-15) when the "
        "remaining values are equal, and stddev is then NaN instead of 0.0 (DataFusion 55)",
        lambda es, d, t: any(e.func.name.startswith("stddev") and _sliding(e) for e in es)
        and _nan_against_number(d),
        "https://github.com/apache/datafusion/issues/13247",
    ),
    KnownBug(
        "datafusion",
        "sum/avg/var_*/stddev_* of DOUBLE over a frame whose start moves stay NaN once a NaN or an "
        "infinity has entered and left the frame (DataFusion 55; Trino had the same bug, #20946)",
        lambda es, d, t: any(e.func.name in ("sum", "avg") or e.func.name.startswith(("var", "stddev"))
                             for e in es if _sliding(e))
        and _nan_against_number(d) and _non_finite(_argument(es, t)),
        "https://github.com/trinodb/trino/issues/20946",
    ),
]


# -- tables ------------------------------------------------------------------------------


def table_case(seed: int, engine: str) -> Case:
    """A random table `t` (and a trivial query) an engine can load."""
    kinds = LOADABLE.get(engine)
    schema = random_schema(Random(f"{seed}/schema"), **({"kinds": kinds} if kinds else {}))
    knobs = random_knobs(Random(f"{seed}/knobs"), max_rows=40)
    if engine in NO_NAN:
        knobs = dataclasses.replace(knobs, special_floats=False)
    table = random_table(Random(f"{seed}/data"), schema, knobs)
    sql = "SELECT id FROM t ORDER BY id"
    return Case(f"mr/{seed}", "a random table", (), (schema,), {"t": table}, sql, parse(sql))


def _case(table: pa.Table, sql: str, types: Mapping[str, str]) -> Case:
    schema = TableSchema("t", tuple(ColumnDef(n, parse_type_name(t, n)) for n, t in types.items()))
    return Case("mr/hand", "a hand-written side", (), (schema,), {"t": table}, sql, parse(sql))


def hand_check(name: str, table: pa.Table, types: Mapping[str, str], left: str, right: str,
               columns: tuple[str, ...] = ("w",)) -> Check:
    return Check(name, _case(table, left, types), _case(table, right, types), columns)


# -- the sweep -----------------------------------------------------------------------------


def _expressions(chk: Check, column: str) -> list[WindowExpr]:
    """The window expressions computing `column` on either side."""
    found = []
    for side in (chk.left, chk.right):
        for node in walk(side.query):
            if isinstance(node, SelectItem) and node.alias == column and isinstance(node.expr, WindowExpr):
                found.append(node.expr)
    return found


def explain(outcome: MetamorphicOutcome, chk: Check) -> str | None:
    """Why an outcome that is not holds/unsupported/both-error is not a finding, or None."""
    if outcome.status is Status.ERROR:
        limit = ENGINE_LIMITS.get(outcome.engine)
        return "engine limit" if limit and limit.search(outcome.detail) else None
    reasons = set()
    for d in outcome.differences:
        exprs, table = _expressions(chk, d.column), next(iter(chk.left.tables.values()))
        bug = next((b for b in KNOWN_BUGS if b.engine == outcome.engine and b.applies(exprs, d, table)), None)
        if bug is None:
            return None
        reasons.add(bug.reason)
    return "; ".join(sorted(reasons))


def describe(seed: int, chk: Check, outcome: MetamorphicOutcome) -> str:
    rows = "\n".join(f"    {r}" for r in next(iter(chk.left.tables.values())).to_pylist())
    return (f"table seed {seed}, {outcome.relation} on {outcome.engine}: {outcome.status.value}: "
            f"{outcome.detail}\n  left:  {outcome.left_sql}\n  right: {outcome.right_sql}\n"
            f"  table t:\n{rows}")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("engine_name", ENGINES)
def test_the_relation_holds_on_random_tables(engines, engine_name: str, name: str) -> None:
    engine, rel = engines.get(engine_name), relation(name)
    tally: Counter[str] = Counter()
    unexplained = []
    for seed in range(TABLES):
        chk = rel.derive(table_case(seed, engine_name), Random(f"{seed}/{name}"), engine.dialect)
        if chk is None:
            tally["does not apply"] += 1
            continue
        outcome = check(chk, engine)
        if outcome.status in (Status.VIOLATED, Status.ERROR):
            why = explain(outcome, chk)
            tally[f"{outcome.status.value}, explained: {why}" if why else "UNEXPLAINED"] += 1
            if why is None:
                unexplained.append(describe(seed, chk, outcome))
        else:
            tally[outcome.status.value] += 1
    summary = f"{name} on {engine_name}: {dict(tally)}"
    print(summary)
    assert not unexplained, summary + "\n\n" + "\n\n".join(unexplained)
    if (engine_name, name) in NEVER_RUNS:
        assert tally[Status.UNSUPPORTED.value] == TABLES - tally["does not apply"], summary
    else:
        assert tally[Status.HOLDS.value] >= TABLES // 2, summary


def test_check_all_runs_every_relation_that_applies(engines) -> None:
    outcomes = check_all(table_case(3, "duckdb"), engines.get("duckdb"), Random(0))
    assert {o.relation for o in outcomes} <= set(NAMES)
    assert len(outcomes) >= len(NAMES) - 1  # partition-restriction needs a row
    assert all(o.status is Status.HOLDS for o in outcomes), [o.detail for o in outcomes]


# -- the relations use the case's own windows ----------------------------------------------


def test_a_case_window_is_used_with_a_total_order() -> None:
    table = pa.table({"id": [1, 2, 3], "k": [1, 1, 2]})
    sql = ("SELECT id, first_value(k) OVER (ORDER BY k ASC NULLS LAST ROWS BETWEEN 1 PRECEDING "
           "AND CURRENT ROW) AS w FROM t ORDER BY id ASC NULLS LAST")
    case = _case(table, sql, {"id": "BIGINT", "k": "BIGINT"})
    chk = relation("batching").derive(case, Random(1))
    assert chk is not None
    assert "ORDER BY k ASC NULLS LAST, id ASC NULLS LAST ROWS BETWEEN 1 PRECEDING" in chk.left.sql


def test_deterministic_appends_id_and_refuses_what_it_cannot_order() -> None:
    k = SortKey(Column("k"))
    rows = Frame(FrameMode.ROWS, preceding(integer(1)), CURRENT_ROW)
    e = deterministic(WindowExpr(FuncCall("lag", (Column("x"),)), WindowSpec(order_by=(k,), frame=rows)))
    assert e is not None and [key.expr for key in e.window.order_by] == [Column("k"), Column("id")]
    rng = Frame(FrameMode.RANGE, preceding(integer(1)), CURRENT_ROW)
    assert deterministic(WindowExpr(FuncCall("first_value", (Column("x"),)),
                                    WindowSpec(order_by=(k,), frame=rng))) is None
    summed = deterministic(WindowExpr(FuncCall("sum", (Column("x"),)), WindowSpec(order_by=(k,), frame=rng)))
    assert summed is not None and summed.window.order_by == (k,)  # peers are summed whole


# -- comparison --------------------------------------------------------------------------


def _answer(values: list) -> pa.Table:
    return pa.table({"id": list(range(1, len(values) + 1)), "w": pa.array(values, pa.float64())})


def _answers(left: list, right: list) -> tuple[pa.Table, pa.Table]:
    return _answer(left), _answer(right)


def test_compare_equates_null_nan_and_signed_zero_and_tolerates_rounding() -> None:
    chk = hand_check("t", pa.table({"id": [1]}), {"id": "BIGINT"}, "SELECT id FROM t", "SELECT id FROM t")
    chk = dataclasses.replace(chk, scales={"w": FloatScale(10.0)})
    left, right = _answers([None, math.nan, -0.0, 0.1 + 0.2], [None, math.nan, 0.0, 0.3])
    assert compare(chk, left, right) == []
    left, right = _answers([1.0], [1.0 + 1e-9])
    assert [d.key for d in compare(chk, left, right)] == [1]


def test_compare_reports_missing_rows_and_type_classes() -> None:
    chk = hand_check("t", pa.table({"id": [1]}), {"id": "BIGINT"}, "SELECT id FROM t", "SELECT id FROM t")
    left, _ = _answers([1.0, 2.0], [])
    right = pa.table({"id": [1], "w": pa.array(["1"])})
    diffs = compare(chk, left, right)
    assert {d.column for d in diffs} == {"w", "(row)"}


def test_statuses_for_unsupported_and_errors(engines) -> None:
    duck = engines.get("duckdb")
    table, types = pa.table({"id": [1, 2], "x": [1, 2]}), {"id": "BIGINT", "x": "BIGINT"}
    ok = "SELECT id, sum(x) OVER (ORDER BY id ASC NULLS LAST) AS w FROM t"
    from_last = "SELECT id, nth_value(x, 1) FROM LAST OVER (ORDER BY id ASC NULLS LAST) AS w FROM t"
    failing = "SELECT id, ntile(CAST('no' AS BIGINT)) OVER (ORDER BY id ASC NULLS LAST) AS w FROM t"
    assert check(hand_check("r", table, types, ok, ok), duck).status is Status.HOLDS
    assert check(hand_check("r", table, types, ok, from_last), duck).status is Status.UNSUPPORTED
    assert check(hand_check("r", table, types, ok, failing), duck).status is Status.ERROR
    assert check(hand_check("r", table, types, failing, failing), duck).status is Status.BOTH_ERROR


# -- teeth: DuckDB with one planted fault ---------------------------------------------------


class FaultyDuckDB(DuckDBEngine):
    """DuckDB that rewrites the SQL it is given, or corrupts one value of the answer."""

    name = "duckdb~faulty"

    def __init__(self, rewrite: Callable[[str], str] | None = None,
                 corrupt_when: Callable[[str], bool] | None = None) -> None:
        super().__init__()
        self.rewrite, self.corrupt_when = rewrite, corrupt_when

    def run(self, tables: Mapping[str, pa.Table], sql: str) -> pa.Table:
        answer = super().run(tables, self.rewrite(sql) if self.rewrite else sql)
        return corrupted(answer) if self.corrupt_when and self.corrupt_when(sql) else answer


def _other(v: object) -> object:
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return v - 1 if v > 0 else v + 1
    if isinstance(v, float):
        return -v if math.isfinite(v) and v != 0 else 1.0
    if isinstance(v, Decimal):
        return -v if v else Decimal(1).scaleb(v.as_tuple().exponent)  # type: ignore[arg-type]
    if isinstance(v, str):
        return v + "!"
    if isinstance(v, (dt.date, dt.datetime)):
        return v + dt.timedelta(days=1)
    return [*v, None] if isinstance(v, list) else v


def corrupted(answer: pa.Table) -> pa.Table:
    """The answer with the first non-NULL window value changed."""
    for i, name in enumerate(answer.column_names):
        values = answer.column(i).to_pylist()
        at = next((j for j, v in enumerate(values) if v is not None), None)
        if name.startswith("mr") and not name.startswith("mr_") and at is not None:
            values[at] = _other(values[at])
            return answer.set_column(i, name, pa.array(values, answer.schema.field(i).type))
    return answer


def _peer_offsets_off_by_one(sql: str) -> str:
    """GROUPS and RANGE frames reach one group (or unit) further than written."""
    bump = lambda m: f"{int(m.group(1)) + 1} {m.group(2)}"  # noqa: E731
    frame = lambda m: re.sub(r"\b(\d+) (PRECEDING|FOLLOWING)", bump, m.group(0))  # noqa: E731
    return re.sub(r"(GROUPS|RANGE) BETWEEN [^)]*", frame, sql)


FAULTS = {
    "partition-restriction": dict(corrupt_when=lambda sql: "WHERE" in sql and "mr_sub" not in sql),
    "frame-modes": dict(rewrite=_peer_offsets_off_by_one),
    # A multi-key sort that ignores DESC after the first key.
    "desc-mirror": dict(rewrite=lambda sql: re.sub(r", ([^,()]+?) DESC NULLS", r", \1 ASC NULLS", sql)),
    "exclude-no-others": dict(rewrite=lambda sql: sql.replace("EXCLUDE NO OTHERS", "EXCLUDE CURRENT ROW")),
    "first-value-nth-value": dict(rewrite=lambda sql: re.sub(r"nth_value\(([^()]*), 1\)", r"nth_value(\1, 2)",
                                                             sql)),
    "value-at-current-row": dict(rewrite=lambda sql: sql.replace("AND CURRENT ROW", "AND 1 FOLLOWING")
                                 .replace("BETWEEN CURRENT ROW", "BETWEEN 1 PRECEDING")),
    # The batch column is dropped from PARTITION BY: batches leak into each other.
    "batching": dict(rewrite=lambda sql: re.sub(r"PARTITION BY mr_batch ?", "",
                                                sql.replace("PARTITION BY mr_batch, ", "PARTITION BY "))),
}


def test_every_relation_has_a_planted_fault() -> None:
    assert set(FAULTS) == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_a_planted_fault_is_caught(engines, name: str) -> None:
    honest, faulty = engines.get("duckdb"), FaultyDuckDB(**FAULTS[name])
    caught = 0
    try:
        for seed in range(TABLES):
            chk = relation(name).derive(table_case(seed, "duckdb"), Random(f"{seed}/{name}"), honest.dialect)
            if chk is None:
                continue
            assert check(chk, honest).status is Status.HOLDS, (seed, check(chk, honest).detail)
            caught += check(chk, faulty).status is Status.VIOLATED
    finally:
        faulty.close()
    assert caught >= 1, f"the fault planted for {name} was never caught in {TABLES} tables"


# -- verified engine bugs, caught by the relations ------------------------------------------------


@pytest.mark.xfail(strict=True, reason="SQLite 3.40.1: min/max ignore FILTER over a frame whose start moves")
def test_sqlite_max_filter_sliding_frame(engines) -> None:
    table = pa.table({"id": [1, 2], "k": [1, 5]})
    frame = "ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING"
    sql = "SELECT id, max(k) FILTER (WHERE k < 3) OVER (ORDER BY id ASC NULLS LAST {}) AS w FROM t"
    chk = hand_check("exclude-no-others", table, {"id": "BIGINT", "k": "BIGINT"},
                     sql.format(frame), sql.format(frame + " EXCLUDE NO OTHERS"))
    outcome = check(chk, engines.get("sqlite"))  # sqlite: max 5 (FILTER ignored), then 1/NULL
    assert outcome.status is Status.HOLDS, outcome.detail


@pytest.mark.xfail(strict=True, reason="SQLite 3.40.1: group_concat over a moving frame of '' is NULL")
def test_sqlite_group_concat_of_empty_strings(engines) -> None:
    table = pa.table({"id": [1, 2], "s": ["", ""]})
    frame = "ROWS BETWEEN 1 PRECEDING AND CURRENT ROW"
    sql = "SELECT id, string_agg(s, '') OVER (ORDER BY id ASC NULLS LAST {}) AS w FROM t"
    chk = hand_check("exclude-no-others", table, {"id": "BIGINT", "s": "VARCHAR"},
                     sql.format(frame), sql.format(frame + " EXCLUDE NO OTHERS"))
    outcome = check(chk, engines.get("sqlite"))  # sqlite: NULL, NULL against '', ''
    assert outcome.status is Status.HOLDS, outcome.detail


@pytest.mark.xfail(strict=True, reason="DataFusion 55: stddev over a frame whose start moves is NaN, not 0.0")
def test_datafusion_stddev_of_equal_values_after_retraction(engines) -> None:
    table = pa.table({"id": [1, 2, 3], "x": [0.1, 0.2, 0.2]})
    left = ("SELECT id, stddev_pop(x) OVER (ORDER BY id DESC NULLS FIRST ROWS BETWEEN UNBOUNDED "
            "PRECEDING AND CURRENT ROW) AS w FROM t")
    right = ("SELECT id, stddev_pop(x) OVER (ORDER BY id ASC NULLS LAST ROWS BETWEEN CURRENT ROW "
             "AND UNBOUNDED FOLLOWING) AS w FROM t")
    chk = hand_check("desc-mirror", table, {"id": "BIGINT", "x": "DOUBLE PRECISION"}, left, right)
    outcome = check(chk, engines.get("datafusion"))  # datafusion: id 2 is 0.0 left, NaN right
    assert outcome.status is Status.HOLDS, outcome.detail



@pytest.mark.xfail(strict=True, reason="SQLite 3.40.1: group_concat over a moving frame is NULL after an ''")
def test_sqlite_group_concat_after_an_empty_string(engines) -> None:
    table = pa.table({"id": [1, 2, 3], "s": ["b", "", "b"]})
    sql = "SELECT id, string_agg(s, ',') OVER (ORDER BY id ASC NULLS LAST {} BETWEEN 0 PRECEDING AND 0 PRECEDING) AS w FROM t"
    chk = hand_check("frame-modes", table, {"id": "BIGINT", "s": "VARCHAR"}, sql.format("ROWS"), sql.format("RANGE"))
    outcome = check(chk, engines.get("sqlite"))  # sqlite: id 3 is 'b' over ROWS, NULL over RANGE
    assert outcome.status is Status.HOLDS, outcome.detail


@pytest.mark.xfail(strict=True, reason="DataFusion 55: a moving-frame sum stays NaN after an infinity left it")
def test_datafusion_sliding_sum_after_an_infinity(engines) -> None:
    table = pa.table({"id": [1, 2, 3], "x": [math.inf, 1.0, 2.0]})
    left = ("SELECT id, sum(x) OVER (ORDER BY id DESC NULLS FIRST ROWS BETWEEN UNBOUNDED PRECEDING "
            "AND CURRENT ROW) AS w FROM t")
    right = ("SELECT id, sum(x) OVER (ORDER BY id ASC NULLS LAST ROWS BETWEEN CURRENT ROW "
             "AND UNBOUNDED FOLLOWING) AS w FROM t")
    chk = hand_check("desc-mirror", table, {"id": "BIGINT", "x": "DOUBLE PRECISION"}, left, right)
    outcome = check(chk, engines.get("datafusion"))  # datafusion: inf, 3.0, 2.0 against inf, NaN, NaN
    assert outcome.status is Status.HOLDS, outcome.detail


def test_every_relation_derives_over_an_interval_column_without_writing_an_interval_literal() -> None:
    # An interval value has no literal in the model (constants of one unit only):
    # a relation that compared an interval column with one of its values, or
    # gave it as lag's default, failed to write its query (a harness error).
    from harness.engines.registry import get_dialect
    from harness.generate.cases import generate_case, interval_stream

    seeds = [s for s in (f"5/{i}" for i in range(3000)) if interval_stream(s) is not None][:12]
    cases = [generate_case(seed).case for seed in seeds]
    cases = [c for c in cases if any(col.type.kind is TypeKind.INTERVAL
                                     for s in c.schemas for col in s.columns)]
    assert len(cases) >= 5
    dialect = get_dialect("duckdb")
    derived = 0
    for case in cases:
        for each in RELATIONS:
            for k in range(8):
                if each.derive(case, Random(k), dialect) is not None:
                    derived += 1
    assert derived > 0
