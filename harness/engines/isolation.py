"""Run an engine in its own process, so a native crash or a hang costs one case.

DuckDB and DataFusion are native libraries inside the Python process: a
segfault would end a campaign, and a query that never returns would stall
it. `IsolatedEngine` wraps any registered engine: the adapter lives in a
worker process of this interpreter (its own process group, so Spark's JVM
goes with it), SQL and Arrow tables cross a pipe, and

- a worker that dies mid-query raises `EngineCrash` (with its exit signal);
- a query that does not answer within `timeout` seconds raises
  `EngineTimeout`; the worker group is killed;

and in both cases the next query starts a fresh worker. Rendering stays in
the caller's process (it is the dialect's job, and pure), so the wrapper
is a drop-in `Engine` with the inner engine's name and dialect. The worker
machinery is `harness.engines.worker.WorkerEngine`, shared with engines that
run in another Python environment (`RemoteEngine`), which are isolated
already and never wrapped.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Mapping
from multiprocessing.connection import Connection
from typing import Any

import pyarrow as pa

from harness.core.errors import EngineUnavailable
from harness.core.lifeline import Parent, die_with
from harness.engines.base import Engine
from harness.engines.registry import canonical_name, engine_class, get_dialect, get_engine
from harness.engines.worker import (
    DEFAULT_TIMEOUT,
    Channel,
    Worker,
    WorkerEngine,
    serve,
)

__all__ = ["DEFAULT_TIMEOUT", "IsolatedEngine", "ProfileOnWorker"]


class IsolatedEngine(WorkerEngine):
    """`name`'s adapter in a worker process; see the module docstring."""

    def __init__(self, name: str, timeout: float = DEFAULT_TIMEOUT, **options: Any) -> None:
        super().__init__(timeout)
        self.name = canonical_name(name)  # `spark[default]` -> `spark`, as the worker's adapter says
        self.dialect = self.released_dialect = get_dialect(name)
        self.options = options

    @property
    def implementation(self) -> str:
        return engine_class(self.name).shares_code_with or self.name

    def profile(self, spec: str) -> ProfileOnWorker:
        """The profile `spec` of this engine (`spark[aqe-off]`), run by this engine's
        own worker: no process, and for Spark no JVM, of its own."""
        return ProfileOnWorker(self, spec)

    def _not_started(self, reason: str) -> EngineUnavailable:
        how = engine_class(self.name).started_with(self.options)
        return self._unavailable(f"{reason} [in a worker process{', ' + how if how else ''}]")

    def _spawn(self) -> tuple[Worker, Channel]:
        ctx = mp.get_context("spawn")  # never fork a process that holds a JVM or threads
        parent, child = ctx.Pipe()
        process = ctx.Process(target=_serve, args=(child, self.name, self.options, Parent.this()),
                              name=f"window-harness {self.name}", daemon=True)
        process.start()
        child.close()
        return process, parent


class ProfileOnWorker(Engine):
    """A profile of an isolated engine (`spark[shuffle-partitions=8]`), run by
    that engine's worker (`WorkerEngine.run_as`). A worker of its own would start
    another JVM for Spark: seconds of CPU on a machine the campaign keeps busy, and
    a JIT that has compiled nothing yet. What isolation gives is kept: a crash or
    a hang is this profile's verdict, and the shared worker restarts; the engine
    itself is never asked two things at once (the campaign runs the profile
    after the engine's own queries of a case)."""

    out_of_process = True

    def __init__(self, base: IsolatedEngine, spec: str) -> None:
        self.base = base
        self.name = canonical_name(spec)
        self.dialect = self.released_dialect = get_dialect(spec)

    @property
    def implementation(self) -> str:
        return engine_class(self.name).shares_code_with or self.name

    def start(self) -> None:
        self.base.start()
        self.dialect = self.released_dialect.at(self.base.version())

    def version(self) -> str:
        return self.base.version()

    def run(self, tables: Mapping[str, pa.Table], sql: str) -> pa.Table:
        self.start()
        return self.base.run_as(self.name, tables, sql)

    # close: nothing of its own to release (its engine's worker holds the adapter)


def _serve(conn: Connection, name: str, options: dict, parent: Parent) -> None:
    os.setsid()  # its own process group, killed whole on a timeout
    die_with(parent, group=True)  # and when its parent dies
    # A profile takes its engine's options (`harness.campaign.loop.make_engine`).
    serve(conn, lambda: get_engine(name, **options), lambda spec: get_engine(spec, **options))
