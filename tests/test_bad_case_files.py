"""Bad case and baseline files: exit 2 naming the file and the field, never a
traceback; one bad file among many is reported and the others still run.

Each test goes through the command line (or `load_case` / `load_baseline`),
as a user meets the problem.
"""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from harness.baseline.known import load_baseline
from harness.cases.case import load_case
from harness.cli.main import main
from harness.core.errors import InvalidInput

GOOD_CASE = """\
description: row_number over a unique key
tables:
  t:
    columns:
      id: bigint
      v: integer
    rows: [[1, 10], [2, 20]]
sql: SELECT id, row_number() OVER (ORDER BY v DESC NULLS LAST) AS rn FROM t
expected:
  columns: [id, rn]
  rows: [[1, 2], [2, 1]]
"""


def _case(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _with_column(type_name: str, value: str) -> str:
    """GOOD_CASE with a third column `x` of `type_name`, holding `value` (YAML text)."""
    return (GOOD_CASE.replace("      v: integer\n", f"      v: integer\n      x: {type_name}\n")
            .replace("[[1, 10], [2, 20]]", f"[[1, 10, {value}], [2, 20, null]]"))


def _run_error(tmp_path: Path, capsys, path: Path) -> str:
    assert main(["run", str(path), "--engines", "reference"]) == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(("text", "says"), [
    # An `interval` column holds day-time intervals written as ISO-8601 durations:
    # not a number, nor years or months (no fixed length), nor a bad duration.
    (_with_column("interval", "1"), "tables.t.rows[0][2] (x): 1 is not a valid INTERVAL"),
    (_with_column("interval", "P1M"), "tables.t.rows[0][2] (x): 'P1M' has years or months: "
                                      "only day-time intervals"),
    (_with_column("interval", "'1 day'"), "tables.t.rows[0][2] (x): '1 day' is not a day-time "
                                          "interval; write an ISO-8601 duration such as 'P1DT2H3M4.5S'"),
    # HUGEINT travels as DECIMAL(38, 0): 10^38 has 39 digits.
    (_with_column("hugeint", str(10**38)), "tables.t.rows[0][2] (x): 10000000000000000000000000000000"
                                           "0000000 is out of HUGEINT's range"),
    (_with_column("hugeint", str(-(10**38))), "tables.t.rows[0][2] (x): "),
    # An unquoted date YAML cannot build: the place and line, not a ValueError.
    (_with_column("date", "2024-02-30"), "tables.t.rows[0][2] (line 8): '2024-02-30' is not a valid "
                                         "date: day is out of range for month"),
    (_with_column("timestamp", "2024-01-01 25:00:00"), "tables.t.rows[0][2] (line 8): "),
    (_with_column("decimal(40,2)", "1.5"), "tables.t.columns.x: 'decimal(40,2)': DECIMAL's precision "
                                            "is 1 to 38"),
    (_with_column("decimal(2,3)", "1.5"), "tables.t.columns.x: 'decimal(2,3)'"),
    (GOOD_CASE.replace("FROM t", "FROM u"), "sql: table 'u' does not exist"),
    (GOOD_CASE.replace("ORDER BY v", "ORDER BY w"), "sql: column 'w' does not exist"),
    (GOOD_CASE.replace("SELECT id,", "SELECT t.nope,"), "sql: column 't.nope' does not exist"),
    (GOOD_CASE + "description: again\n", "duplicate key 'description' (line 12)"),
    (GOOD_CASE.replace("      v: integer\n", "      v: integer\n      id: double\n"),
     "tables.t.columns: duplicate key 'id' (line 7)"),
    (GOOD_CASE.replace("[[1, 2], [2, 1]]", "[[1, 2], [2, 1]]\n  rows: []"),
     "expected: duplicate key 'rows' (line 12)"),
])
def test_a_bad_case_exits_2_naming_file_and_field(tmp_path, capsys, text, says):
    path = _case(tmp_path, "bad.yaml", text)
    err = _run_error(tmp_path, capsys, path)
    assert f"{path}: {says}" in err, err
    assert "Traceback" not in err


def test_a_key_given_twice_is_refused_even_where_pyyaml_takes_the_last(tmp_path):
    # Plain PyYAML keeps the second `expected` silently; a merge key (`<<`) sends the
    # file through PyYAML's own loader, which refuses it too.
    for text in (GOOD_CASE + "expected: {columns: [id], rows: []}\n",
                 GOOD_CASE.replace("tables:\n", "x: &base {columns: [a]}\ntables:\n")
                 .replace("expected:\n", "expected:\n  <<: *base\n  columns: [id, rn]\n")):
        path = _case(tmp_path, "twice.yaml", text)
        with pytest.raises(InvalidInput, match="duplicate key"):
            load_case(path)


@pytest.mark.parametrize("content", [
    b"\xff\xfe\x00b\x00i\x00n\x00",  # UTF-16, or any binary file
    "description: caf\u00e9\n".encode("latin-1"),
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
])
def test_a_binary_or_non_utf8_case_is_reported_and_the_others_run(tmp_path, capsys, content):
    _case(tmp_path, "a_good.yaml", GOOD_CASE)
    bad = _case(tmp_path, "b_binary.yaml", content)
    _case(tmp_path, "c_good.yaml", GOOD_CASE)
    assert main(["run", str(tmp_path), "--engines", "reference", "--format", "json"]) == 2
    out, err = capsys.readouterr()
    assert f"{bad}: not UTF-8 text" in err and "Traceback" not in err
    ran = {r["case"] for r in json.loads(out)["results"]}
    assert ran == {"a_good", "c_good"}


def test_the_listing_goes_on_past_a_bad_file(tmp_path, capsys):
    _case(tmp_path, "a_good.yaml", GOOD_CASE)
    bad = _case(tmp_path, "b_binary.yaml", b"\x00\x01\x02\xff")
    assert main(["cases", str(tmp_path), "--format", "json"]) == 2
    out, err = capsys.readouterr()
    assert [c["id"] for c in json.loads(out)] == ["a_good"]
    assert f"{bad}: not UTF-8 text" in err


def test_the_gate_goes_on_past_a_bad_corpus_file_and_exits_2(tmp_path, capsys):
    _case(tmp_path, "a_good.yaml", GOOD_CASE)
    bad = _case(tmp_path, "b_dup.yaml", GOOD_CASE + "sql: SELECT 1 AS one\n")
    junit = tmp_path / "junit.xml"
    code = main(["gate", "--engines", "reference", "--corpus", str(tmp_path), "--budget-seconds", "0",
                 "--out", str(tmp_path / "gate"), "--format", "json", "--junit", str(junit)])
    out, err = capsys.readouterr()
    assert code == 2
    assert f"{bad}: duplicate key 'sql'" in err
    assert json.loads(out)["corpus_cases"] == 1  # the good case ran, and its results are kept
    assert (tmp_path / "gate" / "gate.json").exists()
    # CI reads the JUnit XML: the file left out is an error there too, not only on stderr.
    root = ET.parse(junit).getroot()
    (error,) = root.iter("error")
    assert "duplicate key 'sql'" in error.get("message") and root.get("errors") == "1"


def test_the_listing_reads_only_what_it_shows(tmp_path, capsys):
    # A listing shows ids and descriptions: a case whose rows are wrong is still listed
    # (running it says what is wrong), and nothing of its tables is built.
    _case(tmp_path, "rows.yaml", GOOD_CASE.replace("[[1, 10], [2, 20]]", "[[1, 10], [2, x], [3]]"))
    assert main(["cases", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "rows  row_number over a unique key\n"
    assert main(["cases", str(tmp_path), "--coverage"]) == 2  # coverage reads whole cases


def test_the_listing_still_checks_the_fields_it_reads(tmp_path, capsys):
    _case(tmp_path, "nodesc.yaml", GOOD_CASE.replace("description: row_number over a unique key\n", ""))
    _case(tmp_path, "extra.yaml", GOOD_CASE + "colour: blue\n")
    assert main(["cases", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "nodesc.yaml: description: missing" in err and "extra.yaml: unknown field(s) ['colour']" in err


@pytest.mark.parametrize(("content", "says"), [
    (b"entries:\n  - id: \xff\n", "cannot read the baseline: not UTF-8 text: byte 0xff on line 2"),
    (b"entries:\n  - id: a\n    id: b\n", "entries[0]: cannot read the baseline: duplicate key 'id'"),
    (b"entries: [\n", "cannot read the baseline: not valid YAML"),
])
def test_a_bad_baseline_is_bad_input_naming_the_file(tmp_path, content, says):
    path = tmp_path / "baseline.yaml"
    path.write_bytes(content)
    with pytest.raises(InvalidInput) as raised:
        load_baseline(path)
    assert f"{path}: {says}" in str(raised.value)


def test_a_gate_with_a_binary_baseline_exits_2(tmp_path, capsys):
    path = tmp_path / "baseline.yaml"
    path.write_bytes(b"\x00\xff\xfe")
    assert main(["gate", "--baseline", str(path), "--budget-seconds", "0", "--engines", "reference",
                 "--out", str(tmp_path / "gate")]) == 2
    err = capsys.readouterr().err
    assert f"{path}: cannot read the baseline: not UTF-8 text" in err and "Traceback" not in err


def test_a_dumped_case_reads_back_the_same(tmp_path):
    # The writer's dates and decimals are what the reader takes (no key twice, no
    # impossible value): a round trip through the file keeps every cell.
    case = load_case(_case(tmp_path, "dates.yaml", _with_column("date", "2024-02-29")))
    from harness.cases.casefile import dump_case

    again = load_case(_case(tmp_path, "again.yaml", dump_case(case)))
    assert again.tables["t"].equals(case.tables["t"])
    assert yaml.safe_load(dump_case(case))["tables"]["t"]["rows"][0][2].isoformat() == "2024-02-29"


def test_a_damaged_finding_file_is_shown_as_unreadable_not_a_traceback(tmp_path):
    # The report reads a campaign's finding files: a binary one is a file it cannot read.
    from harness.results.read import read_saved

    saved = read_saved(_case(tmp_path, "finding.yaml", b"\xff\xfe\x00\x01"))
    assert saved.doc == {} and saved.case is None


@pytest.mark.parametrize("value", ["-PT22H", "P1DT2H3M4.000005S", "P0D"])
def test_a_dumped_interval_reads_back_the_same(tmp_path, value):
    from harness.cases.casefile import dump_case

    case = load_case(_case(tmp_path, "intervals.yaml", _with_column("interval", value)))
    text = dump_case(case)
    assert load_case(_case(tmp_path, "again.yaml", text)).tables["t"].equals(case.tables["t"])
    assert yaml.safe_load(text)["tables"]["t"]["columns"]["x"] == "interval"
    assert yaml.safe_load(text)["tables"]["t"]["rows"][0][2] == value
