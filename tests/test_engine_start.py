"""An engine that fails at start is exit 2, said once, within the start timeout
(issue 33, item 5), whatever the engine: a `--engine-python` interpreter that
hangs or exits at start, a PostgreSQL DSN pointing at a closed port or at a
server that never answers. No traceback, no verdict, no process left behind.

The start timeout is $WINDOW_HARNESS_START_TIMEOUT (`harness.engines.base`);
here 2 s, so a hang costs seconds, not the default's two minutes.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.engines.base import START_TIMEOUT_ENV

ROOT = Path(__file__).resolve().parent.parent
CASE = str(ROOT / "cases" / "special_floats" / "negative_zero_peers.yaml")
START = 2.0
# The start timeout, plus the interpreter's and the harness's own start on a loaded machine.
BOUND = START + 25


def _harness(*args: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess, float]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT), START_TIMEOUT_ENV: str(START), **(env or {})}
    environment.pop("WINDOW_HARNESS_POSTGRES_DSN", None)
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True,
                          cwd=cwd, env=environment, timeout=60)
    return done, time.monotonic() - t0


def _refused_once(done: subprocess.CompletedProcess, seconds: float, engine: str, *named: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr[-3000:])
    assert seconds < BOUND, seconds
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout, done.stderr[-3000:]
    said = f"engine {engine!r} is not available"
    assert done.stderr.count(said) == 1, done.stderr  # once: not per shard, not wrapped in itself
    assert "is not available" not in done.stderr.split(said, 1)[1], done.stderr
    for text in named:
        assert text in done.stderr, done.stderr


def _script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(0o755)
    return path


HOSTILE = {
    # Never answers: the harness's boot never runs, so no lifeline of its own either.
    "hangs": ("exec sleep {marker}\n", "did not start within 2 s"),
    "exits-1": ("echo 'cannot load the engine' >&2\nexit 1\n", "exited before it was ready (exit code 1)"),
}

COMMANDS = {
    "run": lambda tmp: ["run", CASE, "--out", str(tmp / "out")],
    "replay": lambda tmp: ["replay", CASE],
    "fuzz": lambda tmp: ["fuzz", "--cases", "3", "--jobs", "2", "--out", str(tmp / "out")],
    "gate": lambda tmp: ["gate", "--corpus", CASE, "--budget-cases", "3", "--jobs", "2",
                         "--out", str(tmp / "out")],
}


def _left_behind(marker: str) -> list[str]:
    found = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True)
    return found.stdout.split()


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_interpreter_is_exit_2_naming_engine_and_interpreter(tmp_path, kind, command):
    marker = str(900000 + os.getpid() % 1000 * 100 + sorted(HOSTILE).index(kind) * 10
                 + sorted(COMMANDS).index(command))
    body, reason = HOSTILE[kind]
    python = _script(tmp_path, "python", body.format(marker=marker))
    done, seconds = _harness(*COMMANDS[command](tmp_path), "--engines", "reference,duckdb@hostile",
                             "--engine-python", f"duckdb@hostile={python}", cwd=tmp_path)
    _refused_once(done, seconds, "duckdb@hostile", reason, f"interpreter {python}")
    if kind == "exits-1":
        assert "cannot load the engine" in done.stderr  # the child's last words
    time.sleep(1.5)  # a guardian's SIGTERM, then its check
    assert _left_behind(marker) == []


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP port that accepts connections and never says a word."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    for s in [*held, listener]:
        s.close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: nobody listens


@pytest.mark.parametrize("command", ["run", "fuzz", "gate"])
def test_a_postgres_dsn_at_a_closed_port_is_exit_2_said_once(tmp_path, command):
    pytest.importorskip("psycopg")
    dsn = f"host=127.0.0.1 port={_closed_port()} user=nobody dbname=none"
    done, seconds = _harness(*COMMANDS[command](tmp_path), "--engines", "reference,postgres",
                             "--postgres-dsn", dsn, cwd=tmp_path)
    _refused_once(done, seconds, "postgres", "cannot connect to 127.0.0.1:")


@pytest.mark.parametrize("command", ["run", "fuzz"])
def test_a_postgres_server_that_never_answers_is_exit_2_within_the_start_timeout(tmp_path, silent_server,
                                                                                   command):
    pytest.importorskip("psycopg")
    dsn = f"host=127.0.0.1 port={silent_server} user=nobody dbname=none"
    done, seconds = _harness(*COMMANDS[command](tmp_path), "--engines", "reference,postgres",
                             "--postgres-dsn", dsn, cwd=tmp_path)
    _refused_once(done, seconds, "postgres", f"127.0.0.1:{silent_server}/none")
    assert "timeout" in done.stderr or "did not start within 2 s" in done.stderr, done.stderr


@pytest.mark.parametrize("value", ["soon", "0", "-5", "nan", "inf"])
def test_a_bad_start_timeout_is_exit_2_naming_the_variable(tmp_path, value):
    done, _ = _harness("run", CASE, "--engines", "reference,duckdb@x", "--engine-python",
                       f"duckdb@x={sys.executable}", "--out", str(tmp_path / "out"), cwd=tmp_path,
                       env={START_TIMEOUT_ENV: value})
    assert done.returncode == 2, done.stderr
    assert START_TIMEOUT_ENV in done.stderr and repr(value) in done.stderr and "Traceback" not in done.stderr


def test_a_message_that_an_isolated_engine_did_not_start_says_where_it_was_started():
    """A worker that hangs says nothing itself: the message names the server or
    master its engine was given (a Connect URL without its token)."""
    pytest.importorskip("pyspark")
    from harness.engines.postgres.adapter import PostgresEngine
    from harness.engines.spark.adapter import SparkEngine

    assert SparkEngine.started_with({"master": "sc://h:15002/;token=T0k"}) == \
        "the Spark Connect server sc://h:15002/;token=***"
    assert PostgresEngine.started_with({"dsn": "postgresql://u:pw@db.example:6543/x"}) == \
        "on the server at db.example:6543/x"
    assert PostgresEngine.started_with({"local": True}) == "on a throwaway local server"
