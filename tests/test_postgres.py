"""PostgreSQL: its feature table and semantics measured on a real server, and the adapter.

Every test runs on the session's throwaway local server (tests/conftest.py).
Each entry of the dialect's feature table is evidence: a supported feature is
rendered and runs; a missing one raises Unsupported and, rendered anyway, is
rejected by PostgreSQL. The numeric semantics of the profile (avg and the
variances over exact numbers) are checked digit for digit against the server
on seeded random data.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import re
from decimal import Decimal
from pathlib import Path

import psycopg
import pyarrow as pa
import pytest
from test_dialects import TABLES

from harness.cli.main import main
from harness.cli.options import default_engines, engine_options
from harness.core.dialect import KEYWORDS
from harness.core.errors import (
    EngineCrash,
    EngineError,
    EngineTimeout,
    EngineUnavailable,
    Unsupported,
)
from harness.core.model import Literal, Select, SelectItem
from harness.core.types import FLOAT32, FLOAT64, SqlType, to_arrow
from harness.engines.base import Engine
from harness.engines.postgres.adapter import ENV_DSN, NO_SERVER, PostgresEngine
from harness.engines.postgres.dialect import POSTGRES
from harness.sql import parse, write
from reference_impl import evaluate

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg(engines) -> Engine:
    return engines.get("postgres")


@pytest.fixture
def raw(postgres_dsn: str):
    """A plain psycopg connection to the session's server, without the adapter."""
    with psycopg.connect(postgres_dsn, autocommit=True) as con:
        yield con


def _values(table: pa.Table, column: str) -> list:
    return table.column(column).to_pylist()


# -- the feature table ---------------------------------------------------------------
# (The table itself is tested on every dialect, postgres included, in tests/test_dialects.py.)


@pytest.mark.parametrize("sql", [
    # No in_range support for an integer key and a numeric offset: 0A000.
    "SELECT id, sum(v) OVER (ORDER BY v ASC RANGE BETWEEN CAST(1.5 AS DECIMAL(2,1)) PRECEDING "
    "AND CURRENT ROW) AS x FROM t",
    "SELECT id, min(v > 5) OVER () AS x FROM t",  # no min(boolean)
    "SELECT id, ntile(CAST(2 AS BIGINT)) OVER (ORDER BY id ASC) AS x FROM t",
    "SELECT id, lag(v, CAST(1 AS BIGINT)) OVER (ORDER BY id ASC) AS x FROM t",
    "SELECT id, nth_value(v, CAST(1 AS BIGINT)) OVER (ORDER BY id ASC) AS x FROM t",
])
def test_what_postgres_has_only_for_other_types_is_its_not_implemented(pg: Engine, sql: str) -> None:
    with pytest.raises(EngineError) as caught:
        pg.run(TABLES, pg.render(parse(sql)))
    assert POSTGRES.says_not_implemented(caught.value.message), caught.value.message


def test_a_syntax_error_is_not_a_not_implemented(pg: Engine) -> None:
    with pytest.raises(EngineError) as caught:
        pg.run(TABLES, "SELEC 1")
    # The whole message: the primary line, then the server's LINE context and caret.
    assert caught.value.message.splitlines() == ['[42601] syntax error at or near "SELEC"',
                                                 "LINE 1: SELEC 1", "        ^"]
    assert not POSTGRES.says_not_implemented(caught.value.message)


def test_nulls_are_largest_by_default(pg: Engine) -> None:
    asc = pg.run(TABLES, "SELECT v FROM t ORDER BY v ASC, id ASC").column(0).to_pylist()
    desc = pg.run(TABLES, "SELECT v FROM t ORDER BY v DESC, id ASC").column(0).to_pylist()
    assert asc[-2:] == [None, None] and desc[:2] == [None, None]
    assert not POSTGRES.default_null_ordering.nulls_first(False)
    assert POSTGRES.default_null_ordering.nulls_first(True)


