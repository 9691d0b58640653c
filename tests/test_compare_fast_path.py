"""The comparator's fast path (`identical_answer`) never decides otherwise than the full comparison.

The fast path takes an answer that is the reference's own, bit for bit, as a
match without building Python rows. A fast path that said "identical" where
the full comparison finds a difference would be a silent pass: these tests
hold every answer it accepts to the full comparison's verdict and notes.
"""

from __future__ import annotations

import math

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import harness.judge.compare as compare_module
from harness.core.dialect import NULLS_LARGEST
from harness.core.model import ColumnDef, TableSchema
from harness.core.types import FLOAT64, INT64, STRING
from harness.judge.compare import Judgement, Verdict, compare, identical_answer
from harness.judge.instrument import instrument, with_rowid
from harness.judge.oracle import Oracle
from harness.sql import parse

QUERIES = (
    # row-level, a row id, no ORDER BY: rows aligned by the row id
    "SELECT id, f, s, sum(v) OVER (PARTITION BY s ORDER BY id) AS sv FROM t",
    # an ORDER BY: only the reference's own order is taken as read
    "SELECT id, f, v FROM t ORDER BY v ASC NULLS LAST",
    # no row id (a derived table): rows as a bag
    "SELECT f, v FROM (SELECT f, v FROM t) AS d",
    # LIMIT and OFFSET: the reference's rows from the offset on, in its order
    "SELECT id, v FROM t ORDER BY id LIMIT 3",
    "SELECT id, v, f FROM t ORDER BY v DESC NULLS FIRST LIMIT 2 OFFSET 1",
    # an ORDER BY key that is no column of the answer: not checkable, never fast under LIMIT
    "SELECT id FROM t ORDER BY v LIMIT 2",
)
TYPES = {"id": pa.int64(), "v": pa.int64(), "f": pa.float64(), "s": pa.string()}
SCHEMA = TableSchema("t", (ColumnDef("id", INT64), ColumnDef("v", INT64), ColumnDef("f", FLOAT64),
                           ColumnDef("s", STRING)))
FLOATS = st.one_of(st.none(), st.sampled_from([0.0, -0.0, 1.5, math.nan, math.inf, -math.inf, 1e300]),
                   st.floats(allow_nan=False, width=64))


@st.composite
def tables(draw) -> pa.Table:
    n = draw(st.integers(0, 6))
    return pa.table({
        "id": pa.array(range(1, n + 1), TYPES["id"]),
        "v": pa.array(draw(st.lists(st.one_of(st.none(), st.integers(-3, 3)), min_size=n, max_size=n)), TYPES["v"]),
        "f": pa.array(draw(st.lists(FLOATS, min_size=n, max_size=n)), TYPES["f"]),
        "s": pa.array(draw(st.lists(st.one_of(st.none(), st.sampled_from("ab")), min_size=n, max_size=n)),
                      TYPES["s"]),
    })


def _setup(sql: str, table: pa.Table):
    plan = instrument(parse(sql), (SCHEMA,))
    tables = with_rowid({"t": table}) if plan.rowid_column is not None else {"t": table}
    return plan, Oracle(plan.unlimited, tables)


def _mutate(answer: pa.Table, how: str, data) -> pa.Table:
    """The reference's answer as an engine might return it: as it is, its rows in
    another order, one cell changed (another value, NULL, a sign of zero, a NaN),
    a column of another width."""
    if answer.num_rows == 0 or how == "same":
        return answer
    if how == "permuted":
        return answer.take(data.draw(st.permutations(range(answer.num_rows))))
    if how == "shorter":
        return answer.slice(0, answer.num_rows - 1)
    column = data.draw(st.integers(0, answer.num_columns - 1))
    row = data.draw(st.integers(0, answer.num_rows - 1))
    field = answer.schema.field(column)
    values = answer.column(column).to_pylist()
    if how == "widened":
        if not pa.types.is_integer(field.type):
            return answer
        return answer.set_column(column, pa.field(field.name, pa.int32()), answer.column(column).cast(pa.int32()))
    if pa.types.is_floating(field.type):
        values[row] = data.draw(FLOATS)
    elif pa.types.is_integer(field.type):
        values[row] = data.draw(st.one_of(st.none(), st.integers(-4, 4)))
    elif pa.types.is_string(field.type):
        values[row] = data.draw(st.one_of(st.none(), st.sampled_from("abc")))
    return answer.set_column(column, field, pa.array(values, field.type))


@given(sql=st.sampled_from(QUERIES), table=tables(), how=st.sampled_from(["same", "permuted", "cell", "widened", "shorter"]),
       data=st.data())
def test_the_fast_path_decides_as_the_full_comparison(sql, table, how, data):
    plan, oracle = _setup(sql, table)
    answer = _mutate(oracle.evaluate().table, how, data)
    judgement = Judgement(plan, NULLS_LARGEST)
    fast = compare(answer, judgement, oracle)
    original = compare_module.identical_answer
    compare_module.identical_answer = lambda *args: False  # the full comparison alone
    try:
        full = compare(answer, judgement, oracle)
    finally:
        compare_module.identical_answer = original
    assert (fast.verdict, fast.detail, fast.notes) == (full.verdict, full.detail, full.notes)


