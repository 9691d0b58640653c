"""The bare query (issue 19, item 6): the case's own query, uninstrumented, judged too.

Silent-pass guards for the judgement without row ids (a wrong value, a
missing, extra or duplicated row, a wrong order must fail; another order of
genuinely tied rows must pass; a search past its budget is inconclusive,
never a pass), and the proof: `duckdb~single-window`, whose planted bug fires
only on a query the harness did not instrument, is caught by the bare run
and by nothing else.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from harness.cases.case import Case
from harness.core.model import ColumnDef, TableSchema
from harness.core.types import from_arrow
from harness.engines.registry import get_engine
from harness.findings.finding import finding_signature, findings_of
from harness.judge.compare import Judgement, Verdict
from harness.judge.instrument import bare_plan
from harness.judge.runner import prepare_bare, run_case
from harness.sql import parse

# x has ties (3, 3 and 7, 7, 7); id is unique.
TIED = pa.table({"id": pa.array([1, 2, 3, 4, 5, 6, 7], pa.int64()),
                 "p": pa.array([1, 1, 1, 2, 2, 2, 2], pa.int64()),
                 "x": pa.array([3, 3, 1, 7, 7, 7, 2], pa.int64())})


def _case(sql: str, table: pa.Table = TIED) -> Case:
    schemas = (TableSchema("t", tuple(ColumnDef(f.name, from_arrow(f.type)) for f in table.schema)),)
    return Case(id="c", description="c", tags=(), schemas=schemas, tables={"t": table}, sql=sql,
                query=parse(sql))


def _bare_verdict(sql: str, mutate, table: pa.Table = TIED) -> Verdict:
    """The bare comparator's verdict on the reference's own answer, mutated."""
    prepared = prepare_bare(_case(sql, table))
    assert prepared is not None, "instrumenting this query adds something"
    judged = prepared.under(prepared.profile)
    answer = judged.oracle.evaluate().table
    plan = prepared.plan
    if plan.limit is not None or plan.offset:  # the oracle's answer is the unlimited one
        answer = answer.slice(plan.offset or 0, plan.limit)
    judgement = Judgement(plan, prepared.profile.null_ordering)
    return prepared.comparator(mutate(answer), judgement, judged.oracle).verdict


def _set(answer: pa.Table, column: int, row: int, value: object) -> pa.Table:
    values = answer.column(column).to_pylist()
    values[row] = value
    return answer.set_column(column, answer.field(column), pa.array(values, answer.field(column).type))


def _same(answer: pa.Table) -> pa.Table:
    return answer


def _wrong_value(answer: pa.Table) -> pa.Table:
    last = answer.num_columns - 1
    return _set(answer, last, 0, answer.column(last)[0].as_py() + 100)


def _missing_row(answer: pa.Table) -> pa.Table:
    return answer.slice(0, answer.num_rows - 1)


def _extra_row(answer: pa.Table) -> pa.Table:
    extra = _set(answer.slice(0, 1), 0, 0, 99)  # an id no input row has
    return pa.concat_tables([answer, extra])


def _duplicated_row(answer: pa.Table) -> pa.Table:
    return pa.concat_tables([answer, answer.slice(answer.num_rows - 1, 1)])


def _reversed(answer: pa.Table) -> pa.Table:
    return answer.take(pa.array(range(answer.num_rows - 1, -1, -1)))


MUTATIONS = [_wrong_value, _missing_row, _extra_row, _duplicated_row]

# Row-level queries (the instrumenter gives them a row id): their bare run is not the instrumented one.
ORDERED = [
    "SELECT id, x, sum(x) OVER (PARTITION BY p ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s "
    "FROM t ORDER BY id",
    "SELECT id, x, row_number() OVER (ORDER BY x, id) AS rn FROM t ORDER BY id DESC",
]
UNORDERED = [
    "SELECT id, x, count(*) OVER (PARTITION BY p) AS n FROM t",
    "SELECT id, x, rank() OVER (ORDER BY x) AS r FROM t",
]


@pytest.mark.parametrize("sql", ORDERED + UNORDERED)
@pytest.mark.parametrize("mutate", MUTATIONS, ids=lambda m: m.__name__.strip("_"))
def test_a_wrong_bare_answer_fails(sql, mutate):
    assert _bare_verdict(sql, _same) is Verdict.MATCH
    assert _bare_verdict(sql, mutate) is Verdict.MISMATCH


@pytest.mark.parametrize("sql", ORDERED)
def test_a_bare_answer_out_of_order_fails_where_the_query_orders(sql):
    assert _bare_verdict(sql, _reversed) is Verdict.MISMATCH


@pytest.mark.parametrize("sql", UNORDERED)
def test_a_bare_answer_in_any_order_passes_where_the_query_does_not_order(sql):
    assert _bare_verdict(sql, _reversed) is Verdict.MATCH


# ORDER BY x leaves rows 1 and 2 (x = 3) tied: either may come first, and row_number may
# number them either way. Rows 4, 5, 6 (x = 7) likewise.
TIES = "SELECT id, x, row_number() OVER (ORDER BY x) AS rn FROM t ORDER BY x"


def _rows(answer: pa.Table) -> list[dict]:
    return answer.to_pylist()


def _from_rows(rows: list[dict], like: pa.Table) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=like.schema)


def _tied_rows_swapped(answer: pa.Table) -> pa.Table:
    rows = _rows(answer)
    i = next(i for i in range(len(rows) - 1) if rows[i]["x"] == rows[i + 1]["x"])
    rows[i], rows[i + 1] = rows[i + 1], rows[i]
    return _from_rows(rows, answer)


def _tied_rows_renumbered(answer: pa.Table) -> pa.Table:
    """Another peer order: the tied rows' row_numbers exchanged, rows in place."""
    rows = _rows(answer)
    i = next(i for i in range(len(rows) - 1) if rows[i]["x"] == rows[i + 1]["x"])
    rows[i]["rn"], rows[i + 1]["rn"] = rows[i + 1]["rn"], rows[i]["rn"]
    return _from_rows(rows, answer)