def test_no_keyword_needs_quotes_beyond_the_shared_ones(raw) -> None:
    """The measurement behind the dialect's docstring, as the writer uses names."""
    raw.execute("CREATE SCHEMA IF NOT EXISTS keyword_probe; SET search_path TO keyword_probe")
    words = [w for (w,) in raw.execute("SELECT word FROM pg_get_keywords()") if w not in KEYWORDS]
    assert len(words) > 300
    failed = []
    for w in words:
        try:
            raw.execute(f"CREATE TABLE {w} ({w} integer)")
            raw.execute(f"INSERT INTO {w} VALUES (42)")
            got = raw.execute(f"SELECT {w}.{w} AS {w} FROM {w} AS {w} ORDER BY {w} ASC").fetchall()
            failed += [w] if got != [(42,)] else []
        except psycopg.Error:
            failed.append(w)
        raw.execute(f'DROP TABLE IF EXISTS "{w}"')
    raw.execute("DROP SCHEMA keyword_probe CASCADE")
    assert failed == []


# -- literals and types ------------------------------------------------------------------


@pytest.mark.parametrize(("value", "t"), [
    (-0.0, FLOAT64), (5e-324, FLOAT64), (0.1, FLOAT64), (1e308, FLOAT64), (math.nan, FLOAT64),
    (1.401298464324817e-45, FLOAT32), (-0.0, FLOAT32), (-math.inf, FLOAT32),
])
def test_float_literals_are_floats_with_their_sign(pg: Engine, value: float, t: SqlType) -> None:
    got = pg.execute(Select((SelectItem(Literal(value, t), "x"),)), {})
    assert got.schema.field("x").type == to_arrow(t)
    assert _same(_values(got, "x")[0], value)


@pytest.mark.parametrize(("sql", "feature"), [
    ("SELECT CAST(1 AS TINYINT) AS x", "type.tinyint"),
    ("SELECT CAST(id AS HUGEINT) AS x FROM t", "type.hugeint"),  # CAST(1 AS HUGEINT): KeyError in the parser
    ("SELECT 'a' AS " + "x" * 64, "identifier.longer-than-63-bytes"),
])
def test_what_postgres_cannot_spell_is_unsupported(sql: str, feature: str) -> None:
    with pytest.raises(Unsupported) as caught:
        write(parse(sql), POSTGRES)
    assert caught.value.feature == feature


def test_a_nul_character_cannot_be_written_or_loaded(pg: Engine) -> None:
    with pytest.raises(Unsupported, match="literal.nul-character"):
        POSTGRES.string_literal("a\x00b")
    with pytest.raises(Unsupported, match="data.nul-character"):
        pg.run({"t": pa.table({"s": ["a", "b\x00"]})}, "SELECT 1 AS one")


@pytest.mark.parametrize(("column", "feature"), [
    (pa.array([1], pa.int8()), "data.tinyint"),
    (pa.array([[1, 2]], pa.list_(pa.int64())), "data.list"),
    (pa.array([pa.MonthDayNano([0, 1, 0])], pa.month_day_nano_interval()), "data.month-day-nano-interval"),
    (pa.array([1], pa.uint8()).cast(pa.float16()), "data.other-type"),
])
def test_data_postgres_cannot_hold_is_unsupported(pg: Engine, column: pa.Array, feature: str) -> None:
    with pytest.raises(Unsupported) as caught:
        pg.run({"t": pa.table({"x": column})}, "SELECT 1 AS one")
    assert caught.value.feature == feature
    assert feature in POSTGRES.unrepresentable


