"""Apache Spark via PySpark: one SparkSession per process, tables loaded from Arrow.

The JVM starts once per process (about 5 s), on first use. Adapters without a
`config` share that root session; an adapter with a `config` (a profile such
as AQE off) gets a child session (`newSession()`: same JVM, its own SQL conf
and temp views). Temp views are cached per session by table identity, since
`createDataFrame` costs ~40 ms. A batch of queries (`run_each`, the corpus)
runs from `threads` threads at once, each in a child session of the
adapter's own, so tables named alike in two queries never meet.

With an `sc://` master the adapter is a Spark Connect client instead
(`spark_connect`): no JVM in this process, one server-side session per
adapter, config or not. It coexists with the process's classic Spark.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyarrow as pa

from harness.core.errors import EngineCrash, EngineError, EngineUnavailable
from harness.core.secrets import redact
from harness.engines.base import Engine, Item, Ran, attempt, library_missing
from harness.engines.spark.compat import from_arrow, quiet_python_loggers, to_arrow
from harness.engines.spark.connect import arrow_frame, is_connect_url, open_session, session_lost
from harness.engines.spark.dialect import SPARK
from harness.engines.spark.jvm import (
    driver_java_options,
    error_message,
    launch_conf,
    require_java,
    scratch_conf,
    short_message,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.connect.session import SparkSession as ConnectSession

DEFAULT_MASTER = "local[*]"
# How many queries of a batch (`run_each`) run at once, each from its own thread.
DEFAULT_THREADS = 4

# Set on every session the harness runs queries in.
SQL_CONF = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "2",
    # The writer quotes every name that is not plain lower case, so quoted
    # names must match exactly (otherwise columns `A` and `a` are ambiguous).
    "spark.sql.caseSensitive": "true",
    # Otherwise '${env:HOME}' inside a string literal is substituted.
    "spark.sql.variable.substitute": "false",
}

@dataclass
class _Session:
    spark: SparkSession | ConnectSession
    registered: dict[str, pa.Table] = field(default_factory=dict)


@dataclass
class _Process:
    """The one Spark of this process: its master, root session, and whether it died."""

    master: str | None = None
    root: _Session | None = None
    death: str | None = None


_PROCESS = _Process()
_LOCK = threading.Lock()


def _builder(master: str) -> SparkSession.Builder:
    """A classic session's builder (sc:// masters go through `spark_connect.open_session`)."""
    from pyspark.sql import SparkSession

    require_java()
    conf = {**launch_conf(master), **scratch_conf(), "spark.driver.extraJavaOptions": driver_java_options(),
            **SQL_CONF}
    builder = SparkSession.builder.appName("window-harness").master(master)
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder


def _start(master: str) -> SparkSession:
    try:
        from pyspark.errors import PySparkException
    except ImportError as e:
        raise library_missing("spark", e) from e
    quiet_python_loggers()
    try:
        spark = _builder(master).getOrCreate()
    except (PySparkException, ImportError, OSError) as e:  # the JVM did not start
        raise EngineUnavailable("spark", short_message(e)) from e
    spark.sparkContext.setLogLevel("OFF")  # in case the session existed before us
    return spark


def _check_alive() -> None:
    # A dead JVM is not restarted in-process: the worker process that holds
    # it is (DESIGN: crashing engines run in workers that restart).
    if _PROCESS.death is not None:
        raise EngineCrash("spark", f"Spark died earlier in this process: {_PROCESS.death}")


def root_session(master: str) -> _Session:
    """The process's Spark session, started on first call."""
    with _LOCK:
        _check_alive()
        if _PROCESS.root is None:
            _PROCESS.root, _PROCESS.master = _Session(_start(master)), master
        elif _PROCESS.master != master:
            raise EngineUnavailable(
                "spark", f"this process already runs Spark on {_PROCESS.master!r}, not {master!r}")
        return _PROCESS.root


def stop_session() -> None:
    """Stop the process's Spark (the JVM also goes when Python exits)."""
    with _LOCK:
        if _PROCESS.root is not None and _PROCESS.death is None:
            _PROCESS.root.spark.stop()
        _PROCESS.root = _PROCESS.master = None


