"""`replay` and `export` (harness/findings/replay.py, harness/findings/export.py;
the commands: harness/cli/replay.py, harness/cli/export.py).

Replay: the verdicts are the comparator's, the output drops the hidden
columns, and the diff marks what differs from the reference. Export: a file
written for an engine's own suite is self-consistent, i.e. parsed back and
run statement by statement on a fresh DuckDB connection (or DataFusion
context), a correct engine prints exactly the expected block, rendered by the
same rules the file was written with.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pytest

from harness.cases.case import load_case
from harness.cases.casefile import save_case
from harness.cli.main import main
from harness.findings.export import FORMATS, duckdb_cell, plain_decimal, slt_cell
from harness.findings.show import show

CASES = Path(__file__).resolve().parent.parent / "cases"


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------
# replay


def test_replay_corpus_case_prints_sql_output_and_verdicts(capsys):
    path = CASES / "ranking" / "rank_ties.yaml"
    code, out, _ = _run(["replay", str(path), "--engines", "reference,duckdb,sqlite"], capsys)
    assert code == 0
    assert "case ranking/rank_ties" in out
    for engine in ("reference", "duckdb", "sqlite"):
        assert f"== {engine} " in out
    # Each engine's run of the bare query too (no hidden columns): duckdb's and sqlite's.
    assert out.count(": match\n") == 5 and out.count(" (bare query: as written, no hidden columns) ") == 2
    assert "rank() OVER (ORDER BY v ASC NULLS LAST)" in out  # the SQL each engine ran
    assert "no differences" in out
    output = out.split("== duckdb")[1].split("output (7 rows):")[1].split("\n== ")[0]
    assert "__wh_" not in output  # hidden columns are not shown
    assert output.splitlines()[1].split() == ["id", "r"]
    assert out.rstrip().endswith("PASS: every verdict is match or unsupported")


def test_replay_json_document(capsys):
    path = CASES / "nulls" / "asc_nulls_first.yaml"
    code, out, _ = _run(["replay", str(path), "--engines", "reference,duckdb", "--format", "json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["passed"] is True
    assert [e["engine"] for e in doc["engines"]] == ["reference", "duckdb"]
    duck = doc["engines"][1]
    assert duck["verdict"] == "match" and duck["sql"].startswith("SELECT")
    assert not any(c.startswith("__wh_") for c in duck["columns"])
    assert len(duck["rows"]) == len(doc["engines"][0]["rows"])
    assert duck["diff"]["changed"] == [] and duck["diff"]["missing"] == []


def _sqlite_lag_finding(tmp_path: Path) -> Path:
    """SQLite reads lag(v, -2) as 'no row' (all NULL) instead of lead(v, 2)."""
    case = load_case(CASES / "offset" / "lag_negative_offset.yaml")
    case = dataclasses.replace(
        case,
        sql="SELECT id, lag(v, -2) OVER (ORDER BY id ASC NULLS LAST) AS lag_m2\nFROM t\n"
            "ORDER BY id ASC NULLS LAST\n",
        expected=None,
        description="lag with a negative offset reads ahead",
    )
    # The shape harness/findings/finding.py writes.
    sqlite = {"version": "3.x", "verdict": "mismatch", "detail": "column lag_m2: engine None, expected 30",
              "sql": "SELECT ...", "answer": {"columns": ["id", "lag_m2"],
                                              "rows": [[1, None], [2, None], [3, None], [4, None]]}}
    reference = {"version": "0.1.0", "verdict": "match", "detail": "", "sql": None,
                 "answer": {"columns": ["id", "lag_m2"], "rows": [[1, 30], [2, 40], [3, None], [4, None]]}}
    finding = {"engine": "sqlite", "verdict": "mismatch", "detail": sqlite["detail"],
               "engines": {"reference": reference, "sqlite": sqlite}}
    return save_case(case, tmp_path / "finding.yaml", finding)


def test_replay_disagreeing_engine_shows_diff_and_exits_1(tmp_path, capsys):
    path = _sqlite_lag_finding(tmp_path)
    # No --engines: the reference and the engines the finding names.
    code, out, _ = _run(["replay", str(path)], capsys)
    assert code == 1
    assert "== reference " in out and "== sqlite " in out and "== duckdb" not in out
    assert "== sqlite 3." in out and ": mismatch" in out
    diff = out.split("diff against the reference")[1]
    assert "input row id" in diff
    assert "30 → NULL" in diff and "40 → NULL" in diff
    assert diff.count("\n    *") == 2  # rows 1 and 2 differ; 3 and 4 are NULL on both sides
    assert out.rstrip().endswith("FAIL: some verdicts are neither a match, a rejection the definition requires, nor unsupported")


def test_replay_json_diff_of_disagreeing_engine(tmp_path, capsys):
    path = _sqlite_lag_finding(tmp_path)
    code, out, _ = _run(["replay", str(path), "--engines", "sqlite", "--format", "json"], capsys)
    doc = json.loads(out)
    assert code == 1 and doc["passed"] is False
    (sqlite,) = doc["engines"]
    assert sqlite["verdict"] == "mismatch"
    assert sqlite["rows"] == [[1, None], [2, None], [3, None], [4, None]]
    assert sqlite["diff"]["changed"] == [
        {"row": "#1", "columns": ["lag_m2"], "reference": [1, 30], "engine": [1, None]},
        {"row": "#2", "columns": ["lag_m2"], "reference": [2, 40], "engine": [2, None]},
    ]


def test_replay_bad_input_exits_2_naming_the_file(tmp_path, capsys):
    missing = tmp_path / "nope.yaml"
    code, out, err = _run(["replay", str(missing)], capsys)
    assert code == 2 and str(missing) in err and out == ""
    broken = tmp_path / "broken.yaml"
    broken.write_text((CASES / "ranking" / "rank_ties.yaml").read_text().replace("bigint", "bignum"))
    code, _, err = _run(["replay", str(broken), "--engines", "reference"], capsys)
    assert code == 2 and str(broken) in err and "tables.t.columns.id" in err
    code, _, err = _run(["replay", str(CASES / "ranking" / "rank_ties.yaml"), "--engines", "nosuch"], capsys)
    assert code == 2 and "nosuch" in err
    code, _, err = _run(["replay", str(CASES / "ranking")], capsys)
    assert code == 2 and "a directory" in err


def test_show_spells_special_values():
    assert [show(v) for v in (None, math.nan, -0.0, math.inf, "", "a b", "ab", "NULL", True)] == [
        "NULL", "NaN", "-0.0", "Infinity", "''", "'a b'", "ab", "'NULL'", "true"]


# ---------------------------------------------------------------------------
# export: value rendering


@pytest.mark.parametrize(
    ("value", "type_", "text"),
    [
        (1.5, pa.float64(), "1.5"),
        (2.0, pa.float64(), "2"),
        (-0.0, pa.float64(), "0"),
        (1e20, pa.float64(), "100000000000000000000"),
        (1e-13, pa.float64(), "0"),
        (2 / 3, pa.float64(), "0.666666666667"),
        (math.nan, pa.float64(), "NaN"),
        (-math.inf, pa.float64(), "-Infinity"),
        (0.10000000149011612, pa.float32(), "0.1"),
        (None, pa.int64(), "NULL"),
        ("", pa.string(), "(empty)"),
        ("a b", pa.string(), "a b"),
        (True, pa.bool_(), "true"),
    ],
)
def test_slt_cells_follow_datafusion_conversion(value, type_, text):
    assert slt_cell(value, type_) == text


def test_plain_decimal_rounds_to_12_places():
    from decimal import Decimal

    assert plain_decimal(Decimal("1.50")) == "1.5"
    assert plain_decimal(Decimal("100")) == "100"
    assert plain_decimal(Decimal("-0.0000000000001")) == "0"
    assert plain_decimal(Decimal("0.1234567890125")) == "0.123456789012"  # half to even


def test_duckdb_cells_are_duckdbs_own_varchar_casts():
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    exprs = [
        "1.0::DOUBLE", "0.1::DOUBLE", "1e20::DOUBLE", "1e-5::DOUBLE", "-0.0::DOUBLE", "2.0/3",
        "'nan'::DOUBLE", "'-inf'::DOUBLE", "0.1::REAL", "1e20::REAL", "1.50::DECIMAL(5,2)",
        "true", "DATE '2024-01-31'", "TIMESTAMP '2024-01-31 12:00:00'",
        "TIMESTAMP '2024-01-31 12:00:00.5'", "TIMESTAMP '2024-01-31 12:00:00.000123'",
        "'a b'", "['a', 'b c', NULL, '', 'x,y', 'NULL']", "[1.5, NULL]::DOUBLE[]", "42::HUGEINT",
    ]
    for expr in exprs:
        table = con.sql(f"SELECT {expr} AS v, CAST({expr} AS VARCHAR) AS s").to_arrow_table()
        value, text = table.column(0)[0].as_py(), table.column(1)[0].as_py()
        assert duckdb_cell(value, table.schema.field(0).type) == text, expr


# ---------------------------------------------------------------------------
# export: self-consistency of the written file


@dataclass
class Record:
    kind: str  # "statement" or "query"
    head: list[str]  # the words after the kind: ["ok"], ["IIT", "rowsort"]
    sql: str
    expected: list[str] = field(default_factory=list)


def parse_test_file(text: str) -> list[Record]:
    """The statement and query records of an sqllogictest file (comments skipped)."""
    records = []
    for block in text.split("\n\n"):
        lines = [line for line in block.splitlines() if not line.startswith("#")]
        if not lines:
            continue
        kind, *head = lines[0].split()
        assert kind in ("statement", "query"), lines[0]
        body = lines[1:]
        cut = body.index("----") if "----" in body else len(body)
        records.append(Record(kind, head, "\n".join(body[:cut]), body[cut + 1:]))
    return records


class DuckDBRunner:
    fmt = FORMATS["duckdb-test"]

    def __init__(self) -> None:
        duckdb = pytest.importorskip("duckdb")
        self.error = duckdb.Error
        self.con = duckdb.connect()

    def execute(self, sql: str) -> None:
        self.con.execute(sql)

    def query(self, sql: str) -> pa.Table:
        return self.con.sql(sql).to_arrow_table()


class DataFusionRunner:
    fmt = FORMATS["slt"]
    error = Exception

    def __init__(self) -> None:
        datafusion = pytest.importorskip("datafusion")
        self.ctx = datafusion.SessionContext()

    def execute(self, sql: str) -> None:
        self.ctx.sql(sql).collect()

    def query(self, sql: str) -> pa.Table:
        return self.ctx.sql(sql).to_arrow_table()


RUNNERS = {"duckdb-test": DuckDBRunner, "slt": DataFusionRunner}


def check_file(text: str, runner) -> list[str]:
    """Run every record; return what differs from the file's expectations."""
    problems = []
    for record in parse_test_file(text):
        if record.kind == "statement":
            problems += _check_statement(record, runner)
        else:
            problems += _check_query(record, runner)
    return problems


