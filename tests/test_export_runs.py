"""Exported regression tests run (`harness.findings.export_run`): corpus cases
exported to DataFusion's `.slt` and DuckDB's `.test`, read back by the
importer's reader of that grammar and run record by record on the format's
engine, pass there; a changed expected row, a planted bug (a deliberately
faulty engine), a statement whose outcome is not the file's, and a record the
reader cannot read each fail: the runner can fail.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cases.case import load_case
from harness.cli.main import main
from harness.engines.registry import get_engine
from harness.findings.export import FORMATS
from harness.findings.export_run import FileRun, run_test_file

CASES = Path(__file__).resolve().parent.parent / "cases"

# Corpus cases with an `expected` answer and a window function, one order of rows
# (every row's place fixed by ORDER BY, no tied rows deciding a value).
EXPORTED = [
    "ranking/rank_ties",  # ranking over peers
    "frames/exclude/ties_and_current_row_range",  # RANGE with EXCLUDE TIES / CURRENT ROW
    "frames/groups/preceding_following",  # GROUPS
    "frames/range/date_interval_day",  # RANGE over dates with an interval
    "aggregate/filter_sum_count",  # FILTER
    "aggregate/sum_avg_double",  # floats
    "aggregate/sum_decimal",  # decimals
    "nulls/asc_nulls_first",  # NULL ordering
]
ENGINE = {"slt": "datafusion", "duckdb-test": "duckdb"}


def _export(case: str, to: str, tmp_path: Path, capsys) -> Path:
    out = tmp_path / f"test_{case.replace('/', '_')}{FORMATS[to].suffix}"
    code = main(["export", str(CASES / f"{case}.yaml"), "--to", to, "--out", str(out)])
    _, err = capsys.readouterr()
    assert code == 0, err
    return out


def _run(path: Path, to: str, engine: str | None = None, through_model: bool = False) -> FileRun:
    pytest.importorskip(ENGINE[to])
    running = get_engine(engine or ENGINE[to])
    try:
        return run_test_file(path, FORMATS[to], running, through_model)
    finally:
        running.close()


def test_the_chosen_cases_hold_an_expected_answer_and_a_window():
    for name in EXPORTED:
        case = load_case(CASES / f"{name}.yaml")
        assert case.expected is not None, name
        assert " OVER " in case.sql.upper() or " OVER(" in case.sql.upper(), name


# A case the format's engine cannot express is refused at export (DataFusion has no EXCLUDE).
NOT_EXPRESSIBLE = {("frames/exclude/ties_and_current_row_range", "slt")}


@pytest.mark.parametrize("case, to", [(c, t) for c in EXPORTED for t in sorted(FORMATS)
                                      if (c, t) not in NOT_EXPRESSIBLE])
def test_every_record_of_an_export_passes_on_its_engine(case, to, tmp_path, capsys):
    ran = _run(_export(case, to, tmp_path, capsys), to)
    assert ran.passed, ran.failures
    kinds = [r.kind for r in ran.records]
    assert kinds.count("query") == 1 and kinds[0] == "statement"
    assert ran.unread == ()


def _change_first_expected_row(text: str) -> str:
    """The first row after `----` with its last cell replaced by one no engine prints."""
    head, _, rest = text.partition("----\n")
    first, _, tail = rest.partition("\n")
    separator = "\t" if "\t" in first else " "
    cells = first.split(separator)
    return head + "----\n" + separator.join([*cells[:-1], "424242"]) + "\n" + tail


@pytest.mark.parametrize("to", sorted(FORMATS))
def test_a_changed_expected_row_fails_naming_the_query(to, tmp_path, capsys):
    path = _export("ranking/rank_ties", to, tmp_path, capsys)
    path.write_text(_change_first_expected_row(path.read_text()))
    ran = _run(path, to)
    assert not ran.passed
    failed = [r for r in ran.records if not r.passed]
    assert [r.kind for r in failed] == ["query"]
    assert "424242" in failed[0].problem and f"line {failed[0].line}:" in ran.failures[0]
    lines = path.read_text().splitlines()
    assert lines[failed[0].line - 1].startswith("query ")  # the line named is the record's header


@pytest.mark.parametrize("fault, case", [
    ("duckdb~exclude-ties", "frames/exclude/ties_and_current_row_range"),
    ("duckdb~range-offset", "frames/range/date_interval_day"),
])
def test_a_faulty_engine_fails_the_export_its_real_engine_passes(fault, case, tmp_path, capsys):
    path = _export(case, "duckdb-test", tmp_path, capsys)
    # Through the model on plain DuckDB: the re-rendered SQL is not what breaks it.
    assert _run(path, "duckdb-test", "duckdb", through_model=True).passed
    ran = _run(path, "duckdb-test", fault, through_model=True)
    assert not ran.passed
    assert [r.kind for r in ran.records if not r.passed] == ["query"]
    assert ran.failures[0].startswith("line ") and "rows: the file's" in ran.failures[0]


STATEMENTS = """\
statement ok
CREATE TABLE t (x INTEGER);

statement error
SELECT * FROM no_such_table;

statement ok
SELECT * FROM no_such_table_either;

statement error
SELECT 1;

query I
SELECT count(*) OVER () FROM t;
----
"""


@pytest.mark.parametrize("to", sorted(FORMATS))
def test_statements_are_judged_by_their_expected_outcome(to, tmp_path):
    path = tmp_path / f"statements{FORMATS[to].suffix}"
    path.write_text(STATEMENTS)
    ran = _run(path, to)
    assert [r.passed for r in ran.records] == [True, True, False, False, True]
    assert ran.records[2].problem.startswith("failed: ")
    assert ran.records[3].problem == "ran, where the file expects an error"


@pytest.mark.parametrize("to", sorted(FORMATS))
def test_a_record_the_reader_cannot_read_fails_the_file(to, tmp_path):
    path = tmp_path / f"hashed{FORMATS[to].suffix}"
    path.write_text("query I\nSELECT 1\n----\n1 values hashing to 0123abcd\n")
    ran = _run(path, to)
    assert ran.records == () and not ran.passed
    assert "result recorded as a hash" in ran.failures[0]


def test_rowsort_sorts_both_sides_and_type_letters_are_checked(tmp_path):
    path = tmp_path / "sorted.slt"
    path.write_text("query IT rowsort\nSELECT * FROM (VALUES (2, 'b'), (1, 'a')) AS v(x, y)\n----\n1 a\n2 b\n\n"
                    "query II\nSELECT 1, 'a'\n----\n1 a\n")
    ran = _run(path, "slt")
    assert ran.records[0].passed
    assert ran.records[1].problem == "type letters: the file's II, the engine's IT"


def test_export_check_runs_the_written_file(tmp_path, capsys):
    pytest.importorskip("duckdb")
    out = tmp_path / "t.test"
    code = main(["export", str(CASES / "ranking" / "rank_ties.yaml"), "--to", "duckdb-test",
                 "--out", str(out), "--check"])
    _, err = capsys.readouterr()
    assert code == 0, err
    assert "check on duckdb " in err and "records, passed" in err
