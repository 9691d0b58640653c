"""What an engine adapter is.

An adapter loads Arrow tables, runs SQL text in its own dialect and returns
Arrow. It translates the engine's native exceptions into the harness's error
types exactly once, here in the adapter layer: `EngineError` for a query the
engine rejected or failed, `EngineCrash` when its process died,
`EngineTimeout` when it did not answer. It never decides a verdict.
"""

from __future__ import annotations

import importlib.util
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from types import ModuleType

import pyarrow as pa

from harness.core.dialect import Dialect
from harness.core.errors import EngineUnavailable
from harness.core.model import Query


def library_missing(engine: str, error: ImportError) -> EngineUnavailable:
    """The error for an engine whose Python library is not installed. Each engine's
    library is the pip extra of its name (pyproject.toml), so the message says which."""
    return EngineUnavailable(engine, f"its Python library is not installed ({error}); "
                             f"install it with: pip install 'window-harness[{engine}]'")


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

    @property
    def implementation(self) -> str:
        return self.shares_code_with or self.name

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

    def execute(self, query: Query, tables: Mapping[str, pa.Table]) -> pa.Table:
        """Render `query` in this engine's dialect and run it over `tables`."""
        return self.run(tables, self.render(query))

    @abstractmethod
    def run(self, tables: Mapping[str, pa.Table], sql: str) -> pa.Table:
        """Run SQL text over the given tables (registered under their names)."""

    def close(self) -> None:  # noqa: B027 (an optional hook, empty by default)
        """Release the engine's resources; the default holds none."""
