"""Spark Connect: reaching Spark-under-test through an `sc://HOST:PORT` server.

Two halves:

- `open_session(url, conf)`: a client session on a Connect server. It is made
  with the Connect builder itself, not `pyspark.sql.SparkSession.builder`:
  the generic builder sets `SPARK_CONNECT_MODE_ENABLED` in `os.environ`, after
  which no classic (Py4J) session can start in this process, nor in the worker
  processes it spawns, and it refuses to connect at all while a classic
  session runs. The Connect builder touches neither, so a Connect session and
  the process's classic Spark coexist (measured on pyspark 4.3.0).
- `LocalConnectServer`: a throwaway Connect server on a free loopback port, in
  its own process group, for the tests and for local runs of `--spark-remote`
  (`python -m harness.engines.spark.connect [MASTER]` prints its URL and
  keeps it up until Ctrl-C). A guardian process (`harness.core.lifeline`)
  ends the server should the process that started it be killed.

Each Connect session is a server-side session of its own (own SQL conf, own
temp views), so a profile's config needs no `newSession()`, which Connect
does not offer: it is simply another session.
"""

from __future__ import annotations

import atexit
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from harness.core.errors import EngineUnavailable
from harness.core.lifeline import Guardian, kill_group_step, remove_step
from harness.core.secrets import redact
from harness.engines.base import library_missing
from harness.engines.ports import free_loopback_port
from harness.engines.spark.daemons import end_group, log_tail, serve
from harness.engines.spark.jvm import driver_java_options, launch_conf, require_java, short_message

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.connect.dataframe import DataFrame as ConnectFrame
    from pyspark.sql.connect.session import SparkSession as ConnectSession

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
START_TIMEOUT = 120.0
_GUARDIAN_GRACE = 5.0  # the server's SIGTERM grace when its parent was killed

# pyspark's default retries a refused connection for about ten minutes (15
# tries, backoff up to 60 s). A dead server should cost a query seconds, not
# minutes: 50 + 200 + 800 ms per RPC (measured: ~3 s in all for a query, which
# makes several RPCs), then the query is an EngineCrash.
_RETRY = {"max_retries": 3, "initial_backoff": 50, "backoff_multiplier": 4.0,
          "max_backoff": 1000}

# The gRPC status of a server that is gone (connection refused or reset).
_GONE_STATUS = "UNAVAILABLE"


def is_connect_url(master: str) -> bool:
    return master.startswith("sc://")


def open_session(url: str, conf: Mapping[str, str]) -> ConnectSession:
    """A new server-side session on `url` with `conf` set (each key checked by
    the server); EngineUnavailable when the client libraries are missing or the
    server does not answer."""
    from pyspark.errors import PySparkException

    # gRPC's fork handlers, on by default, break a fork while its threads run:
    # the classic Spark of this process (its JVM is started by fork and exec)
    # then failed to start about one time in two (JAVA_GATEWAY_EXITED,
    # measured). Nothing here forks a child that uses gRPC. Read when grpc is
    # first imported, so it must come before.
    os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
    try:
        from pyspark.sql.connect.client.retries import DefaultPolicy
        from pyspark.sql.connect.session import SparkSession as ConnectSession
    except ImportError as e:  # PySparkImportError too: grpcio, pandas, zstandard...
        raise library_missing("spark", e) from e
    session = ConnectSession.builder.remote(url).create()  # no RPC yet
    # `_client` is private, but the only way to shorten the retries of a session.
    session._client.set_retry_policies([DefaultPolicy(**_RETRY)])
    # pyspark warns on stderr when it gives up retrying, also from its own
    # threads (so not a catch_warnings here); the EngineCrash says it already.
    warnings.filterwarnings("ignore", message=r"\[RETRIES_EXCEEDED\]")
    try:
        for key, value in conf.items():  # not builder.config(): that ignores failures
            session.conf.set(key, value)
    except PySparkException as e:
        session.stop()
        why = f"Spark Connect at {redact(url)}: {short_message(e)}"
        raise EngineUnavailable("spark", why) from e
    return session


def arrow_frame(session: ConnectSession, table: pa.Table) -> ConnectFrame:
    """`createDataFrame(table)`. Over Connect it refuses an empty table
    (CANNOT_INFER_EMPTY_SCHEMA) where classic Spark takes the table's schema,
    so an empty one gets its schema converted as Connect converts a non-empty one's."""
    if table.num_rows:
        return session.createDataFrame(table)
    from pyspark.sql.pandas.types import from_arrow_schema

    ntz = session.conf.get("spark.sql.timestampType") == "TIMESTAMP_NTZ"
    return session.createDataFrame(table, schema=from_arrow_schema(table.schema, ntz))


