"""Hostile records in imported test files (issue 33, item 7): loops that would
expand without end, a `'` inside a quoted name, a truncated Spark golden file, a
byte order mark at the start of a file. Each either imports right or is left
out with its reason at its file:line, and the file's other records import."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from harness.cli.main import main

FIXTURES = Path(__file__).parent / "fixtures" / "import"
BOM = "\ufeff"
SETUP = "statement ok\nCREATE TABLE g (x INTEGER)\n\nstatement ok\nINSERT INTO g VALUES (1), (2)\n\n"
GOOD = "query II\nSELECT x, rank() OVER (ORDER BY x) AS r FROM g\n----\n1\t1\n2\t2\n\n"


@contextmanager
def within(seconds: int) -> Iterator[None]:
    """Fail (not hang) when the block runs past `seconds`: the code before the fix never ends."""
    def stop(*_: object) -> None:
        raise TimeoutError(f"still running after {seconds} s")
    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _import(path: Path, fmt: str, out: Path, capsys: pytest.CaptureFixture) -> tuple[int, dict]:
    code = main(["import", str(path), "--format", fmt, "--out", str(out), "--json"])
    return code, json.loads(capsys.readouterr().out)


def _skipped(counts: dict) -> dict[str, str]:
    return {g["reason"]: g["first"] for g in counts["skipped"]}


# -- loops ------------------------------------------------------------------------------


def test_an_unterminated_nested_foreach_is_an_error_at_its_line(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "loops.test"
    loops = "".join(f"foreach v{k} a b c d e f g h i j\n\n" for k in range(30))
    path.write_text(SETUP + GOOD + loops + "query I\nSELECT ${v0}\n----\n1\n")
    with within(20):
        code, counts = _import(path, "slt", tmp_path / "out", capsys)
    assert code == 0 and counts["imported"] == 1
    assert _skipped(counts) == {"foreach without its endloop: the rest of the file is not read": f"{path}:13"}


def test_nested_loops_are_bounded_in_size(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Five nested loops of 100 iterations would be 10^10 records; a `loop` to a
    billion would list a billion values before keeping 100."""
    path = tmp_path / "loops.test"
    nested = "".join(f"loop i{k} 0 100\n\n" for k in range(5)) + "statement ok\nSELECT 1\n\n" + "endloop\n\n" * 5
    path.write_text(SETUP + GOOD + nested + "loop j 0 1000000000\n\nstatement ok\nSELECT ${j}\n\nendloop\n")
    with within(60):
        code, counts = _import(path, "slt", tmp_path / "out", capsys)
    assert code == 0 and counts["imported"] == 1
    skipped = _skipped(counts)
    assert skipped["loop iterations past 100000 expanded lines"] in {f"{path}:{n}" for n in range(13, 22, 2)}
    assert skipped["loop iterations past the first 100"] == f"{path}:36"
    assert counts["records"] < 200_000


# -- quotes inside quoted names -------------------------------------------------------------


