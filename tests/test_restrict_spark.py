"""Spark runs what it can of a query with a DISTINCT window aggregate
(`harness.judge.restrict`): one module, one Spark session."""

from __future__ import annotations

import json

import pytest
from test_restrict import _case

from harness.engines.registry import get_engine
from harness.judge.compare import Verdict
from harness.judge.runner import RunResults, run_case
from harness.results.output import summary

pytestmark = pytest.mark.spark


def test_spark_runs_a_query_without_its_distinct_window_aggregate() -> None:
    reference, spark = get_engine("reference"), get_engine("spark")
    spark.start()
    try:
        sql = ("SELECT id, count(DISTINCT v) OVER (PARTITION BY k) AS cd, "
               "sum(v) OVER (PARTITION BY k ORDER BY id ASC) AS s, "
               "rank() OVER (PARTITION BY k ORDER BY v ASC) AS r FROM t ORDER BY id ASC")
        results = run_case(_case(sql), [reference, spark])
    finally:
        spark.close()
    result = results[1]
    assert result.verdict is Verdict.MATCH, result.detail
    doc = json.loads(json.dumps(result.as_json()))
    assert doc["facts"]["left_out"] == [{"column": "cd", "feature": "window.distinct-aggregate"}]
    assert "DISTINCT" not in result.sql
    run = RunResults(engines={"reference": "?", "spark": "?"}, results=results)
    assert summary(run)["restricted"] == {"spark": 1}