def _check_statement(record: Record, runner) -> list[str]:
    try:
        runner.execute(record.sql)
    except runner.error as e:
        return [] if record.head == ["error"] else [f"{record.sql}: {e}"]
    return [] if record.head == ["ok"] else [f"{record.sql}: expected an error"]


def _check_query(record: Record, runner) -> list[str]:
    fmt = runner.fmt
    table = runner.query(record.sql)
    types = [f.type for f in table.schema]
    letters = "".join(fmt.letter(t) for t in types)
    rows = [[fmt.cell(v, t) for v, t in zip(r.values(), types, strict=True)] for r in table.to_pylist()]
    if "rowsort" in record.head:
        rows.sort(key=lambda r: [c.encode() for c in r])
    problems = []
    if record.head[0] != letters:
        problems.append(f"type letters: file {record.head[0]}, engine {letters}")
    numeric = [pa.types.is_floating(t) or pa.types.is_decimal(t) for t in types]
    got = [fmt.separator.join(r) for r in rows]
    if len(got) != len(record.expected) or not all(
        g == w or _numbers_agree(r, w.split(fmt.separator), numeric)
        for g, w, r in zip(got, record.expected, rows, strict=True)
    ):
        problems.append(f"rows: file {record.expected}, engine {got}")
    return problems


