"""Engines in worker processes: a crash or a hang costs one query, not the run.

`WorkerEngine` is an adapter that lives in a worker process: SQL and Arrow
tables cross a channel, and

- a worker that dies mid-query raises `EngineCrash` (with its exit signal);
- a query that does not answer within `timeout` seconds raises
  `EngineTimeout`; the worker's process group is killed;

and in both cases the next query starts a fresh worker. Rendering stays in
the caller's process (it is the dialect's job, and pure). Two kinds share it:
`harness.engines.isolation.IsolatedEngine` (a multiprocessing worker of this
interpreter, for crash and hang isolation) and
`harness.engines.remote.RemoteEngine` (an engine run by another Python).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from abc import abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

import pyarrow as pa

from harness.core.dialect import Dialect
from harness.core.errors import (
    EngineCrash,
    EngineError,
    EngineTimeout,
    EngineUnavailable,
    HarnessError,
    Unsupported,
)
from harness.engines.base import START_TIMEOUT_ENV, Engine, Item, Ran, attempt, start_timeout

DEFAULT_TIMEOUT = 30.0


class Worker(Protocol):
    """A worker process as `WorkerEngine` sees it (multiprocessing.Process's names)."""

    pid: int | None

    @property
    def exitcode(self) -> int | None: ...

    def is_alive(self) -> bool: ...

    def join(self, timeout: float | None = None) -> None: ...


class Channel(Protocol):
    """Whole messages (tuples) to and from a worker (multiprocessing Connection's names)."""

    def send(self, obj: Any) -> None: ...

    def recv(self) -> Any: ...

    def poll(self, timeout: float | None = 0.0) -> bool: ...

    def close(self) -> None: ...


class WorkerEngine(Engine):
    """An adapter in a worker process; see the module docstring.

    A worker answers ("ready", version, probed, release) once its engine has started, or
    ("unavailable", reason) / ("failed", reason); then one reply per ("run",
    tables, sql) until ("close",) (see `serve`).
    """

    out_of_process = True
    # The dialect of the engine's current release, when not the class's own
    # (`IsolatedEngine` takes its engine's); `start` narrows it to the
    # worker's version (`Dialect.at`).
    released_dialect: Dialect | None = None

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.restarts = 0
        self._process: Worker | None = None
        self._conn: Channel | None = None
        self._version: str | None = None
        self._probed: dict[str, str] = {}
        self._release: str | None = None

    @abstractmethod
    def _spawn(self) -> tuple[Worker, Channel]:
        """A new worker, already told what to run, and the channel to it."""

    def _unavailable(self, reason: str) -> EngineUnavailable:
        return EngineUnavailable(self.name, reason)

    def _not_started(self, reason: str) -> EngineUnavailable:
        """The worker hung or died before it was ready: no word of the adapter's
        says how it was started, so this says it."""
        return self._unavailable(reason)

    # -- lifecycle --------------------------------------------------------------

    def start(self) -> None:
        if self._process is not None and self._process.is_alive():
            return
        self._process, self._conn = self._spawn()
        # The first start failing is the engine unavailable (exit 2); a restart after
        # a crash or a timeout failing is that query's verdict, as the crash was.
        reply = self._receive(start_timeout(), starting=True, first=self._version is None)
        if reply[0] != "ready":
            self._kill()
            raise self._unavailable(reply[1] if reply[0] == "unavailable"
                                    else f"its worker failed to start: {reply[1]}")
        self._version = reply[1]
        self._probed = dict(reply[2]) if len(reply) > 2 else {}
        self._release = reply[3] if len(reply) > 3 else None
        # Rendering happens here, in the caller's process: in the dialect of the
        # release the worker runs, so a build is judged by what it supports.
        self.dialect = (self.released_dialect or type(self).dialect).at(self._version)

    def version(self) -> str:
        if self._version is None:
            self.start()
        return self._version or "?"

    def probed(self) -> dict[str, str]:
        self.version()
        return dict(self._probed)

    def release(self) -> str | None:
        """The release the worker's interpreter has installed (`Engine.release`, there)."""
        self.version()
        return self._release

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
        return self._answer(self._receive(self.timeout))

    def run_as(self, spec: str, tables: Mapping[str, pa.Table], sql: str) -> pa.Table:
        """Run `sql` on the profile `spec` of this engine, which the worker builds in
        its own process on first use (`serve`'s `make_profiled`): a crash or a
        timeout is the profile's, and the worker restarts as after any other."""
        self.start()
        assert self._conn is not None
        try:
            self._conn.send(("run_as", spec, dict(tables), sql))
        except (OSError, BrokenPipeError):
            raise EngineCrash(spec, self._crashed("its worker was gone before the query was sent").message) from None
        try:
            return self._answer(self._receive(self.timeout), spec)
        except EngineTimeout as e:
            raise EngineTimeout(spec, e.message) from None
        except EngineCrash as e:
            raise EngineCrash(spec, e.message) from None

    def _answer(self, reply: tuple, name: str | None = None) -> pa.Table:
        """A query's reply (`_reply`): its answer, or its error raised."""
        kind = reply[0]
        if kind == "ok":
            return reply[1]
        if kind == "unsupported":
            raise Unsupported(reply[1], reply[2])
        if kind == "crash":
            raise EngineCrash(name or self.name, reply[1])
        raise EngineError(name or self.name, reply[1])

    def run_each(self, items: Sequence[Item]) -> Iterator[tuple[int, Ran]]:
        """The batch crosses in one message; the worker runs it with its engine's
        own `run_each` (Spark: concurrently) and replies per query as each ends.

        A worker that dies, or sends no reply for `timeout` seconds, is killed
        (as for one query); then each query it had not answered runs again
        alone, as `run` runs it, on a fresh worker: the query that crashes or
        hangs gets its own crash or timeout verdict, and only it. A query
        answered in more than `timeout` seconds (others' replies kept the
        batch going) runs again alone too: alone, it gets `timeout` seconds."""
        if len(items) < 2:
            yield from super().run_each(items)
            return
        try:
            self.start()
        except Exception:  # noqa: BLE001 (each query meets it again, as `run` would)
            yield from super().run_each(items)
            return
        assert self._conn is not None
        left = set(range(len(items)))
        try:
            self._conn.send(("run_many", [(dict(tables), sql) for tables, sql in items]))
        except (OSError, BrokenPipeError):
            self._crashed("its worker was gone before the batch was sent")
        else:
            while left:
                try:
                    _, i, reply, seconds = self._receive(self.timeout)
                except (EngineCrash, EngineTimeout):  # the worker is killed already
                    break
                if seconds > self.timeout:  # alone it would have timed out: it runs alone, below
                    continue
                left.discard(i)
                yield i, replace(attempt(lambda reply=reply: self._answer(reply)), seconds=seconds)
        for i in sorted(left):
            tables, sql = items[i]
            yield i, attempt(lambda tables=tables, sql=sql: self.run(tables, sql))

    def _receive(self, timeout: float, starting: bool = False, first: bool = False) -> tuple:
        """The worker's next reply. A worker that dies or does not reply in `timeout`
        seconds is killed: EngineCrash / EngineTimeout, the query's verdict; while
        `starting` the `first` time, EngineUnavailable instead (nothing ran to judge)."""
        assert self._conn is not None and self._process is not None
        deadline = time.monotonic() + timeout
        while not self._conn.poll(0.05):
            if not self._process.is_alive():
                # A last reply may still sit in the pipe after a clean exit.
                if self._conn.poll(0):
                    break
                raise self._died("its worker died", starting and first)
            if time.monotonic() > deadline:
                self._kill()
                self.restarts += 1
                if starting and first:
                    raise self._not_started(f"it did not start within {timeout:g} s (the start timeout, "
                                            f"${START_TIMEOUT_ENV}); killed")
                what = "start" if starting else "answer"
                raise EngineTimeout(self.name, f"did not {what} within {timeout:g} s; worker killed")
        try:
            return self._conn.recv()
        except (EOFError, OSError):
            raise self._died("its worker closed the pipe", starting and first) from None

    def _died(self, what: str, first_start: bool) -> EngineCrash | EngineUnavailable:
        if first_start:  # most often an import failed, or the engine's own start
            return self._not_started(f"it exited before it was ready ({self._exit_status()})")
        return self._crashed(what)

    def _crashed(self, what: str) -> EngineCrash:
        how = self._exit_status()
        self.restarts += 1
        return EngineCrash(self.name, f"{what} ({how}); restarted for the next query")

    def _exit_status(self) -> str:
        """How the worker ended ("exit code 1", "killed by SIGSEGV"); it is killed and reaped."""
        if self._process is not None:
            self._process.join(2)  # reap it, so its exit signal can be named
        code = self._process.exitcode if self._process is not None else None
        self._kill()
        if code is None or code >= 0:
            return f"exit code {code}"
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"

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


# -- the worker's side ---------------------------------------------------------------


def serve(conn: Channel, make_engine: Callable[[], Engine],
          make_profiled: Callable[[str], Engine] | None = None) -> None:
    """The worker: start the engine `make_engine` builds, then answer ("run",
    tables, sql) until ("close",). The caller passes the factory (the
    registry's `get_engine` for a name), so this module, which the registry's
    remote engines build on, needs nothing of the registry. ("run_as", spec,
    tables, sql) runs on the profile `spec` of the engine, which
    `make_profiled(spec)` builds here on first use: for Spark a child session
    of the same JVM, where a worker of its own would start another JVM."""
    profiled: dict[str, Engine] = {}

    def profile(spec: str) -> Engine:
        if make_profiled is None:
            raise EngineError(spec, "this worker runs no profiles")
        if spec not in profiled:
            profiled[spec] = make_profiled(spec)
            profiled[spec].start()
        return profiled[spec]

    engine = _started(conn, make_engine)
    if engine is None:
        return
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            break
        if message[0] == "close":
            break
        if message[0] == "run_many":  # one reply per query, as each ends (`WorkerEngine.run_each`)
            for i, ran in engine.run_each(message[1]):
                conn.send(("item", i, _reply(ran), ran.seconds))
            continue
        if message[0] == "run_as":
            _, spec, tables, sql = message
            conn.send(_reply(attempt(lambda spec=spec, tables=tables, sql=sql: profile(spec).run(tables, sql))))
            continue
        _, tables, sql = message
        conn.send(_reply(attempt(lambda tables=tables, sql=sql: engine.run(tables, sql))))
    for other in profiled.values():
        other.close()
    engine.close()


def _started(conn: Channel, make_engine: Callable[[], Engine]) -> Engine | None:
    """The engine started, "ready" sent; else None, the reason sent: its reason alone,
    which the caller's EngineUnavailable names the engine before (said once)."""
    try:
        engine = make_engine()
        engine.start()
        reply: tuple = ("ready", engine.version(), engine.probed(), engine.release())
    except EngineUnavailable as e:
        reply, engine = ("unavailable", e.reason), None
    except Exception as e:  # noqa: BLE001 (reported to the caller, who decides)
        reply, engine = ("failed", f"{type(e).__name__}: {e}"), None
    try:
        conn.send(reply)
    except OSError:  # the caller is gone (its shard was stopped): nobody to tell
        if engine is not None:
            engine.close()
        return None
    return engine


def _reply(ran: Ran) -> tuple:
    # Errors cross as plain tuples: the harness's exceptions take several
    # constructor arguments and do not survive pickling as they are.
    e = ran.error
    if e is None:
        return ("ok", ran.answer)
    if isinstance(e, Unsupported):
        return ("unsupported", e.feature, e.detail)
    if isinstance(e, EngineCrash):
        return ("crash", e.message)
    if isinstance(e, EngineError):
        return ("error", e.message)
    if isinstance(e, HarnessError):
        return ("error", str(e))
    return ("error", f"{type(e).__name__}: {e}")  # an adapter bug is still this query's error
