"""Spark runs what it can of a query with a DISTINCT window aggregate
(`harness.judge.restrict`): one module, one Spark session."""

from __future__ import annotations

import json

import pytest
from test_restrict import _case
from test_restrict_inner import DISTINCT, _sql

from harness.engines.registry import get_engine
from harness.judge.compare import Verdict
from harness.judge.runner import RunResults, run_case
from harness.results.output import summary

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def engines():
    reference, spark = get_engine("reference"), get_engine("spark")
    spark.start()
    yield reference, spark
    spark.close()


def test_spark_runs_a_query_without_its_distinct_window_aggregate(engines) -> None:
    sql = ("SELECT id, count(DISTINCT v) OVER (PARTITION BY k) AS cd, "
           "sum(v) OVER (PARTITION BY k ORDER BY id ASC) AS s, "
           "rank() OVER (PARTITION BY k ORDER BY v ASC) AS r FROM t ORDER BY id ASC")
    results = run_case(_case(sql), list(engines))
    result = results[1]
    assert result.verdict is Verdict.MATCH, result.detail
    doc = json.loads(json.dumps(result.as_json()))
    assert doc["facts"]["left_out"] == [{"column": "cd", "feature": "window.distinct-aggregate"}]
    assert "DISTINCT" not in result.sql
    run = RunResults(engines={"reference": "?", "spark": "?"}, results=results)
    assert summary(run)["restricted"] == {"spark": 1}


def test_spark_runs_a_derived_table_without_its_distinct_window_aggregate(engines) -> None:
    """The DISTINCT aggregate inside `FROM (...) AS s` is left out with the
    outer items reading it; the plain inner window and the outer one over it run."""
    result = run_case(_case(_sql(DISTINCT[0])), list(engines))[1]
    assert result.verdict is Verdict.MATCH, result.detail
    assert result.facts.left_out == (("s.d", DISTINCT[1]), ("d", "reads left-out s.d"), ("m", "reads left-out s.d"))
    assert "DISTINCT" not in result.sql and "sum(e) OVER" in result.sql
