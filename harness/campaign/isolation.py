"""Run an engine in its own process, so a native crash or a hang costs one case.

DuckDB and DataFusion are native libraries inside the Python process: a
segfault would end a campaign, and a query that never returns would stall
it. `IsolatedEngine` wraps any registered engine: the adapter lives in a
worker process (its own process group, so Spark's JVM goes with it), SQL
and Arrow tables cross a pipe, and

- a worker that dies mid-query raises `EngineCrash` (with its exit signal);
- a query that does not answer within `timeout` seconds raises
  `EngineTimeout`; the worker group is killed;

and in both cases the next query starts a fresh worker. Rendering stays in
the caller's process (it is the dialect's job, and pure), so the wrapper
is a drop-in `Engine` with the inner engine's name and dialect.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import time
from collections.abc import Mapping
from multiprocessing.connection import Connection
from typing import Any

import pyarrow as pa

from harness.engines.base import Engine
from harness.errors import (
    EngineCrash,
    EngineError,
    EngineTimeout,
    EngineUnavailable,
    HarnessError,
    Unsupported,
)

DEFAULT_TIMEOUT = 30.0
# Starting a worker includes the engine's own start (a SparkSession: ~5 s).
START_TIMEOUT = 180.0


class IsolatedEngine(Engine):
    """`name`'s adapter in a worker process; see the module docstring."""

    def __init__(self, name: str, timeout: float = DEFAULT_TIMEOUT, **options: Any) -> None:
        from harness.engines.registry import canonical_name, get_dialect

        self.name = canonical_name(name)  # `spark[default]` -> `spark`, as the worker's adapter says
        self.dialect = get_dialect(name)
        self.timeout = timeout
        self.options = options
        self.restarts = 0
        self._process: mp.process.BaseProcess | None = None
        self._conn: Connection | None = None
        self._version: str | None = None

    # -- lifecycle --------------------------------------------------------------

    @property
    def implementation(self) -> str:
        from harness.engines.registry import engine_class

        return engine_class(self.name).shares_code_with or self.name

    def start(self) -> None:
        if self._process is not None and self._process.is_alive():
            return
        ctx = mp.get_context("spawn")  # never fork a process that holds a JVM or threads
        parent, child = ctx.Pipe()
        process = ctx.Process(target=_serve, args=(child, self.name, self.options),
                              name=f"window-harness {self.name}", daemon=True)
        process.start()
        child.close()
        self._process, self._conn = process, parent
        reply = self._receive(START_TIMEOUT, starting=True)
        if reply[0] == "unavailable":
            self._kill()
            raise EngineUnavailable(self.name, reply[1])
        if reply[0] != "ready":
            self._kill()
            raise EngineUnavailable(self.name, f"its worker failed to start: {reply[1:]}")
        self._version = reply[1]

    def version(self) -> str:
        if self._version is None:
            self.start()
        return self._version or "?"

    def close(self) -> None:
        if self._conn is not None and self._process is not None and self._process.is_alive():
            with contextlib.suppress(OSError, EOFError, BrokenPipeError):
                self._conn.send(("close",))
            self._process.join(10)
        self._kill()

    # -- queries ----------------------------------------------------------------

    def run(self, tables: Mapping[str, pa.Table], sql: str) -> pa.Table:
        self.start()
        assert self._conn is not None
        try:
            self._conn.send(("run", dict(tables), sql))
        except (OSError, BrokenPipeError):
            raise self._crashed("its worker was gone before the query was sent") from None
        reply = self._receive(self.timeout)
        kind = reply[0]
        if kind == "ok":
            return reply[1]
        if kind == "unsupported":
            raise Unsupported(reply[1], reply[2])
        if kind == "crash":
            raise EngineCrash(self.name, reply[1])
        raise EngineError(self.name, reply[1])

    def _receive(self, timeout: float, starting: bool = False) -> tuple:
        assert self._conn is not None and self._process is not None
        deadline = time.monotonic() + timeout
        while not self._conn.poll(0.05):
            if not self._process.is_alive():
                # A last reply may still sit in the pipe after a clean exit.
                if self._conn.poll(0):
                    break
                raise self._crashed("its worker died")
            if time.monotonic() > deadline:
                self._kill()
                self.restarts += 1
                what = "start" if starting else "answer"
                raise EngineTimeout(self.name, f"did not {what} within {timeout:g} s; worker killed")
        try:
            return self._conn.recv()
        except (EOFError, OSError):
            raise self._crashed("its worker closed the pipe") from None

    def _crashed(self, what: str) -> EngineCrash:
        if self._process is not None:
            self._process.join(2)  # reap it, so its exit signal can be named
        code = self._process.exitcode if self._process is not None else None
        self._kill()
        self.restarts += 1
        if code is not None and code < 0:
            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        else:
            how = f"exit code {code}"
        return EngineCrash(self.name, f"{what} ({how}); restarted for the next query")

    def _kill(self) -> None:
        process, self._process = self._process, None
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if process is None:
            return
        if process.is_alive() and process.pid is not None:
            # The worker leads its own process group: a JVM it started dies too.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
        process.join(5)


def _serve(conn: Connection, name: str, options: dict) -> None:
    """The worker: start the engine, then answer ("run", tables, sql) until ("close",)."""
    os.setsid()
    from harness.engines.registry import get_engine

    try:
        engine = get_engine(name, **options)
        engine.start()
        conn.send(("ready", engine.version()))
    except EngineUnavailable as e:
        conn.send(("unavailable", str(e)))
        return
    except Exception as e:  # noqa: BLE001 (reported to the caller, who decides)
        conn.send(("failed", f"{type(e).__name__}: {e}"))
        return
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            break
        if message[0] == "close":
            break
        _, tables, sql = message
        conn.send(_answer(engine, tables, sql))
    engine.close()


def _answer(engine: Engine, tables: Mapping[str, pa.Table], sql: str) -> tuple:
    # Errors cross the pipe as plain tuples: the harness's exceptions take
    # several constructor arguments and do not survive pickling as they are.
    try:
        return ("ok", engine.run(tables, sql))
    except Unsupported as e:
        return ("unsupported", e.feature, e.detail)
    except EngineCrash as e:
        return ("crash", e.message)
    except EngineError as e:
        return ("error", e.message)
    except HarnessError as e:
        return ("error", str(e))
    except Exception as e:  # noqa: BLE001 (an adapter bug is still this query's error)
        return ("error", f"{type(e).__name__}: {e}")
