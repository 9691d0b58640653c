"""Every engine runs what it can of every case (`harness.judge.restrict`).

A dialect that cannot write some window items of a query runs the query
without them, judged against the reference on that same restricted query;
the verdict says what was left out. Real engines: DataFusion cannot compute
bool_and over a moving frame; a deliberately faulty DuckDB with a feature
declared missing shows a restricted verdict still catches a wrong kept item.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow as pa
import pytest
from conftest import missing_features as _missing

from harness.campaign.batch_runner import run_batch
from harness.cases.case import Case
from harness.cases.casefile import save_case
from harness.core.dialect import Feature
from harness.engines.registry import get_engine
from harness.findings.finding import findings_of, ran_case, restricted_record
from harness.findings.replay import load_one, replay
from harness.judge.compare import Verdict
from harness.judge.restrict import restrict
from harness.judge.runner import run_case
from harness.sql import parse
from harness.sql.writer import write

TABLE = pa.table({"id": pa.array([1, 2, 3, 4, 5, 6, 7], pa.int64()),
                  "k": ["a", "a", "a", "a", "b", "b", "a"],
                  "v": pa.array([1, 1, 2, None, 3, 3, 2], pa.int32())})

# ba: DataFusion has no bool_and over a moving frame; cd: a DISTINCT window aggregate.
SQL = """SELECT id,
  count(DISTINCT v) OVER (PARTITION BY k) AS cd,
  ntile(2) OVER (PARTITION BY k ORDER BY id ASC) AS nt,
  sum(v) OVER w AS s,
  bool_and(v > 1) OVER (PARTITION BY k ORDER BY id ASC ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS ba
FROM t WINDOW w AS (PARTITION BY k ORDER BY id ASC)
ORDER BY cd DESC, id ASC"""


def _case(sql: str = SQL, table: pa.Table = TABLE, cid: str = "restrict") -> Case:
    from harness.core.model import ColumnDef, TableSchema
    from harness.core.types import INT32, INT64, STRING

    schema = TableSchema("t", (ColumnDef("id", INT64), ColumnDef("k", STRING), ColumnDef("v", INT32)))
    query = parse(sql)
    return Case(cid, "restriction", (), (schema,), {"t": table}, write(query), query, finding={})




def test_an_engine_runs_the_items_it_can_write_and_says_what_was_left_out(started) -> None:
    reference, datafusion = started("reference"), started("datafusion")
    result = run_case(_case(), [reference, datafusion])[1]
    assert result.verdict is Verdict.MATCH, result.detail
    assert result.facts.as_json()["left_out"] == [{"column": "ba", "feature": "window.bool_and-moving-frame"}]
    assert "restricted: ba (window.bool_and-moving-frame) left out" in result.notes[0]
    assert "bool_and" not in result.sql and "count(DISTINCT v)" in result.sql
    # The reference it was judged against is the restricted query's: no `ba` column.
    assert "ba" not in result.reference_answer.column_names


def test_a_wrong_kept_item_is_still_caught(started) -> None:
    """Silent-pass guard: ntile is planted wrong; cd is left out (declared missing),
    and so is its ORDER BY key. The kept ntile must still be judged, and fail."""
    reference = started("reference")
    faulty = started("duckdb~ntile", Feature.DISTINCT_WINDOW_AGGREGATE)
    result = run_case(_case(), [reference, faulty])[1]
    assert result.verdict is Verdict.MISMATCH, result.detail
    assert result.facts.column == "nt"
    assert result.facts.left_out == (("cd", "window.distinct-aggregate"),)
    assert result.facts.order_keys_left_out == ("cd DESC",)


def test_the_bare_query_of_a_restricted_engine_is_the_restricted_query(started) -> None:
    """The bare run (`harness.judge.bare`) of an engine that ran a restricted query
    runs that query bare, not the case's (which it cannot write), and says so;
    a wrong kept item is caught there too."""
    reference = started("reference")
    faulty = started("duckdb~ntile", Feature.DISTINCT_WINDOW_AGGREGATE)
    result = run_case(_case(), [reference, faulty], bare=True)[1]
    assert result.bare is not None and result.bare.verdict is Verdict.MISMATCH, result.bare
    assert result.bare.facts.bare and result.bare.facts.left_out == (("cd", "window.distinct-aggregate"),)
    assert "count(DISTINCT" not in result.bare.sql and "__wh_" not in result.bare.sql


def test_an_engine_that_can_write_no_window_item_is_unsupported(started) -> None:
    reference = started("reference")
    duckdb = started("duckdb", Feature.DISTINCT_WINDOW_AGGREGATE)
    sql = "SELECT id, count(DISTINCT v) OVER (PARTITION BY k) AS cd, sum(DISTINCT v) OVER () AS sd FROM t"
    result = run_case(_case(sql), [reference, duckdb])[1]
    assert result.verdict is Verdict.UNSUPPORTED
    assert result.facts.feature == "window.distinct-aggregate" and result.facts.left_out is None


def test_a_refusal_outside_the_window_items_is_unsupported(started) -> None:
    """QUALIFY filters rows: never dropped, so nothing is restricted."""
    duckdb = started("duckdb", Feature.QUALIFY)
    sql = "SELECT id, sum(v) OVER (PARTITION BY k) AS s FROM t QUALIFY row_number() OVER (ORDER BY id ASC) <= 3"
    assert restrict(parse(sql), duckdb.render) is None


def test_a_refining_window_is_written_inline_where_refinements_are_missing(started) -> None:
    """The same window by definition: nothing is left out, the note says so."""
    reference = started("reference")
    duckdb = started("duckdb", Feature.NAMED_WINDOW_REFINEMENT)
    sql = ("SELECT id, sum(v) OVER (w ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s, rank() OVER w AS r "
           "FROM t WINDOW w AS (PARTITION BY k ORDER BY id ASC)")
    result = run_case(_case(sql), [reference, duckdb])[1]
    assert result.verdict is Verdict.MATCH, result.detail
    assert result.facts.left_out is None and result.facts.respelled
    assert "PARTITION BY k ORDER BY id ASC ROWS BETWEEN" in result.sql


def test_batched_restricted_verdicts_equal_unbatched_ones(started) -> None:
    reference, datafusion = started("reference"), started("datafusion")
    tables = [TABLE, TABLE.slice(0, 4), TABLE.slice(2, 5)]
    cases = [_case(table=t, cid=f"restrict/{i}") for i, t in enumerate(tables)]
    runs = run_batch(cases, [reference, datafusion])
    for case, run in zip(cases, runs, strict=True):
        alone = run_case(case, [reference, datafusion])
        assert [(r.verdict, r.facts) for r in run.results] == [(r.verdict, r.facts) for r in alone]
        assert run.results[1].facts.left_out == (("ba", "window.bool_and-moving-frame"),)
    assert all("datafusion" in run.batched for run in runs)


def test_a_finding_from_a_restricted_verdict_replays(started, tmp_path: Path) -> None:
    reference = started("reference")
    faulty = started("duckdb~ntile", Feature.DISTINCT_WINDOW_AGGREGATE)
    case = _case()
    results = run_case(case, [reference, faulty])
    (found,) = findings_of(results)
    record = restricted_record(case, found, {"engines": {}})
    assert record["restricted"]["left_out"] == [{"column": "cd", "feature": "window.distinct-aggregate"}]
    assert "count(DISTINCT v)" in record["restricted"]["case_sql"]
    path = save_case(dataclasses.replace(ran_case(case, found), id="findings/x"), tmp_path / "x.yaml", record)
    assert "count(DISTINCT" not in load_one(str(path)).sql
    again = replay(load_one(str(path)), [reference, faulty])
    assert again.engines[1].result.verdict is Verdict.MISMATCH
    assert again.engines[1].result.facts.left_out is None  # the file holds what the engine ran


def test_profiles_are_restricted_alike_and_compared_on_what_they_ran(started) -> None:
    """An engine profile is an engine: same restriction, and the profile
    comparison sees two answers to the same restricted query, which agree."""
    from harness.judge.instrument import instrument
    from harness.judge.profile_compare import profile_disagreements

    reference, plain, profiled = started("reference"), started("datafusion"), started("datafusion[batch_size=1]")
    case = _case()
    results = run_case(case, [reference, plain, profiled])
    assert [r.verdict for r in results[1:]] == [Verdict.MATCH, Verdict.MATCH]
    assert results[1].ran_query == results[2].ran_query is not None
    assert results[2].facts.left_out == (("ba", "window.bool_and-moving-frame"),)
    plan = instrument(results[1].ran_query, case.schemas)
    assert profile_disagreements(plan, results, {plain.name: "datafusion", profiled.name: "datafusion"}) == []


@pytest.mark.parametrize(("sql", "expected"), [
    # A positional ORDER BY key is renumbered; one naming the left-out item goes with it.
    ("SELECT id, count(DISTINCT v) OVER () AS cd, sum(v) OVER (ORDER BY id ASC) AS s FROM t ORDER BY 2 DESC, 3 ASC",
     "SELECT id, sum(v) OVER (ORDER BY id ASC) AS s\nFROM t\nORDER BY 2 ASC"),
    # GROUP BY positions are renumbered too.
    ("SELECT k, count(DISTINCT k) OVER () AS cd, sum(count(*)) OVER (ORDER BY k ASC) AS s FROM t GROUP BY 1",
     "SELECT k, sum(count(*)) OVER (ORDER BY k ASC) AS s\nFROM t\nGROUP BY 1"),
    # A named window only the left-out item used leaves the WINDOW clause.
    ("SELECT id, count(DISTINCT v) OVER w AS cd, sum(v) OVER (ORDER BY id ASC) AS s FROM t "
     "WINDOW w AS (PARTITION BY k)", "SELECT id, sum(v) OVER (ORDER BY id ASC) AS s\nFROM t"),
    # QUALIFY naming the left-out item's alias: no restriction.
    ("SELECT id, count(DISTINCT v) OVER () AS cd, sum(v) OVER () AS s FROM t QUALIFY cd > 1", None),
])
def test_what_a_restriction_keeps(sql: str, expected: str | None) -> None:
    duckdb = _missing(get_engine("duckdb"), Feature.DISTINCT_WINDOW_AGGREGATE)
    restriction = restrict(parse(sql), duckdb.render)
    assert (restriction and write(restriction.query)) == expected


def test_run_shows_the_restriction_in_json_table_findings_and_report(tmp_path: Path, capsys) -> None:
    """`run --format json` facts and summary, the table, and the HTML report all
    say what was left out and show the SQL the engine ran."""
    import json

    import yaml

    from harness.cli.main import main

    path = tmp_path / "restrict.yaml"
    path.write_text(yaml.safe_dump({
        "description": "a window DataFusion cannot compute beside ones it can",
        "tables": {"t": {"columns": {"id": "bigint", "k": "varchar", "v": "integer"},
                         "rows": [list(r.values()) for r in TABLE.to_pylist()]}},
        "sql": SQL, "finding": {"note": "reference as the oracle"}}))
    assert main(["run", str(path), "--engines", "reference,datafusion", "--format", "json",
                 "--report", str(tmp_path / "r.html")]) == 0
    doc = json.loads(capsys.readouterr().out)
    (result,) = [r for r in doc["results"] if r["engine"] == "datafusion"]
    assert result["facts"]["left_out"] == [{"column": "ba", "feature": "window.bool_and-moving-frame"}]
    assert doc["summary"]["restricted"] == {"datafusion": 1}
    html = (tmp_path / "r.html").read_text()
    assert "restricted: ba (window.bool_and-moving-frame) left out" in html
    assert main(["run", str(path), "--engines", "reference,datafusion"]) == 0
    table = capsys.readouterr().out
    assert "restricted: ba (window.bool_and-moving-frame) left out" in table and "count(DISTINCT v)" in table


def test_generate_series_is_written_as_range_where_it_is_missing(started) -> None:
    """range(a, b + 1) holds the integers generate_series(a, b) does, by definition;
    without an alias the column would be named after the function: not respelled."""
    reference = started("reference")
    duckdb = started("duckdb", Feature.GENERATE_SERIES)
    sql = ("SELECT t.id, g.x, sum(g.x) OVER (PARTITION BY t.id ORDER BY g.x ASC) AS s "
           "FROM t CROSS JOIN generate_series(1, 3) AS g(x)")
    result = run_case(_case(sql), [reference, duckdb])[1]
    assert result.verdict is Verdict.MATCH, result.detail
    assert "range(1, 4)" in result.sql and result.facts.left_out is None
    assert any("generate_series" in note for note in result.facts.respelled)
    down = parse("SELECT x, sum(x) OVER (ORDER BY x ASC) AS s FROM generate_series(5, 1, -2) AS g(x)")
    assert "range(5, 0, -2)" in write(restrict(down, duckdb.render).query)
    bare = parse("SELECT generate_series, sum(generate_series) OVER () AS s FROM generate_series(1, 3)")
    assert restrict(bare, duckdb.render) is None
