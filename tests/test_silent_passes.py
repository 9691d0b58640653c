"""Silent passes and crashes on the path that judges answers (issue 16, item 1).

Each test here failed before its fix: a wrong answer that was judged a match
(a column or the row order left unjudged), or an internal error where the
harness must give a typed verdict.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pyarrow as pa
import pytest

from harness.cases.case import Case
from harness.core.conformance import KINDS_BY_NAME, invalid_kind
from harness.core.dialect import NULLS_LARGEST
from harness.core.errors import EvaluationError, InvalidQuery, ReferenceGap, Unsupported
from harness.core.model import (
    AllColumns,
    Column,
    ColumnDef,
    CommonTable,
    Exists,
    InSubquery,
    Literal,
    Select,
    SelectItem,
    Star,
    SubqueryRef,
    TableFunctionRef,
    TableRef,
    TableSchema,
    Values,
    WindowSpec,
    With,
    walk,
)
from harness.core.types import INT32, INT64, INT128, from_arrow
from harness.engines.registry import get_dialect, get_engine
from harness.judge.compare import UNCHECKED_ORDER, Judgement, Verdict, compare
from harness.judge.instrument import instrument, with_rowid
from harness.judge.oracle import Oracle
from harness.judge.runner import run_case
from harness.sql import parse, write

T = pa.table({"id": pa.array([1, 2, 3, 4, 5], pa.int64()), "x": pa.array([5, 3, 4, 1, 2], pa.int64())})
U = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "y": pa.array([7, 8, 9], pa.int64())})


def _schemas(**tables: pa.Table) -> tuple[TableSchema, ...]:
    return tuple(TableSchema(n, tuple(ColumnDef(f.name, from_arrow(f.type)) for f in t.schema))
                 for n, t in tables.items())


def _case(sql: str, **tables: pa.Table) -> Case:
    tables = tables or {"t": T}
    return Case(id="c", description="c", tags=(), schemas=_schemas(**tables), tables=tables,
                sql=sql, query=parse(sql))


@pytest.fixture(scope="module")
def judges():
    made = {name: get_engine(name) for name in ("reference", "duckdb", "duckdb~ntile")}
    for e in made.values():
        e.start()
    return made


def _verdicts(case: Case, judges) -> dict[str, Verdict]:
    return {r.engine: r.verdict for r in run_case(case, list(judges.values()))}


# -- `*` stands for every column of its source ---------------------------------------

NTILE_STAR = "SELECT * FROM (SELECT id, ntile(2) OVER (ORDER BY id) AS nt FROM t) q"


def test_star_over_a_derived_table_judges_every_column(judges):
    verdicts = _verdicts(_case(NTILE_STAR), judges)
    assert verdicts["duckdb"] is Verdict.MATCH
    assert verdicts["reference"] is Verdict.MATCH
    assert verdicts["duckdb~ntile"] is Verdict.MISMATCH


@pytest.mark.parametrize("sql, tables, visible", [
    ("SELECT * FROM t", ("t",), 2),
    (NTILE_STAR, ("t",), 2),
    ("SELECT q.*, 1 AS one FROM (SELECT id, x, x + 1 AS y FROM t) AS q", ("t",), 4),
    ("SELECT * FROM t JOIN u ON t.id = u.id", ("t", "u"), 4),
    ("SELECT u.*, t.x FROM t JOIN u ON t.id = u.id", ("t", "u"), 3),
    ("SELECT * FROM t AS a, u AS b, t AS c", ("t", "u"), 6),
    ("WITH c AS (SELECT id, x AS z, x FROM t) SELECT * FROM c", ("t",), 3),
    ("WITH c AS (SELECT * FROM t), d AS (SELECT c.*, u.y FROM c JOIN u ON c.id = u.id) "
     "SELECT * FROM d", ("t", "u"), 3),
    ("SELECT * FROM (SELECT * FROM t UNION ALL SELECT * FROM t) AS q", ("t",), 2),
])
def test_star_is_expanded_over_every_source(sql, tables, visible):
    plan = instrument(parse(sql), _schemas(**{n: {"t": T, "u": U}[n] for n in tables}))
    assert plan.visible == visible
    assert not any(isinstance(i.expr, Star) for i in _body(plan.query).items)


def _body(query):
    return getattr(query, "body", query)


def test_star_over_renamed_values_and_table_functions():
    values = Values(((Literal(1, INT32), Literal(2, INT32)),))
    star = (SelectItem(Star()),)
    renamed = Select(star, SubqueryRef(values, "v", ("a",)))
    plan = instrument(renamed, ())
    assert [i.expr.name for i in plan.query.items[:plan.visible]] == ["a", "column2"]
    series = Select(star, TableFunctionRef("generate_series", (Literal(1, INT64), Literal(3, INT64)),
                                           "g", ("n",)))
    assert [i.expr.name for i in instrument(series, ()).query.items] == ["n"]
    unnamed = Select(star, TableFunctionRef("range", (Literal(3, INT32),)))
    assert [i.expr.name for i in instrument(unnamed, ()).query.items] == ["range"]
    cte = With((CommonTable("c", parse("SELECT * FROM t"), ("a",)),),
               parse("SELECT * FROM c AS d ORDER BY x"))
    plan = instrument(cte, _schemas(t=T))
    assert [i.expr.name for i in plan.query.body.items[:plan.visible]] == ["a", "x"]
    assert plan.order_keys[0].column == 1


@pytest.mark.parametrize("sql", [
    # the inner `x + 1` has no name an outer query can write
    "SELECT * FROM (SELECT id, x + 1 FROM t) AS q",
    # two columns named id on one side: no reference to either is unambiguous
    "SELECT * FROM (SELECT t.id, u.id FROM t JOIN u ON t.id = u.id) AS q",
])
def test_a_star_that_cannot_be_expanded_judges_the_whole_answer(sql):
    plan = instrument(parse(sql), _schemas(t=T, u=U))
    assert plan.visible == -1 and plan.rowid_column is None


def test_unexpandable_star_still_judges_every_column(judges):
    sql = "SELECT * FROM (SELECT id, ntile(2) OVER (ORDER BY id) + 0 FROM t) AS q"
    verdicts = _verdicts(_case(sql), judges)
    assert verdicts["duckdb"] is Verdict.MATCH
    assert verdicts["duckdb~ntile"] is Verdict.MISMATCH


# -- ORDER BY and GROUP BY positions --------------------------------------------------


def _setup(sql: str):
    plan = instrument(parse(sql), _schemas(t=T))
    tables = with_rowid({"t": T}) if plan.rowid_column is not None else {"t": T}
    return plan, Oracle(plan.unlimited, tables)


def _reversed_answer(sql: str):
    plan, oracle = _setup(sql)
    answer = oracle.evaluate().table
    backwards = answer.take(pa.array(range(answer.num_rows - 1, -1, -1)))
    return compare(backwards, Judgement(plan, NULLS_LARGEST), oracle).verdict


@pytest.mark.parametrize("sql", [
    "SELECT id, x FROM t ORDER BY 2",
    "SELECT x, count(*) AS n FROM t GROUP BY x ORDER BY 1",
    "SELECT * FROM t ORDER BY 2 DESC",
    "SELECT x FROM t UNION ALL SELECT x + 10 FROM t ORDER BY 1",
    "WITH c AS (SELECT x FROM t) SELECT x FROM c ORDER BY 1",
    # a key that is no output column of a grouped query
    "SELECT x FROM t GROUP BY x ORDER BY max(id)",
])
def test_an_answer_in_the_wrong_order_fails(sql):
    assert _reversed_answer(sql) is Verdict.MISMATCH


def test_positions_name_output_columns():
    plan = instrument(parse("SELECT id, x FROM t ORDER BY 2 DESC, 1"), _schemas(t=T))
    assert [(k.column, k.descending) for k in plan.order_keys] == [(1, True), (0, False)]
    # a typed integer is a constant, not a position
    plan = instrument(parse("SELECT id, x FROM t ORDER BY CAST(2 AS BIGINT)"), _schemas(t=T))
    assert plan.order_keys[0].column == plan.visible + 1  # a hidden key, after the row id


def test_order_by_position_on_engines(judges):
    verdicts = _verdicts(_case("SELECT id, x FROM t ORDER BY 2 DESC"), judges)
    assert set(verdicts.values()) == {Verdict.MATCH}


@pytest.mark.parametrize("sql", [
    "SELECT x % 2 AS odd, count(*) AS n FROM t GROUP BY 1 ORDER BY 1",
    "SELECT x % 2, sum(id) FROM t GROUP BY 1 ORDER BY 2",
])
def test_group_by_position_groups_by_that_column(judges, sql):
    verdicts = _verdicts(_case(sql), judges)
    assert set(verdicts.values()) == {Verdict.MATCH}, verdicts


# -- aggregates inside window arguments -----------------------------------------------


def test_aggregate_inside_a_window_argument_makes_the_query_grouped(judges):
    case = _case("SELECT sum(min(x)) OVER () AS s FROM t")
    plan = instrument(case.query, case.schemas)
    assert plan.rowid_column is None
    assert set(_verdicts(case, judges).values()) == {Verdict.MATCH}


# -- untyped NULL arguments, and the reference's own failures --------------------------


def test_an_untyped_null_argument_takes_the_type_of_the_others():
    # lag/lead(value, offset, default): value and default are one type (anycompatible)
    sql = "SELECT id, lead(NULL, 1, false) OVER (ORDER BY id) AS v FROM t"
    table = Oracle(parse(sql), {"t": T}).evaluate().table
    assert table.schema.field("v").type == pa.bool_()
    assert table.column("v").to_pylist() == [None, None, None, None, False]


def test_an_untyped_null_with_nothing_to_take_a_type_from_is_a_gap(judges):
    # PostgreSQL 15: "function array_agg(unknown) is not unique"; DuckDB and
    # DataFusion answer a list of NULLs of no type. No answer is the standard's.
    sql = "SELECT id, array_agg(NULL) OVER (ORDER BY id) AS v FROM t"
    with pytest.raises(ReferenceGap, match="has no type but holds values"):
        Oracle(parse(sql), {"t": T}).evaluate()
    verdicts = _verdicts(_case(sql), judges)
    assert verdicts["reference"] is Verdict.ERROR and verdicts["duckdb"] is Verdict.INCONCLUSIVE


def test_an_internal_error_of_the_reference_is_a_gap(monkeypatch):
    import reference_impl.api as api

    def broken(*args, **kwargs):
        raise ZeroDivisionError("planted")

    monkeypatch.setattr(api, "evaluate_query", broken)  # what `evaluate` calls
    with pytest.raises(ReferenceGap, match="internal error of the reference: ZeroDivisionError: planted"):
        Oracle(parse("SELECT id FROM t"), {"t": T}).evaluate()


# -- HUGEINT literals -------------------------------------------------------------------


@pytest.mark.parametrize("value", [5, -(10 ** 37), 10 ** 38 - 1])
def test_a_hugeint_literal_reads_writes_and_evaluates(value):
    query = parse(f"SELECT CAST({value} AS HUGEINT) AS h FROM t")
    assert query.items[0].expr == Literal(value, INT128)
    assert parse(write(query)) == query
    assert Oracle(query, {"t": T}).evaluate().table.column("h").to_pylist() == [value] * 5


def test_a_hugeint_literal_on_duckdb(judges):
    assert set(_verdicts(_case("SELECT id, CAST(5 AS HUGEINT) AS h FROM t"), judges).values()) == {
        Verdict.MATCH}


# -- a token the parser cannot read is reported there ----------------------------------


@pytest.mark.parametrize("sql, where, token", [
    ("SELECT sum(x) OVER w FROM t TABLESAMPLE SYSTEM (10) WINDOW w AS (ORDER BY x)", "1:41", "'SYSTEM'"),
    ("SELECT sum(x) OVER w\nFROM t, LATERAL (SELECT 1) AS s\nWINDOW w AS (ORDER BY x)", "2:17", "'('"),
    ("SELECT sum(x) OVER w FROM t ORDER BY x FETCH FIRST 2 ROWS ONLY", "1:40", "'FETCH'"),
    ("WITH c AS (SELECT sum(x) OVER w FROM t TABLESAMPLE SYSTEM (1) WINDOW w AS ()) SELECT * FROM c",
     "1:52", "'SYSTEM'"),
])
def test_an_unreadable_token_is_reported_before_an_undefined_window(sql, where, token):
    with pytest.raises(InvalidQuery) as raised:
        parse(sql)
    assert str(raised.value).startswith(f"{where}: ") and token in str(raised.value)


def test_the_issue_example_now_reads_as_a_table_function():
    # The query that once reported "window 'w' is not defined" is valid SQL.
    q = parse("SELECT x, sum(x) OVER w FROM generate_series(1,5) g(x) WINDOW w AS (ORDER BY x)")
    assert isinstance(q.source, TableFunctionRef) and q.source.columns == ("x",)


def test_an_undefined_window_is_still_refused():
    with pytest.raises(InvalidQuery, match="window 'w' is not defined"):
        parse("SELECT sum(x) OVER w FROM t WINDOW v AS (ORDER BY x) ORDER BY 1")


# -- OVER (w) copies w; GROUPS needs ORDER BY ------------------------------------------

FRAMED = "WINDOW w AS (ORDER BY id ROWS BETWEEN CURRENT ROW AND CURRENT ROW)"


def test_over_parenthesized_name_is_kept_apart_from_over_name():
    bare = parse(f"SELECT sum(x) OVER w FROM t {FRAMED}")
    copied = parse("SELECT sum(x) OVER (w) FROM t WINDOW w AS (ORDER BY id)")
    assert not bare.items[0].expr.window.parenthesized
    assert copied.items[0].expr.window == WindowSpec(base="w", parenthesized=True)
    assert "OVER (w)" in write(copied) and parse(write(copied)) == copied
    assert "OVER w" in write(bare) and parse(write(bare)) == bare
    with pytest.raises(Unsupported, match="window.refine-named"):
        write(copied, get_dialect("spark"))


@pytest.mark.parametrize("sql, kind", [
    (f"SELECT id, sum(x) OVER (w) AS s FROM t {FRAMED}", "framed-window-copy"),
    (f"SELECT id, sum(x) OVER w2 AS s FROM t {FRAMED}, w2 AS (w)", "framed-window-copy"),
    (f"SELECT id, sum(x) OVER (w ORDER BY x) AS s FROM t {FRAMED.replace('ORDER BY id ', '')}",
     "framed-window-copy"),
    ("SELECT id, sum(x) OVER (GROUPS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS s FROM t",
     "groups-without-order-by"),
])
def test_invalid_window_definitions_are_refused_by_the_reference(sql, kind):
    with pytest.raises(InvalidQuery):
        parse(f"SELECT 1 AS one FROM t {FRAMED}, w2 AS (w)")  # even unused, as PostgreSQL
    query = parse(sql, keep_invalid=True)
    case = Case(id="c", description="c", tags=(), schemas=_schemas(t=T), tables={"t": T},
                sql=sql, query=query, error="invalid")
    plan = instrument(query, case.schemas)  # analysing a query meant to fail does not raise
    with pytest.raises(EvaluationError) as raised:
        Oracle(plan.unlimited, with_rowid({"t": T})).evaluate()
    assert invalid_kind(str(raised.value)) is KINDS_BY_NAME[kind]


def test_a_framed_window_used_as_it_is_is_valid():
    sql = f"SELECT id, sum(x) OVER w AS s FROM t {FRAMED}, w2 AS (ORDER BY id)"
    assert Oracle(parse(sql), {"t": T}).evaluate().table.column("s").to_pylist() == [5, 3, 4, 1, 2]


def test_an_order_that_cannot_be_checked_is_said():
    # A `*` that cannot be written out leaves the query as it is: no hidden key.
    plan, oracle = _setup("SELECT * FROM (SELECT id, x + 1 FROM t) AS q ORDER BY id")
    assert plan.order_keys is None
    outcome = compare(oracle.evaluate().table, Judgement(plan, NULLS_LARGEST), oracle)
    assert outcome.verdict is Verdict.MATCH and UNCHECKED_ORDER in outcome.notes


@pytest.mark.postgres
@pytest.mark.parametrize("sql, refused", [
    (f"SELECT id, sum(x) OVER (w) AS s FROM t {FRAMED}", "cannot copy window"),
    ("SELECT id, sum(x) OVER (GROUPS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS s FROM t",
     "GROUPS mode requires an ORDER BY"),
])
def test_postgres_refuses_what_the_reference_refuses(engines, sql, refused):
    postgres = engines.get("postgres")
    case = Case(id="c", description="c", tags=(), schemas=_schemas(t=T), tables={"t": T},
                sql=sql, query=parse(sql, keep_invalid=True), error="invalid")
    (result,) = run_case(case, [postgres])
    assert result.verdict is Verdict.REJECTED_AS_EXPECTED and refused in result.notes[0]


def test_a_case_with_fewer_columns_than_an_uninstrumented_answer_fails():
    from harness.cases.case import Expected
    from harness.judge.compare import compare_expected

    plan, oracle = _setup("SELECT id FROM t UNION ALL SELECT x FROM t ORDER BY 1")
    assert plan.visible == -1
    rows = sorted([(v,) for v in [1, 2, 3, 4, 5] * 2])
    judged = compare_expected(Expected(("id",), tuple(rows)), Judgement(plan, NULLS_LARGEST), oracle)
    assert judged.verdict is Verdict.MATCH
    plan, oracle = _setup("SELECT id, x FROM t UNION ALL SELECT x, id FROM t")
    short = compare_expected(Expected(("id",), tuple(rows)), Judgement(plan, NULLS_LARGEST), oracle)
    assert short.verdict is Verdict.MISMATCH and "expects 1 columns, the query has 2" in short.detail


@pytest.mark.parametrize("engine", [
    "datafusion",  # "This feature is not implemented: Unsupported SQL type HUGEINT" (55.2.0)
    pytest.param("spark", marks=pytest.mark.spark),  # [UNSUPPORTED_DATATYPE] (4.3.0)
    pytest.param("postgres", marks=pytest.mark.postgres),  # the dialect's type.hugeint
])
def test_engines_without_hugeint_are_unsupported(engines, engine):
    (result,) = run_case(_case("SELECT id, CAST(5 AS HUGEINT) AS h FROM t"), [engines.get(engine)])
    assert result.verdict is Verdict.UNSUPPORTED, (result.verdict, result.detail)


def test_stars_inside_subqueries_of_a_row_level_query_are_written_out():
    # Every table carries the hidden row id then: `SELECT *` inside would pick it up.
    inner = Select((SelectItem(Star()),), TableRef("u"))
    query = Select((SelectItem(Column("id")), SelectItem(Exists(inner), "e")), TableRef("t"),
                   where=InSubquery(Column("id"), inner))
    plan = instrument(query, _schemas(t=T, u=U))
    assert plan.rowid_column is not None
    nested = [n for n in walk(plan.query) if isinstance(n, Select) and n is not plan.query]
    assert nested and all(not any(isinstance(i.expr, Star) for i in s.items) for s in nested)
    assert [i.expr.name for i in nested[0].items] == ["id", "y"]


def test_group_by_all_gets_no_hidden_column():
    # A hidden ORDER BY key in the select list would be one more GROUP BY ALL key.
    query = replace(parse("SELECT x, count(*) AS n FROM t GROUP BY x ORDER BY max(id)"),
                    group_by=(AllColumns(),))
    plan = instrument(query, _schemas(t=T))
    assert len(plan.query.items) == plan.visible == 2 and plan.order_keys is None


# -- through every new construct, a wrong answer still fails ----------------------------
# A wrong value in the last column, rows in the wrong order, and a value no
# order of tied rows gives: each must fail, whatever the query is built from.

TIED = pa.table({"id": pa.array([1, 2, 3, 4, 5, 6], pa.int64()),
                 "g": pa.array([1, 1, 1, 2, 2, 2], pa.int64()),
                 "x": pa.array([10, 20, 20, 30, 30, 40], pa.int64())})

NEW_CONSTRUCTS = [
    "SELECT * FROM (SELECT id, x, row_number() OVER (ORDER BY x ASC) AS rn FROM t) q ORDER BY id",
    "SELECT q.* FROM (SELECT id, x, row_number() OVER (ORDER BY x ASC) AS rn FROM t) AS q ORDER BY 1",
    "SELECT id, x, row_number() OVER (ORDER BY x ASC) AS rn FROM t QUALIFY rn <= 5 ORDER BY ALL",
    "SELECT id, (SELECT max(x) FROM t) - x AS x, row_number() OVER (ORDER BY x ASC) AS rn FROM t "
    "ORDER BY id",
    "WITH c(i, v) AS (SELECT id, x FROM t) SELECT i AS id, v AS x, row_number() OVER (ORDER BY v ASC) "
    "AS rn FROM c ORDER BY i",
    "SELECT v.id, v.x, row_number() OVER (ORDER BY v.x ASC) AS rn "
    "FROM (VALUES (1, 10), (2, 20), (3, 20), (4, 30)) AS v(id, x) ORDER BY v.id",
    "SELECT s.n AS id, t.x, row_number() OVER (ORDER BY t.x ASC) AS rn "
    "FROM generate_series(1, 6) AS s(n) JOIN t ON t.id = s.n ORDER BY s.n",
    "SELECT id, x, row_number() OVER (ORDER BY x ASC ROWS BETWEEN 1 + 1 PRECEDING AND CURRENT ROW) AS rn "
    "FROM t WHERE x IN (10, 20, 30, 40) ORDER BY id",
]


def _judged(sql: str, mutate) -> Verdict:
    plan = instrument(parse(sql), _schemas(t=TIED))
    tables = with_rowid({"t": TIED}) if plan.rowid_column is not None else {"t": TIED}
    oracle = Oracle(plan.unlimited, tables)
    answer = oracle.evaluate().table
    return compare(mutate(answer, plan), Judgement(plan, NULLS_LARGEST), oracle).verdict


def _user_columns(answer: pa.Table, plan) -> int:
    return answer.num_columns if plan.visible < 0 else plan.visible


def _set(answer: pa.Table, column: int, values: list) -> pa.Table:
    return answer.set_column(column, answer.field(column), pa.array(values, answer.field(column).type))


def _wrong_last_value(answer: pa.Table, plan) -> pa.Table:
    last = _user_columns(answer, plan) - 1
    values = answer.column(last).to_pylist()
    values[-1] = values[-1] + 100
    return _set(answer, last, values)


def _reversed(answer: pa.Table, plan) -> pa.Table:
    return answer.take(pa.array(range(answer.num_rows - 1, -1, -1)))


def _tied_rows_share_a_number(answer: pa.Table, plan) -> pa.Table:
    """Two rows tied on x get the same row_number: no order of peers gives that."""
    names = answer.column_names
    xs, rn = answer.column(names.index("x")).to_pylist(), names.index("rn")
    first, second = next((i, j) for i in range(len(xs)) for j in range(i + 1, len(xs)) if xs[i] == xs[j])
    values = answer.column(rn).to_pylist()
    values[second] = values[first]
    return _set(answer, rn, values)


@pytest.mark.parametrize("sql", NEW_CONSTRUCTS)
@pytest.mark.parametrize("mutate", [_wrong_last_value, _reversed, _tied_rows_share_a_number],
                         ids=["last-column", "row-order", "tied-rows"])
def test_a_wrong_answer_fails_through_every_new_construct(sql, mutate):
    assert _judged(sql, lambda answer, plan: answer) is Verdict.MATCH
    assert _judged(sql, mutate) is Verdict.MISMATCH


def test_an_aggregate_as_the_operand_of_in_makes_the_query_grouped():
    # IN's operand belongs to the outer query (its subquery does not): a row id
    # added to this one-row grouped query would be no grouping key.
    grouped = instrument(parse("SELECT max(x) IN (SELECT x FROM t) AS m FROM t"), _schemas(t=T))
    row_level = instrument(parse("SELECT x IN (SELECT max(x) FROM t) AS m FROM t"), _schemas(t=T))
    assert grouped.rowid_column is None and row_level.rowid_column is not None


# -- the search for an order of tied rows, one column within one partition at a time ----
# (issue 19, item 7): splitting the search must never check less than the whole.

def _tied(sql: str, groups: int, size: int):
    """A row-level query over `groups` partitions of `size` rows tied on k, and its oracle."""
    n = groups * size
    table = pa.table({"id": pa.array(range(1, n + 1), pa.int64()),
                      "g": pa.array([i // size for i in range(n)], pa.int64()),
                      "k": pa.array([0] * n, pa.int64())})
    plan = instrument(parse(sql), _schemas(t=table))
    return plan, Oracle(plan.unlimited, with_rowid({"t": table}))


def _order(perm_of):
    return lambda key, rows: perm_of(len(rows))


def _with_column(table: pa.Table, column: int, values: list) -> pa.Table:
    return table.set_column(column, table.field(column), pa.array(values, type=table.field(column).type))


ONE_COLUMN_TWO_EXPRS = ("SELECT id, row_number() OVER w * 100 + lag(id, 1, 0) OVER w AS c FROM t "
                        "WINDOW w AS (PARTITION BY g ORDER BY k ASC NULLS LAST)")


@pytest.mark.parametrize("size", [3, 30])
def test_expressions_of_one_column_share_one_order_of_ties(size):
    # Each half of the column is possible alone (row_number under input order, lag
    # under the reverse order), together under no order: row_number's values name
    # the order, and under it lag differs. Three partitions of `size` ties: within
    # the budget the search tries them all (a mismatch); past it, never a pass.
    plan, oracle = _tied(ONE_COLUMN_TWO_EXPRS, 3, size)
    forward = oracle.evaluate(_order(lambda n: list(range(n)))).table
    backward = oracle.evaluate(_order(lambda n: list(range(n))[::-1])).table
    rn = [v // 100 for v in forward.column(1).to_pylist()]
    lag = [v % 100 for v in backward.column(1).to_pylist()]
    mixed = _with_column(backward, 1, [r * 100 + p for r, p in zip(rn, lag, strict=True)])
    outcome = compare(mixed, Judgement(plan, NULLS_LARGEST), oracle)
    assert outcome.verdict is not Verdict.MATCH
    if size == 3:
        assert outcome.verdict is Verdict.MISMATCH
    assert compare(backward, Judgement(plan, NULLS_LARGEST), oracle).verdict is Verdict.MATCH


def test_a_split_search_still_judges_every_cell_and_row():
    # Partition 0 has 40 tied rows; partition 1 is one row (no ties), so its lag
    # cell depends on no order, and is checked as it is.
    sql = "SELECT id, lag(id, 1, -1) OVER (PARTITION BY g ORDER BY k ASC NULLS LAST) AS prev FROM t"
    table = pa.table({"id": pa.array(range(1, 42), pa.int64()),
                      "g": pa.array([0] * 40 + [1], pa.int64()), "k": pa.array([0] * 41, pa.int64())})
    plan = instrument(parse(sql), _schemas(t=table))
    oracle = Oracle(plan.unlimited, with_rowid({"t": table}))
    right = oracle.evaluate(_order(lambda n: list(range(n))[::-1])).table
    judge = Judgement(plan, NULLS_LARGEST)
    assert compare(right, judge, oracle).verdict is Verdict.MATCH
    prev = right.column(1).to_pylist()
    for row, value in [(40, 5), (3, 999), (0, 41)]:  # the lone row; a missing id; the other partition's id
        wrong = prev.copy()
        wrong[row] = value
        assert compare(_with_column(right, 1, wrong), judge, oracle).verdict is Verdict.MISMATCH, row
    assert compare(right.slice(1), judge, oracle).verdict is Verdict.MISMATCH  # a row left out
    twice = pa.concat_tables([right.slice(0, 40), right.slice(0, 1)])
    assert compare(twice, judge, oracle).verdict is Verdict.MISMATCH  # a row twice, one missing


def test_the_last_column_the_order_and_a_value_among_ties_are_each_judged():
    """Through the unit-by-unit search (issue 19): a right answer under another order
    of tied rows matches; a wrong value in the LAST column, two rows swapped under the
    query's ORDER BY, and a wrong value inside a tie group each fail."""
    sql = ("SELECT id, k, lag(id, 1, -1) OVER (PARTITION BY g ORDER BY k ASC NULLS LAST) AS prev, "
           "sum(id) OVER (PARTITION BY g ORDER BY k ASC NULLS LAST ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s "
           "FROM t ORDER BY id ASC NULLS LAST")
    table = pa.table({"id": pa.array(range(1, 13), pa.int64()), "g": pa.array([0] * 6 + [1] * 6, pa.int64()),
                      "k": pa.array([1, 1, 1, 2, 2, 3] * 2, pa.int64())})
    plan = instrument(parse(sql), _schemas(t=table))
    oracle = Oracle(plan.unlimited, with_rowid({"t": table}))
    right = oracle.evaluate(_order(lambda n: list(range(n))[::-1])).table
    judge = Judgement(plan, NULLS_LARGEST)
    assert compare(right, judge, oracle).verdict is Verdict.MATCH
    last = right.column(3).to_pylist()
    assert compare(_with_column(right, 3, [*last[:-1], last[-1] + 1]), judge, oracle).verdict is Verdict.MISMATCH
    swapped = right.take(pa.array([1, 0, *range(2, right.num_rows)]))
    assert compare(swapped, judge, oracle).verdict is Verdict.MISMATCH
    tied = right.column(2).to_pylist()
    tied[1] = 999  # row 2 ties with rows 1 and 3 on k; no order gives lag 999
    assert compare(_with_column(right, 2, tied), judge, oracle).verdict is Verdict.MISMATCH


