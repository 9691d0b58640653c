"""`export CASE --to issue`: each engine's bug report, its reproduction run as pasted.

For a corpus regression case of a real difference on each engine, the report's
reproduction block is taken out of the Markdown and run, statement by
statement, on a fresh connection of the engine's own library (DuckDB, SQLite,
DataFusion), through the driver on the throwaway server (PostgreSQL), or
through a SparkSession's sql() (Spark); the rows it gives, printed as the
report prints cells, must equal the report's actual output. A reproduction
that does not run fails the test.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable

import pytest

from harness.cli.main import main
from harness.core.errors import InvalidInput
from harness.findings.issue import build_issue
from harness.findings.issue_text import (
    ACTUAL_HEADING,
    DERIVATION_HEADING,
    REPRODUCTION_HEADING,
    to_markdown,
)
from harness.findings.replay import load_one
from harness.findings.show import show

# A corpus regression case on which each engine differs from the standard (a
# baseline entry names it), and whether the report carries a cell-level
# derivation (a wrong value) or not (rows where the standard raises an error).
CASES = {
    "duckdb": ("cases/regressions/duckdb_range_zero_preceding_peers.yaml", True),
    "datafusion": ("cases/regressions/sliding_sum_after_nan.yaml", True),
    "sqlite": ("cases/regressions/sqlite_min_max_filter_sliding_frame.yaml", True),
    "postgres": ("cases/regressions/range_negative_offset_null_keys.yaml", False),
    "spark": ("cases/regressions/avg_double_sum_past_max.yaml", True),
}


# ---------------------------------------------------------------------------
# Reading the report back


def section(markdown: str, heading: str) -> list[str]:
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start + 1:end]


def reproduction_statements(markdown: str) -> list[str]:
    body = section(markdown, REPRODUCTION_HEADING)
    opening = next(i for i, line in enumerate(body) if line.startswith("```sql"))
    closing = next(i for i in range(opening + 1, len(body)) if body[i].startswith("```"))
    script = "\n".join(body[opening + 1:closing])
    # The harness writes no semicolon inside a literal in these cases: a split at
    # each line-ending semicolon is the client's own reading of the script.
    return [s.strip() for s in re.split(r";\s*$", script, flags=re.MULTILINE) if s.strip()]


def printed_actual(markdown: str) -> tuple[list[str], list[list[str]]] | str:
    """The actual output's columns and cells, or its error."""
    body = [line for line in section(markdown, ACTUAL_HEADING) if line.strip()]
    if body[0].startswith("```"):
        return body[1]
    if body[0] == "(no rows)":
        return [], []
    cells = [_cells(line) for line in body if line.startswith("|")]
    return cells[0], cells[2:]


def _cells(line: str) -> list[str]:
    inner = line.strip()[2:-2]
    parts = re.split(r"(?<!\\) \| ", inner)
    return [p.replace("\\|", "|").replace("\\\\", "\\") for p in parts]


# ---------------------------------------------------------------------------
# Running a script as pasted, each engine through its own library


def _run_dbapi(con, statements: list[str]) -> list[tuple]:  # type: ignore[no-untyped-def]
    try:
        for statement in statements[:-1]:
            con.execute(statement)
        return [tuple(r) for r in con.execute(statements[-1]).fetchall()]
    finally:
        con.close()


def run_duckdb(statements: list[str]) -> list[tuple]:
    import duckdb

    return _run_dbapi(duckdb.connect(":memory:"), statements)


def run_sqlite(statements: list[str]) -> list[tuple]:
    return _run_dbapi(sqlite3.connect(":memory:"), statements)


def run_datafusion(statements: list[str]) -> list[tuple]:
    import datafusion

    ctx = datafusion.SessionContext()
    for statement in statements[:-1]:
        ctx.sql(statement).collect()
    table = ctx.sql(statements[-1]).to_arrow_table()
    return [tuple(r.values()) for r in table.to_pylist()]


