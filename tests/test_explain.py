"""`window-harness explain`: the reference's derivation of one cell, checked
against derivations written here by hand, and the step `--engine` names for
the planted bug of each deliberately faulty engine."""

from __future__ import annotations

import json
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest

from harness.cases.case import Case
from harness.cli.main import main
from harness.findings.explain import explain, parse_cell
from harness.findings.replay import load_one

# k has ties (rows 2 and 3) and v a NULL (row 3).
TABLE = """\
tables:
  t:
    columns: {id: bigint, k: integer, v: integer, x: double precision}
    rows:
      - [1, 1, 10, 1.234567891]
      - [2, 2, 20, 2.0]
      - [3, 2, null, 3.0]
      - [4, 4, 40, 4.0]
      - [5, 5, 50, 5.0]
"""


def case(tmp_path: Path, select: str, name: str = "c") -> Case:
    path = tmp_path / f"{name}.yaml"
    sql = textwrap.indent(textwrap.dedent(select).strip(), "  ")
    # `finding: {}`: a case without expected rows, judged against the reference alone.
    path.write_text(f"description: explain\nfinding: {{}}\n{TABLE}sql: |\n{sql}\n")
    return load_one(str(path))


def derive(c: Case, row: str, column: str):
    return explain(c, parse_cell(c, row, column)).derivation


def step(d, kind: str):
    found = [s for s in d.steps if s.kind == kind]
    assert len(found) == 1, [s.kind for s in d.steps]
    return found[0]


def test_rows_frame_counts_offsets_and_skips_nulls(tmp_path: Path) -> None:
    c = case(tmp_path, """
        SELECT id, sum(v) OVER (ORDER BY id ASC NULLS LAST ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS s
        FROM t ORDER BY id ASC NULLS LAST""")
    d = derive(c, "2", "s")
    # Row id=2 is at position 2; 2 - 1 = 1 and 2 + 1 = 3; v is NULL at position 3.
    frame = step(d, "frame")
    assert (frame.start, frame.end) == (1, 3)
    assert "position 2 - 1 = 1" in frame.text and "position 2 + 1 = 3" in frame.text
    assert step(d, "nulls").positions == (3,)
    assert step(d, "compute").inputs == (10, 20)
    assert step(d, "compute").exact == 30 and d.value == 30
    assert step(d, "partition").rows == (1, 2, 3, 4, 5)
    assert step(d, "sort").position == 2


def test_range_frame_shows_the_key_arithmetic(tmp_path: Path) -> None:
    c = case(tmp_path, """
        SELECT id, sum(v) OVER (ORDER BY k ASC NULLS LAST RANGE BETWEEN 2 PRECEDING AND CURRENT ROW) AS s
        FROM t ORDER BY id ASC NULLS LAST""")
    d = derive(c, "4", "s")
    # k = 4: 4 - 2 = 2, and the first key not below 2 is position 2 (k = 2, a tie of two rows);
    # CURRENT ROW ends at the last peer of k = 4, position 4.
    frame = step(d, "frame")
    assert "key - 2 = 4 - 2 = 2" in frame.text
    assert (frame.start, frame.end) == (2, 4)
    assert step(d, "sort").peer_groups == ((1, 1), (2, 3), (4, 4), (5, 5))
    assert step(d, "compute").inputs == (20, 40) and d.value == 60


def test_groups_frame_counts_peer_groups(tmp_path: Path) -> None:
    c = case(tmp_path, """
        SELECT id, sum(v) OVER (ORDER BY k ASC NULLS LAST GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS s
        FROM t ORDER BY id ASC NULLS LAST""")
    d = derive(c, "#4", "2")
    # Groups: {1}, {2,3}, {4}, {5}; row 4 is in group 3: groups 2..4, positions 2..5.
    frame = step(d, "frame")
    assert "group 3, 3 - 1 = group 2" in frame.text and "3 + 1 = group 4" in frame.text
    assert (frame.start, frame.end) == (2, 5)
    assert d.value == 20 + 40 + 50 and d.input_row == 4 and d.answer_row == 4


def test_exclude_group_removes_the_peers(tmp_path: Path) -> None:
    c = case(tmp_path, """
        SELECT id, sum(v) OVER (ORDER BY k ASC NULLS LAST ROWS BETWEEN UNBOUNDED PRECEDING
                                AND UNBOUNDED FOLLOWING EXCLUDE GROUP) AS s
        FROM t ORDER BY id ASC NULLS LAST""")
    d = derive(c, "2", "s")
    assert step(d, "exclude").rows == (2, 3)
    assert step(d, "compute").inputs == (10, 40, 50) and d.value == 100


