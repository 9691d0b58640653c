"""A case's `source_answer` (an engine suite's recorded answer) judged beside the
engines' verdicts: agreement, a visible disagreement (text, JSON, report),
floats at their printed precision, rowsort against nosort, expected errors,
and malformed answers refused naming the file and the field."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from harness.cases.case import load_case
from harness.cli.main import main
from harness.core.errors import InvalidCase
from harness.engines.registry import get_engine
from harness.judge.runner import run_cases
from harness.judge.source import SourceVerdict

# avg over a sliding frame, and an integer division: 0.5 under DuckDB's profile
# (to double), 0 under SQLite's (truncating): the source's profile judges.
CASE = """\
description: a source answer
tables:
  t:
    columns: {{a: integer, b: double}}
    rows: [[1, 1.0], [2, 2.0], [3, null], [3, 4.0]]
sql: |
  SELECT a, avg(b) OVER (ORDER BY a, b ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS m, a / 2 AS h
  FROM t ORDER BY a, b
source_answer:
  engine: {engine}
  origin: test/sql/window/x.test:12
  format: slt
  sort: {sort}
  types: [I, R, R]
{answer}
"""
DUCKDB_ROWS = """\
  rows:
    - ["1", "1.0", "0.5"]
    - ["2", "1.5", "1.0"]
    - ["3", "3.0", "1.5"]
    - ["3", "{m}", "1.5"]
"""


def _case(tmp_path: Path, name: str, engine: str = "duckdb", sort: str = "nosort",
          answer: str = DUCKDB_ROWS.format(m="4.0")) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(CASE.format(engine=engine, sort=sort, answer=answer), encoding="utf-8")
    return path


def _judged(path: Path, engines: str = "reference"):
    run = run_cases([load_case(path)], [get_engine(n) for n in engines.split(",")])
    assert len(run.sources) == 1
    return run, run.sources[0]


def test_an_agreeing_answer_agrees(tmp_path):
    _, source = _judged(_case(tmp_path, "agrees"))
    assert source.verdict is SourceVerdict.AGREES, source.detail
    assert (source.engine, source.profile, source.origin) == ("duckdb", "duckdb", "test/sql/window/x.test:12")


def test_the_source_engines_profile_judges(tmp_path):
    """The same printed rows, said to be SQLite's: 1/2 is 0 there, so they disagree."""
    _, source = _judged(_case(tmp_path, "sqlite", engine="sqlite"))
    assert source.verdict is SourceVerdict.DISAGREES
    assert "column h" in source.detail and "source 0.5, reference 0" in source.detail


@pytest.mark.parametrize("printed, verdict", [
    ("4", SourceVerdict.AGREES), ("4.000", SourceVerdict.AGREES), ("3.9999999999999996", SourceVerdict.AGREES),
    ("3.9999999", SourceVerdict.DISAGREES), ("4.1", SourceVerdict.DISAGREES), ("4.0001", SourceVerdict.DISAGREES), ("NULL", SourceVerdict.DISAGREES),
])
def test_floats_agree_at_their_printed_precision(tmp_path, printed, verdict):
    _, source = _judged(_case(tmp_path, "float", answer=DUCKDB_ROWS.format(m=printed)))
    assert source.verdict is verdict, source.detail


def test_a_third_significant_digit_rounds(tmp_path):
    """1/3 printed with 3 significant digits agrees; with a wrong last digit it does not."""
    path = tmp_path / "third.yaml"
    for printed, verdict in (("0.333", SourceVerdict.AGREES), ("0.334", SourceVerdict.DISAGREES)):
        path.write_text(textwrap.dedent(f"""\
            description: one third
            tables: {{t: {{columns: {{a: double}}, rows: [[1.0], [0.0], [0.0]]}}}}
            sql: SELECT avg(a) AS m FROM t
            source_answer: {{engine: duckdb, format: slt, sort: nosort, types: [R], rows: [["{printed}"]]}}
            """), encoding="utf-8")
        _, source = _judged(path)
        assert source.verdict is verdict, (printed, source.detail)


SHUFFLED = """\
  rows:
    - ["3", "4.0", "1.5"]
    - ["1", "1.0", "0.5"]
    - ["3", "3.0", "1.5"]
    - ["2", "1.5", "1.0"]
"""


def test_rowsort_compares_a_bag_nosort_the_order(tmp_path):
    _, bag = _judged(_case(tmp_path, "rowsort", sort="rowsort", answer=SHUFFLED))
    assert bag.verdict is SourceVerdict.AGREES, bag.detail
    _, ordered = _judged(_case(tmp_path, "nosort", sort="nosort", answer=SHUFFLED))
    assert ordered.verdict is SourceVerdict.DISAGREES
    assert "source row 1" in ordered.detail and "ORDER BY order" in ordered.detail


def test_valuesort_compares_a_bag_of_values(tmp_path):
    values = '  rows:\n' + "".join(f'    - ["{v}"]\n' for v in
                                   ["0.5", "1", "1.0", "1.0", "1.5", "1.5", "1.5", "2", "3", "3", "3.0", "4.0"])
    path = _case(tmp_path, "valuesort", sort="valuesort", answer=values)
    _, source = _judged(path)
    assert source.verdict is SourceVerdict.AGREES, source.detail
    path.write_text(path.read_text().replace('["4.0"]', '["4.5"]'), encoding="utf-8")
    _, source = _judged(path)
    assert source.verdict is SourceVerdict.DISAGREES and "4.5" in source.detail


def test_expected_errors(tmp_path):
    answer = '  error: "Binder Error: something"\n'
    _, source = _judged(_case(tmp_path, "error", answer=answer))
    assert source.verdict is SourceVerdict.SOURCE_ERROR
    assert "Binder Error" in source.detail and "4 rows" in source.detail
    refused = tmp_path / "refused.yaml"
    refused.write_text(textwrap.dedent("""\
        description: ntile(0) is invalid by definition
        tables: {t: {columns: {a: integer}, rows: [[1], [2]]}}
        sql: SELECT ntile(0) OVER (ORDER BY a) AS n FROM t
        source_answer: {engine: duckdb, format: slt, sort: nosort, error: ""}
        """), encoding="utf-8")
    _, source = _judged(refused)
    assert source.verdict is SourceVerdict.AGREES and "both refuse" in source.detail
    refused.write_text(refused.read_text().replace('error: ""', 'rows: [["1"], ["1"]]'), encoding="utf-8")
    _, source = _judged(refused)
    assert source.verdict is SourceVerdict.REFERENCE_ERROR


def test_tied_rows_in_another_order_agree(tmp_path):
    """row_number over a tied key: the source numbered the tie the other way round."""
    path = tmp_path / "ties.yaml"
    path.write_text(textwrap.dedent("""\
        description: a tie
        tables: {t: {columns: {k: integer, v: varchar}, rows: [[1, x], [1, y], [2, z]]}}
        sql: SELECT v, row_number() OVER (ORDER BY k) AS rn FROM t
        source_answer:
          engine: datafusion
          format: slt
          sort: rowsort
          rows: [["x", "2"], ["y", "1"], ["z", "3"]]
        """), encoding="utf-8")
    _, source = _judged(path)
    assert source.verdict is SourceVerdict.AGREES
    path.write_text(path.read_text().replace('["z", "3"]', '["z", "2"]'), encoding="utf-8")
    _, source = _judged(path)
    assert source.verdict is SourceVerdict.DISAGREES


def test_a_wrong_last_column_or_a_wrong_value_among_ties_disagrees(tmp_path):
    """No silent agreement: one wrong value in the last column (under the source's own
    profile), and one wrong value inside a tie group that no order of the ties gives."""
    last = DUCKDB_ROWS.format(m="4.0").replace('["2", "1.5", "1.0"]', '["2", "1.5", "1.5"]')
    _, source = _judged(_case(tmp_path, "last", answer=last))
    assert source.verdict is SourceVerdict.DISAGREES and "column h" in source.detail, source.detail
    path = tmp_path / "tie.yaml"
    path.write_text(textwrap.dedent("""\
        description: a wrong value among tied rows
        tables: {t: {columns: {k: integer, v: varchar}, rows: [[1, x], [1, y], [2, z]]}}
        sql: SELECT v, row_number() OVER (ORDER BY k) AS rn FROM t
        source_answer:
          engine: datafusion
          format: slt
          sort: rowsort
          rows: [["x", "1"], ["y", "1"], ["z", "3"]]
        """), encoding="utf-8")
    _, source = _judged(path)
    assert source.verdict is SourceVerdict.DISAGREES, source.detail


def test_a_disagreement_is_seen_in_text_json_and_the_report(tmp_path, capsys):
    """Never hidden, never a verdict: the engines' verdicts stay matches (exit 0)."""
    _case(tmp_path, "agrees")
    _case(tmp_path, "differs", answer=DUCKDB_ROWS.format(m="3.0"))
    cases = str(tmp_path)
    assert main(["run", cases, "--engines", "reference,duckdb,sqlite"]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    note = lines.index(next(line for line in lines if line.startswith("differs"))) + 1
    assert lines[note].strip().startswith("source-disagrees: duckdb test/sql/window/x.test:12")
    assert "source-disagrees" not in "".join(line for line in lines if line.startswith("agrees"))
    assert "source row 4, column m: source 3.0, reference 4.0" in text

    assert main(["run", cases, "--engines", "reference,duckdb", "--format", "json",
                 "--out", str(tmp_path / "out"), "--report", str(tmp_path / "r.html")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {r["verdict"] for r in doc["results"]} == {"match"}
    by_case = {s["case"]: s for s in doc["sources"]}
    assert by_case["agrees"]["verdict"] == "agrees"
    assert by_case["differs"]["verdict"] == "disagrees"
    assert by_case["differs"]["reference"]["rows"][3] == ["3", "4.0", "1.5"]
    assert doc["summary"]["source_answers"] == {"agrees": 1, "disagrees": 1}
    saved = json.loads((tmp_path / "out" / "run.json").read_text())
    assert [s["verdict"] for s in saved["sources"]] == [s["verdict"] for s in doc["sources"]]
    html = (tmp_path / "r.html").read_text()
    assert "Where the source&#39;s recorded answer disagrees with the reference (1)" in html
    assert "<code>differs</code>" in html and "<code>agrees</code>" not in html


@pytest.mark.parametrize("answer, field, says", [
    ("engine: oracle9, format: slt, sort: nosort, rows: []", "source_answer.engine", "registered engine"),
    ("engine: duckdb, format: sql, sort: nosort, rows: []", "source_answer.format", "one of slt"),
    ("engine: duckdb, format: slt, sort: random, rows: []", "source_answer.sort", "one of nosort"),
    ("engine: duckdb, format: slt, sort: nosort, rows: [[\"1\"], [\"2\"], [\"3\"], [1]]",
     "source_answer.rows[3]", "strings, or null"),
    ("engine: duckdb, format: slt, sort: nosort, error: 3", "source_answer.error", "string"),
    ("engine: duckdb, format: slt, sort: nosort", "source_answer", "either `rows` or `error`"),
    ("engine: duckdb, format: slt, sort: nosort, types: [X], rows: []", "source_answer.types", "type letters"),
    ("engine: duckdb, format: slt, sort: nosort, rows: [], extra: 1", "source_answer", "unknown field"),
])
def test_a_malformed_source_answer_names_the_file_and_field(tmp_path, answer, field, says):
    path = tmp_path / "case.yaml"
    path.write_text(textwrap.dedent(f"""\
        description: bad
        tables: {{t: {{columns: {{a: integer}}, rows: [[1]]}}}}
        sql: SELECT a, row_number() OVER (ORDER BY a) AS rn FROM t
        source_answer: {{{answer}}}
        """), encoding="utf-8")
    with pytest.raises(InvalidCase) as raised:
        load_case(path)
    assert raised.value.where == f"{path}: {field}"
    assert says in str(raised.value)


def test_a_case_with_a_source_answer_needs_no_expected_rows(tmp_path):
    case = load_case(_case(tmp_path, "no_expected"))
    assert case.expected is None and case.source_answer is not None
    assert case.source_answer["rows"][0] == ["1", "1.0", "0.5"]