def postgres_runner(dsn: str) -> Callable[[list[str]], list[tuple]]:
    import psycopg

    def run(statements: list[str]) -> list[tuple]:
        with psycopg.connect(dsn, autocommit=True) as con:
            con.execute("DROP TABLE IF EXISTS t")
            for statement in statements[:-1]:
                con.execute(statement)
            try:
                return [tuple(r) for r in con.execute(statements[-1]).fetchall()]
            finally:
                con.execute("DROP TABLE IF EXISTS t")

    return run


def run_spark(statements: list[str]) -> list[tuple]:
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate().newSession()  # its own temp views and SQL conf
    for statement in statements[:-1]:
        spark.sql(statement)
    return [tuple(r) for r in spark.sql(statements[-1]).collect()]


# ---------------------------------------------------------------------------
# The tests


@pytest.fixture
def runner(request: pytest.FixtureRequest, engines) -> Callable[[list[str]], list[tuple]]:
    name = request.node.callspec.params["name"]
    engines.get(name)  # skips where the engine cannot start
    if name == "postgres":
        return postgres_runner(engines.postgres_dsn())
    return {"duckdb": run_duckdb, "sqlite": run_sqlite, "datafusion": run_datafusion, "spark": run_spark}[name]


@pytest.mark.parametrize("name", [
    "duckdb", "datafusion", "sqlite",
    pytest.param("postgres", marks=pytest.mark.postgres),
    pytest.param("spark", marks=pytest.mark.spark),
])
def test_reproduction_runs_as_pasted_and_prints_the_actual_output(name: str, engines, runner) -> None:
    path, one_cell = CASES[name]
    engine = engines.get(name)
    markdown = to_markdown(build_issue(load_one(path), engine, source=path))
    rows = runner(reproduction_statements(markdown))
    printed = printed_actual(markdown)
    assert not isinstance(printed, str), f"the report says {name} fails: {printed}"
    columns, cells = printed
    assert sorted(cells) == sorted([show(v) for v in row] for row in rows)
    assert len(columns) == len(rows[0]) if rows else True
    # The report's parts.
    title = markdown.splitlines()[0]
    assert title.startswith(f"# {engine.product} {engine.version()}: ") and " OVER (" in title
    assert ("## Why the expected value" in markdown) and ("## Expected output" in markdown)
    assert (DERIVATION_HEADING in markdown) == one_cell
    assert (("```\n# name: test/sql/window/" in markdown) == (name == "duckdb")
            and ("# Licensed to the Apache" in markdown) == (name == "datafusion"))


def test_the_title_names_function_frame_and_values(engines) -> None:
    path, _ = CASES["duckdb"]
    markdown = to_markdown(build_issue(load_one(path), engines.get("duckdb"), source=path))
    assert re.match(r"# DuckDB [\d.]+: max\(\) OVER \(RANGE BETWEEN UNBOUNDED PRECEDING AND 0 PRECEDING\) "
                    r"returns -1 where the SQL standard gives 0$", markdown.splitlines()[0])
    # The derivation's differing step: DuckDB's value is the frame without the row's peers.
    assert "**[exclude]**" in markdown


def test_other_engines_run_now_for_context(engines) -> None:
    path, _ = CASES["sqlite"]
    markdown = to_markdown(build_issue(load_one(path), engines.get("sqlite"), [engines.get("duckdb")],
                                       source=path))
    others = "\n".join(section(markdown, "## Other engines"))
    assert "run now" in markdown and "**DuckDB**" in others and "same as the reference" in others


def test_an_engine_that_agrees_has_nothing_to_report(engines) -> None:
    path, _ = CASES["sqlite"]
    with pytest.raises(InvalidInput, match="nothing to report"):
        build_issue(load_one(path), engines.get("duckdb"), source=path)


def test_the_command_writes_the_report(tmp_path, capsys) -> None:
    path, _ = CASES["sqlite"]
    out = tmp_path / "issue.md"
    assert main(["export", path, "--to", "issue", "--engine", "sqlite", "--out", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("# SQLite ") and "Runs as pasted in sqlite3" in text
    assert main(["export", path, "--to", "issue"]) == 2  # no finding record names an engine
    assert "--engine" in capsys.readouterr().err