def _numbers_agree(got: list[str], want: list[str], numeric: list[bool]) -> bool:
    """As DuckDB's runner allows in a numeric column (it casts both sides and
    compares approximately): floats a few units apart in the last place.
    DataFusion's runner rounds to 12 places and never needs it."""
    if len(got) != len(want):
        return False
    return all(g == w or (n and _close(g, w)) for g, w, n in zip(got, want, numeric, strict=True))


def _close(a: str, b: str) -> bool:
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    return math.isclose(x, y, rel_tol=1e-14, abs_tol=1e-300)


SELF_CONSISTENT = [
    "ranking/rank_ties",  # integers
    "nulls/asc_nulls_first",  # NULLs
    "aggregate/sum_avg_double",  # floats
    "aggregate/min_max_varchar",  # strings
    "frames/range/date_interval_day",  # dates
    "frames/range/timestamp_interval",  # timestamps
    "special_floats/nan_inf_order_asc",  # NaN and infinities
    "aggregate/sum_decimal",  # decimals
    "operators/order_nulls_first_limit_offset",  # LIMIT/OFFSET
    "edge/empty_table",  # no rows
]


@pytest.mark.parametrize("to", ["duckdb-test", "slt"])
@pytest.mark.parametrize("case_name", SELF_CONSISTENT)
def test_exported_file_is_self_consistent(case_name, to, tmp_path, capsys):
    path = CASES / f"{case_name}.yaml"
    out = tmp_path / f"test_{case_name.replace('/', '_')}{FORMATS[to].suffix}"
    code, _, err = _run(["export", str(path), "--to", to, "--out", str(out)], capsys)
    assert code == 0, err
    text = out.read_text()
    assert f"window-harness replay {path}" in text
    assert check_file(text, RUNNERS[to]()) == []