# -- INTERVAL answers: one value, several encodings (issue 19, items 3 and 8) ------------

IV = pa.table({"id": pa.array([1, 2, 3], pa.int64()),
               "iv": pa.array([dt.timedelta(hours=1), dt.timedelta(days=1), None], pa.duration("us"))})
_MDN = pa.month_day_nano_interval()


def _interval_verdict(column: pa.Array) -> Verdict:
    """The verdict on `SELECT id, max(iv) OVER () AS m FROM t` (m is 1 day) when
    an engine answers m as `column`."""
    plan = instrument(parse("SELECT id, max(iv) OVER () AS m FROM t ORDER BY id"), _schemas(t=IV))
    tables = with_rowid({"t": IV})
    oracle = Oracle(plan.unlimited, tables)
    answer = oracle.evaluate().table
    m = answer.column_names.index("m")
    answer = answer.set_column(m, pa.field("m", column.type), column)
    return compare(answer, Judgement(plan, NULLS_LARGEST), oracle).verdict


@pytest.mark.parametrize("column", [
    pa.array([dt.timedelta(days=1)] * 3, pa.duration("us")),  # as the reference has it
    pa.array([86_400 * 10**9] * 3, pa.duration("ns")),  # another unit
    pa.array([pa.MonthDayNano([0, 1, 0])] * 3, _MDN),  # DataFusion's days apart
    pa.array([pa.MonthDayNano([0, 0, 86_400 * 10**9])] * 3, _MDN),  # DuckDB's nanoseconds
    pa.array([pa.MonthDayNano([0, 2, -86_400 * 10**9])] * 3, _MDN),  # PostgreSQL's '2 days -24:00:00'
], ids=["duration-us", "duration-ns", "mdn-days", "mdn-nanos", "mdn-mixed-signs"])
def test_one_interval_in_any_encoding_matches(column):
    assert _interval_verdict(column) is Verdict.MATCH


