"""`window-harness import`: each format's fixtures (tests/fixtures/import/, small files
written for these tests) become cases that `window-harness run` accepts, with the
counts printed right."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.cli.main import main

FIXTURES = Path(__file__).parent / "fixtures" / "import"

# format -> (files, records, window queries, imported, not expressible, setup failures, skipped)
COUNTS = {
    "slt": (2, 25, 12, 9, 1, 2, 6),  # setup failures: a read_csv refused, and the query reading its table
    "pg-regress": (1, 11, 7, 5, 1, 1, 0),
    "spark-golden": (1, 7, 5, 4, 1, 0, 0),
}
NOT_EXPRESSIBLE = {
    "slt": ("INTERSECT", "expected the end of the query, got 'SELECT'", "window/basic.test:36:54"),
    "pg-regress": ("DISTINCT ON", "expected an expression, got 'ON'", "sql/window.sql:13:17"),
    "spark-golden": ("NATURAL JOIN", "expected the end of the query, got 'NATURAL'", "inputs/window.sql:11:56"),
}


def _import(fmt: str, out: Path, capsys: pytest.CaptureFixture) -> tuple[int, dict]:
    code = main(["import", str(FIXTURES / fmt), "--format", fmt, "--out", str(out), "--json"])
    return code, json.loads(capsys.readouterr().out)


def _total(groups: list[dict]) -> int:
    return sum(g["count"] for g in groups)


@pytest.mark.parametrize("fmt", list(COUNTS))
def test_import_counts(fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    code, counts = _import(fmt, tmp_path / "out", capsys)
    assert code == 0
    got = (counts["files"], counts["records"], counts["window_queries"], counts["imported"],
           _total(counts["not_expressible"]), _total(counts["setup_failures"]), _total(counts["skipped"]))
    assert got == COUNTS[fmt]
    construct, reason, where = NOT_EXPRESSIBLE[fmt]
    assert counts["not_expressible"][0]["construct"] == construct  # grouped by construct
    assert counts["not_expressible"][0]["reason"] == reason  # the first one's reason
    assert counts["not_expressible"][0]["first"].endswith(where)
    assert counts["materialised_on"].startswith("duckdb ")
    assert len(list((tmp_path / "out").rglob("*.yaml"))) == COUNTS[fmt][3]


@pytest.mark.parametrize("fmt", list(COUNTS))
def test_imported_cases_run(fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "out"
    _import(fmt, out, capsys)
    code = main(["run", str(out), "--engines", "reference,duckdb,sqlite", "--format", "json"])
    run = json.loads(capsys.readouterr().out)
    assert code == 0
    assert len(run["results"]) == 3 * COUNTS[fmt][3]
    verdicts = {r["verdict"] for r in run["results"]}
    assert verdicts <= {"match", "rejected-as-expected"}, verdicts


def test_slt_records(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "out"
    _, counts = _import("slt", out, capsys)
    skipped = {g["reason"]: g["count"] for g in counts["skipped"]}
    assert skipped == {"require skip_reload": 1, "skipif duckdb": 1, "onlyif postgres": 1,
                       "result recorded as a hash": 1, "mode skip": 1,
                       "window query after the session setting default_null_order": 1}
    assert [g["reason"].split(" (")[0] for g in counts["setup_failures"]] == [
        "file access is off for imported files", "a setup statement failed on duckdb: file access is off for imported files"]
    # foreach: one case per iteration, the frame mode substituted
    sqls = [yaml.safe_load(p.read_text())["sql"] for p in sorted((out / "window" / "basic").glob("l52*.yaml"))]
    assert ["ROWS BETWEEN" in sqls[0], "GROUPS BETWEEN" in sqls[1]] == [True, True]
    error = yaml.safe_load((out / "window" / "basic" / "l40.yaml").read_text())["source_answer"]
    assert error["error"] == "Argument for ntile must be greater than zero"
    lead = yaml.safe_load((out / "window" / "basic" / "l98.yaml").read_text())
    assert lead["source_answer"] == {
        "engine": "duckdb", "origin": f"{FIXTURES / 'slt'}/window/basic.test:98", "format": "slt",
        "sort": "nosort", "types": ["I", "I"], "rows": [["1", "20"], ["2", None], ["3", "41"], ["4", None]]}
    assert lead["tables"]["t"]["columns"] == {"id": "integer", "g": "varchar", "v": "integer"}
    assert "expected" not in lead
    spaced = yaml.safe_load((out / "datafusion" / "window" / "l9.yaml").read_text())["source_answer"]
    assert (spaced["engine"], spaced["rows"]) == ("datafusion", [["1", "1.5"], ["2", "2"], ["3", "2.5"]])


def test_pg_regress_answers(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "out"
    _import("pg-regress", out, capsys)
    case = yaml.safe_load((out / "sql" / "window" / "l24.yaml").read_text())
    # after `\pset null '(null)'`, (null) is NULL
    assert case["source_answer"]["rows"] == [["1", "200"], ["2", None], ["3", "400"], ["4", None]]
    assert case["source_answer"]["columns"] == ["id", "next"]
    assert yaml.safe_load((out / "sql" / "window" / "l9.yaml").read_text())["source_answer"]["sort"] == "rowsort"
    lag = yaml.safe_load((out / "sql" / "window" / "l21.yaml").read_text())  # a CREATE TABLE AS, materialised
    assert lag["tables"]["emp2"]["rows"] == [[1, 200], [2, 400], [3, None], [4, 800]]
    assert yaml.safe_load((out / "sql" / "window" / "l16.yaml").read_text())["source_answer"]["error"] == (
        "argument of ntile must be greater than zero")


def test_spark_golden_answers(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "out"
    _import("spark-golden", out, capsys)
    running = yaml.safe_load((out / "inputs" / "window" / "l5.yaml").read_text())["source_answer"]
    assert running["columns"] == ["id", "region", "running"]
    assert running["rows"][1] == ["2", "east", "40"]
    error = yaml.safe_load((out / "inputs" / "window" / "l13.yaml").read_text())["source_answer"]["error"]
    assert error.startswith("org.apache.spark.sql.catalyst.ExtendedAnalysisException DATATYPE_MISMATCH")


def test_table_output(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["import", str(FIXTURES / "spark-golden"), "--format", "spark-golden",
                 "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "read 1 file(s) (spark-golden): 7 records, 5 window queries" in text
    assert "imported: 4 case(s)" in text
    assert "not expressible: 1\n      1  NATURAL JOIN: expected the end of the query, got 'NATURAL'" in text


def test_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["import", str(tmp_path / "missing"), "--format", "slt", "--out", str(tmp_path / "o")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(["import", str(tmp_path), "--format", "sqlite-tcl", "--out", str(tmp_path / "o")])
    assert exit_.value.code == 2


def test_nothing_imported(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    source = tmp_path / "plain.test"
    source.write_text("statement ok\nCREATE TABLE t(x INTEGER)\n\nquery I\nSELECT count(*) FROM t\n----\n0\n")
    assert main(["import", str(source), "--format", "slt", "--out", str(tmp_path / "o")]) == 1
    assert "2 records, 0 window queries" in capsys.readouterr().out


def test_not_expressible_grouped_by_construct(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    source = tmp_path / "set_ops.test"
    source.write_text("statement ok\nCREATE TABLE t(x INTEGER)\n\n"
                      "query I\nSELECT x, rank() OVER (ORDER BY x) FROM t INTERSECT SELECT 1, 1\n----\n\n"
                      "query I\nSELECT rank() OVER (ORDER BY x) AS r, x FROM t\nINTERSECT SELECT 1, 2\n----\n\n"
                      "query I\nSELECT DISTINCT ON (x) x, row_number() OVER () FROM t\n----\n\n")
    code, counts = _import_file(source, "slt", tmp_path / "o", capsys)
    assert code == 1
    assert [(g["construct"], g["count"], g["first"].rsplit(":", 2)[-2:]) for g in counts["not_expressible"]] == [
        ("INTERSECT", 2, ["5", "53"]), ("DISTINCT ON", 1, ["14", "17"])]


def test_an_unterminated_string_in_a_psql_script_is_said(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "sql").mkdir()
    (tmp_path / "expected").mkdir()
    (tmp_path / "sql" / "bad.sql").write_text("SELECT 1;\nSELECT 'a;\n")
    (tmp_path / "expected" / "bad.out").write_text("SELECT 1;\n ?column? \n----------\n        1\n(1 row)\n\n"
                                                    "SELECT 'a;\n")
    code, counts = _import_file(tmp_path / "sql" / "bad.sql", "pg-regress", tmp_path / "o", capsys)
    assert code == 1
    assert counts["skipped"] == [{"reason": "the script cannot be cut into statements: unterminated string "
                                  "starting with '", "count": 1, "first": f"{tmp_path / 'sql' / 'bad.sql'}:2"}]


def _import_file(path: Path, fmt: str, out: Path, capsys: pytest.CaptureFixture) -> tuple[int, dict]:
    code = main(["import", str(path), "--format", fmt, "--out", str(out), "--json"])
    return code, json.loads(capsys.readouterr().out)
