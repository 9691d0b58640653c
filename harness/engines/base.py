"""What an engine adapter is.

An adapter loads Arrow tables, runs SQL text in its own dialect and returns
Arrow. It translates the engine's native exceptions into the harness's error
types exactly once, here in the adapter layer: `EngineError` for a query the
engine rejected or failed, `EngineCrash` when its process died,
`EngineTimeout` when it did not answer. It never decides a verdict.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import math
import os
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType

import pyarrow as pa

from harness.core.dialect import Dialect
from harness.core.errors import EngineUnavailable, InvalidInput, Unsupported
from harness.core.model import Query
from harness.core.names import CASE_ONLY_NAMES, case_only_clash

# How long an engine may take to start, apart from the per-query --timeout: a
# worker's interpreter and the engine in it (a SparkSession's JVM: ~5 s alone,
# tens of seconds beside other JVMs on two cores), a connection to a server. An
# engine that has not started by then is unavailable: exit 2, never a verdict.
START_TIMEOUT = 120.0
START_TIMEOUT_ENV = "WINDOW_HARNESS_START_TIMEOUT"


def start_timeout() -> float:
    """The start timeout in seconds: $WINDOW_HARNESS_START_TIMEOUT, else START_TIMEOUT."""
    text = os.environ.get(START_TIMEOUT_ENV, "").strip()
    if not text:
        return START_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise InvalidInput(f"${START_TIMEOUT_ENV} is {text!r}: give the seconds an engine may take to "
                           "start, a number above 0", START_TIMEOUT_ENV)
    return seconds


def library_missing(engine: str, error: ImportError) -> EngineUnavailable:
    """The error for an engine whose Python library is not installed. Each engine's
    library is the pip extra of its name (pyproject.toml), so the message says which."""
    return EngineUnavailable(engine, f"its Python library is not installed ({error}); "
                             f"install it with: pip install 'window-harness[{engine}]'")


# One query of a batch (`Engine.run_many`): the tables it runs over and its SQL text.
Item = tuple[Mapping[str, pa.Table], str]


@dataclass(frozen=True)
class Ran:
    """What one query of a batch gave: its answer, or the exception `run` raised
    for it (each query's own: one failing query never touches the others')."""

    answer: pa.Table | None = None
    error: Exception | None = None
    seconds: float = 0.0


def attempt(run: Callable[[], pa.Table]) -> Ran:
    """`run()` as a `Ran`, timed; any Exception is kept as the query's error (the
    caller re-raises what is not a query's verdict, as `run` would have raised it)."""
    t0 = time.perf_counter()
    try:
        answer = run()
    except Exception as e:  # noqa: BLE001 (kept for its query; see above)
        return Ran(error=e, seconds=time.perf_counter() - t0)
    return Ran(answer, seconds=time.perf_counter() - t0)


def reload_tables(loaded: dict[str, pa.Table], tables: Mapping[str, pa.Table],
                  drop: Callable[[str], None], create: Callable[[str, pa.Table], None]) -> None:
    """Make an engine that keeps loaded tables hold exactly `tables`, updating
    `loaded` (name -> the Arrow table loaded under it): drop what this query does
    not name or what changed (by identity), so a stale table never answers, then
    create what is new."""
    for name in [n for n in loaded if loaded[n] is not tables.get(n)]:
        drop(name)
        del loaded[name]
    for name, table in tables.items():
        if name not in loaded:
            create(name, table)
            loaded[name] = table