def _answer(sql: str, rows: dict) -> tuple:
    table = pa.table({k: pa.array(v, TYPES[k]) for k, v in rows.items()})
    plan, oracle = _setup(sql, table)
    return plan, oracle, oracle.evaluate().table


ROWS = {"id": [1, 2, 3], "v": [1, 2, 2], "f": [0.5, 0.0, 2.0], "s": ["a", "b", "a"]}


def test_the_reference_own_answer_is_identical_in_any_row_order_by_row_id():
    plan, oracle, answer = _answer(QUERIES[0], ROWS)
    user = range(plan.visible)
    assert identical_answer(answer, answer, plan, user)
    assert identical_answer(answer.take([2, 0, 1]), answer, plan, user)


@pytest.mark.parametrize("column, value", [(0, 4), (1, -0.0), (1, math.nan), (1, None), (2, "c"), (3, 6)])
def test_one_cell_off_is_never_identical(column, value):
    plan, oracle, answer = _answer(QUERIES[0], ROWS)
    values = answer.column(column).to_pylist()
    values[1] = value
    changed = answer.set_column(column, answer.schema.field(column), pa.array(values, answer.schema.field(column).type))
    assert not identical_answer(changed, answer, plan, range(plan.visible))
    outcome = compare(changed, Judgement(plan, NULLS_LARGEST), oracle)
    if value == 0.0:  # -0.0 for 0.0: equal, and the full comparison says so in a note
        assert outcome.verdict is Verdict.MATCH and "-0.0" in outcome.notes[0]
    else:
        assert outcome.verdict is Verdict.MISMATCH


def test_an_order_by_answer_in_another_order_goes_the_full_way():
    plan, oracle, answer = _answer(QUERIES[1], ROWS)
    swapped = answer.take([2, 1, 0])  # v descending: the ORDER BY is broken
    assert not identical_answer(swapped, answer, plan, range(plan.visible))
    assert compare(swapped, Judgement(plan, NULLS_LARGEST), oracle).verdict is Verdict.MISMATCH


def test_a_row_id_returned_twice_is_not_identical():
    plan, oracle, answer = _answer(QUERIES[0], ROWS)
    twice = answer.take([0, 0, 2])
    assert not identical_answer(twice, answer, plan, range(plan.visible))
    assert compare(twice, Judgement(plan, NULLS_LARGEST), oracle).verdict is Verdict.MISMATCH


TIED = "SELECT id, v, row_number() OVER (ORDER BY v) AS rn, sum(f) OVER (ORDER BY v ROWS UNBOUNDED PRECEDING) AS s FROM t"


@pytest.mark.parametrize("sql", [QUERIES[0], QUERIES[1], TIED])
def test_a_wrong_value_in_the_last_column_fails(sql):
    plan, oracle, answer = _answer(sql, ROWS)
    last = plan.visible - 1
    values = answer.column(last).to_pylist()
    values[-1] = (values[-1] or 0) + 1
    changed = answer.set_column(last, answer.schema.field(last), pa.array(values, answer.schema.field(last).type))
    assert not identical_answer(changed, answer, plan, range(plan.visible))
    assert compare(changed, Judgement(plan, NULLS_LARGEST), oracle).verdict is Verdict.MISMATCH


def test_rows_out_of_order_under_order_by_fail_even_with_every_value_right():
    plan, oracle, answer = _answer("SELECT id, v FROM t ORDER BY id DESC", ROWS)
    reversed_ = answer.take([2, 1, 0])
    assert not identical_answer(reversed_, answer, plan, range(plan.visible))
    assert compare(reversed_, Judgement(plan, NULLS_LARGEST), oracle).verdict is Verdict.MISMATCH


def test_a_wrong_value_among_tied_rows_fails():
    """Rows 2 and 3 tie on v: the running sum may come in either order of them, but
    a value no order of the peers gives is a mismatch, fast path or not."""
    plan, oracle, answer = _answer(TIED, ROWS)
    sums = answer.column(3).to_pylist()
    tied = [i for i, v in enumerate(answer.column(1).to_pylist()) if v == 2]
    sums[tied[0]] += 0.25
    changed = answer.set_column(3, answer.schema.field(3), pa.array(sums, answer.schema.field(3).type))
    assert not identical_answer(changed, answer, plan, range(plan.visible))
    assert compare(changed, Judgement(plan, NULLS_LARGEST), oracle).verdict is Verdict.MISMATCH


def test_a_wrong_hidden_order_key_is_not_identical():
    """Found by the property above: under ORDER BY a key that is no user column, the
    instrumenter adds it as a hidden column; an engine's wrong value there moves its
    row in the order, so the fast path must compare it too."""
    sql = "SELECT id FROM t ORDER BY v LIMIT 2"
    plan, oracle, answer = _answer(sql, ROWS)
    answer = answer.slice(0, 2)  # the reference is evaluated without the LIMIT
    assert identical_answer(answer, oracle.evaluate().table, plan, range(plan.visible))
    key = plan.order_keys[0].column
    assert key >= plan.visible  # hidden
    values = answer.column(key).to_pylist()
    values[0] = 9
    changed = answer.set_column(key, answer.schema.field(key), pa.array(values, answer.schema.field(key).type))
    assert not identical_answer(changed, oracle.evaluate().table, plan, range(plan.visible))
    assert compare(changed, Judgement(plan, NULLS_LARGEST), oracle).verdict is Verdict.MISMATCH