def test_a_quote_inside_a_quoted_name(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "quotes.test"
    path.write_text(
        "statement ok\nCREATE TABLE \"o'brien\" (x INTEGER)\n\n"
        "statement ok\nINSERT INTO \"o'brien\" VALUES (1), (2)\n\n"
        "query II\nSELECT x AS \"it's\", rank() OVER (ORDER BY x) AS r FROM \"o'brien\"\n----\n1\t1\n2\t2\n\n"
        + SETUP + "query II\nSELECT x AS \"it's -- not a comment\", rank() OVER (ORDER BY x) FROM g\n----\n1\t1\n2\t2\n")
    code, counts = _import(path, "slt", tmp_path / "out", capsys)
    assert code == 0
    assert (counts["window_queries"], counts["imported"]) == (2, 2), counts
    case = (tmp_path / "out" / "quotes" / "l7.yaml").read_text()
    assert "o'brien" in case and "it's" in case


# -- a truncated Spark golden file -----------------------------------------------------------


@pytest.mark.parametrize("cut_at", ["valueRange", "RANK() OVE", "-- !query schema\nstruct<region"])
def test_a_truncated_golden_file_is_named_with_its_line(cut_at: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture) -> None:
    src = tmp_path / "sql-tests"
    (src / "inputs").mkdir(parents=True)
    (src / "results").mkdir()
    (src / "inputs" / "window.sql").write_text((FIXTURES / "spark-golden" / "inputs" / "window.sql").read_text())
    full = (FIXTURES / "spark-golden" / "results" / "window.sql.out").read_text()
    cut = full[:full.index(cut_at) + len(cut_at) // 2]
    results = src / "results" / "window.sql.out"
    results.write_text(cut)
    record = cut.rindex("-- !query\n")
    line = cut[:record].count("\n") + 1
    code, counts = _import(src, "spark-golden", tmp_path / "out", capsys)
    assert code == 0
    assert _skipped(counts) == {"the golden results end inside this record (a truncated file): it and the "
                                "statements after it are not read": f"{results}:{line}"}
    before = cut[:record].count("-- !query\nSELECT") - cut[:record].count("NATURAL JOIN")
    assert counts["imported"] == before and before >= 1


# -- a byte order mark -----------------------------------------------------------------------


def test_a_bom_at_the_start_of_a_sql_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "bom.sql"
    path.write_text(BOM + "CREATE TABLE g (x INTEGER);\nINSERT INTO g VALUES (1), (2);\n"
                    "SELECT x, rank() OVER (ORDER BY x) AS r FROM g;\n", encoding="utf-8")
    code = main(["run", str(path), "--engines", "reference,duckdb", "--format", "json"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert [r["verdict"] for r in json.loads(printed.out)["results"]] == ["match", "match"]
    assert "not expressible" not in printed.err


def _bom_pg_regress(src: Path) -> Path:
    (src / "sql").mkdir()
    (src / "expected").mkdir()
    script = "CREATE TABLE g (x INTEGER);\nINSERT INTO g VALUES (1), (2);\nSELECT x, rank() OVER (ORDER BY x) AS r FROM g;\n"
    (src / "sql" / "bom.sql").write_text(BOM + script)
    (src / "expected" / "bom.out").write_text(BOM + script + " x | r \n---+---\n 1 | 1\n 2 | 2\n(2 rows)\n\n")
    return src / "sql" / "bom.sql"


def _bom_spark_golden(src: Path) -> Path:
    (src / "inputs").mkdir()
    (src / "results").mkdir()
    statements = ["CREATE TABLE g (x INT)", "INSERT INTO g VALUES (1), (2)",
                  "SELECT x, rank() OVER (ORDER BY x) AS r FROM g"]
    (src / "inputs" / "bom.sql").write_text(BOM + "".join(s + ";\n" for s in statements))
    out = "".join(f"-- !query\n{s}\n-- !query schema\nstruct<>\n-- !query output\n\n\n\n" for s in statements[:2])
    out += f"-- !query\n{statements[2]}\n-- !query schema\nstruct<x:int,r:int>\n-- !query output\n1\t1\n2\t2\n"
    (src / "results" / "bom.sql.out").write_text(BOM + out)
    return src / "inputs" / "bom.sql"


def _bom_slt(src: Path) -> Path:
    (src / "bom.test").write_text(BOM + SETUP + GOOD)
    return src / "bom.test"


@pytest.mark.parametrize(("fmt", "write"), [("pg-regress", _bom_pg_regress), ("spark-golden", _bom_spark_golden),
                                            ("slt", _bom_slt)])
def test_a_bom_at_the_start_of_a_test_file(fmt: str, write, tmp_path: Path,  # noqa: ANN001 (a writer)
                                           capsys: pytest.CaptureFixture) -> None:
    src = tmp_path / "src"
    src.mkdir()
    code, counts = _import(write(src), fmt, tmp_path / "out", capsys)
    assert code == 0
    assert (counts["imported"], counts["setup_failures"], counts["skipped"]) == (1, [], [])


@pytest.mark.parametrize(("cut_after", "dropped"), [("2\teast\t40\n", True), ("4\twest\t20\n\n\n", False)])
def test_a_golden_file_cut_between_lines_is_told_by_its_header_count(
        cut_after: str, dropped: bool, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Spark 3.5's header counts the queries: a file cut right after a row line
    (the record may be cut) or right after a record is short of that count."""
    src = tmp_path / "sql-tests"
    (src / "inputs").mkdir(parents=True)
    (src / "results").mkdir()
    (src / "inputs" / "window.sql").write_text((FIXTURES / "spark-golden" / "inputs" / "window.sql").read_text())
    full = (FIXTURES / "spark-golden" / "results" / "window.sql.out").read_text()
    full = full.replace("SQLQueryTestSuite\n", "SQLQueryTestSuite\n-- Number of queries: 7\n\n\n", 1)
    cut = full[:full.index(cut_after) + len(cut_after)]
    results = src / "results" / "window.sql.out"
    results.write_text(cut)
    code, counts = _import(src, "spark-golden", tmp_path / "out", capsys)
    assert code == (1 if dropped else 0)  # 1: nothing imported
    record = cut.rindex("-- !query\n")
    if dropped:
        assert _skipped(counts) == {"the golden results end inside this record (a truncated file): it and the "
                                    "statements after it are not read": f"{results}:{cut[:record].count(chr(10)) + 1}"}
        assert counts["imported"] == 0  # the one window query before the cut is the record cut
    else:
        assert _skipped(counts) == {"the golden results end after 3 of the 7 queries their header counts "
                                    "(a truncated file)": f"{results}:{cut.count(chr(10)) + 1}"}
        assert counts["imported"] == 1
