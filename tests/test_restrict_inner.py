"""Every engine runs what it can of every case, inside derived tables and WITH
queries too (`harness.judge.restrict_inner`).

A window the engine cannot write inside `FROM (SELECT ...) AS s` (or a WITH
query `s`) is left out there (`s.d`), with every item and ORDER BY key of the
query around that reads it; the engine is judged against the reference on
that same restricted query. Anything that filters or changes the rows and
reads the column keeps the whole query `unsupported`. Real engines: DataFusion
(no bool_and over a moving frame, no EXCLUDE); DuckDB with DISTINCT window
aggregates declared missing; a deliberately faulty DuckDB for the silent-pass
guard.
"""

from __future__ import annotations

import pytest
from conftest import missing_features as _missing
from test_restrict import _case

from harness.core.dialect import Feature
from harness.engines.registry import get_engine
from harness.judge.compare import Verdict
from harness.judge.restrict import restrict
from harness.judge.runner import run_case
from harness.sql import parse

BOOL_AND = ("bool_and(v > 1) OVER (PARTITION BY k ORDER BY id ASC ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)",
            "window.bool_and-moving-frame")
EXCLUDE = ("count(v) OVER (PARTITION BY k ORDER BY id ASC ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING "
           "EXCLUDE CURRENT ROW)", "frame.exclude")
DISTINCT = ("count(DISTINCT v) OVER (PARTITION BY k)", "window.distinct-aggregate")

# The derived table (or WITH query) `s`: the refused window `d` beside a plain one `e`.
INNER = "SELECT id, k, v, {refused} AS d, sum(v) OVER (PARTITION BY k ORDER BY id ASC) AS e FROM t"
# Around it: d itself, an outer window over the plain e, one over d, and an ORDER BY key on d.
OUTER = ("SELECT id, d, e, sum(e) OVER (PARTITION BY k ORDER BY id ASC) AS w, max(d) OVER (PARTITION BY k) AS m "
         "FROM {source} ORDER BY d DESC, id ASC")


def _sql(refused: str, form: str = "derived", outer: str = OUTER) -> str:
    inner = INNER.format(refused=refused)
    if form == "with":
        return f"WITH s AS ({inner}) {outer.format(source='s')}"
    return outer.format(source=f"({inner}) AS s")


@pytest.mark.parametrize("form", ["derived", "with"])
@pytest.mark.parametrize(("engine", "missing", "refused"), [
    ("datafusion", (), BOOL_AND),
    ("datafusion", (), EXCLUDE),
    ("duckdb", (Feature.DISTINCT_WINDOW_AGGREGATE,), DISTINCT),
], ids=["datafusion-bool_and", "datafusion-exclude", "duckdb-without-distinct"])
def test_an_inner_window_the_engine_cannot_write_is_left_out_with_what_reads_it(
        started, form: str, engine: str, missing: tuple[Feature, ...], refused: tuple[str, str]) -> None:
    reference, tested = started("reference"), started(engine, *missing)
    result = run_case(_case(_sql(refused[0], form)), [reference, tested])[1]
    assert result.verdict is Verdict.MATCH, result.detail
    assert result.facts.left_out == (("s.d", refused[1]), ("d", "reads left-out s.d"),
                                     ("m", "reads left-out s.d"))
    assert result.facts.order_keys_left_out == ("d DESC",)
    assert "restricted: s.d (" in result.notes[0] and "m (reads left-out s.d)" in result.notes[0]
    # The SQL shown is the restricted query's: the plain inner window and the
    # outer window over it are kept, judged against the reference's same query.
    function = refused[0].split("(", 1)[0]
    assert f"{function}(" not in result.sql and "max(d)" not in result.sql
    assert "sum(v) OVER" in result.sql and "sum(e) OVER" in result.sql
    assert result.reference_answer.column_names[:3] == ["id", "e", "w"]


@pytest.mark.parametrize("outer", [
    # The outer WHERE filters rows by the left-out column.
    "SELECT id, e, sum(e) OVER () AS w FROM {source} WHERE d > 1",
    # A top-N filter over the derived table, and a JOIN ON.
    "SELECT * FROM {source} WHERE d <= 2",
    "SELECT s.id, s.e, rank() OVER (ORDER BY s.e ASC) AS r FROM {source} INNER JOIN t AS u ON u.id = s.d",
    # GROUP BY, HAVING, and DISTINCT over fewer columns: other rows.
    "SELECT k, sum(e) AS se, rank() OVER (ORDER BY k ASC) AS r FROM {source} GROUP BY k, d",
    "SELECT k, sum(e) AS se, rank() OVER (ORDER BY k ASC) AS r FROM {source} GROUP BY k HAVING max(d) > 1",
    "SELECT DISTINCT id, e, d, rank() OVER (ORDER BY id ASC) AS r FROM {source}",
    # The ORDER BY decides which rows LIMIT keeps.
    "SELECT id, e, sum(e) OVER () AS w FROM {source} ORDER BY d ASC, id ASC LIMIT 2",
    # Nothing with a window left anywhere.
    "SELECT id, d, sum(d) OVER () AS w FROM (SELECT id, k, v, {refused} AS d FROM t) AS s",
])
def test_an_inner_column_that_filters_or_changes_rows_keeps_the_query_unsupported(outer: str) -> None:
    duckdb = _missing(get_engine("duckdb"), Feature.DISTINCT_WINDOW_AGGREGATE)
    sql = outer.format(source=f"({INNER.format(refused=DISTINCT[0])}) AS s", refused=DISTINCT[0])
    assert restrict(parse(sql), duckdb.render) is None