class Engine(ABC):
    """One engine (under one configuration) that can run queries of the model."""

    name: str
    dialect: Dialect
    # The reference is the oracle: the runner judges it against a case's
    # expected rows instead of against itself.
    is_reference: bool = False

    # Spark-under-test: a campaign run as a Spark job (`--on-spark`) runs it from
    # the driver, on the session the job runs on, and `--spark-master` /
    # `--spark-remote` say where it is.
    runs_on_spark: bool = False

    # The engine answers from a database server the command is told of
    # (--postgres-dsn, --postgres-local): a command line that runs it carries that option.
    needs_server: bool = False

    # The adapter runs in a worker process of its own (`harness.engines.remote`),
    # with crash and timeout handling built in: a campaign constructs it as it
    # is, with `timeout`, instead of wrapping it in an isolating worker.
    out_of_process: bool = False

    # A deliberately faulty engine (`harness.engines.duckdb.faulty`): it alters its own
    # rendering, so it must run in this process, never behind a worker.
    faulty: bool = False

    # Which code base answers, when it is not the engine's name: engines (or
    # configurations) that share one count once when engines outvote the reference.
    shares_code_with: str | None = None

    # The profiles (`harness.engines.profiles`) this adapter runs under, as in its name.
    profiles: tuple[str, ...] = ()

    # The engine as its project writes its name, and the client a bug report's
    # reproduction is pasted into (`window-harness export --to issue`).
    product: str = ""
    client: str = ""

    # The top-level module of the engine's Python library, which its pip extra
    # installs; None when the core install has it (the reference, SQLite).
    library: str | None = None

    @classmethod
    def import_library(cls) -> ModuleType:
        """The engine's Python library (`library`), imported; EngineUnavailable naming
        the pip extra that installs it (the base engine's name) when it is missing."""
        assert cls.library is not None, f"{cls.name} declares no library"
        try:
            return importlib.import_module(cls.library)
        except ImportError as e:
            raise library_missing(cls.shares_code_with or cls.name, e) from e

    @classmethod
    def installed(cls) -> bool:
        """Whether the engine's library can be imported, found without importing it
        (importing pyspark alone takes a second)."""
        return cls.library is None or importlib.util.find_spec(cls.library) is not None

    @classmethod
    def started_with(cls, options: Mapping[str, object]) -> str:
        """How an engine of `options` is started, for a message that it did not
        start ("the server at HOST:PORT/DB"); "" when its name says it all."""
        return ""

    @property
    def implementation(self) -> str:
        return self.shares_code_with or self.name

    def release(self) -> str | None:
        """The installed release of the engine's Python package (`library`) that
        answers, as pip names it; None for an engine without one. What a label such
        as `duckdb@1.1.0` claims is checked against this (`harness.bisect.run`)."""
        if self.library is None:
            return None
        try:
            return importlib.metadata.version(self.library)
        except importlib.metadata.PackageNotFoundError:
            return None

    def start(self) -> None:  # noqa: B027 (an optional hook, empty by default)
        """Start the engine now; otherwise it starts lazily on first use.

        Lets callers measure start-up apart from query time.
        """

    @abstractmethod
    def version(self) -> str:
        """The engine's version string, e.g. '2.0.0'."""

    def probed(self) -> dict[str, str]:
        """What the adapter found this build offers, where it had to probe rather
        than assume the current API (`window-harness engines --engine-python`
        shows it): what -> how, e.g. {"version": "the package's"}."""
        return {}

    def render(self, query: Query) -> str:
        """The SQL this engine runs for `query`; raises Unsupported when it cannot."""
        from harness.sql.writer import write

        return write(query, self.dialect)

    def check_tables(self, tables: Mapping[str, pa.Table]) -> None:
        """Unsupported when `tables` hold names this engine's dialect cannot tell
        apart (`CASE_ONLY_NAMES` in its `unrepresentable`): loaded, two columns
        "a" and "A" would be one, and its answer a false mismatch or error."""
        if CASE_ONLY_NAMES in self.dialect.unrepresentable:
            clash = case_only_clash(tables)
            if clash is not None:
                raise Unsupported(CASE_ONLY_NAMES, clash)

    def execute(self, query: Query, tables: Mapping[str, pa.Table]) -> pa.Table:
        """Render `query` in this engine's dialect and run it over `tables`."""
        self.check_tables(tables)
        return self.run(tables, self.render(query))

    @abstractmethod
    def run(self, tables: Mapping[str, pa.Table], sql: str) -> pa.Table:
        """Run SQL text over the given tables (registered under their names)."""

    def run_each(self, items: Sequence[Item]) -> Iterator[tuple[int, Ran]]:
        """Run many queries, each as `run` runs it alone, yielding (its index in
        `items`, what it gave) as each ends, in any order. The default runs them
        one after another; an engine that answers concurrently (Spark) or from
        another process (`WorkerEngine`: the batch crosses in one message) says so."""
        for i, (tables, sql) in enumerate(items):
            yield i, attempt(lambda tables=tables, sql=sql: self.run(tables, sql))

    def run_many(self, items: Sequence[Item]) -> list[Ran]:
        """`run_each`'s answers in the order of `items`."""
        out: list[Ran | None] = [None] * len(items)
        for i, ran in self.run_each(items):
            out[i] = ran
        assert all(r is not None for r in out), "run_each left a query unanswered"
        return out  # type: ignore[return-value]

    def deny_file_access(self) -> None:
        """From now on run SQL as untrusted (an imported test file's setup): no file
        read or written, no database attached, no extension installed or loaded,
        by the engine's own switches; a statement refused for that raises
        FileAccessDenied. Called before the engine starts. An engine that cannot
        promise it refuses here, rather than run the file with access on."""
        raise EngineUnavailable(self.name, "it cannot run untrusted SQL with file access off "
                                "(an imported file's setup); choose duckdb, datafusion, sqlite or postgres")

    def close(self) -> None:  # noqa: B027 (an optional hook, empty by default)
        """Release the engine's resources; the default holds none."""


def start_together(engines: Sequence[Engine]) -> dict[str, float]:
    """Start `engines`, those in processes of their own at the same time (a Spark
    worker takes seconds), the others in turn here; each one's seconds. The
    first failure, in the engines' order, is raised once all are done."""
    seconds: dict[str, float] = {}
    errors: dict[str, BaseException] = {}

    def start(engine: Engine) -> None:
        t0 = time.perf_counter()
        try:
            engine.start()
            engine.version()
        except BaseException as e:  # noqa: BLE001 (raised below, in the engines' order)
            errors[engine.name] = e
        seconds[engine.name] = time.perf_counter() - t0

    threads = [threading.Thread(target=start, args=(e,), name=f"start {e.name}")
               for e in engines if e.out_of_process]
    for thread in threads:
        thread.start()
    for engine in engines:
        if not engine.out_of_process:
            start(engine)
    for thread in threads:
        thread.join()
    for engine in engines:
        if engine.name in errors:
            raise errors[engine.name]
    return seconds