@pytest.mark.parametrize("column", [
    pa.array([dt.timedelta(days=1, microseconds=1)] * 3, pa.duration("us")),
    pa.array([pa.MonthDayNano([0, 1, 1])] * 3, _MDN),  # a nanosecond off
    pa.array([pa.MonthDayNano([0, 0, 86_400 * 10**9])] * 2 + [pa.MonthDayNano([0, 0, 0])], _MDN),
    # A month is no fixed number of days: 1 month - 29 days is not 1 day, nor is 30 days - 29 days.
    pa.array([pa.MonthDayNano([1, -29, 0])] * 3, _MDN),
    pa.array([None] * 3, _MDN),
], ids=["a-microsecond-off", "a-nanosecond-off", "last-row-off", "with-months", "null"])
def test_a_wrong_interval_fails(column):
    assert _interval_verdict(column) is Verdict.MISMATCH


def test_an_interval_answered_as_a_number_is_a_type_mismatch():
    assert _interval_verdict(pa.array([86_400_000_000] * 3, pa.int64())) is Verdict.TYPE_MISMATCH


def test_an_ordered_interval_with_months_is_a_mismatch_not_a_crash():
    plan = instrument(parse("SELECT id, iv FROM t ORDER BY iv"), _schemas(t=IV))
    tables = with_rowid({"t": IV})
    oracle = Oracle(plan.unlimited, tables)
    answer = oracle.evaluate().table
    months = pa.array([pa.MonthDayNano([0, 0, 3_600 * 10**9]), pa.MonthDayNano([1, 0, 0]), None], _MDN)
    answer = answer.set_column(1, pa.field("iv", _MDN), months)
    assert compare(answer, Judgement(plan, NULLS_LARGEST), oracle).verdict is Verdict.MISMATCH


# -- a wrong value in an ORDER BY column (issue 20, item 8) ---------------------------


def test_a_wrong_value_in_an_order_by_column_fails_and_is_named_as_a_value(judges):
    """The faulty ntile's wrong values are an ORDER BY column: its rows sort into
    other groups than the reference's. Still a mismatch, told as a value difference
    in that column (which row), not as a row count."""
    case = _case("SELECT id, ntile(2) OVER (ORDER BY id) AS nt FROM t ORDER BY nt, id")
    results = {r.engine: r for r in run_case(case, list(judges.values()))}
    assert results["duckdb"].verdict is Verdict.MATCH
    wrong = results["duckdb~ntile"]
    assert wrong.verdict is Verdict.MISMATCH
    assert "a value difference in ORDER BY column nt" in wrong.detail, wrong.detail
    assert "input row" in wrong.detail and "were expected" not in wrong.detail, wrong.detail