def _tied_rows_share_a_number(answer: pa.Table) -> pa.Table:
    rows = _rows(answer)
    i = next(i for i in range(len(rows) - 1) if rows[i]["x"] == rows[i + 1]["x"])
    rows[i + 1]["rn"] = rows[i]["rn"]
    return _from_rows(rows, answer)


def _untied_rows_swapped(answer: pa.Table) -> pa.Table:
    rows = _rows(answer)
    i = next(i for i in range(len(rows) - 1) if rows[i]["x"] != rows[i + 1]["x"])
    rows[i], rows[i + 1] = rows[i + 1], rows[i]
    return _from_rows(rows, answer)


@pytest.mark.parametrize("mutate", [_same, _tied_rows_swapped, _tied_rows_renumbered])
def test_tied_rows_in_another_allowed_order_pass(mutate):
    assert _bare_verdict(TIES, mutate) is Verdict.MATCH


@pytest.mark.parametrize("mutate", [_tied_rows_share_a_number, _untied_rows_swapped, *MUTATIONS])
def test_tied_rows_do_not_excuse_a_wrong_answer(mutate):
    assert _bare_verdict(TIES, mutate) is Verdict.MISMATCH


def test_under_limit_any_tied_row_at_the_cut_passes_and_no_other():
    sql = "SELECT id, x FROM t QUALIFY row_number() OVER (ORDER BY id) <= 7 ORDER BY x DESC LIMIT 2"
    # x DESC: 7, 7, 7 ...: any two of rows 4, 5, 6.
    assert _bare_verdict(sql, _same) is Verdict.MATCH
    assert _bare_verdict(sql, lambda a: _set(a, 0, 1, 6)) is Verdict.MATCH
    assert _bare_verdict(sql, lambda a: _set(a, 0, 1, 7)) is Verdict.MISMATCH  # x = 2, not 7
    assert _bare_verdict(sql, lambda a: _set(a, 0, 1, 4)) is Verdict.MISMATCH  # row 4 twice


# 12 rows in one peer group: 12! orders, past the search's budget.
MANY_TIES = pa.table({"id": pa.array(range(1, 13), pa.int64()), "p": pa.array([1] * 12, pa.int64()),
                      "x": pa.array([5] * 12, pa.int64())})