EVERY_TYPE = pa.table({
    "id": pa.array([1, 2, 3, 4, 5], pa.int64()),
    "i16": pa.array([-32768, 32767, 0, 1, None], pa.int16()),
    "i32": pa.array([-(2**31), 2**31 - 1, 0, 1, None], pa.int32()),
    "i64": pa.array([-(2**63), 2**63 - 1, 0, 1, None], pa.int64()),
    "f32": pa.array([math.nan, -math.inf, -0.0, 1.401298464324817e-45, None], pa.float32()),
    "f64": pa.array([math.nan, math.inf, -0.0, 5e-324, None], pa.float64()),
    "d5": pa.array([Decimal(x) if x else None for x in ("99999", "-1", "0", "7", None)],
                   pa.decimal128(5, 0)),
    "d10": pa.array([Decimal(x) if x else None for x in ("12345678.90", "-0.01", "0.00", "1.50", None)],
                    pa.decimal128(10, 2)),
    "d38": pa.array([Decimal(x) if x else None for x in
                     ("1234567890123456789012345678.1234567890", "-9999999999999999999999999999.9999999999",
                      "0E-10", "1E-10", None)], pa.decimal128(38, 10)),
    "d3838": pa.array([Decimal(x) if x else None for x in
                       ("0." + "9" * 38, "-0." + "0" * 37 + "1", "0E-38", "0.5", None)],
                      pa.decimal128(38, 38)),
    "s": pa.array(["ü€😀 e\u0301", "it's \"q\" \\ `b` ${x}", "", "a\nb\tc\\N", None]),
    "b": pa.array([True, False, None, True, False]),
    "d": pa.array([dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(1970, 1, 1), dt.date(2024, 2, 29), None]),
    "ts": pa.array([dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
                    dt.datetime(1969, 12, 31, 23, 59, 59, 1), dt.datetime(2024, 2, 29, 12), None],
                   pa.timestamp("us")),
})


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("rows", [5, 0], ids=["rows", "empty"])
def test_every_type_round_trips_with_its_own_arrow_type(pg: Engine, rows: int) -> None:
    table = EVERY_TYPE.slice(0, rows)
    got = pg.run({"t": table}, "SELECT * FROM t ORDER BY id ASC")
    assert got.schema == table.schema
    for name in table.column_names:
        bad = [(w, h) for w, h in zip(_values(table, name), _values(got, name), strict=True) if not _same(w, h)]
        assert not bad, f"{name}: {bad}"


def test_strings_sort_in_byte_order(pg: Engine) -> None:
    table = pa.table({"s": ["b", "B", "a", "é", "A", "_", "z"]})
    got = pg.run({"t": table}, "SELECT s FROM t ORDER BY s ASC")
    assert _values(got, "s") == sorted(_values(table, "s"), key=lambda s: s.encode())


def test_result_types_come_from_the_declared_types(pg: Engine) -> None:
    sql = ("SELECT count(*) AS n, sum(i16) AS s16, sum(i64) AS s64, avg(i32) AS a, "
           "array_agg(i32 ORDER BY id) AS arr, array_agg(s ORDER BY id) AS strs, "
           "string_agg(s, ',') AS sa, bool_and(b) AS ba, CAST(NULL AS DATE) AS nd "
           "FROM t WHERE id < 3")
    got = pg.run({"t": EVERY_TYPE}, sql)
    assert [f.type for f in got.schema] == [
        pa.int64(), pa.int64(), pa.decimal128(38, 0), pa.decimal128(38, 20), pa.list_(pa.int32()),
        pa.list_(pa.string()), pa.string(), pa.bool_(), pa.date32()]
    assert _values(got, "a") == [Decimal("-0.5")] and _values(got, "s64") == [Decimal(-1)]
    assert _values(got, "arr") == [[-(2**31), 2**31 - 1]]


def test_a_numeric_column_wider_than_38_digits_is_decimal256(pg: Engine) -> None:
    # avg over bigints: 9223372036854775807 at scale 0 and 1/3 at scale 20 in one column.
    table = pa.table({"id": [1, 2, 3, 4, 5], "k": pa.array([2**63 - 1, 2**63 - 1, -1, 1, 1], pa.int64())})
    got = pg.run({"t": table}, "SELECT id, avg(k) OVER (PARTITION BY id < 3) AS a FROM t ORDER BY id ASC")
    assert got.schema.field("a").type == pa.decimal256(76, 20)
    assert _values(got, "a") == [Decimal(2**63 - 1)] * 2 + [Decimal("0.33333333333333333333")] * 3


