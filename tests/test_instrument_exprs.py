"""The instrumenter and the comparator on QUALIFY, GROUP BY ALL and ORDER BY ALL:
an answer in the wrong order or with the wrong rows must not pass, and an
answer under another order of tied rows must."""

from __future__ import annotations

import pyarrow as pa
import pytest

from harness.campaign.batching import NotBatchable, batch_query
from harness.core.dialect import NULLS_LARGEST
from harness.core.model import AllColumns, ColumnDef, TableSchema
from harness.core.types import INT64
from harness.judge.compare import Judgement, Verdict, compare
from harness.judge.instrument import instrument, with_rowid
from harness.judge.oracle import Oracle
from harness.sql import parse, write


def _setup(sql: str, columns: dict[str, list]):
    table = pa.table({k: pa.array(v, type=pa.int64()) for k, v in columns.items()})
    schema = TableSchema("t", tuple(ColumnDef(k, INT64) for k in columns))
    plan = instrument(parse(sql), (schema,))
    tables = with_rowid({"t": table}) if plan.rowid_column is not None else {"t": table}
    return plan, Oracle(plan.unlimited, tables)


def _judge(plan, oracle, answer: pa.Table):
    return compare(answer, Judgement(plan, NULLS_LARGEST), oracle).verdict


def test_order_by_all_is_checked_column_by_column():
    plan, oracle = _setup("SELECT k, v FROM t ORDER BY ALL DESC NULLS LAST",
                          {"id": [1, 2, 3], "k": [1, 1, 2], "v": [5, 7, 0]})
    assert "ORDER BY ALL DESC" in write(plan.query)  # the engine is asked for ALL itself
    table = oracle.evaluate().table  # (2, 0), (1, 7), (1, 5)
    assert _judge(plan, oracle, table) is Verdict.MATCH
    assert _judge(plan, oracle, table.take([0, 2, 1])) is Verdict.MISMATCH  # v not descending
    assert _judge(plan, oracle, table.take([1, 0, 2])) is Verdict.MISMATCH  # k not descending


def test_group_by_all_is_sent_as_written():
    plan, oracle = _setup("SELECT k, count(*) AS c FROM t GROUP BY ALL",
                          {"id": [1, 2, 3], "k": [1, 1, 2]})
    assert plan.query.group_by == (AllColumns(),)
    table = oracle.evaluate().table
    assert _judge(plan, oracle, table) is Verdict.MATCH
    assert _judge(plan, oracle, table.slice(0, 1)) is Verdict.MISMATCH


QUALIFY_SQL = ("SELECT id, v FROM t QUALIFY row_number() OVER (PARTITION BY k ORDER BY v ASC "
               "NULLS LAST) = 1")
TIED = {"id": [1, 2, 3, 4], "k": [1, 1, 1, 2], "v": [5, 5, 9, 1]}


def test_qualify_over_tied_rows_keeps_any_one_of_them():
    plan, oracle = _setup(QUALIFY_SQL, TIED)
    assert plan.rowid_column is not None and plan.witness_columns  # row-level, witnessed
    first = oracle.evaluate(lambda key, rows: list(range(len(rows)))).table
    second = oracle.evaluate(lambda key, rows: list(reversed(range(len(rows))))).table
    assert sorted(first.column("id").to_pylist()) != sorted(second.column("id").to_pylist())
    assert _judge(plan, oracle, first) is Verdict.MATCH
    assert _judge(plan, oracle, second) is Verdict.MATCH


def test_qualify_keeping_a_row_no_order_keeps_is_a_mismatch():
    plan, oracle = _setup(QUALIFY_SQL, TIED)
    answer = oracle.evaluate().table
    ids = answer.column("id").to_pylist()
    wrong = answer.set_column(0, "id", pa.array([3 if i in (1, 2) else i for i in ids], pa.int64()))
    wrong = wrong.set_column(plan.rowid_column, wrong.field(plan.rowid_column),
                             pa.array([2 if i in (1, 2) else i - 1 for i in ids], pa.int64()))
    assert _judge(plan, oracle, wrong) is not Verdict.MATCH


def test_batching_keeps_qualify_per_case_and_group_by_all():
    batched = batch_query(parse(QUALIFY_SQL))
    assert "PARTITION BY t.__wh_case, k" in write(batched)
    grouped = batch_query(parse("SELECT k, count(*) AS c FROM t GROUP BY ALL ORDER BY ALL ASC "
                                "LIMIT 1"))
    text = write(grouped)
    assert "GROUP BY ALL" in text and "ALL ASC" not in text  # the per-case LIMIT spells it out


def test_batched_equals_unbatched_for_qualify_and_all_keys():
    from harness.campaign.batching import make_batch
    from reference_impl import evaluate

    per_case = [{"t": pa.table({"id": [1, 2, 3, 4], "k": [1, 1, 2, None], "v": [3, 1, 2, 2]})},
                {"t": pa.table({"id": pa.array([], pa.int64()), "k": pa.array([], pa.int64()),
                                "v": pa.array([], pa.int64())})},
                {"t": pa.table({"id": [7, 8], "k": [5, 5], "v": [9, 8]})}]
    for sql in [
        "SELECT id, v FROM t QUALIFY rank() OVER (PARTITION BY k ORDER BY v ASC, id ASC) = 1 "
        "ORDER BY id ASC",
        "SELECT k, sum(v) AS s, rank() OVER (ORDER BY sum(v) DESC) AS r FROM t GROUP BY ALL "
        "ORDER BY ALL DESC NULLS LAST LIMIT 2",
        "SELECT k, v FROM t ORDER BY ALL ASC NULLS FIRST LIMIT 3 OFFSET 1",
    ]:
        query = parse(sql)
        batch = make_batch(query, per_case)
        together = batch.split(evaluate(batch.query, batch.tables).table)
        alone = [evaluate(query, tables).table for tables in per_case]
        assert [t.to_pylist() for t in together] == [t.to_pylist() for t in alone], sql
    # GROUP BY ALL with no key is no GROUP BY: one row even for an empty case.
    with pytest.raises(NotBatchable, match="aggregate without GROUP BY"):
        batch_query(parse("SELECT count(*) AS c FROM t GROUP BY ALL"))
