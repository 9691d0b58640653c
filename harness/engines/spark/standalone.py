"""A throwaway standalone Spark cluster on this machine: one master and N
workers, for `window-harness spark-cluster`, the tests, and trying
`fuzz --on-spark --spark-master spark://...` without a real cluster.

    with LocalCluster(workers=2) as cluster:
        cluster.url      # "spark://127.0.0.1:PORT", for --spark-master
        cluster.state()  # the master's /json: workers, running and completed applications

Each daemon is the JVM of pyspark's own Spark home (`bin/spark-class` with
the Master or Worker class: the pip package ships no `sbin/start-master.sh`),
bound to 127.0.0.1 at a free port, in a process group of its own, its log in
a temporary directory that also holds the workers' work directories (the
executors' stdout and stderr) and local directories. `start()` returns once
every worker has registered with the master (the master's web UI lists it
ALIVE in /json).

A worker's executors, and their Python workers, are its children, in its
process group: `stop()` ends each group (SIGTERM, then SIGKILL), workers
first, and removes the directory. A guardian process
(`harness.core.lifeline.Guardian`) does the same should this process be
killed first (kill -9 runs no `finally`, no `atexit`).

The executors run the Python the driver names (`PYSPARK_PYTHON`, which
`fuzz --on-spark` sets to its own interpreter), in the environment the
workers were started in: start the cluster from the environment the harness
is installed in (or with the PYTHONPATH that finds it).

`python -m harness.engines.spark.standalone [WORKERS]` starts one, prints
its URL and keeps it up until Ctrl-C.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from harness.core.errors import EngineUnavailable
from harness.core.lifeline import Guardian, Step, kill_group_step, remove_step
from harness.engines.ports import free_loopback_port
from harness.engines.spark.daemons import end_group, log_tail, serve
from harness.engines.spark.jvm import require_java

HOST = "127.0.0.1"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
START_TIMEOUT = 120.0
DAEMON_MEMORY = "512m"  # each daemon's own heap (Spark's default is 1g); executors are apart
_GUARDIAN_GRACE = 5.0


class LocalCluster:
    """A standalone master and `workers` workers on 127.0.0.1, for as long as
    the `with` block (or until `stop()`). Each worker offers `cores` cores and
    `memory` to executors (`spark.executor.memory` must fit in it; Spark's
    default, 1g, does)."""

    def __init__(self, workers: int = 2, cores: int = 1, memory: str = "1g",
                 timeout: float = START_TIMEOUT) -> None:
        if workers < 1 or cores < 1:
            raise ValueError("a cluster needs at least one worker with at least one core")
        self.workers, self.cores, self.memory, self.timeout = workers, cores, memory, timeout
        self.port: int | None = None
        self.web_port: int | None = None
        self.directory: Path | None = None
        self._daemons: list[tuple[str, subprocess.Popen[bytes]]] = []  # (name, process), master first
        self._guardian: Guardian | None = None

    @property
    def url(self) -> str:
        """The master's URL, for `--spark-master`."""
        if self.port is None:
            raise RuntimeError("the Spark cluster is not started")
        return f"spark://{HOST}:{self.port}"

    @property
    def web_url(self) -> str:
        if self.web_port is None:
            raise RuntimeError("the Spark cluster is not started")
        return f"http://{HOST}:{self.web_port}"

    @property
    def groups(self) -> list[int]:
        """The process groups of the daemons (each led by its JVM), master first."""
        return [process.pid for _, process in self._daemons]

    def __enter__(self) -> LocalCluster:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()

    def start(self) -> None:
        """Start the master, then the workers, and wait until all have registered;
        EngineUnavailable, with the failing daemon's log tail, if they do not."""
        if self._daemons:
            return
        require_java()
        self.directory = Path(tempfile.mkdtemp(prefix="window-harness-cluster-"))
        atexit.register(self.stop)
        try:
            deadline = time.monotonic() + self.timeout
            self.port, self.web_port = free_loopback_port(), free_loopback_port()
            self._launch("master", MASTER_CLASS, "--host", HOST, "--port", str(self.port),
                         "--webui-port", str(self.web_port))
            self._await(deadline, lambda state: state is not None)
            for n in range(self.workers):
                work = self.directory / f"worker-{n}"
                work.mkdir()
                self._launch(f"worker-{n}", WORKER_CLASS, "--host", HOST, "--cores", str(self.cores),
                             "--memory", self.memory, "--work-dir", str(work),
                             "--webui-port", str(free_loopback_port()), self.url)
            self._await(deadline, lambda state: state is not None and _alive_workers(state) >= self.workers)
        except BaseException:  # whatever stopped the start (Ctrl-C too): clean up, then propagate
            self.stop()
            raise

    def stop(self) -> None:
        """End every daemon's process group (workers first, with their executors),
        remove the directory; idempotent."""
        atexit.unregister(self.stop)
        daemons, self._daemons = self._daemons, []
        for _, process in reversed(daemons):
            end_group(process)
        directory, self.directory = self.directory, None
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)
        self.port = self.web_port = None
        guardian, self._guardian = self._guardian, None
        if guardian is not None:
            guardian.release()

    def state(self) -> dict | None:
        """The master's view of the cluster (its web UI's /json), or None when it does not answer."""
        if self.web_port is None:
            return None
        try:
            with urllib.request.urlopen(f"{self.web_url}/json", timeout=5) as response:
                return json.load(response)
        except (OSError, ValueError):  # not listening yet, reset, or a half-written answer
            return None

    # -- daemons ----------------------------------------------------------------------

    def _launch(self, name: str, main_class: str, *args: str) -> None:
        from pyspark.find_spark_home import _find_spark_home

        assert self.directory is not None
        home = Path(_find_spark_home())
        with (self.directory / f"{name}.log").open("wb") as log:
            process = subprocess.Popen(
                [str(home / "bin" / "spark-class"), main_class, *args], cwd=self.directory,
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=self._environment(home), start_new_session=True)
        self._daemons.append((name, process))
        self._guard()

    def _guard(self) -> None:
        """One guardian for every daemon started so far (and the directory): a new
        one is up before the previous one is let go."""
        assert self.directory is not None
        steps: list[Step] = [kill_group_step(process.pid, _GUARDIAN_GRACE)
                             for _, process in reversed(self._daemons)]
        previous, self._guardian = self._guardian, Guardian([*steps, remove_step(self.directory)])
        if previous is not None:
            previous.release()

    def _environment(self, home: Path) -> dict[str, str]:
        assert self.directory is not None
        env = dict(os.environ)
        # A client's Connect settings would make Spark's launcher start a client.
        for name in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE", "SPARK_API_MODE",
                     "SPARK_MASTER_OPTS", "SPARK_WORKER_OPTS", "SPARK_CONF_DIR"):
            env.pop(name, None)
        env.update({
            "SPARK_HOME": str(home),
            "SPARK_DAEMON_MEMORY": DAEMON_MEMORY,
            "SPARK_LOCAL_IP": HOST,
            "SPARK_LOG_DIR": str(self.directory),
            "SPARK_PID_DIR": str(self.directory),
            "SPARK_WORKER_DIR": str(self.directory),
            "SPARK_LOCAL_DIRS": str(self.directory / "local"),
            # Spark's own defaults elsewhere (a conf/ of the user's) stay out of a throwaway cluster.
            "SPARK_CONF_DIR": str(self.directory),
        })
        return env

    def _await(self, deadline: float, ready: Callable[[dict | None], bool]) -> None:
        while time.monotonic() < deadline:
            for name, process in self._daemons:
                if process.poll() is not None:
                    raise EngineUnavailable("spark", f"the local Spark {name} exited with code "
                                            f"{process.returncode}: {self._log_tail(name)}")
            if ready(self.state()):
                return
            time.sleep(0.2)
        state = self.state()
        waiting = "the master's web UI" if state is None else f"{_alive_workers(state)} of {self.workers} workers"
        last = self._daemons[-1][0]
        raise EngineUnavailable("spark", f"the local Spark cluster did not start within {self.timeout:g} s "
                                f"({waiting} up; {last}: {self._log_tail(last)})")

    def _log_tail(self, name: str) -> str:
        """The last lines of a daemon's log that say something (no stack frames, no INFO)."""
        return log_tail(self.directory / f"{name}.log" if self.directory is not None else None, skip_info=True)


def _alive_workers(state: dict) -> int:
    return sum(worker.get("state") == "ALIVE" for worker in state.get("workers", []))


def main() -> None:
    """Run a local cluster until Ctrl-C (or SIGTERM), its URL on stdout."""
    serve(LocalCluster(int(sys.argv[1]) if len(sys.argv) > 1 else 2))

if __name__ == "__main__":
    main()
