"""The reference's sources beyond tables: derived tables without an alias or
with a column list, WITH column lists, VALUES, generate_series and range; and
the instrumenter's refusal to judge a `*` over them on its first column only."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
import pytest

from harness.core import types as T
from harness.core.errors import EvaluationError, InvalidQuery, ReferenceGap
from harness.core.model import (
    Column,
    ColumnDef,
    Literal,
    Select,
    SelectItem,
    Star,
    TableFunctionRef,
    TableSchema,
    Values,
)
from harness.judge.instrument import instrument
from harness.sql import parse
from reference_impl.testing import run, table

T1 = table(id=("bigint", [1, 2, 3]), v=("integer", [10, 20, 30]))


def answer(sql: str) -> list[tuple]:
    return [tuple(r.values()) for r in run(parse(sql), T1).table.to_pylist()]


def names_and_types(sql: str) -> list[tuple[str, pa.DataType]]:
    return [(f.name, f.type) for f in run(parse(sql), T1).table.schema]


# -- derived tables and WITH ------------------------------------------------------


def test_a_derived_table_without_alias_is_read_unqualified():
    assert answer("SELECT id FROM (SELECT id FROM t WHERE v > 10)") == [(2,), (3,)]


def test_a_column_list_renames_a_derived_tables_columns_in_order():
    sql = "SELECT q.b, a FROM (SELECT id, v FROM t) AS q(a, b) WHERE a = 2"
    assert answer(sql) == [(20, 2)]
    with pytest.raises(InvalidQuery, match="does not exist"):
        answer("SELECT q.id FROM (SELECT id, v FROM t) AS q(a, b)")


@pytest.mark.parametrize("sql", [
    "SELECT a FROM (SELECT id, v FROM t) AS q(a)",
    "SELECT a FROM (SELECT id, v FROM t) AS q(a, b, c)",
    "WITH c(a) AS (SELECT id, v FROM t) SELECT a FROM c",
])
def test_a_column_list_must_name_every_column(sql):
    # The standard's rule; PostgreSQL and DuckDB take a shorter list.
    with pytest.raises(EvaluationError, match="column list"):
        answer(sql)


def test_a_with_query_column_list_feeds_a_window():
    sql = ("WITH c(a, b) AS (SELECT id, v FROM t) "
           "SELECT a, sum(b) OVER (ORDER BY a DESC) AS s FROM c")
    assert sorted(answer(sql)) == [(1, 60), (2, 50), (3, 30)]


# -- VALUES -----------------------------------------------------------------------


def test_values_columns_are_column1_to_n_of_the_common_type():
    sql = "SELECT * FROM (VALUES (1, 'a'), (2.5, NULL), (NULL, 'c')) AS v"
    assert names_and_types(sql) == [("column1", pa.decimal128(11, 1)), ("column2", pa.string())]
    assert answer(sql) == [(Decimal("1.0"), "a"), (Decimal("2.5"), None), (None, "c")]


def test_values_in_from_and_in_with_with_column_lists():
    assert answer("SELECT y, x FROM (VALUES (1, 'a'), (2, 'b')) AS v(x, y)") == [("a", 1), ("b", 2)]
    assert answer("WITH v(x) AS (VALUES (3), (4)) SELECT x + 1 AS y FROM v") == [(4,), (5,)]


def test_values_at_the_top_and_in_union_all():
    assert answer("VALUES (1, 'a'), (2, 'b')") == [(1, "a"), (2, "b")]
    assert answer("SELECT id FROM t WHERE id = 1 UNION ALL VALUES (CAST(7 AS BIGINT))") == [
        (1,), (7,)]


def test_rank_over_a_values_table():
    sql = ("SELECT x, rank() OVER (ORDER BY x ASC) AS r "
           "FROM (VALUES (5), (3), (5), (1)) AS v(x)")
    assert sorted(answer(sql)) == [(1, 1), (3, 2), (5, 3), (5, 3)]


def test_values_of_types_without_a_common_one_is_an_error():
    with pytest.raises(EvaluationError, match="no common type"):
        answer("SELECT * FROM (VALUES (1), ('a')) AS v")


@pytest.mark.parametrize("query", [
    Values(((Literal(1, T.INT32),), (Literal(1, T.INT32), Literal(2, T.INT32)))),
    Values(()),
    Values(((),)),
])
def test_a_malformed_values_is_an_invalid_query(query):
    with pytest.raises(InvalidQuery):
        run(query, T1)


def test_a_values_row_cannot_read_a_column():
    with pytest.raises(InvalidQuery, match="does not exist"):
        answer("SELECT * FROM t CROSS JOIN (VALUES (id)) AS v(x)")


def test_ragged_values_rows_are_refused_by_the_parser():
    with pytest.raises(InvalidQuery, match="one length"):
        parse("VALUES (1, 2), (3)")


# -- generate_series and range ---------------------------------------------------------


@pytest.mark.parametrize(("call", "values"), [
    ("generate_series(1, 5)", [1, 2, 3, 4, 5]),
    ("generate_series(1, 10, 3)", [1, 4, 7, 10]),
    ("generate_series(5, 1, -2)", [5, 3, 1]),
    ("generate_series(5, 1)", []),
    ("generate_series(1, 5, -1)", []),
    ("generate_series(3, 3)", [3]),
    ("generate_series(1, NULL)", []),
    ("generate_series(NULL, 2, 1)", []),
    ("range(0, 10, 3)", [0, 3, 6, 9]),
    ("range(1, 5)", [1, 2, 3, 4]),
    ("range(5, 1, -2)", [5, 3]),
    ("range(3, 3)", []),
    ("range(1 + 1, 2 * 3)", [2, 3, 4, 5]),
])
def test_series_values(call, values):
    assert answer(f"SELECT x FROM {call} AS g(x)") == [(v,) for v in values]


def test_a_step_of_zero_is_an_error():
    for name in ("generate_series", "range"):
        with pytest.raises(EvaluationError, match="step cannot be 0"):
            answer(f"SELECT * FROM {name}(1, 5, 0) AS g(x)")


@pytest.mark.parametrize(("sql", "name"), [
    ("SELECT * FROM generate_series(1, 2) AS g(x)", "x"),
    ("SELECT * FROM generate_series(1, 2) AS g", "g"),
    ("SELECT * FROM generate_series(1, 2)", "generate_series"),
    ("SELECT * FROM range(1, 2) r", "r"),
])
def test_the_output_column_is_named_by_the_list_else_the_alias_else_the_function(sql, name):
    assert names_and_types(sql) == [(name, pa.int64())]


def test_a_running_sum_over_generate_series_joined_to_t():
    sql = ("SELECT t.id, g.x, sum(g.x) OVER (PARTITION BY t.id ORDER BY g.x ASC) AS s "
           "FROM t CROSS JOIN generate_series(1, 3) AS g(x) WHERE t.id < 3")
    assert sorted(answer(sql)) == [(1, 1, 1), (1, 2, 3), (1, 3, 6), (2, 1, 1), (2, 2, 3), (2, 3, 6)]


@pytest.mark.parametrize("sql", [
    "SELECT * FROM generate_series(1.5, 3) AS g(x)",
    "SELECT * FROM generate_series(1, 10000000000) AS g(x)",
])
def test_what_the_reference_does_not_compute_is_a_gap(sql):
    with pytest.raises(ReferenceGap):
        answer(sql)


def test_a_table_function_cannot_read_the_from_items_beside_it():
    with pytest.raises(InvalidQuery, match="does not exist"):
        answer("SELECT * FROM t CROSS JOIN generate_series(1, id) AS g(x)")


@pytest.mark.parametrize(("ref", "message"), [
    (TableFunctionRef("generate_series", (Literal(1, T.INT32),)), "arguments"),
    (TableFunctionRef("range", (Literal(1, T.INT32),) * 2, "r", ("a", "b")), "one column"),
    (TableFunctionRef("unnest", (Literal(1, T.INT32),) * 2), "not a table function"),
])
def test_a_malformed_table_function_is_an_invalid_query(ref, message):
    with pytest.raises(InvalidQuery, match=message):
        run(Select((SelectItem(Star()),), ref), T1)


# -- the instrumenter ---------------------------------------------------------------


@pytest.mark.parametrize("sql, columns", [
    ("SELECT * FROM (VALUES (1, 2)) AS v(x, y)", 2),
    ("SELECT * FROM generate_series(1, 3) AS g(x) CROSS JOIN (VALUES (1, 2)) AS v", 3),
    ("SELECT * FROM (SELECT id, v FROM t)", 2),
])
def test_a_star_over_these_sources_is_judged_on_every_column(sql, columns):
    # The star is written out in full over these sources: every column is judged.
    plan = instrument(parse(sql), (TableSchema("t", (ColumnDef("id", T.INT64), ColumnDef("v", T.INT64))),))
    assert plan.visible == columns
    assert plan.rowid_column is None


def test_columns_named_explicitly_are_judged_as_before():
    plan = instrument(parse("SELECT x, y FROM (VALUES (1, 2)) AS v(x, y)"), ())
    assert plan.visible == 2
    assert plan.query.items == (SelectItem(Column("x")), SelectItem(Column("y")))
