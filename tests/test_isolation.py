"""Engines in worker processes: a native crash or a hang costs one query, not the campaign."""

from __future__ import annotations

import os
import signal
import threading

import pyarrow as pa
import pytest

from harness.core.errors import EngineCrash, EngineError, EngineTimeout, InvalidInput
from harness.engines.isolation import IsolatedEngine

TABLES = {"t": pa.table({"id": pa.array([1, 2, 3], pa.int64())})}
SLOW = "SELECT count(*) FROM range(100000000000) a"  # minutes of work for DuckDB


@pytest.fixture
def duckdb():
    engine = IsolatedEngine("duckdb", timeout=20)
    yield engine
    engine.close()


def test_answers_and_errors_cross_the_process_boundary(duckdb):
    answer = duckdb.run(TABLES, "SELECT id, sum(id) OVER (ORDER BY id) AS s FROM t ORDER BY id")
    assert answer.column("s").to_pylist() == [1, 3, 6]
    with pytest.raises(EngineError, match="nope") as raised:
        duckdb.run(TABLES, "SELECT nope FROM t")
    assert type(raised.value) is EngineError
    assert duckdb.version()[0].isdigit()


def test_a_worker_killed_mid_query_is_a_crash_and_the_engine_restarts(duckdb):
    duckdb.start()
    pid = duckdb._process.pid
    threading.Timer(1.0, os.kill, (pid, signal.SIGSEGV)).start()
    with pytest.raises(EngineCrash, match="SIGSEGV"):
        duckdb.run(TABLES, SLOW)
    assert duckdb.restarts == 1
    assert duckdb.run(TABLES, "SELECT 1 AS x").column("x").to_pylist() == [1]
    assert duckdb._process.pid != pid


def test_a_query_that_hangs_times_out_and_the_engine_restarts():
    engine = IsolatedEngine("duckdb", timeout=1.5)
    try:
        with pytest.raises(EngineTimeout, match="did not answer within 1.5 s"):
            engine.run(TABLES, SLOW)
        assert engine.run(TABLES, "SELECT 2 AS x").column("x").to_pylist() == [2]
    finally:
        engine.close()


def test_an_unknown_engine_is_refused_before_any_process_starts():
    with pytest.raises(InvalidInput, match="unknown engine 'nosuch'"):
        IsolatedEngine("nosuch")


def test_a_profile_runs_on_its_engines_worker_under_its_own_settings(duckdb):
    """`duckdb[threads=1]` on the engine's own worker: the same process answers,
    with the profile's setting (read back from DuckDB), and the engine's own
    session keeps its own."""
    profile = duckdb.profile("duckdb[threads=1]")
    setting = "SELECT current_setting('threads') AS n"
    assert profile.run({}, setting).column("n").to_pylist() == [1]
    pid = duckdb._process.pid
    assert duckdb.run({}, setting).column("n").to_pylist() != [1] or os.cpu_count() == 1
    assert profile.run(TABLES, "SELECT sum(id) AS s FROM t").column("s").to_pylist() == [6]
    assert duckdb._process.pid == pid and profile.name == "duckdb[threads=1]"
    assert profile.version() == duckdb.version()


def test_a_profile_that_crashes_or_hangs_is_its_own_verdict_and_the_worker_restarts():
    engine = IsolatedEngine("duckdb", timeout=1.5)
    profile = engine.profile("duckdb[threads=1]")
    try:
        with pytest.raises(EngineTimeout, match="did not answer within 1.5 s") as raised:
            profile.run(TABLES, SLOW)
        assert raised.value.engine == "duckdb[threads=1]"
        assert engine.restarts == 1
        assert engine.run(TABLES, "SELECT 2 AS x").column("x").to_pylist() == [2]
        assert profile.run({}, "SELECT current_setting('threads') AS n").column("n").to_pylist() == [1]
        pid = engine._process.pid
        threading.Timer(0.5, os.kill, (pid, signal.SIGSEGV)).start()
        with pytest.raises(EngineCrash, match="SIGSEGV") as crashed:
            profile.run(TABLES, SLOW)
        assert crashed.value.engine == "duckdb[threads=1]"
        with pytest.raises(EngineError, match="nope") as refused:
            profile.run(TABLES, "SELECT nope FROM t")
        assert refused.value.engine == "duckdb[threads=1]"
    finally:
        engine.close()