SEARCH = "SELECT id, id * 10 AS tenfold, row_number() OVER (ORDER BY x) AS rn FROM t"


def test_past_the_search_budget_a_wrong_order_sensitive_value_is_inconclusive():
    wrong = _bare_verdict(SEARCH, lambda a: _set(a, 2, 0, 40), MANY_TIES)
    assert wrong is Verdict.INCONCLUSIVE  # never a pass


def test_past_the_search_budget_a_wrong_steady_value_is_still_a_mismatch():
    assert _bare_verdict(SEARCH, lambda a: _set(a, 1, 0, 11), MANY_TIES) is Verdict.MISMATCH
    assert _bare_verdict(SEARCH, _missing_row, MANY_TIES) is Verdict.MISMATCH


def test_the_bare_plan_adds_nothing_and_checks_only_visible_order_keys():
    query = parse("SELECT id, x, row_number() OVER (ORDER BY x) AS rn FROM t ORDER BY p, x")
    plan = bare_plan(query, _case(TIES).schemas)
    assert plan.query == query and plan.rowid_column is None and not plan.witness_columns
    assert plan.order_keys is None  # p is no output column: the order cannot be checked (and is said)
    assert plan.sensitive_columns == frozenset({2})


def test_a_query_the_instrumenter_leaves_alone_runs_no_bare_twin():
    assert prepare_bare(_case("SELECT x, count(*) AS n FROM t GROUP BY x ORDER BY x")) is None


# -- the proof: a bug that only the bare query meets ----------------------------------

SINGLE = "duckdb~single-window"
ONE_WINDOW = "SELECT id, x, sum(x) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s FROM t"


@pytest.fixture(scope="module")
def engines():
    made = {name: get_engine(name) for name in ("reference", "duckdb", SINGLE)}
    for engine in made.values():
        engine.start()
    yield made
    for engine in made.values():
        engine.close()


def test_single_window_fault_is_caught_by_the_bare_run_only(engines):
    results = {r.engine: r for r in run_case(_case(ONE_WINDOW), list(engines.values()), bare=True)}
    faulty, real = results[SINGLE], results["duckdb"]
    assert faulty.verdict is Verdict.MATCH, "the instrumented query hides the planted bug"
    assert faulty.bare is not None and faulty.bare.verdict is Verdict.MISMATCH, faulty.bare
    assert faulty.bare.facts.bare is True and faulty.bare.facts.column == "s"
    assert "__wh_" not in faulty.bare.sql
    assert real.verdict is Verdict.MATCH and real.bare.verdict is Verdict.MATCH
    (finding,) = findings_of(list(results.values()))
    assert finding is faulty.bare
    sig = finding_signature(_case(ONE_WINDOW), finding)
    assert sig.verdict == "bare-mismatch" and sig.engine == SINGLE


def test_a_bare_twin_is_no_finding_of_its_own_where_the_instrumented_query_fails(engines):
    # Two windows: the fault does not fire. duckdb~ntile fails both queries; the
    # instrumented finding is the one reported.
    ntile = get_engine("duckdb~ntile")
    ntile.start()
    try:
        sql = "SELECT id, ntile(3) OVER (ORDER BY id) AS n FROM t"
        results = run_case(_case(sql), [engines["reference"], ntile], bare=True)
    finally:
        ntile.close()
    (finding,) = findings_of(results)
    assert finding.verdict is Verdict.MISMATCH and not finding.facts.bare
    assert results[1].bare is not None and results[1].bare.verdict is Verdict.MISMATCH


# -- in a campaign: tests/test_faulty_campaigns.py (the single-window fault) ---------------


def test_run_with_bare_lists_the_bare_failure_and_fails(engines):
    import io

    from harness.judge.runner import run_cases
    from harness.results.output import write_table

    chosen = [engines["reference"], engines[SINGLE]]
    plain = run_cases([_case(ONE_WINDOW)], chosen)
    assert plain.passed  # the instrumented query hides it
    run = run_cases([_case(ONE_WINDOW)], chosen, bare=True)
    assert not run.passed
    text = io.StringIO()
    write_table(run, text)
    assert f"- c on {SINGLE} (bare query): mismatch: " in text.getvalue()
    assert run.results[1].as_json()["bare"]["facts"]["bare"] is True