def test_an_outer_where_on_the_left_out_column_is_unsupported_on_a_real_engine(started) -> None:
    reference, datafusion = started("reference"), started("datafusion")
    sql = _sql(BOOL_AND[0], outer="SELECT id, e, sum(e) OVER (ORDER BY id ASC) AS w FROM {source} WHERE d")
    result = run_case(_case(sql), [reference, datafusion])[1]
    assert result.verdict is Verdict.UNSUPPORTED
    assert result.facts.feature == BOOL_AND[1] and result.facts.left_out is None


@pytest.mark.parametrize("sql", [
    # ntile is wrong inside the derived table: its kept column, and the outer window over it.
    "SELECT id, nt, d, sum(nt) OVER (PARTITION BY k ORDER BY id ASC) AS w "
    "FROM (SELECT id, k, count(DISTINCT v) OVER (PARTITION BY k) AS d, "
    "ntile(3) OVER (PARTITION BY k ORDER BY id ASC) AS nt FROM t) AS s ORDER BY id ASC",
    # ntile is wrong in the outer query, over a kept column of the derived table.
    f"SELECT id, d, e, ntile(3) OVER (ORDER BY e ASC, id ASC) AS nt FROM ({INNER.format(refused=DISTINCT[0])}) AS s",
], ids=["inner", "outer"])
def test_a_wrong_kept_column_of_a_query_restricted_inside_still_fails(started, sql: str) -> None:
    """Silent-pass guard: the faulty engine's ntile puts the larger buckets last;
    `s.d` is left out (declared missing), the kept ntile column must still be judged."""
    reference = started("reference")
    faulty = started("duckdb~ntile", Feature.DISTINCT_WINDOW_AGGREGATE)
    result = run_case(_case(sql), [reference, faulty])[1]
    assert result.verdict is Verdict.MISMATCH, result.detail
    assert result.facts.left_out[:2] == (("s.d", "window.distinct-aggregate"), ("d", "reads left-out s.d"))
    assert "d" not in result.reference_answer.column_names


def test_a_renamed_derived_table_and_a_star_over_it() -> None:
    """The renaming list loses the left-out position; a `*` stands for the columns left."""
    duckdb = _missing(get_engine("duckdb"), Feature.DISTINCT_WINDOW_AGGREGATE)
    inner = "SELECT id, count(DISTINCT v) OVER () AS d, sum(v) OVER (ORDER BY id ASC) AS e FROM t"
    renamed = restrict(parse(f"SELECT a, c, sum(c) OVER () AS w FROM ({inner}) AS s(a, b, c)"), duckdb.render)
    assert renamed is not None and renamed.left_out == (("s.d", "window.distinct-aggregate"),)
    assert "AS s(a, c)" in _written(renamed.query)
    star = restrict(parse(f"SELECT * FROM ({inner}) AS s WHERE e <= 3 ORDER BY b ASC, id ASC"), duckdb.render)
    assert star is not None and "count(DISTINCT" not in _written(star.query)
    assert restrict(parse(f"SELECT * FROM ({inner}) AS s ORDER BY 2 ASC"), duckdb.render) is None


def test_the_report_counts_an_inner_left_out_item_as_its_expression() -> None:
    """`s.d` is the inner window `d` (counted unsupported); `w`, left out because
    it reads it, is neither judged nor refused by the engine."""
    from harness.cases.axes import CaseRows
    from harness.judge.facts import Facts
    from harness.report.load import attribute, left_out_rows

    rows = CaseRows(frozenset({"case/row"}), {"d": frozenset({"function/count"}), "e": frozenset({"function/sum"}),
                                              "w": frozenset({"function/max"})})
    facts = Facts(left_out=(("s.d", "window.distinct-aggregate"), ("w", "reads left-out s.d")))
    assert attribute("match", facts, rows) == {"case/row", "function/sum"}
    (refused,) = left_out_rows(facts, rows)
    assert refused and "function/max" not in refused


def _written(query) -> str:
    from harness.sql.writer import write

    return write(query)