def test_an_interval_result_keeps_its_months_apart_from_its_days(pg: Engine) -> None:
    # PostgreSQL's own (months, days, microseconds): a month is never 30 days.
    got = pg.run({}, "SELECT INTERVAL '1' DAY AS d, INTERVAL '1' MONTH AS m, INTERVAL '-90' MINUTE AS n")
    assert all(pa.types.is_interval(f.type) for f in got.schema)
    d, m, n = (got.column(i)[0].as_py() for i in range(3))
    assert (d.months, d.days, d.nanoseconds) == (0, 1, 0)
    assert (m.months, m.days, m.nanoseconds) == (1, 0, 0)
    assert (n.months, n.days, n.nanoseconds) == (0, 0, -90 * 60 * 10**9)


# -- loading ---------------------------------------------------------------------------------


def test_a_large_table_loads_with_copy(pg: Engine) -> None:
    n = 20_000
    table = pa.table({"id": pa.array(range(n), pa.int64()), "s": [f"row {i}'\t\\" for i in range(n)]})
    got = pg.run({"big": table}, "SELECT count(*) AS n, count(DISTINCT s) AS d, max(id) AS m FROM big")
    assert got.to_pylist() == [{"n": n, "d": n, "m": n - 1}]


def _oid(pg: Engine, tables: dict, name: str) -> int:
    return pg.run(tables, f"SELECT CAST(CAST('{name}' AS regclass) AS bigint) AS oid").column(0)[0].as_py()


def test_a_table_is_reloaded_only_when_it_changes(pg: Engine) -> None:
    first, second = pa.table({"id": [1]}), pa.table({"id": [1, 2]})
    before = _oid(pg, {"t": first}, "t")
    assert _oid(pg, {"t": first}, "t") == before  # the same object: not loaded again
    assert pg.run({"t": second}, "SELECT * FROM t").num_rows == 2
    assert _oid(pg, {"t": second}, "t") != before


def test_a_table_of_an_earlier_run_is_dropped(pg: Engine) -> None:
    pg.run({"old": TABLES["t"]}, "SELECT 1 AS one")
    with pytest.raises(EngineError) as caught:
        pg.run({}, "SELECT * FROM old")
    assert caught.value.message.splitlines()[0] == '[42P01] relation "old" does not exist'
    tables = pg.run({}, "SELECT count(*) AS n FROM pg_tables WHERE schemaname = current_schema()")
    assert _values(tables, "n") == [0]


