"""No process outlives the command that started it (harness/core/lifeline.py).

Each test starts a real command in a session of its own, waits until its
shards, workers or server exist, records every descendant, kills the
command's main process (kill -9, or SIGTERM, which Python does not catch:
neither runs a `finally`), and then gives what it started 10 seconds to go.
Processes are listed from /proc (Linux), by walking parent pids.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
GRACE = 10.0  # seconds the processes of a killed command have to go
START = 90.0  # seconds a command may take to start what the test waits for
HARNESS = [sys.executable, "-m", "harness"]
# A query SQLite never finishes (and, unlike DuckDB's progress bar, never prints).
ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="lists processes from /proc")


# -- processes, from /proc -----------------------------------------------------------


def _stat(pid: int) -> list[str] | None:
    """/proc/PID/stat's fields after the command name (state first), or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        fields = _stat(int(entry)) if entry.isdigit() else None
        if fields is not None:
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"  # a zombie has exited


def command_line(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    return "?"


def cpu_ticks(pid: int) -> int:
    fields = _stat(pid)
    return int(fields[11]) + int(fields[12]) if fields else 0  # utime + stime


def wait_for(what: str, found: Callable[[], object], seconds: float = START) -> object:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = found()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"gave up waiting for {what}")


def survivors(pids: list[int]) -> list[str]:
    """After GRACE seconds at most: the recorded processes still alive, described."""
    deadline = time.monotonic() + GRACE
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.1)
    return [f"{p}: {command_line(p)[:150]}" for p in pids if alive(p)]


@pytest.fixture
def started() -> Iterator[list[int]]:
    """The pids a test records; whatever of them is still alive is killed at the end."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def start(args: list[str], out: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    log = (out / "output.log").open("wb")
    environment = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.Popen(args, cwd=REPO, env=environment, stdin=subprocess.DEVNULL, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)


def workers_of(main: subprocess.Popen, count: int) -> Callable[[], list[int]]:
    """Found once `count` multiprocessing children (shards, engine workers) run."""
    def found() -> list[int]:
        every = descendants(main.pid)
        spawned = [p for p in every if "spawn_main" in command_line(p)]
        assert main.poll() is None, f"the command exited with {main.returncode}"
        return every if len(spawned) >= count else []
    return found


def kill(main: subprocess.Popen, sig: signal.Signals) -> None:
    os.kill(main.pid, sig)
    main.wait(GRACE)


# -- campaigns and gates ---------------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "sigterm"])
def test_a_killed_fuzz_campaign_leaves_no_process_behind(tmp_path: Path, started: list[int],
                                                         sig: signal.Signals) -> None:
    main = start([*HARNESS, "fuzz", "--jobs", "2", "--engines", "reference,duckdb,sqlite",
                  "--cases", "1000000", "--seed", "1", "--no-reduce", "--out", str(tmp_path / "c")],
                 tmp_path)
    started.append(main.pid)
    # Two shards, each with a worker for DuckDB and one for SQLite.
    started += wait_for("two shards and four workers", workers_of(main, 6))
    kill(main, sig)
    assert survivors(started) == []


def test_a_killed_gate_leaves_no_process_behind(tmp_path: Path, started: list[int]) -> None:
    main = start([*HARNESS, "gate", "--engines", "reference,duckdb,sqlite", "--budget-seconds", "600",
                  "--out", str(tmp_path / "gate")], tmp_path)
    started.append(main.pid)
    started += wait_for("two engine workers", workers_of(main, 2))
    kill(main, signal.SIGKILL)
    assert survivors(started) == []


# -- a worker busy in a query ------------------------------------------------------------

# The parent: starts the engine's worker, says its pid, then waits on a query
# that never ends. A worker that only notices its parent's death when it next
# reads from it would run forever.
_PARENT = """\
import sys
from harness.engines.registry import get_engine
from harness.engines.isolation import IsolatedEngine
kind, query = sys.argv[1:3]
engine = (IsolatedEngine("sqlite", timeout=3600) if kind == "isolated"
          else get_engine("sqlite@other", python=sys.executable, timeout=3600))