def test_strings_with_spaces_and_empty_strings_survive_both_formats(tmp_path, capsys):
    case = load_case(CASES / "ranking" / "rank_ties.yaml")
    table = case.tables["t"]
    words = pa.array(["a b", "", None, "x  y", "z", "a b", "(empty)"], type=pa.string())
    case = dataclasses.replace(
        case,
        tables={"t": table.append_column("s", words)},
        schemas=(dataclasses.replace(case.schemas[0], columns=(
            *case.schemas[0].columns, dataclasses.replace(case.schemas[0].columns[0], name="s",
                                                          type=_varchar())),),),
        sql="SELECT id, s, first_value(s) OVER (ORDER BY id ASC NULLS LAST ROWS BETWEEN 1 PRECEDING "
            "AND CURRENT ROW) AS f\nFROM t\nORDER BY id ASC NULLS LAST\n",
        expected=None, finding={"note": "hand-made"},
    )
    path = save_case(case, tmp_path / "strings.yaml")
    for to in ("duckdb-test", "slt"):
        code, text, err = _run(["export", str(path), "--to", to], capsys)
        assert code == 0, err
        assert check_file(text, RUNNERS[to]()) == []
    assert "1\ta b\ta b" in _run(["export", str(path), "--to", "duckdb-test"], capsys)[1]


def _varchar():
    from harness.core.types import STRING

    return STRING


def test_export_of_a_finding_names_what_the_engine_returned(tmp_path, capsys):
    path = _sqlite_lag_finding(tmp_path)
    code, text, _ = _run(["export", str(path), "--to", "duckdb-test"], capsys)
    assert code == 0
    assert "# name: test/sql/window/" in text
    assert f"window-harness replay {path} --engines reference,duckdb" in text
    # The expected block is the reference's answer: lag(v, -2) = lead(v, 2).
    assert "query II\n" in text and text.rstrip().endswith("1\t30\n2\t40\n3\tNULL\n4\tNULL".rstrip())
    assert check_file(text, DuckDBRunner()) == []


def test_export_records_the_finding_engines_answer(tmp_path, capsys):
    case = load_case(_sqlite_lag_finding(tmp_path))
    record = case.finding["engines"]["sqlite"]
    finding = {**case.finding, "engine": "datafusion", "engines": {"datafusion": record}}
    path = save_case(case, tmp_path / "df_finding.yaml", finding)
    code, text, _ = _run(["export", str(path), "--to", "slt"], capsys)
    assert code == 0
    assert "# In the finding, datafusion 3.x gave mismatch: column lag_m2" in text
    assert "#     1 NULL" in text
    assert "query II\n" in text and "\n1 30\n2 40\n3 NULL\n4 NULL\n" in text
    # Exported for another engine, the header still says whom the finding is about.
    code, text, _ = _run(["export", str(_sqlite_lag_finding(tmp_path)), "--to", "slt"], capsys)
    assert "# The finding is about sqlite: mismatch: column lag_m2" in text
    assert "In the finding, datafusion" not in text


def test_export_refuses_an_answer_that_depends_on_tied_rows(tmp_path, capsys):
    case = load_case(CASES / "ranking" / "rank_ties.yaml")
    case = dataclasses.replace(
        case, sql="SELECT id, row_number() OVER (ORDER BY v ASC NULLS LAST) AS rn FROM t\n",
        expected=None, finding={"note": "hand-made"})
    path = save_case(case, tmp_path / "ties.yaml")
    code, out, err = _run(["export", str(path), "--to", "slt"], capsys)
    assert code == 2 and out == "" and "tied rows" in err and str(path) in err
    code, out, _ = _run(["export", str(path), "--to", "slt", "--allow-ambiguous"], capsys)
    assert code == 0 and "# WARNING: the answer depends on the order of tied rows" in out


def test_export_unexpressible_or_bad_input_exits_2(tmp_path, capsys):
    code, _, err = _run(["export", str(CASES / "frames" / "exclude" / "no_others.yaml"), "--to", "slt"], capsys)
    assert code == 2 and "frame.exclude" in err
    code, _, err = _run(["export", str(tmp_path / "nope.yaml"), "--to", "slt"], capsys)
    assert code == 2 and "nope.yaml" in err
