"""The reference on subqueries in expressions and IN lists: the standard's
values (one row or NULL, three-valued IN), correlation through outer scopes,
and how often a subquery is run."""

from __future__ import annotations

import pyarrow as pa
import pytest

from harness.campaign.batching import NotBatchable, batch_query
from harness.core.dialect import NULLS_LARGEST
from harness.core.errors import EvaluationError, InvalidQuery
from harness.core.model import ColumnDef, TableSchema
from harness.core.types import INT64
from harness.judge.compare import Judgement, Verdict, compare
from harness.judge.instrument import instrument, with_rowid
from harness.judge.oracle import Oracle
from harness.sql import parse
from reference_impl import evaluate
from reference_impl import subqueries as subqueries_module

T = pa.table({
    "id": pa.array([1, 2, 3, 4, 5, 6, 7], pa.int64()),
    "k": pa.array([1, 1, 1, 2, 2, None, None], pa.int64()),
    "v": pa.array([10, None, 10, 20, 30, None, 5], pa.int64()),
})
E = pa.table({"id": pa.array([], pa.int64()), "v": pa.array([], pa.int64())})
TABLES = {"t": T, "e": E}


def rows(sql: str) -> list[tuple]:
    table = evaluate(parse(sql), TABLES).table
    return [tuple(r.values()) for r in table.to_pylist()]


def column(sql: str) -> list[object]:
    return [r[-1] for r in rows(sql + " ORDER BY id ASC")]


def test_scalar_subquery_is_its_one_value_or_null() -> None:
    assert column("SELECT id, (SELECT max(v) FROM t) AS x FROM t") == [30] * 7
    assert column("SELECT id, (SELECT v FROM e) AS x FROM t") == [None] * 7