def naive_utc(table: pa.Table) -> pa.Table:
    """Spark returns its TIMESTAMP (LTZ) columns as timestamp[us, tz=UTC]; the
    harness's timestamps are naive, and the session zone is UTC, so the wall
    clock values are the same."""
    for i, f in enumerate(table.schema):
        naive_type = _naive(f.type)
        if naive_type != f.type:
            naive = pa.field(f.name, naive_type, f.nullable, f.metadata)
            table = table.set_column(i, naive, table.column(i).cast(naive_type))
    return table


def _naive(t: pa.DataType) -> pa.DataType:
    """`t` with UTC timestamps made naive, inside lists too (array_agg of timestamps)."""
    if pa.types.is_timestamp(t) and t.tz in ("UTC", "Etc/UTC", "+00:00"):
        return pa.timestamp(t.unit)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        inner = _naive(t.value_type)
        if inner != t.value_type:
            field = pa.field(t.value_field.name, inner, t.value_field.nullable)
            return pa.large_list(field) if pa.types.is_large_list(t) else pa.list_(field)
    return t


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class SparkEngine(Engine):
    """`master`: local[*] by default, a spark:// URL, or a Spark Connect sc:// URL.
    `config`: SQL conf for this adapter's own session (a profile): a child
    session of the process's Spark, or its own session on the Connect server."""

    name = "spark"
    product = "Spark"
    client = "spark-sql"
    dialect = SPARK
    library = "pyspark"
    runs_on_spark = True

    def __init__(self, master: str = DEFAULT_MASTER,
                 config: Mapping[str, str] | None = None, threads: int = DEFAULT_THREADS) -> None:
        try:
            import pyspark  # fail here, not at the first query
        except ImportError as e:
            raise library_missing("spark", e) from e
        self._master = master
        self._config = dict(config or {})
        self.threads = threads
        # The child sessions `run_each`'s threads run in, each used by one thread at a time.
        self._spare: queue.SimpleQueue[_Session] = queue.SimpleQueue()
        self._remote = is_connect_url(master)
        self._session: _Session | None = None
        self._opened = False  # a Connect session was open once (then failing to reopen is a crash)
        # The client's release: what the local session runs (a Connect server's own
        # version is the server's; `version()` asks it).
        self.dialect = SPARK.at(pyspark.__version__)

    @classmethod
    def started_with(cls, options: Mapping[str, object]) -> str:
        master = str(options.get("master") or DEFAULT_MASTER)
        where = "the Spark Connect server" if is_connect_url(master) else "master"
        return f"{where} {redact(master)}"  # a Connect URL may hold a token

    def start(self) -> None:
        self._state()

    def version(self) -> str:
        state = self._state()
        with self._guarded():  # an RPC over Connect
            return str(state.spark.version)

    def _state(self) -> _Session:
        if self._remote:
            return self._remote_state()
        _check_alive()
        if self._session is None:
            root = root_session(self._master)
            if not self._config:
                self._session = root
            else:
                child = root.spark.newSession()
                for key, value in {**SQL_CONF, **self._config}.items():
                    child.conf.set(key, value)
                self._session = _Session(child)
        return self._session

    def _remote_state(self) -> _Session:
        if self._session is None:
            quiet_python_loggers()
            try:
                self._session = _Session(open_session(self._master, {**SQL_CONF, **self._config}))
            except EngineUnavailable as e:
                if not self._opened:
                    raise
                why = short_message(e.__cause__ or e)
                raise EngineCrash(self.name, f"Spark Connect server gone: {why}") from e
            self._opened = True
        return self._session

    def run(self, tables: Mapping[str, pa.Table], sql: str) -> pa.Table:
        state = self._state()
        with self._guarded():
            self._register(state, tables)
            frame = state.spark.sql(sql)
            return naive_utc(frame.toArrow() if self._remote else to_arrow(frame))  # type: ignore[arg-type]

    def run_each(self, items: Sequence[Item]) -> Iterator[tuple[int, Ran]]:
        """Queries run concurrently from `threads` threads (Spark schedules the jobs of
        several threads at once), each thread in a child session of this adapter's
        (`newSession()`: the same JVM, its own temp views and SQL conf), so two
        queries' tables named alike never meet. Over Spark Connect, with one
        thread, or in a subclass with a `run` of its own, one after another."""
        if self._remote or self.threads < 2 or len(items) < 2 or type(self).run is not SparkEngine.run:
            yield from super().run_each(items)
            return
        try:
            self._state()
        except Exception:  # noqa: BLE001 (each query meets it again, as `run` would)
            yield from super().run_each(items)
            return
        with ThreadPoolExecutor(min(self.threads, len(items)), thread_name_prefix="spark query") as pool:
            running = {pool.submit(attempt, lambda tables=tables, sql=sql: self._run_in_child(tables, sql)): i
                       for i, (tables, sql) in enumerate(items)}
            for done in as_completed(running):
                yield running[done], done.result()

    def _run_in_child(self, tables: Mapping[str, pa.Table], sql: str) -> pa.Table:
        _check_alive()
        try:
            session = self._spare.get_nowait()
        except queue.Empty:
            session = self._child_session()
        try:
            with self._guarded():
                self._register(session, tables)
                return naive_utc(to_arrow(session.spark.sql(sql)))  # type: ignore[arg-type]
        finally:
            self._spare.put(session)

    def _child_session(self) -> _Session:
        with self._guarded():
            child = self._state().spark.newSession()  # type: ignore[union-attr]
            for key, value in {**SQL_CONF, **self._config}.items():
                child.conf.set(key, value)
        return _Session(child)

    @contextmanager
    def _guarded(self) -> Iterator[None]:
        try:
            with _translated(self.name, remote=self._remote):
                yield
        except EngineCrash:
            if self._remote:  # the next query opens a new session (and registers its tables)
                self._drop_remote(release=False)
            raise

    def _register(self, state: _Session, tables: Mapping[str, pa.Table]) -> None:
        for name in [n for n in state.registered if n not in tables]:
            state.spark.catalog.dropTempView(name)
            del state.registered[name]
        for name, table in tables.items():
            if state.registered.get(name) is not table:
                frame = (arrow_frame(state.spark, table) if self._remote  # type: ignore[arg-type]
                         else from_arrow(state.spark, table))  # type: ignore[arg-type]
                frame.createOrReplaceTempView(_quoted(name))
                state.registered[name] = table

    def close(self) -> None:
        if self._remote:
            self._drop_remote(release=True)
        # A classic session is the process's, shared with other adapters: keep it.
        self._session = None
        self._spare = queue.SimpleQueue()

    def _drop_remote(self, release: bool) -> None:
        session, self._session = self._session, None
        if session is not None:
            # Releasing the server-side session is an RPC, retried for seconds
            # when the server is gone; stop() only closes the channel then.
            session.spark.release_session_on_close = release  # type: ignore[union-attr]
            session.spark.stop()


@contextmanager
def _translated(engine: str, remote: bool = False) -> Iterator[None]:
    """Native Spark/Py4J/Spark Connect exceptions -> harness errors, in one place."""
    from pyspark.errors import PySparkException

    try:
        from py4j.protocol import Py4JError, Py4JJavaError
    except ImportError:  # a Spark Connect-only install has no Py4J
        Py4JError = Py4JJavaError = ()  # type: ignore[assignment,misc]  # noqa: N806
    try:
        yield
    except (PySparkException, Py4JJavaError) as e:  # Spark threw: a query error, unless...
        if remote and session_lost(e):  # ...the Connect server (or our session) is gone
            raise EngineCrash(engine, f"Spark Connect server gone: {short_message(e)}") from e
        raise EngineError(engine, error_message(e)) from e
    except (Py4JError, ConnectionError) as e:  # the link to the JVM (or server) broke
        if remote:
            raise EngineCrash(engine, f"Spark Connect server gone: {short_message(e)}") from e
        message = f"the Spark JVM is gone: {short_message(e)}"
        with _LOCK:
            _PROCESS.death = message
        raise EngineCrash(engine, message) from e