def test_filter_removes_rows_before_the_aggregate(tmp_path: Path) -> None:
    c = case(tmp_path, """
        SELECT id, sum(v) FILTER (WHERE k <> 2) OVER (ORDER BY id ASC NULLS LAST
                                ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS s
        FROM t ORDER BY id ASC NULLS LAST""")
    d = derive(c, "4", "s")
    assert step(d, "filter").rows == (2, 3)
    assert step(d, "compute").inputs == (10, 40) and d.value == 50


def test_ignore_nulls_skips_the_null(tmp_path: Path) -> None:
    c = case(tmp_path, """
        SELECT id, last_value(v) IGNORE NULLS OVER (ORDER BY id ASC NULLS LAST
                                ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS lv
        FROM t ORDER BY id ASC NULLS LAST""")
    d = derive(c, "3", "lv")
    assert step(d, "nulls").positions == (3,)
    assert "position 2" in step(d, "compute").text and d.value == 20


def test_distinct_keeps_the_set(tmp_path: Path) -> None:
    c = case(tmp_path, """
        SELECT id, count(DISTINCT k) OVER (ORDER BY id ASC NULLS LAST
                                ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS n
        FROM t ORDER BY id ASC NULLS LAST""")
    d = derive(c, "1", "n")
    assert step(d, "distinct").values == (1, 2, 4, 5) and d.value == 4


def test_avg_shows_the_exact_mean_then_the_result_type(tmp_path: Path) -> None:
    c = case(tmp_path, """
        SELECT id, avg(v) OVER (ORDER BY id ASC NULLS LAST ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS a
        FROM t ORDER BY id ASC NULLS LAST""")
    d = derive(c, "4", "a")
    assert step(d, "compute").exact == Fraction(70, 3)  # (10 + 20 + 40) / 3
    assert step(d, "result").result_type == "DOUBLE PRECISION" and d.value == pytest.approx(70 / 3)


def test_bad_row_and_column_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    c = case(tmp_path, "SELECT id, sum(v) OVER (ORDER BY id ASC NULLS LAST) AS s FROM t")
    path = str(tmp_path / "c.yaml")
    assert main(["explain", path, "--row", "9", "--column", "s"]) == 2
    assert "row 9 is not in the answer" in capsys.readouterr().err
    assert main(["explain", path, "--row", "1", "--column", "nope"]) == 2
    assert "--column 'nope'" in capsys.readouterr().err
    assert main(["explain", path, "--row", "1", "--column", "id"]) == 2
    assert "holds no window function" in capsys.readouterr().err
    assert main(["explain", path, "--row", "x", "--column", "s"]) == 2
    assert c is not None