engine.start()
print(engine._process.pid, flush=True)
engine.run({}, query)
"""


@pytest.mark.parametrize("kind", ["isolated", "remote"])
def test_a_worker_busy_in_a_query_dies_with_its_parent(tmp_path: Path, started: list[int], kind: str) -> None:
    main = subprocess.Popen([sys.executable, "-c", _PARENT, kind, ENDLESS], cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
                            start_new_session=True)
    started.append(main.pid)
    assert main.stdout is not None
    worker = int(main.stdout.readline())
    started.append(worker)
    idle = cpu_ticks(worker)
    wait_for("the worker to be busy in the query", lambda: cpu_ticks(worker) > idle + 20)
    kill(main, signal.SIGKILL)
    assert survivors(started) == []


# -- a throwaway PostgreSQL server ------------------------------------------------------


@pytest.mark.postgres
def test_a_local_postgres_server_does_not_outlive_a_killed_command(tmp_path: Path, started: list[int]) -> None:
    from harness.engines.postgres.local import server_bin

    if server_bin() is None:
        pytest.skip("no PostgreSQL server binaries")
    # The server's directory is made under TMPDIR; as root the server runs as
    # `postgres`, who must reach it (so not under tmp_path).
    temporary = Path(tempfile.mkdtemp(prefix="window-harness-stray-"))
    temporary.chmod(0o755)
    try:
        main = start([*HARNESS, "fuzz", "--postgres-local", "--engines", "reference,postgres",
                      "--cases", "1000000", "--seed", "1", "--no-reduce", "--out", str(tmp_path / "c")],
                     tmp_path, env={"TMPDIR": str(temporary)})
        started.append(main.pid)

        # Once the engine's worker runs, the server is up (the command starts it first).
        started += wait_for("the engine's worker", workers_of(main, 1))  # type: ignore[operator]
        (pid_file,) = temporary.glob("window-harness-pg-*/data/postmaster.pid")
        directory, postmaster = pid_file.parent.parent, int(pid_file.read_text().split()[0])
        assert alive(postmaster)
        started.append(postmaster)
        kill(main, signal.SIGKILL)
        assert survivors(started) == []
        wait_for("the server's directory to go", lambda: not directory.exists(), GRACE)
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


# -- Spark's JVM ------------------------------------------------------------------------


@pytest.mark.spark
def test_a_killed_gate_takes_sparks_jvm_along(tmp_path: Path, started: list[int]) -> None:
    main = start([*HARNESS, "gate", "--engines", "reference,spark", "--budget-seconds", "600",
                  "--out", str(tmp_path / "gate")], tmp_path)
    started.append(main.pid)

    def jvm() -> list[int]:
        every = descendants(main.pid)
        return every if any("java" in command_line(p).split(" ")[0] for p in every) else []

    started += wait_for("Spark's JVM", jvm)
    kill(main, signal.SIGKILL)
    assert survivors(started) == []


@pytest.mark.spark
@pytest.mark.slow  # a Connect server takes 15 s or more to start
def test_a_local_connect_server_does_not_outlive_a_killed_parent(tmp_path: Path, started: list[int]) -> None:
    main = subprocess.Popen([sys.executable, "-m", "harness.engines.spark.connect", "local[1]"], cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    started.append(main.pid)
    assert main.stdout is not None
    url = main.stdout.readline().decode()
    assert url.startswith("sc://"), f"the server did not start (exit {main.poll()})"
    server = descendants(main.pid)  # the JVM, leading a session of its own
    assert any("java" in command_line(p).split(" ")[0] for p in server)
    started += server
    kill(main, signal.SIGKILL)
    assert survivors(started) == []


@pytest.mark.spark
@pytest.mark.slow  # a master and a worker take 10 to 20 s to start
def test_a_local_spark_cluster_does_not_outlive_a_killed_parent(started: list[int]) -> None:
    main = subprocess.Popen([*HARNESS, "spark-cluster", "--workers", "1"], cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    started.append(main.pid)
    assert main.stdout is not None
    url = main.stdout.readline().decode()
    assert url.startswith("spark://"), f"the cluster did not start (exit {main.poll()})"
    cluster = descendants(main.pid)  # the master's and the worker's JVMs, and the guardian
    assert sum("org.apache.spark.deploy" in command_line(p) for p in cluster) == 2
    started += cluster
    kill(main, signal.SIGKILL)
    assert survivors(started) == []


# -- the lifeline itself -----------------------------------------------------------------

# The parent starts its child from a thread that ends at once. The kernel's
# parent-death signal fires when the *thread* that started a child exits, so
# it must not be set for this child (it would die now); the watchdog thread
# still ends it once the parent itself dies.
_THREADED_PARENT = """\
import os, subprocess, sys, threading, time
from harness.core.lifeline import Parent
CHILD = ("import sys, time; from harness.core.lifeline import Parent, die_with; "
         "die_with(Parent.from_arg(sys.argv[1])); print('guarded', flush=True); time.sleep(3600)")
children = []
def start():  # it ends once the child's guard is up
    child = subprocess.Popen([sys.executable, "-c", CHILD, Parent.this().as_arg()], stdout=subprocess.PIPE)
    assert child.stdout.readline() == b"guarded\\n"
    children.append(child)
thread = threading.Thread(target=start)
thread.start()
thread.join()
child = children[0]
time.sleep(0.5)
print(child.pid, child.poll(), flush=True)
time.sleep(3600)
"""


def test_a_child_started_from_a_passing_thread_lives_until_its_parent_dies(started: list[int]) -> None:
    main = subprocess.Popen([sys.executable, "-c", _THREADED_PARENT], cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
                            start_new_session=True)
    started.append(main.pid)
    assert main.stdout is not None
    child, returncode = main.stdout.readline().split()
    started.append(int(child))
    assert returncode == b"None"  # alive after the thread that started it ended
    kill(main, signal.SIGKILL)
    assert survivors(started) == []
