"""Engine errors keep their whole message (issue 20, item 4): the DuckDB adapter
kept the first line only (the LINE context and candidate lists hold the cause),
and every adapter cut a message at 500 characters. One-line displays show the
first line; the recorded result (detail, facts, JSON) holds all of it."""

from __future__ import annotations

import io
import json
import re

import pyarrow as pa
import pytest

from harness.core.errors import EngineError
from harness.engines.registry import get_engine

TABLES = {"t": pa.table({"id": pa.array([1, 2, 3], pa.int64())})}
LONG = "c" + "x" * 700  # an unknown column whose name alone is past the old 500-character cut


def _error(engine_name: str, sql: str) -> str:
    engine = get_engine(engine_name)
    try:
        engine.start()
        with pytest.raises(EngineError) as caught:
            engine.run(TABLES, sql)
    finally:
        engine.close()
    return caught.value.message


def test_a_duckdb_error_keeps_the_lines_after_its_first():
    message = _error("duckdb", "SELECT idd FROM t")
    lines = message.splitlines()
    assert lines[0].startswith("Binder Error: Referenced column")
    assert lines[1:] == ['Candidate bindings: "id"'], message  # what the first line alone hid


@pytest.mark.parametrize("engine_name", ["duckdb", "sqlite", "datafusion"])
def test_a_long_message_is_not_cut(engine_name):
    message = _error(engine_name, f"SELECT {LONG} FROM t")
    assert LONG in message, message


def test_the_whole_message_is_recorded_shown_indented_and_still_matched_by_baseline_patterns():
    """DuckDB's multi-line message as a verdict records it: the JSON has every line;
    the text's details indent the lines after the first; an entry's `error` pattern
    written against the first line (anchored at its start, as `^Out of Range Error:`
    is) still matches, and so does one for a later line."""
    from harness.baseline.known import Matcher, Observation
    from harness.judge.compare import Verdict
    from harness.judge.runner import Result, RunResults
    from harness.results.output import write_json, write_table

    message = _error("duckdb", "SELECT idd FROM t")
    result = Result("c", "duckdb", Verdict.ERROR)
    result.said(Verdict.ERROR, message, message=message)
    run = RunResults(engines={"duckdb": "x"}, results=[result])
    buffer = io.StringIO()
    write_json(run, buffer)
    doc = json.loads(buffer.getvalue())
    assert doc["results"][0]["detail"] == message and "\nCandidate bindings" in message
    text = io.StringIO()
    write_table(run, text)
    shown = text.getvalue()
    assert f"- c on duckdb: error: {message.splitlines()[0]}\n    " in shown
    assert '\n    Candidate bindings: "id"' in shown, shown
    obs = Observation("c", "duckdb", "error", message, facts=result.facts)
    for pattern in (r"^Binder Error: Referenced column", r"Candidate bindings"):
        assert Matcher(verdict=("error",), error=re.compile(pattern)).holds(obs), pattern


@pytest.mark.spark
def test_a_spark_error_keeps_its_sql_excerpt_and_is_not_cut():
    """Spark's parse error keeps its '== SQL ==' excerpt and caret; a long message
    is not cut; the analyzed plan (expression ids that change run to run) is left out."""
    engine = get_engine("spark")
    try:
        engine.start()
        messages = []
        for sql in ("SELEC 1", f"SELECT id FROM t ORDER BY {LONG}"):
            with pytest.raises(EngineError) as caught:
                engine.run(TABLES, sql)
            messages.append(caught.value.message)
    finally:
        engine.close()
    parse_error, unresolved = messages
    assert parse_error.splitlines()[1:] == ["== SQL ==", "SELEC 1", "^^^"], parse_error
    assert LONG in unresolved and "\n" not in unresolved, unresolved
