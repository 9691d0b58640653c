"""`window-harness run FILE.sql` and `--tables DIR`: plain SQL files as cases
judged against the reference, tables from Parquet / CSV / Arrow IPC files, and
every statement that cannot become a case reported at its place."""

from __future__ import annotations

import datetime as dt
import json
import textwrap
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

from harness.cases.sqlfile import read_sql_files
from harness.cases.tablefiles import read_table_dir, read_table_file
from harness.cli.main import main
from harness.core.errors import InvalidCase, InvalidInput
from harness.judge.compare import Verdict
from harness.sql.script import split_statements

FIXTURE = Path(__file__).parent / "fixtures" / "byo" / "shop.sql"
EXAMPLE = Path(__file__).parent.parent / "examples" / "byo"
CHEAP_ENGINES = "reference,duckdb,datafusion,sqlite"
VERDICTS = {v.value for v in Verdict}


def _run(capsys, *argv: str) -> tuple[int, dict, str]:
    code = main(["run", *argv, "--format", "json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out.strip() else {}, captured.err


def _verdicts(doc: dict) -> dict[tuple[str, str], str]:
    return {(r["case"], r["engine"]): r["verdict"] for r in doc["results"]}


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


# -- the fixture: setup and ten window queries on every cheap engine -------------------


def test_ten_window_queries_match_on_every_engine(capsys):
    code, doc, err = _run(capsys, str(FIXTURE), "--engines", CHEAP_ENGINES)
    ids = [f"shop/q{n}" for n in range(1, 11)]
    assert _verdicts(doc) == {(i, e): "match" for i in ids for e in CHEAP_ENGINES.split(",")}
    assert code == 0 and err == ""
    assert doc["sql_files"] == {"files": 1, "statements": 14, "cases": 10, "not_expressible": [],
                                "invalid": []}


@pytest.mark.spark
def test_ten_window_queries_match_on_spark(capsys):
    code, doc, _ = _run(capsys, str(FIXTURE), "--engines", "reference,spark")
    assert {v for (case, engine), v in _verdicts(doc).items() if engine == "spark"} == {"match"}
    assert len(doc["results"]) == 20 and code == 0


def test_the_table_output_says_what_the_sql_files_gave(capsys):
    assert main(["run", str(FIXTURE), "--engines", "reference,duckdb"]) == 0
    out = capsys.readouterr().out
    assert "shop/q10" in out
    assert ("sql files: 1 read, 14 statements: 10 queries run as cases, 0 not expressible, 0 invalid"
            in out)


def test_out_report_and_findings_as_for_case_files(tmp_path, capsys):
    """A deliberately faulty DuckDB (ntile's larger buckets last) is caught on the
    fixture's ntile query; its finding file is a case file that loads and replays."""
    from harness.cases.case import load_case

    out, report = tmp_path / "out", tmp_path / "r.html"
    code = main(["run", str(FIXTURE), "--engines", "reference,duckdb~ntile", "--out", str(out),
                 "--report", str(report)])
    assert code == 1 and report.is_file()
    run = json.loads((out / "run.json").read_text())
    assert [(f["case"], f["verdict"]) for f in run["findings"]] == [("shop/q8", "mismatch")]
    assert run["cases"]["shop/q8"]["origin"] == f"{FIXTURE}:47:1"
    assert run["sql_files"]["cases"] == 10
    finding = load_case(out / run["findings"][0]["file"])
    assert finding.sql.startswith("SELECT id, ntile(3) OVER (ORDER BY id) AS third FROM orders")
    assert finding.finding["origin"] == f"{FIXTURE}:47:1" and set(finding.tables) == {"orders"}
    assert main(["replay", str(out / run["findings"][0]["file"]), "--engines", "reference,duckdb~ntile"]) == 1
    capsys.readouterr()


def test_cases_carry_the_setup_the_query_reads():
    read = read_sql_files([FIXTURE])
    by_id = {c.id: c for c in read.cases}
    running, share = by_id["shop/q1"], by_id["shop/q9"]
    assert running.expected is None and running.finding is None and running.origin == f"{FIXTURE}:24:1"
    assert running.description == "running total per customer"
    assert set(running.tables) == {"orders"} and set(share.tables) == {"orders", "totals"}
    orders = running.tables["orders"].to_pylist()
    assert [r["id"] for r in orders] == [1, 2, 3, 4, 5, 6, 7]
    assert orders[3] == {"id": 4, "customer": "cy", "week": 2, "amount": 7.0, "items": None}
    assert orders[6] == {"id": 7, "customer": "ann", "week": None, "amount": 4.0, "items": None}
    totals = {r["customer"]: r["total"] for r in share.tables["totals"].to_pylist()}
    assert totals == {"ann": 11.25, "bob": 32.0, "cy": 7.0, None: 1.5}
    # The description is the comment right above, else the statement's first line.
    assert by_id["shop/q3"].description == "SELECT id, rank() OVER (ORDER BY items DESC NULLS LAST) AS r,"


def test_a_directory_gives_its_sql_files_and_its_case_files(tmp_path, capsys):
    _write(tmp_path, "a.sql", "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (2), (1);\n"
                              "SELECT x, rank() OVER (ORDER BY x) AS r FROM t;\n")
    _write(tmp_path, "b.yaml", """\
        description: one row
        tables: {t: {columns: {x: integer}, rows: [[1]]}}
        sql: SELECT x, row_number() OVER (ORDER BY x) AS rn FROM t
        expected: {columns: [x, rn], rows: [[1, 1]]}
        """)
    code, doc, _ = _run(capsys, str(tmp_path), "--engines", "reference,duckdb")
    assert _verdicts(doc) == {(c, e): "match" for c in ("a/q1", "b") for e in ("reference", "duckdb")}
    assert code == 0


def test_a_case_file_still_needs_expected_rows(tmp_path, capsys):
    """A case read from SQL has no `expected`; a YAML case without one is invalid as before."""
    _write(tmp_path, "b.yaml", """\
        description: no expected rows
        tables: {t: {columns: {x: integer}, rows: [[1]]}}
        sql: SELECT x FROM t
        """)
    assert main(["run", str(tmp_path / "b.yaml"), "--engines", "reference"]) == 2
    assert "b.yaml: expected: missing" in capsys.readouterr().err


# -- --tables DIR ----------------------------------------------------------------------


def _tables(folder: Path) -> Path:
    folder.mkdir()
    pq.write_table(pa.table({
        "id": pa.array([1, 2, 3, 4], pa.int64()),
        "region": pa.array([1, 1, 2, 2], pa.int16()),
        "price": pa.array([Decimal("1.50"), Decimal("2.25"), None, Decimal("-0.75")], pa.decimal128(9, 2)),
        "sold": pa.array([dt.datetime(2024, 1, 1, 10), dt.datetime(2024, 1, 1, 11),
                          dt.datetime(2024, 1, 2), dt.datetime(2024, 1, 2, 9)], pa.timestamp("ns")),
        "note": pa.array(["a", None, "c", "d"], pa.large_string()),
    }), folder / "sales.parquet")
    (folder / "regions.csv").write_text("region,name,opened,big\n1,north,2020-01-01,true\n"
                                        "2,south,2021-06-15,false\n", encoding="utf-8")
    return folder


def test_tables_dir_parquet_and_csv_give_verdicts_on_every_engine(tmp_path, capsys):
    tables = _tables(tmp_path / "tables")
    sql = _write(tmp_path, "report.sql", """\
        CREATE TABLE north AS SELECT s.* FROM sales s JOIN regions r ON s.region = r.region WHERE r.big;
        SELECT id, sum(price) OVER (PARTITION BY region ORDER BY sold) AS running FROM sales;
        SELECT s.id, r.name, rank() OVER (PARTITION BY r.name ORDER BY s.id DESC) AS r FROM sales s
          JOIN regions r ON s.region = r.region;
        SELECT region, name, row_number() OVER (ORDER BY opened) AS rn FROM regions;
        SELECT id, count(note) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS n
          FROM north;
        """)
    code, doc, err = _run(capsys, str(sql), "--tables", str(tables), "--engines", CHEAP_ENGINES)
    verdicts = _verdicts(doc)
    assert set(verdicts) == {(f"report/q{n}", e) for n in range(1, 5) for e in CHEAP_ENGINES.split(",")}
    assert set(verdicts.values()) <= VERDICTS
    # DuckDB and DataFusion hold every type here; SQLite has no DATE nor TIMESTAMP columns.
    assert {v for (_, e), v in verdicts.items() if e in ("reference", "duckdb", "datafusion")} == {"match"}
    assert {v for (_, e), v in verdicts.items() if e == "sqlite"} <= {"match", "unsupported"}
    assert code == 0 and err == ""


def test_table_files_take_the_models_types(tmp_path):
    tables = read_table_dir(_tables(tmp_path / "tables"))
    assert set(tables) == {"sales", "regions"}
    assert tables["sales"].schema == pa.schema([
        ("id", pa.int64()), ("region", pa.int16()), ("price", pa.decimal128(9, 2)),
        ("sold", pa.timestamp("us")), ("note", pa.string())])
    assert tables["regions"].schema == pa.schema([
        ("region", pa.int64()), ("name", pa.string()), ("opened", pa.date32()), ("big", pa.bool_())])


@pytest.mark.parametrize("stream", [False, True], ids=["ipc-file", "ipc-stream"])
def test_arrow_ipc_files_and_streams(tmp_path, stream):
    table = pa.table({"k": pa.array([1, 2], pa.uint8()), "x": pa.array([0.5, None], pa.float32())})
    path = tmp_path / "t.arrow"
    if stream:
        with ipc.new_stream(path, table.schema) as writer:
            writer.write_table(table)
    else:
        feather.write_feather(table, path)
    read = read_table_file(path)
    assert read.schema == pa.schema([("k", pa.int16()), ("x", pa.float32())])  # uint8 fits SMALLINT
    assert read.to_pylist() == [{"k": 1, "x": 0.5}, {"k": 2, "x": None}]


@pytest.mark.parametrize(("column", "says"), [
    (pa.array([[1]]), "Arrow type list<element: int64> has no counterpart"),
    (pa.array([1], pa.uint64()), "Arrow type uint64 has no counterpart"),
    (pa.array([dt.datetime(2024, 1, 1)], pa.timestamp("us", tz="UTC")), "has a time zone"),
    (pa.array([None], pa.null()), "every value is empty"),
], ids=["list", "uint64", "timestamp-tz", "null"])
def test_an_unsupported_arrow_type_names_the_file_and_the_column(tmp_path, column, says):
    pq.write_table(pa.table({"ok": [1], "bad": column}), tmp_path / "t.parquet")
    with pytest.raises(InvalidInput) as e:
        read_table_dir(tmp_path)
    assert str(e.value).startswith(f"{tmp_path / 't.parquet'}: column 'bad': ") and says in str(e.value)


def test_bad_tables_option_exits_2_before_any_engine(tmp_path, capsys):
    sql = _write(tmp_path, "q.sql", "SELECT 1;\n")
    (tmp_path / "empty").mkdir()
    assert main(["run", str(sql), "--tables", str(tmp_path / "empty"), "--engines", "reference"]) == 2
    assert "--tables: no *.parquet" in capsys.readouterr().err
    assert main(["run", str(FIXTURE.parent.parent.parent.parent / "cases" / "ranking"),
                 "--tables", str(tmp_path), "--engines", "reference"]) == 2
    assert "its tables are for .sql files" in capsys.readouterr().err


# -- what cannot become a case --------------------------------------------------------


def test_a_statement_not_expressible_is_reported_and_the_run_goes_on(tmp_path, capsys):
    sql = _write(tmp_path, "bad.sql", """\
        CREATE TABLE t (x INTEGER, g VARCHAR);
        INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'a');
        SELECT x, rank() OVER (ORDER BY x) AS r FROM t;
        SELECT x FROM t UNION SELECT x FROM t;
        SELECT g, x, sum(x) OVER (PARTITION BY g ORDER BY x) AS s FROM t;
        """)
    code, doc, err = _run(capsys, str(sql), "--engines", "reference,duckdb")
    assert err.splitlines() == [
        f"window-harness: {sql}:4:23: not expressible: expected ALL (only UNION ALL is supported), "
        "got 'SELECT' [construct: UNION] [at: SELECT x FROM t]",
        "window-harness: 1 statement(s) of the .sql files not expressible, left out (reported above)",
    ]
    # The query left out keeps its number: the ones after it keep theirs.
    assert set(_verdicts(doc)) == {(c, e) for c in ("bad/q1", "bad/q3") for e in ("reference", "duckdb")}
    assert set(_verdicts(doc).values()) == {"match"} and code == 0
    assert doc["sql_files"]["not_expressible"] == [{
        "where": f"{sql}:4:23", "reason": "expected ALL (only UNION ALL is supported), got 'SELECT'",
        "construct": "SELECT x FROM t", "construct_name": "UNION"}]


def test_statements_after_one_left_out_that_read_its_table_are_left_out_too(tmp_path, capsys):
    sql = _write(tmp_path, "upd.sql", """\
        CREATE TABLE t (x INTEGER);
        CREATE TABLE u (y INTEGER);
        INSERT INTO t VALUES (1), (2);
        INSERT INTO u VALUES (5);
        UPDATE t SET x = x + 1;
        SELECT x, lag(x) OVER (ORDER BY x) AS p FROM t;
        SELECT y, lead(y) OVER (ORDER BY y) AS n FROM u;
        """)
    code, doc, err = _run(capsys, str(sql), "--engines", "reference")
    assert f"{sql}:5:1: not expressible: UPDATE is not a statement the harness reads" in err
    assert (f"{sql}:6:1: not expressible: reads table 't', which the statement at {sql}:5:1 left out"
            in err)
    assert set(_verdicts(doc)) == {("upd/q2", "reference")} and code == 0


def test_nothing_expressible_exits_2(tmp_path, capsys):
    sql = _write(tmp_path, "none.sql", "CREATE VIEW v AS SELECT 1 AS x;\nSELECT x FROM v;\n")
    assert main(["run", str(sql), "--engines", "reference"]) == 2
    err = capsys.readouterr().err
    assert f"{sql}:1:1: not expressible: CREATE VIEW is not a statement the harness reads" in err
    assert f"{sql}:2:1: not expressible: reads table 'v', which the statement at {sql}:1:1" in err
    assert "2 statement(s) of the .sql files not expressible" in err


def test_a_missing_table_is_bad_input_and_the_others_run(tmp_path, capsys):
    sql = _write(tmp_path, "miss.sql", """\
        CREATE TABLE t (x INTEGER);
        INSERT INTO t VALUES (1);
        SELECT x, row_number() OVER () AS rn FROM nowhere;
        SELECT nope, row_number() OVER () AS rn FROM t;
        SELECT x, row_number() OVER (ORDER BY x) AS rn FROM t;
        """)
    code, doc, err = _run(capsys, str(sql), "--engines", "reference,duckdb")
    assert (f"window-harness: invalid case: {sql}:3:1: no table 'nowhere' (none of the statements "
            "above, nor --tables, makes it)") in err
    assert f"window-harness: invalid case: {sql}:4:1: column 'nope' does not exist" in err
    assert set(_verdicts(doc)) == {("miss/q3", "reference"), ("miss/q3", "duckdb")}
    assert code == 2  # bad input: said again last, after the verdicts of the others


def test_a_malformed_create_is_reported_at_its_place_with_what_reads_it(tmp_path, capsys):
    sql = _write(tmp_path, "create.sql", """\
        CREATE TABLE t (x INTEGER,, y INTEGER);
        INSERT INTO t VALUES (1, 2);
        SELECT 1 AS one;
        """)
    assert main(["run", str(sql), "--engines", "reference"]) == 0
    err = capsys.readouterr().err
    assert f"{sql}:1:27: not expressible: expected a column name, got ','" in err
    assert f"{sql}:2:1: not expressible: inserts into table 't', which the statement at {sql}:1:1" in err


@pytest.mark.parametrize(("statement", "says"), [
    ("INSERT INTO t VALUES (2.5, '2024-01-01', 1)", "row 1, column 'x': 2.5 is not a whole number: it does not fit INTEGER"),
    ("INSERT INTO t VALUES (1)", "row 1 has 1 values, the columns 3"),
    ("INSERT INTO t (x, z) VALUES (1, 2)", "table 't' has no column 'z' (it has x, d, n)"),
    ("INSERT INTO t VALUES (NULL, '2024-13-01', 1)", "row 1, column 'd': '2024-13-01' is not a valid DATE"),
    ("INSERT INTO t (d) VALUES (DATE '2024-01-01')", "column 'n' is NOT NULL; row 1 gives it NULL"),
    ("CREATE TABLE t (y INTEGER)", "table 't' exists already"),
    ("DROP TABLE nothing", "no table 'nothing' to drop"),
], ids=["fraction", "width", "column", "date", "not-null", "twice", "drop"])
def test_bad_setup_is_the_files_error_at_its_statement(tmp_path, statement, says):
    sql = _write(tmp_path, "s.sql", f"CREATE TABLE t (x INTEGER, d DATE, n INTEGER NOT NULL);\n{statement};\n")
    read = read_sql_files([sql])
    assert len(read.invalid) == 1 and str(read.invalid[0]).startswith(f"{sql}:2:1: {says}")
    assert not read.left_out


def test_insert_values_and_literals(tmp_path):
    sql = _write(tmp_path, "v.sql", """\
        CREATE TABLE t (i BIGINT, f DOUBLE PRECISION, d DECIMAL(6, 2), s TEXT, b BOOLEAN, day DATE,
                        at TIMESTAMP);
        INSERT INTO t VALUES
          (-3, -1.5, 2, 'it''s; fine', TRUE, DATE '2024-02-29', TIMESTAMP '2024-01-01 10:30:00'),
          (CAST(7 AS BIGINT), 2, -0.5, NULL, FALSE, '2024-03-01', '2024-01-02 00:00:00'),
          (1 + 1, 1.5E0, CAST(1.25 AS DECIMAL(6, 2)), 'x', NULL, NULL, NULL);
        CREATE TABLE c AS SELECT i, f * 2 AS g FROM t WHERE i > 0;
        INSERT INTO c SELECT i + 10, f FROM t WHERE i < 0;
        SELECT i, g, sum(g) OVER (ORDER BY i) AS s FROM c;
        SELECT * FROM t;
        """)
    read = read_sql_files([sql])
    assert not read.invalid and not read.left_out
    rows = read.cases[1].tables["t"].to_pylist()
    assert rows == [
        {"i": -3, "f": -1.5, "d": Decimal("2.00"), "s": "it's; fine", "b": True, "day": dt.date(2024, 2, 29),
         "at": dt.datetime(2024, 1, 1, 10, 30)},
        {"i": 7, "f": 2.0, "d": Decimal("-0.50"), "s": None, "b": False, "day": dt.date(2024, 3, 1),
         "at": dt.datetime(2024, 1, 2)},
        {"i": 2, "f": 1.5, "d": Decimal("1.25"), "s": "x", "b": None, "day": None, "at": None},
    ]
    assert read.cases[0].tables["c"].to_pylist() == [{"i": 7, "g": 4.0}, {"i": 2, "g": 3.0},
                                                     {"i": 7, "g": -1.5}]


def test_drop_and_create_again(tmp_path):
    sql = _write(tmp_path, "d.sql", """\
        CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);
        DROP TABLE t;
        CREATE TABLE t (x VARCHAR); INSERT INTO t VALUES ('a');
        SELECT x FROM t;
        DROP TABLE IF EXISTS t, nothing;
        """)
    read = read_sql_files([sql])
    assert not read.invalid and not read.left_out
    assert read.cases[0].tables["t"].to_pylist() == [{"x": "a"}]


# -- cutting a file into statements ---------------------------------------------------


def test_statements_end_at_semicolons_outside_strings_names_and_comments():
    text = ("-- sales\nCREATE TABLE t (a int);  -- t's own; not the next one's\n"
            "/* the ranks; */\nSELECT 'a;b' AS \"x;\", a -- c;\nFROM t;\n\n"
            "-- first\n-- second\nSELECT 1\n;;\n-- parted by a blank line\n\nSELECT 2 /* ; */")
    statements = split_statements(text, "f.sql")
    assert [(s.text, s.line, s.column, s.comment) for s in statements] == [
        ("CREATE TABLE t (a int)", 2, 1, "sales"),
        ("SELECT 'a;b' AS \"x;\", a -- c;\nFROM t", 4, 1, "the ranks;"),
        ("SELECT 1", 9, 1, "first second"),
        ("SELECT 2 /* ; */", 13, 1, ""),
    ]


@pytest.mark.parametrize(("text", "where", "what"), [
    ("SELECT 1;\nSELECT 'x", "f.sql:2:8", "unterminated string starting with '"),
    ("SELECT 1; /* x", "f.sql:1:11", "unterminated comment /*"),
    ('SELECT "x', "f.sql:1:8", "unterminated quoted name starting with \""),
])
def test_an_unterminated_string_or_comment_is_the_files_error(text, where, what):
    with pytest.raises(InvalidCase) as e:
        split_statements(text, "f.sql")
    assert str(e.value) == f"{where}: {what}"


# -- the example the README shows ---------------------------------------------------------


def test_the_readme_example_runs(capsys):
    code, doc, err = _run(capsys, str(EXAMPLE / "sales.sql"), "--tables", str(EXAMPLE / "tables"),
                          "--engines", "reference,duckdb,datafusion")
    assert set(_verdicts(doc).values()) == {"match"} and code == 0
    assert len(doc["results"]) == 3 * doc["sql_files"]["cases"] and doc["sql_files"]["cases"] >= 5
    assert [n["where"] for n in doc["sql_files"]["not_expressible"]] == [f"{EXAMPLE / 'sales.sql'}:35:32"]
    assert "not expressible: expected ALL (only UNION ALL is supported)" in err


def test_two_sql_files_of_one_stem_clash(tmp_path, capsys):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        _write(tmp_path / folder, "q.sql", "SELECT 1 AS one;\n")
    code, doc, err = _run(capsys, str(tmp_path), "--engines", "reference")
    assert f"invalid case: {tmp_path / 'b' / 'q.sql'}:1:1: duplicate case id 'q/q1' (also " in err
    assert set(_verdicts(doc)) == {("q/q1", "reference")} and code == 2


def test_a_sql_file_without_a_query_is_bad_input(tmp_path, capsys):
    sql = _write(tmp_path, "setup.sql", "-- only setup\nCREATE TABLE t (x INTEGER);\n")
    assert main(["run", str(sql), "--engines", "reference"]) == 2
    assert "no query in the .sql files" in capsys.readouterr().err
