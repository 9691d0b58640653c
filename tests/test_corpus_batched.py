"""The corpus in batches (`harness.judge.corpus_runner.run_corpus`) gives the
verdicts, facts and details of the one-query-at-a-time path (`run_cases`),
and a failing query of a batch is that query's verdict alone."""

from __future__ import annotations

import re

import pyarrow as pa
import pytest

from harness.cases.case import load_cases
from harness.core.errors import EngineError, EngineTimeout
from harness.engines.isolation import IsolatedEngine
from harness.judge.corpus_runner import run_corpus
from harness.judge.runner import RunResults, run_cases

# Every kind of Spark and DuckDB verdict of the corpus: answers, ties, errors
# expected and not, refusals, unsupported features, restricted queries.
SLICE = [
    "aggregate/all_null_frame", "aggregate/array_agg_ordered", "aggregate/count_distinct",
    "aggregate/filter_avg_sliding", "coverage/exclude/avg",
    "defaults/sum_overflow", "defaults/null_order_unwritten", "defaults/default_frame_without_order_by",
    "edge/empty_table", "edge/empty_table_partitioned", "edge/named_window_refined",
    "edge/rows_range_groups_side_by_side", "edge/single_row_table",
    "errors/frame_bounds_reversed", "errors/frame_from_unbounded_following", "errors/groups_without_order_by",
    "errors/nested_window", "errors/negative_range_offset", "errors/nth_value_negative",
    "errors/range_offset_two_keys", "errors/valid_range_without_order_by",
    "errors/framed_window_copy_in_window_clause", "errors/window_in_where",
    "frames/rows/empty_frame_start_after_end",
    "functions/count_if_no_true_value", "functions/within_group_group_by_disc", "functions/within_group_rows",
    "ranking/rank_ties", "ranking/percent_rank_ties", "ranking/cume_dist_ties", "ranking/row_number_desc",
    "ranking/ntile_null_buckets",
    "regressions/avg_double_sum_past_max", "regressions/range_offset_past_bigint_max",
    "regressions/decimal_sum_past_precision_in_window_key",
    "sources/range_null_argument", "subqueries/in_subquery_as_value_in_filter",
    "syntax/qualify_over_grouped_rows", "syntax/range_interval_expression", "value/nth_value_from_last",
]


def _slice():
    cases, invalid = load_cases(["cases"])
    assert not invalid
    by_id = {c.id: c for c in cases}
    return [by_id[i] for i in SLICE]


def _said(run: RunResults) -> list[tuple]:
    # Spark names an expression by a number (`k#119`) of a counter that every
    # query it has analysed moves on: a message says another number whenever
    # other queries ran before, in any order.
    def plain(value: object) -> str:
        return re.sub(r"#\d+", "#N", repr(value))

    return [(r.case, r.engine, r.verdict, plain(r.detail), plain(r.notes), r.sql, plain(r.facts)) for r in run.results]


@pytest.mark.spark
@pytest.mark.slow  # Spark runs the slice twice: about 20 s on a quiet machine
def test_batched_corpus_verdicts_equal_one_by_one(engines):
    cases = _slice()
    run_on = [engines.get("reference"), engines.get("duckdb"), engines.get("spark")]
    one = run_cases(cases, run_on)
    many = run_corpus(cases, run_on, chunk=16)  # three chunks
    assert _said(many) == _said(one)
    said = {r.verdict.value for r in many.results}
    assert {"match", "unsupported", "rejected-as-expected", "wrongly-accepted", "error"} <= said
    assert any(r.facts.left_out or r.facts.respelled for r in many.results)  # restricted queries too


@pytest.mark.spark
def test_concurrent_spark_queries_keep_their_own_tables(engines):
    spark = engines.get("spark")
    items = [({"t": pa.table({"x": pa.array([k, k + 1], pa.int64())})}, "SELECT sum(x) AS s FROM t")
             for k in range(12)]
    items.insert(5, ({"t": pa.table({"x": pa.array([1], pa.int64())})}, "SELECT nope FROM t"))
    ran = spark.run_many(items)
    assert [r.answer.column("s").to_pylist() for r in ran[:5] + ran[6:]] == [[2 * k + 1] for k in range(12)]
    assert isinstance(ran[5].error, EngineError) and ran[5].answer is None


def test_a_query_that_hangs_in_a_batch_times_out_alone():
    tables = {"t": pa.table({"id": pa.array([1, 2, 3], pa.int64())})}
    engine = IsolatedEngine("duckdb", timeout=1.5)
    try:
        ran = engine.run_many([(tables, "SELECT sum(id) AS s FROM t"),
                               (tables, "SELECT count(*) FROM range(100000000000) a"),
                               (tables, "SELECT nope FROM t"),
                               (tables, "SELECT max(id) AS m FROM t")])
        assert ran[0].answer.column("s").to_pylist() == [6]
        assert isinstance(ran[1].error, EngineTimeout) and "did not answer within 1.5 s" in str(ran[1].error)
        assert isinstance(ran[2].error, EngineError) and not isinstance(ran[2].error, EngineTimeout)
        assert ran[3].answer.column("m").to_pylist() == [3]
        assert engine.restarts == 2  # the batch's worker, then the query's own run alone
    finally:
        engine.close()


def test_batched_corpus_in_workers_with_bare_queries_equals_one_by_one(engines):
    # The gate's way: engines in worker processes, which run their batches
    # beside one another; the bare queries then run one at a time.
    cases = _slice()

    def run(way, **options):
        made = [engines.get("reference"), IsolatedEngine("duckdb", timeout=30), IsolatedEngine("sqlite", timeout=30)]
        try:
            return way(cases, made, bare=True, **options)
        finally:
            for engine in made[1:]:
                engine.close()

    one, many = run(run_cases), run(run_corpus, chunk=8)
    assert _said(many) == _said(one)
    assert [(r.case, r.engine, r.bare and _said(RunResults({}, [r.bare]))) for r in many.results] == \
        [(r.case, r.engine, r.bare and _said(RunResults({}, [r.bare]))) for r in one.results]
    assert any(r.bare is not None for r in many.results)


def test_a_batch_crosses_to_another_python_and_back():
    # `RemoteEngine`'s channel lets plain values and Arrow tables alone cross: a
    # batch of (tables, SQL) and the per-query replies are such.
    import sys

    from harness.engines.registry import get_engine

    engine = get_engine("duckdb@same", python=sys.executable, timeout=30)
    try:
        ran = engine.run_many([({"t": pa.table({"x": pa.array([k], pa.int64())})}, "SELECT x + 1 AS y FROM t")
                               for k in range(3)] + [({}, "SELECT nope")])
        assert [r.answer.column("y").to_pylist() for r in ran[:3]] == [[1], [2], [3]]
        assert isinstance(ran[3].error, EngineError) and "nope" in str(ran[3].error)
        assert engine.restarts == 0
    finally:
        engine.close()


def test_spark_threads_reach_the_spark_engines_alone():
    from harness.cli.main import parser
    from harness.cli.options import engine_options

    names = ["reference", "duckdb", "spark", "spark[aqe-off]"]
    args = parser().parse_args(["gate", "--engines", ",".join(names), "--spark-threads", "2"])
    assert engine_options(args, names) == {"spark": {"threads": 2}, "spark[aqe-off]": {"threads": 2}}
    assert engine_options(parser().parse_args(["run", "cases", "--engines", "spark"]), ["spark"]) == {}