@pytest.mark.parametrize("sql, message", [
    ("SELECT id, (SELECT v FROM t) AS x FROM t", "more than one row"),
    ("SELECT id, (SELECT id, v FROM t) AS x FROM t", "one column"),
    ("SELECT id FROM t WHERE v IN (SELECT id, v FROM t)", "one column"),
])
def test_a_subquery_of_the_wrong_shape_is_an_error(sql: str, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        rows(sql)


def test_more_rows_are_an_error_only_where_evaluated() -> None:
    # The CASE never reaches the subquery: no error, as on every engine.
    assert column("SELECT id, CASE WHEN id > 10 THEN (SELECT v FROM t) END AS x FROM t") == [
        None] * 7


@pytest.mark.parametrize("sql, expected", [
    # x IN (10, NULL, 10): TRUE on a match, else NULL (unknown), NULL for x NULL.
    ("v IN (SELECT u.v FROM t AS u WHERE u.k = 1)", [True, None, True, None, None, None, None]),
    # NOT IN: every value matches some row, NULL x is unknown.
    ("v NOT IN (SELECT u.v FROM t AS u)", [False, None, False, False, False, None, False]),
    # Over no rows: FALSE, even for a NULL x.
    ("v IN (SELECT e.v FROM e)", [False] * 7),
    ("v NOT IN (SELECT e.v FROM e)", [True] * 7),
    ("v IN (10, NULL)", [True, None, True, None, None, None, None]),
    ("v NOT IN (10, 5)", [False, None, False, True, True, None, False]),
    ("EXISTS (SELECT 1 FROM t AS u WHERE u.v > 25)", [True] * 7),
    ("NOT EXISTS (SELECT 1 FROM e)", [True] * 7),
])
def test_in_and_exists_values(sql: str, expected: list) -> None:
    assert column(f"SELECT id, {sql} AS x FROM t") == expected


def test_correlated_subqueries_read_the_outer_row() -> None:
    assert column("SELECT id, (SELECT count(*) FROM t AS u WHERE u.k = t.k) AS x FROM t") == [
        3, 3, 3, 2, 2, 0, 0]
    assert column("SELECT id, v IN (SELECT u.v FROM t AS u WHERE u.k = t.k AND u.id <> t.id) "
                  "AS x FROM t") == [True, None, True, False, False, False, False]
    assert rows("SELECT id FROM t WHERE EXISTS (SELECT 1 FROM t AS u WHERE u.k = t.k AND "
                "u.v > t.v)") == [(4,)]


def test_a_column_resolves_in_the_nearest_query_first() -> None:
    # `k` is u's own column, so the subquery is not correlated: count where
    # u.k = u.k, the five rows with a k.
    assert column("SELECT id, (SELECT count(*) FROM t AS u WHERE u.k = k) AS x FROM t") == [5] * 7
    # Two levels out: w reads t (the outermost query) and u.
    assert column("SELECT id, (SELECT count(*) FROM t AS u WHERE EXISTS (SELECT 1 FROM t AS w "
                  "WHERE w.k = t.k AND w.id = u.id)) AS x FROM t") == [3, 3, 3, 2, 2, 0, 0]
    with pytest.raises(InvalidQuery, match="does not exist"):
        rows("SELECT id, (SELECT count(*) FROM t AS u WHERE u.k = nowhere) AS x FROM t")


def test_scalar_subqueries_over_window_results() -> None:
    # avg(v) over 10, 10, 20, 30, 5 is 15.
    assert rows("SELECT id, v - (SELECT avg(v) FROM t) AS dev, rank() OVER (ORDER BY v ASC "
                "NULLS LAST) AS r FROM t ORDER BY id ASC") == [
        (1, -5.0, 2), (2, None, 6), (3, -5.0, 2), (4, 5.0, 4), (5, 15.0, 5), (6, None, 6),
        (7, -10.0, 1)]
    # count(*) / 2 = 3 (integer division): the first three rows by id.
    assert rows("SELECT id FROM (SELECT id, row_number() OVER (ORDER BY id ASC) AS rn FROM t) "
                "AS q WHERE rn <= (SELECT count(*) / 2 FROM t) ORDER BY id ASC") == [
        (1,), (2,), (3,)]
    # The window inside the subquery is computed inside it, over its own rows.
    assert column("SELECT id, (SELECT max(q.rn) FROM (SELECT u.k, row_number() OVER (ORDER BY "
                  "u.id ASC) AS rn FROM t AS u) AS q WHERE q.k = t.k) AS x FROM t") == [
        3, 3, 3, 5, 5, None, None]


def test_subqueries_inside_windows() -> None:
    # sum(v - 5) running over id: 5, 5, 10, 25, 50, 50, 50.
    assert column("SELECT id, sum(v - (SELECT min(v) FROM t)) OVER (ORDER BY id ASC) AS x "
                  "FROM t") == [5, 5, 10, 25, 50, 50, 50]
    # Partitions by the correlated count (3, 3, 3, 2, 2, 0, 0) hold k=1, k=2, k NULL.
    assert column("SELECT id, sum(v) OVER (PARTITION BY (SELECT count(*) FROM t AS u WHERE "
                  "u.k = t.k) ORDER BY id ASC) AS x FROM t") == [10, 10, 20, 20, 50, None, 5]
    assert column("SELECT id, count(*) FILTER (WHERE v IN (SELECT u.v FROM t AS u WHERE "
                  "u.k = 1)) OVER (ORDER BY id ASC) AS x FROM t") == [1, 1, 2, 2, 2, 2, 2]


def test_an_aggregate_in_a_subquery_does_not_group_the_outer_query() -> None:
    assert column("SELECT id, (SELECT max(v) FROM t) AS x FROM t") == [30] * 7
    assert rows("SELECT k, count(*) AS c FROM t GROUP BY k HAVING count(*) > "
                "(SELECT count(*) FROM t AS u WHERE u.k = t.k) - 1 ORDER BY k ASC NULLS LAST") == [
        (1, 3), (2, 2), (None, 2)]


def test_a_subquery_sees_the_common_tables_in_scope() -> None:
    assert column("WITH c AS (SELECT 42 AS z) SELECT id, (SELECT z FROM c) AS x FROM t") == [
        42] * 7


def test_runs_once_uncorrelated_and_once_per_distinct_outer_row(monkeypatch) -> None:
    runs: list[int] = []
    original = subqueries_module.Subquery._run

    def counted(self, row):
        runs.append(1)
        return original(self, row)

    monkeypatch.setattr(subqueries_module.Subquery, "_run", counted)
    rows("SELECT id, (SELECT max(v) FROM t) AS x FROM t")
    assert len(runs) == 1  # the typing run is the only one
    runs.clear()
    rows("SELECT id, (SELECT count(*) FROM t AS u WHERE u.k = t.k) AS x FROM t")
    assert len(runs) == 1 + 7  # the typing run, then one per distinct outer row


def test_a_subquery_aggregate_leaves_the_query_row_level() -> None:
    # `(SELECT max(v) FROM t)` aggregates the subquery's rows, not the outer
    # query's: the query stays row-level, judged row by row through the row id.
    sql = "SELECT id, v - (SELECT max(u.v) FROM t AS u) AS x FROM t"
    schema = TableSchema("t", tuple(ColumnDef(c, INT64) for c in ("id", "k", "v")))
    plan = instrument(parse(sql), (schema,))
    assert plan.rowid_column is not None
    oracle = Oracle(plan.unlimited, with_rowid({"t": T}))
    answer = oracle.evaluate().table
    judgement = Judgement(plan, NULLS_LARGEST)
    assert compare(answer, judgement, oracle).verdict is Verdict.MATCH
    wrong = answer.column(1).to_pylist()
    wrong[0] = -19  # 10 - 30 is -20
    spoiled = answer.set_column(1, answer.field(1), pa.array(wrong, answer.field(1).type))
    assert compare(spoiled, judgement, oracle).verdict is Verdict.MISMATCH


@pytest.mark.parametrize("sql", [
    "SELECT id, v - (SELECT avg(v) FROM t) AS x FROM t",
    "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM t AS u WHERE u.k = t.k)",
    "SELECT q.id FROM (SELECT id, v IN (SELECT v FROM t) AS b FROM t) AS q",
    "SELECT id, sum(v) OVER (PARTITION BY v > (SELECT avg(v) FROM t)) AS x FROM t",
])
def test_a_query_with_a_subquery_runs_alone(sql: str) -> None:
    # Stacked, `(SELECT avg(v) FROM t)` would average every case's rows.
    with pytest.raises(NotBatchable, match="subquery"):
        batch_query(parse(sql))
    assert batch_query(parse("SELECT id, v IN (1, 2) AS x FROM t"))  # an IN list is batched


def test_an_outer_column_as_the_subquery_item() -> None:
    # u.id = 1 picks one row of u; its item is the outer row's v.
    assert column("SELECT id, (SELECT t.v FROM t AS u WHERE u.id = 1) AS x FROM t") == [
        10, None, 10, 20, 30, None, 5]