def session_lost(error: BaseException) -> bool:
    """Whether a Connect error means the server or our session on it is gone
    (rather than a query the server rejected or failed)."""
    status = getattr(error, "getGrpcStatusCode", lambda: None)()
    if getattr(status, "name", None) == _GONE_STATUS:
        return True
    condition = getattr(error, "getCondition", lambda: None)() or ""
    # The server restarted (SESSION_CHANGED) or dropped our session: its temp views went too.
    return condition.startswith("INVALID_HANDLE.")


class LocalConnectServer:
    """A Spark Connect server on 127.0.0.1 at a free port, for as long as the
    `with` block (or until `stop()`).

    It runs `spark-submit` from pyspark's own Spark home in its own process
    group, its log4j switched off and its output kept in a temporary file (the
    tail is quoted if it fails to start). Clients authenticate with a random
    token that `url` carries: without it, any local user could run code through
    the server as us. pyspark sends a token without TLS only to a host named
    `localhost`, hence that name in `url`.
    """

    def __init__(self, master: str = "local[2]", conf: Mapping[str, str] | None = None,
                 timeout: float = START_TIMEOUT) -> None:
        self.master = master
        self.conf = dict(conf or {})
        self.timeout = timeout
        self.port: int | None = None
        self._token = secrets.token_hex(16)
        self._process: subprocess.Popen[bytes] | None = None
        self._log: Path | None = None
        self._guardian: Guardian | None = None

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("the Connect server is not started")
        return f"sc://localhost:{self.port}/;token={self._token}"

    def __enter__(self) -> LocalConnectServer:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()

    def start(self) -> None:
        """Start the server and wait until its port accepts; EngineUnavailable if it cannot."""
        if self._process is not None:
            return
        require_java()
        self.port = free_loopback_port()
        fd, log = tempfile.mkstemp(prefix="window-harness-connect-", suffix=".log")
        self._log = Path(log)
        with os.fdopen(fd, "wb") as out:
            self._process = subprocess.Popen(
                self._command(), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                env=self._environment(), start_new_session=True)
        atexit.register(self.stop)
        # Its own session, so a signal to ours does not reach it: should this
        # process be killed (kill -9 runs no atexit), the guardian ends it.
        self._guardian = Guardian([kill_group_step(self._process.pid, _GUARDIAN_GRACE),
                                   remove_step(self._log)])
        try:
            self._await_port()
        except EngineUnavailable:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the server's whole process group (SIGTERM, then SIGKILL); idempotent."""
        atexit.unregister(self.stop)
        process, self._process = self._process, None
        if process is not None:
            end_group(process)
        if self._log is not None:
            self._log.unlink(missing_ok=True)
            self._log = None
        guardian, self._guardian = self._guardian, None
        if guardian is not None:
            guardian.release()

    def _command(self) -> list[str]:
        from pyspark.find_spark_home import _find_spark_home

        conf = {**launch_conf(self.master), **self.conf,
                "spark.connect.grpc.binding.address": "127.0.0.1",
                "spark.connect.grpc.binding.port": str(self.port),
                "spark.driver.extraJavaOptions": driver_java_options()}
        command = [str(Path(_find_spark_home()) / "bin" / "spark-submit"),
                   "--master", self.master, "--name", "window-harness Spark Connect",
                   "--class", SERVER_CLASS]
        for key, value in conf.items():
            command += ["--conf", f"{key}={value}"]
        return command

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        # A client's Connect settings would make spark-submit start a client, not a server.
        for name in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE",
                     "SPARK_API_MODE"):
            env.pop(name, None)
        env["SPARK_CONNECT_AUTHENTICATE_TOKEN"] = self._token  # the environment, not argv (`ps`)
        return env

    def _await_port(self) -> None:
        assert self._process is not None and self.port is not None
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise EngineUnavailable(
                    "spark", f"the local Spark Connect server exited with code "
                    f"{self._process.returncode}: {self._log_tail()}")
            # The port was free a moment ago; whatever accepts on it now is our
            # server (another process taking it in between is a race we accept).
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
                probe.settimeout(0.5)
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.1)
        raise EngineUnavailable(
            "spark", f"the local Spark Connect server did not listen within {self.timeout:g} s: "
            f"{self._log_tail()}")

    def _log_tail(self) -> str:
        """The last lines of the server's output, without Java stack frames."""
        return log_tail(self._log)


def main() -> None:
    """Run a local server until Ctrl-C (or SIGTERM), its URL on stdout."""
    serve(LocalConnectServer(*sys.argv[1:2]))

if __name__ == "__main__":
    main()