def test_two_adapters_on_one_server_do_not_see_each_other(postgres_dsn: str) -> None:
    a, b = PostgresEngine(dsn=postgres_dsn), PostgresEngine(dsn=postgres_dsn)
    try:
        a.run({"t": pa.table({"x": [1]})}, "SELECT 1 AS one")
        b.run({"t": pa.table({"x": [2, 3]})}, "SELECT 1 AS one")
        assert _values(a.run({"t": a._loaded["t"]}, "SELECT x FROM t"), "x") == [1]
        with pytest.raises(EngineError, match="does not exist"):
            b.run({}, "SELECT x FROM t")  # b dropped its own; a's is not on its path
        schema = a.run({}, "SELECT CAST(current_schema() AS VARCHAR) AS s").column(0)[0].as_py()
    finally:
        a.close()
        b.close()
    with psycopg.connect(postgres_dsn) as con:
        left = con.execute("SELECT count(*) FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
    assert left == (0,)  # close drops the schema


# -- errors -----------------------------------------------------------------------------------


def test_after_an_error_the_connection_still_answers(pg: Engine) -> None:
    for _ in range(2):
        with pytest.raises(EngineError) as caught:
            pg.run(TABLES, "SELECT no_such_column FROM t")
        assert caught.value.message.splitlines()[0] == '[42703] column "no_such_column" does not exist'
        assert type(caught.value) is EngineError
        assert pg.run(TABLES, "SELECT count(*) AS n FROM t").column(0).to_pylist() == [7]


def test_a_lost_connection_is_a_crash_and_the_next_query_reconnects(postgres_dsn: str) -> None:
    engine = PostgresEngine(dsn=postgres_dsn)
    try:
        pid = engine.run({}, "SELECT pg_backend_pid() AS p").column(0)[0].as_py()
        with psycopg.connect(postgres_dsn, autocommit=True) as other:
            other.execute("SELECT pg_terminate_backend(%s)", (pid,))
        with pytest.raises(EngineCrash, match="lost the connection"):
            engine.run(TABLES, "SELECT count(*) AS n FROM t")
        assert engine.run(TABLES, "SELECT count(*) AS n FROM t").column(0).to_pylist() == [7]
    finally:
        engine.close()


def test_a_statement_timeout_of_the_server_is_a_timeout(postgres_dsn: str) -> None:
    engine = PostgresEngine(dsn=postgres_dsn + " options='-c statement_timeout=50'")
    try:
        with pytest.raises(EngineTimeout, match="57014"):
            engine.run({}, "SELECT pg_sleep(2)")
    finally:
        engine.close()


# -- where the server is -----------------------------------------------------------------------


def test_without_a_server_the_engine_is_unavailable_and_says_how(monkeypatch) -> None:
    monkeypatch.delenv(ENV_DSN, raising=False)
    with pytest.raises(EngineUnavailable) as caught:
        PostgresEngine()
    assert NO_SERVER in str(caught.value)
    assert "--postgres-dsn" in NO_SERVER and "--postgres-local" in NO_SERVER


def test_the_environment_names_the_server_and_an_option_overrides_it(monkeypatch, postgres_dsn) -> None:
    monkeypatch.setenv(ENV_DSN, postgres_dsn)
    engine = PostgresEngine()
    try:
        assert engine.version()[:2].isdigit()
    finally:
        engine.close()
    monkeypatch.setenv(ENV_DSN, "host=127.0.0.1 port=1 user=nobody password=hunter2")
    engine = PostgresEngine(dsn=postgres_dsn)
    try:
        assert engine.version()[:2].isdigit()
    finally:
        engine.close()


def test_a_server_that_does_not_answer_is_unavailable_without_its_password(free_port: int) -> None:
    engine = PostgresEngine(dsn=f"host=127.0.0.1 port={free_port} user=u password=hunter2 dbname=db")
    with pytest.raises(EngineUnavailable) as caught:
        engine.start()
    message = str(caught.value)
    assert f"cannot connect to 127.0.0.1:{free_port}/db" in message
    assert "hunter2" not in message


@pytest.fixture
def free_port() -> int:
    from harness.engines.ports import free_loopback_port

    return free_loopback_port()


def test_a_local_engine_starts_and_removes_its_own_server(postgres_dsn: str) -> None:
    engine = PostgresEngine(local=True)
    engine.start()
    server = engine._server
    assert server is not None and server.port is not None
    directory = server._dir
    assert engine.version()[:2].isdigit()
    engine.close()
    assert engine._server is None and not directory.exists()


def test_an_isolated_worker_gets_the_server_from_its_options(postgres_dsn: str) -> None:
    from harness.engines.isolation import IsolatedEngine

    engine = IsolatedEngine("postgres", timeout=60, dsn=postgres_dsn)
    try:
        assert engine.run(TABLES, "SELECT count(*) AS n FROM t").column(0).to_pylist() == [7]
    finally:
        engine.close()


# -- the semantics profile, digit for digit ------------------------------------------------------

NUMERIC_COLUMNS = {
    "si": pa.int16(), "i": pa.int32(), "k": pa.int64(),
    "d": pa.decimal128(10, 2), "dq": pa.decimal128(18, 4), "dw": pa.decimal128(38, 10),
    "dz": pa.decimal128(3, 3), "dzz": pa.decimal128(38, 38),
}
STATISTICS = ["avg", "var_samp", "var_pop", "stddev_samp", "stddev_pop"]


def _random_value(rng: random.Random, name: str, arrow_type: pa.DataType) -> object:
    if pa.types.is_integer(arrow_type):
        top = 2 ** (arrow_type.bit_width - 1)
        return rng.choice([rng.randint(-5, 5), rng.randint(-1000, 1000), rng.randint(-top, top - 1)])
    # Small steps, two decimals (as the generator draws them), or any value of the type.
    scale, top = arrow_type.scale, 10**arrow_type.precision - 1
    units = rng.choice([rng.randint(-999, 999), rng.randint(-99, 99) * 10 ** max(scale - 2, 0),
                        rng.randint(-top, top)])
    return Decimal(units).scaleb(-scale)


def _random_table(rng: random.Random) -> pa.Table:
    n = rng.randint(1, 9)
    columns = {"id": pa.array(range(n), pa.int64())}
    for name, arrow_type in NUMERIC_COLUMNS.items():
        values = [None if rng.random() < 0.15 else _random_value(rng, name, arrow_type) for _ in range(n)]
        columns[name] = pa.array(values, arrow_type)
    return pa.table(columns)


@pytest.mark.parametrize("seed", range(12))
def test_avg_and_the_variances_over_exact_numbers_match_postgres_digit_for_digit(pg: Engine, seed: int) -> None:
    rng = random.Random(seed)
    compared = 0
    for _ in range(6):
        table = _random_table(rng)
        for column in NUMERIC_COLUMNS:
            windows = ", ".join(
                f"{f}({column}) OVER (ORDER BY id ASC ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS {f}_m, "
                f"{f}({column}) OVER () AS {f}_all" for f in STATISTICS)
            query = parse(f"SELECT id, {windows} FROM t ORDER BY id ASC")
            try:
                answer = pg.execute(query, {"t": table})
            except Unsupported:  # more than 76 digits: neither side can hold it
                continue
            expected = evaluate(query, {"t": table}, profile=POSTGRES.semantics).table
            for name in answer.column_names:
                assert _values(answer, name) == _values(expected, name), (column, name, table.to_pydict())
                compared += 1
    assert compared > 300


@pytest.mark.parametrize(("values", "function", "expected"), [
    ([1, 2, 2], "avg", "1.6666666666666667"),
    ([-1, 1, 1], "avg", "0.33333333333333333333"),
    ([0, 0, 0], "avg", "0.00000000000000000000"),
    ([1, 2, 2], "var_samp", "0.33333333333333333333"),
    ([1, 2, 2], "stddev_samp", "0.57735026918962576451"),
    ([5, 5], "var_pop", "0"),
    ([2**62, 2**62, 1], "stddev_pop", "2173969637555463702"),
    ([2**62, 2**62, 1], "var_samp", "7089215977519551319079180309210245803"),
])
def test_measured_numeric_answers(raw, values: list[int], function: str, expected: str) -> None:
    rows = ", ".join(f"(CAST({v} AS BIGINT))" for v in values)
    got = raw.execute(f"SELECT {function}(x) FROM (VALUES {rows}) AS v(x)").fetchone()[0]
    assert format(got, "f") == expected
    table = pa.table({"x": pa.array(values, pa.int64())})
    mine = evaluate(parse(f"SELECT {function}(x) AS y FROM t"), {"t": table}, profile=POSTGRES.semantics)
    assert _values(mine.table, "y")[0] == Decimal(expected)  # equal digits, declared scale aside


def test_a_numeric_sum_has_no_38_digit_limit(pg: Engine) -> None:
    top, twice = Decimal("9" * 38), Decimal("1" + "9" * 37 + "8")  # (Decimal's * and - round to 28 digits)
    table = pa.table({"id": [1, 2, 3], "d": pa.array([top, top, top.copy_negate()], pa.decimal128(38, 0))})
    query = parse("SELECT id, sum(d) OVER (ORDER BY id ASC ROWS BETWEEN UNBOUNDED PRECEDING "
                  "AND CURRENT ROW) AS s FROM t ORDER BY id ASC")
    answer = pg.execute(query, {"t": table})
    assert _values(answer, "s") == [top, twice, top]
    expected = evaluate(query, {"t": table}, profile=POSTGRES.semantics).table
    assert _values(expected, "s") == _values(answer, "s")


def test_stddev_pop_whose_squares_overflow_is_an_error_on_postgres(pg: Engine) -> None:
    """Measured (cases/regressions/stddev_pop_square_overflows): PostgreSQL's
    float8 accumulator (Youngs-Cramer) overflows where the answer, 1.0e154, is finite."""
    table = pa.table({"f": [0.0, -2.002083095183101e154]})
    with pytest.raises(EngineError) as caught:
        pg.run({"t": table}, "SELECT stddev_pop(f) AS s FROM t")
    assert caught.value.message == "[22003] value out of range: overflow"


# -- the command line -------------------------------------------------------------------------------


VALUE_CASES = str(Path(__file__).resolve().parent.parent / "cases" / "value")


def test_run_on_a_local_server_passes_the_value_cases(postgres_dsn, capsys) -> None:
    # (postgres_dsn: skips where no server binaries are installed)
    assert main(["run", VALUE_CASES, "--engines", "reference,postgres", "--postgres-local"]) == 0
    out = capsys.readouterr().out
    assert "postgres" in out


def test_the_default_engines_take_postgres_only_with_a_server(monkeypatch) -> None:
    import argparse

    monkeypatch.delenv(ENV_DSN, raising=False)
    assert "postgres" not in default_engines(argparse.Namespace())
    assert "sqlite" in default_engines(argparse.Namespace())
    assert "postgres" in default_engines(argparse.Namespace(postgres_local=True))
    assert "postgres" in default_engines(argparse.Namespace(postgres_dsn="host=x"))
    monkeypatch.setenv(ENV_DSN, "host=y")
    assert "postgres" in default_engines(argparse.Namespace())


def test_engine_options_give_postgres_its_server(monkeypatch) -> None:
    import argparse

    monkeypatch.delenv(ENV_DSN, raising=False)
    names = ["duckdb", "postgres", "postgres[default]"]
    assert engine_options(argparse.Namespace(postgres_dsn="host=x"), names) == {
        "postgres": {"dsn": "host=x"}, "postgres[default]": {"dsn": "host=x"}}
    assert engine_options(argparse.Namespace(postgres_local=True), names)["postgres"] == {"local": True}
    assert engine_options(argparse.Namespace(), names) == {}
    monkeypatch.setenv(ENV_DSN, "host=y")
    assert engine_options(argparse.Namespace(), names)["postgres"] == {"dsn": "host=y"}


def test_a_dsn_and_a_local_server_together_are_bad_input(capsys) -> None:
    code = main(["run", VALUE_CASES, "--engines", "reference,postgres",
                 "--postgres-dsn", "host=x", "--postgres-local"])
    assert code == 2
    assert "--postgres-dsn, --postgres-local" in capsys.readouterr().err


def test_postgres_without_a_server_is_bad_input_that_says_how(monkeypatch, capsys) -> None:
    monkeypatch.delenv(ENV_DSN, raising=False)
    assert main(["run", VALUE_CASES, "--engines", "reference,postgres"]) == 2
    assert "--postgres-local" in capsys.readouterr().err


def test_a_campaign_shares_one_local_server_and_stops_it(postgres_dsn, tmp_path, capsys) -> None:
    import json
    import socket

    out = tmp_path / "fuzz"
    code = main(["fuzz", "--engines", "reference,postgres", "--postgres-local", "--cases", "20",
                 "--jobs", "2", "--no-reduce", "--reruns", "0", "--out", str(out)])
    assert code in (0, 1)
    # campaign.json says where the server was, its password hidden (core.secrets).
    dsn = json.loads((out / "campaign.json").read_text())["engine_options"]["postgres"]["dsn"]
    assert dsn.startswith("host=127.0.0.1 ") and "password" not in dsn, dsn
    port = int(re.search(r"port=(\d+)", dsn).group(1))
    with socket.socket() as s, pytest.raises(OSError):  # the server is gone
        s.settimeout(2)
        s.connect(("127.0.0.1", port))
    summary = json.loads((out / "summary.json").read_text())
    assert sum(summary["verdicts"]["postgres"].values()) == 20