def test_json_holds_the_steps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case(tmp_path, "SELECT id, sum(v) OVER (ORDER BY id ASC NULLS LAST) AS s FROM t ORDER BY id ASC NULLS LAST")
    assert main(["explain", str(tmp_path / "c.yaml"), "--row", "2", "--column", "s", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    kinds = [s["kind"] for s in doc["derivation"]["steps"]]
    assert kinds == ["partition", "sort", "frame", "nulls", "compute", "result"]
    assert doc["derivation"]["value"] == 30


# -- the planted bugs ----------------------------------------------------------------


def differing(tmp_path: Path, engine: str, select: str, row: str, column: str):
    from harness.engines.registry import get_engine

    c = case(tmp_path, select, engine.replace("~", "_"))
    e = get_engine(engine)
    try:
        return explain(c, parse_cell(c, row, column), e).engine
    finally:
        e.close()


PLANTED = [
    ("duckdb~range-offset", """
        SELECT id, sum(v) OVER (ORDER BY k ASC NULLS LAST RANGE BETWEEN 2 PRECEDING AND CURRENT ROW) AS s
        FROM t ORDER BY id ASC NULLS LAST""", "4", "s", "start-offset+1"),
    ("duckdb~desc-nulls", """
        SELECT id, sum(k) OVER (ORDER BY v DESC NULLS LAST ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS s
        FROM t ORDER BY id ASC NULLS LAST""", "1", "s", "nulls-other-way"),
    ("duckdb~exclude-ties", """
        SELECT id, sum(v) OVER (ORDER BY k ASC NULLS LAST ROWS BETWEEN UNBOUNDED PRECEDING
                                AND UNBOUNDED FOLLOWING EXCLUDE TIES) AS s
        FROM t ORDER BY id ASC NULLS LAST""", "3", "s", "exclude-nothing"),
    ("duckdb~ignore-nulls", """
        SELECT id, last_value(v) IGNORE NULLS OVER (ORDER BY id ASC NULLS LAST
                                ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS lv
        FROM t ORDER BY id ASC NULLS LAST""", "3", "lv", "ignore-nulls-ignored"),
    ("duckdb~ntile", """
        SELECT id, ntile(2) OVER (ORDER BY id ASC NULLS LAST) AS b FROM t ORDER BY id ASC NULLS LAST""",
     "3", "b", "ntile-larger-last"),
    ("duckdb~float-sum-6", """
        SELECT id, sum(x) OVER (ORDER BY id ASC NULLS LAST ROWS BETWEEN CURRENT ROW AND CURRENT ROW) AS s
        FROM t ORDER BY id ASC NULLS LAST""", "1", "s", "digits-6"),
]


@pytest.mark.parametrize(("engine", "select", "row", "column", "named"), PLANTED, ids=[p[0] for p in PLANTED])
def test_the_planted_bug_is_named(tmp_path: Path, engine: str, select: str, row: str, column: str,
                                  named: str) -> None:
    view = differing(tmp_path, engine, select, row, column)
    assert view.error is None and not view.reference_agrees
    assert view.first is not None and view.first.name == named, [v.name for v in view.matches]


def test_tie_value_is_named_at_the_computation_after_every_order_of_the_ties(tmp_path: Path) -> None:
    # Its bug gives a tied row a value no order of the peers gives: every order of the
    # current row's tied rows is tried, none gives it, so the computation is named.
    select = """
        SELECT id, sum(v) OVER (ORDER BY k ASC NULLS LAST ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS s
        FROM t ORDER BY id ASC NULLS LAST"""
    views = [differing(tmp_path, "duckdb~tie-value", select, str(r), "s") for r in (2, 3)]
    wrong = [v for v in views if not v.reference_agrees]
    assert wrong and all(v.first is None and v.peer_orders_tried >= 1 for v in wrong)


def test_every_order_of_the_current_rows_ties_is_searched(tmp_path: Path) -> None:
    """Three rows tie on k, v = 1, 10, 100; the running sum (ROWS UNBOUNDED PRECEDING)
    of the first is 1 in input order. An order of the three puts it first (1), second
    after row 2 (11) or row 3 (101), or last (111, as each group reversed gives):
    101 comes only from an order the fixed variations do not try, 50 from none."""
    from harness.findings.explain import explain_value
    from harness.judge.runner import profile_named

    path = tmp_path / "ties.yaml"
    path.write_text(textwrap.dedent("""\
        description: three tied rows
        finding: {}
        tables:
          t:
            columns: {id: bigint, k: integer, v: integer}
            rows:
              - [1, 1, 1]
              - [2, 1, 10]
              - [3, 1, 100]
        sql: |
          SELECT id, sum(v) OVER (ORDER BY k ASC NULLS LAST ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS s
          FROM t ORDER BY id ASC NULLS LAST
        """))
    c = load_one(str(path))
    at = parse_cell(c, "#1", "s")
    profile = profile_named(None)
    assert explain(c, at).derivation.value == 1
    reversed_ = explain_value(c, at, "duckdb", 111, profile).engine
    assert reversed_.first is not None and reversed_.first.name == "peer-order"
    found = explain_value(c, at, "duckdb", 101, profile).engine
    assert found.first is not None and found.first.step == "sort" and found.first.name.startswith("peer-order-3")
    none = explain_value(c, at, "duckdb", 50, profile).engine
    assert none.first is None and none.peer_orders_tried == 5  # the 3! orders but the reference's own


def test_plain_duckdb_agrees(tmp_path: Path) -> None:
    view = differing(tmp_path, "duckdb", PLANTED[0][1], "4", "s")
    assert view.reference_agrees and view.first is None


def test_an_overflow_to_infinity_is_no_rounding_to_fewer_digits() -> None:
    """DuckDB's avg of two largest doubles is inf (its sum overflows): rounding the
    exact mean 1.797...e308 to one significant digit also overflows to inf, which
    must not be offered as the step the engine took."""
    from harness.engines.registry import get_engine

    c = load_one("cases/regressions/avg_double_sum_past_max.yaml")
    engine = get_engine("duckdb")
    try:
        view = explain(c, parse_cell(c, "2", "a"), engine).engine
    finally:
        engine.close()
    assert view is not None and not view.reference_agrees
    assert view.first is None, view.first


def test_distinct_over_values_cast_to_double_is_named() -> None:
    """DataFusion's median(DISTINCT bigint) counts 2^63-2 and 2^63-1 once (as DOUBLEs):
    regressions/median_distinct_bigint_near_max, its answer 4.611686018427388e18."""
    from harness.findings.explain import explain_value
    from harness.judge.runner import profile_named

    c = load_one("cases/regressions/median_distinct_bigint_near_max.yaml")
    at = parse_cell(c, "#1", "m")
    view = explain_value(c, at, "datafusion", 4.611686018427388e18, profile_named(None)).engine
    assert view.first is not None and view.first.name == "distinct-as-double", view.matches
