"""SQLite: its feature table measured on the engine, and the adapter's own rules.

SQLite is not in the shared `sql_engine` suite, whose tables hold DATE,
TIMESTAMP, DECIMAL, BOOLEAN and NaN columns that the adapter refuses (they
cannot be stored faithfully); the same checks run here on a table it can hold.
Each entry of the dialect's feature table is evidence: a supported feature is
rendered and runs; a missing one raises Unsupported and, rendered anyway, is
rejected by SQLite (or, for NaN, silently answered wrongly).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import sqlite3
import time
from decimal import Decimal

import pyarrow as pa
import pytest
from test_dialects import FEATURE_EXAMPLES

from harness.core.dialect import Feature
from harness.core.errors import EngineError, Unsupported
from harness.core.functions import FUNCTIONS
from harness.engines.base import Engine
from harness.engines.registry import get_dialect
from harness.engines.sqlite.dialect import EXTRA_KEYWORDS, MISSING_FUNCTIONS, SQLITE
from harness.sql import parse, write

TABLE = pa.table({
    "id": pa.array([1, 2, 3, 4, 5, 6, 7], pa.int64()),
    "k": pa.array([1, 1, 1, 2, 2, None, None], pa.int64()),
    "v": pa.array([10, None, 10, 20, 30, None, 5], pa.int64()),
    # ISO text: SQLite has no DATE, so the INTERVAL examples fail on INTERVAL itself.
    "d": pa.array(["2024-01-01", "2024-01-02", "2024-01-02", "2024-01-03", "2024-01-05",
                   "2024-01-06", "2024-01-09"]),
    "s": pa.array(["a", "b", None, "a", "c", "", None]),
})
TABLES = {"t": TABLE}


@pytest.fixture
def sqlite(engines) -> Engine:
    return engines.get("sqlite")


def raw(sql: str, seconds: float | None = None) -> list[tuple]:
    """Run SQL on a bare SQLite database holding TABLE, without the adapter
    (interrupted after `seconds`, if given)."""
    con = sqlite3.connect(":memory:")
    if seconds is not None:
        deadline = time.monotonic() + seconds
        con.set_progress_handler(lambda: time.monotonic() > deadline, 10_000)
    con.execute("CREATE TABLE t (id BIGINT, k BIGINT, v BIGINT, d VARCHAR, s VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", zip(*TABLE.to_pydict().values(), strict=True))
    return con.execute(sql).fetchall()


# -- the feature table ---------------------------------------------------------------


# Where SQLite's rendering differs from the canonical text on purpose.
SQLITE_MARKERS = {
    # No column list after a derived table's alias: renamed through a WITH query.
    Feature.COLUMN_ALIASES: "(WITH __wh_renamed(a, b) AS (SELECT id, v",
}


@pytest.mark.parametrize("feature", [f for f in Feature if SQLITE.supports(f)], ids=lambda f: f.value)
def test_a_supported_feature_is_written_and_runs(sqlite: Engine, feature: Feature) -> None:
    sql, marker = FEATURE_EXAMPLES[feature]
    marker = SQLITE_MARKERS.get(feature, marker)
    text = sqlite.render(parse(sql))
    assert marker in text, text
    assert sqlite.run(TABLES, text).num_rows > 0


@pytest.mark.parametrize("feature", [f for f in Feature if not SQLITE.supports(f)], ids=lambda f: f.value)
def test_a_missing_feature_is_unsupported_and_sqlite_agrees(sqlite: Engine, feature: Feature) -> None:
    sql, marker = FEATURE_EXAMPLES[feature]
    with pytest.raises(Unsupported) as caught:
        sqlite.render(parse(sql))
    assert caught.value.feature == feature.value
    anyway = write(parse(sql), dataclasses.replace(SQLITE, unsupported=frozenset()))
    assert marker in anyway
    if feature is Feature.NAN_LITERAL:  # no error: SQLite reads 'NaN' as 0.0
        assert sqlite.run(TABLES, anyway).column(1).to_pylist()[0] == 0.0
        return
    if feature is Feature.FOLLOWING_FRAME_TO_HUGE_OFFSET:  # no error: it does not finish
        with pytest.raises(sqlite3.OperationalError, match="interrupted"):
            raw(anyway, seconds=2.0)
        return
    with pytest.raises(EngineError):
        sqlite.run(TABLES, anyway)


@pytest.mark.parametrize("name", sorted(n for n in MISSING_FUNCTIONS
                                        if FUNCTIONS[n].max_args == 1 and not FUNCTIONS[n].within_group))
def test_a_missing_function_is_unsupported_and_sqlite_agrees(name: str) -> None:
    with pytest.raises(Unsupported, match=f"function.{name}"):
        write(parse(f"SELECT {name}(v) OVER () FROM t"), SQLITE)
    with pytest.raises(sqlite3.OperationalError, match=f"no such function: {name}"):
        raw(f"SELECT {name}(v) OVER () FROM t")


def test_string_agg_is_group_concat_in_frame_order(sqlite: Engine) -> None:
    sql = ("SELECT id, string_agg(s, ',') OVER (ORDER BY id ASC ROWS BETWEEN 1 PRECEDING "
           "AND 1 FOLLOWING) AS x FROM t ORDER BY id ASC")
    text = sqlite.render(parse(sql))
    assert "group_concat(s, ',')" in text
    assert sqlite.run(TABLES, text).column("x").to_pylist() == \
        ["a,b", "a,b", "b,a", "a,c", "a,c,", "c,", None]


def test_nulls_are_smallest_by_default() -> None:
    asc = [r[0] for r in raw("SELECT v FROM t ORDER BY v ASC, id ASC")]
    desc = [r[0] for r in raw("SELECT v FROM t ORDER BY v DESC, id ASC")]
    assert asc[:2] == [None, None] and desc[-2:] == [None, None]
    assert SQLITE.default_null_ordering.nulls_first(False)
    assert not SQLITE.default_null_ordering.nulls_first(True)


@pytest.mark.parametrize(("sql", "feature", "sqlite_says"), [
    ("SELECT CAST(1.50 AS DECIMAL(10,2)) AS x", "type.decimal", 1.5),
    ("SELECT CAST('t' AS BOOLEAN) AS x", "type.boolean", 0),
    ("SELECT DATE '2024-01-01' AS x", "type.date", None),
])
def test_types_sqlite_has_only_as_an_affinity_are_refused(sql: str, feature: str, sqlite_says: object) -> None:
    with pytest.raises(Unsupported, match=feature):
        write(parse(sql), SQLITE)
    if sqlite_says is not None:  # what SQLite would have answered
        assert raw(write(parse(sql)))[0][0] == sqlite_says


def test_identifiers_are_quoted_with_backticks_so_a_typo_is_an_error(sqlite: Engine) -> None:
    # A double-quoted name that is no column is read as a string by SQLite.
    assert raw('SELECT "No Such" FROM t LIMIT 1') == [("No Such",)]
    text = write(parse('SELECT "No Such" FROM t'), SQLITE)
    assert text.startswith("SELECT `No Such`")
    with pytest.raises(EngineError, match="no such column"):
        sqlite.run(TABLES, text)


@pytest.mark.parametrize("word", sorted(EXTRA_KEYWORDS))
def test_sqlite_keywords_are_quoted(sqlite: Engine, word: str) -> None:
    uses = [f"SELECT v AS {word} FROM t", f"SELECT {word}.v FROM t AS {word}",
            f"CREATE TABLE {word} (x BIGINT)", f"CREATE TABLE u ({word} BIGINT)"]
    assert not all(_reads(sql) for sql in uses), f"{word} needs no quotes"
    text = write(parse(f'SELECT v AS "{word}" FROM t'), SQLITE)
    assert sqlite.run(TABLES, text).column_names == [word]


def test_lag_with_a_negative_offset_is_wrong_on_sqlite() -> None:
    """Measured, and in the baseline (offset/lag_negative_offset)."""
    rows = raw("SELECT lag(v, -2) OVER (ORDER BY id), lead(v, 2) OVER (ORDER BY id) FROM t ORDER BY id")
    assert [r[0] for r in rows] == [None] * 7  # the standard: lead(v, 2), in the second column
    assert [r[1] for r in rows] == [10, 20, 30, None, 5, None, None]


def _reads(sql: str) -> bool:
    try:
        raw(sql)
    except sqlite3.OperationalError:
        return False
    return True


# -- the adapter -------------------------------------------------------------------------


@pytest.mark.parametrize(("column", "feature"), [
    (pa.array([Decimal("1.50")], pa.decimal128(10, 2)), "data.decimal"),
    (pa.array([dt.date(2024, 1, 1)]), "data.date"),
    (pa.array([dt.datetime(2024, 1, 1)], pa.timestamp("us")), "data.timestamp"),
    (pa.array([True]), "data.boolean"),
    (pa.array([1.5, math.nan]), "data.nan"),
])
def test_data_sqlite_cannot_hold_is_unsupported(sqlite: Engine, column: pa.Array, feature: str) -> None:
    table = pa.table({"x": column})
    with pytest.raises(Unsupported) as caught:
        sqlite.run({"t": table}, "SELECT 1 AS one")
    assert caught.value.feature == feature


def test_result_types_come_from_the_values(sqlite: Engine) -> None:
    table = pa.table({"i": pa.array([1, None], pa.int64()), "f": [0.5, None]})
    got = sqlite.run({"t": table}, "SELECT i, f, CAST(i AS VARCHAR) AS s, NULL AS n, "
                                   "coalesce(f, 0) AS mixed FROM t")
    assert [f.type for f in got.schema] == [pa.int64(), pa.float64(), pa.string(), pa.null(), pa.float64()]
    assert got.column("mixed").to_pylist() == [0.5, 0.0]


def test_specials_round_trip(sqlite: Engine) -> None:
    table = pa.table({"f": [math.inf, -math.inf, -0.0], "s": ["a\x00b", "ü€😀", "it's"]})
    got = sqlite.run({"t": table}, "SELECT f, s FROM t")
    assert got.column("f").to_pylist() == [math.inf, -math.inf, 0.0]  # -0.0 comes back as 0.0
    assert got.column("s").to_pylist() == ["a\x00b", "ü€😀", "it's"]
    text = write(parse("SELECT 'a' AS x"), SQLITE).replace("'a'", SQLITE.string_literal("a\x00b"))
    assert sqlite.run({}, text).column("x").to_pylist() == ["a\x00b"]


def test_a_table_of_an_earlier_run_is_dropped(sqlite: Engine) -> None:
    sqlite.run({"old": TABLE}, "SELECT 1 AS one")
    with pytest.raises(EngineError, match="no such table"):
        sqlite.run({}, "SELECT * FROM old")


def test_errors_are_short_engine_errors(sqlite: Engine) -> None:
    with pytest.raises(EngineError) as caught:
        sqlite.run(TABLES, "SELEC 1")
    assert caught.value.engine == "sqlite" and "\n" not in caught.value.message


def test_the_registry_knows_sqlite(sqlite: Engine) -> None:
    assert get_dialect("sqlite") is SQLITE
    assert sqlite.version() == sqlite3.sqlite_version


def test_a_runaway_query_times_out_instead_of_hanging(monkeypatch) -> None:
    """SQLite 3.40 loops on a ROWS frame from 1 FOLLOWING to 2^63 - 1 FOLLOWING; in
    this process nothing else would stop it."""
    import pyarrow as pa

    from harness.core.errors import EngineTimeout
    from harness.engines.sqlite import adapter

    monkeypatch.setattr(adapter, "QUERY_SECONDS", 0.5)
    engine = adapter.SQLiteEngine()
    t = pa.table({"k": pa.array([1, 2, 3], pa.int64())})
    sql = "SELECT k, count(*) OVER (ORDER BY k ROWS BETWEEN 1 FOLLOWING AND 9223372036854775807 FOLLOWING) FROM t"
    with pytest.raises(EngineTimeout, match="did not answer within 0.5 s"):
        engine.run({"t": t}, sql)
    # The engine still answers after it.
    assert engine.run({"t": t}, "SELECT count(*) AS n FROM t").column("n").to_pylist() == [3]
