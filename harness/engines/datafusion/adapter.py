"""Apache DataFusion: one SessionContext per adapter, tables registered from Arrow."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

import pyarrow as pa

from harness.core.errors import EngineCrash, EngineError, FileAccessDenied
from harness.engines.base import Engine
from harness.engines.datafusion.dialect import DATAFUSION
from harness.sql.script import strip_comments

if TYPE_CHECKING:
    import datafusion

_PREFIX = re.compile(r"^(DataFusion error: )+")



# Untrusted SQL (`deny_file_access`): DataFusion has no switch that turns file
# access off (its SQLOptions refuse all DDL or all DML, CREATE TABLE and INSERT
# among them), and what reaches a file is CREATE EXTERNAL TABLE ... LOCATION and
# COPY ... TO (no table function reads files; `FROM 'path'` only once
# enable_url_table is called, which the adapter never does). So those are
# refused by their words, outside strings and comments: conservative, a name
# spelled `copy` is refused too.
_FILE_WORDS = re.compile(r"\b(external|location|copy)\b", re.IGNORECASE)


def error_message(error: BaseException) -> str:
    """The whole message on one line: DataFusion chains causes over lines ('...
    failed / caused by / Arrow error: Cast error: ...'), and the cause is the
    informative part, so none is cut."""
    text = " ".join(line.strip() for line in str(error).splitlines() if line.strip())
    return _PREFIX.sub("", text) or type(error).__name__


def is_panic(error: BaseException) -> bool:
    """A Rust panic inside DataFusion, surfaced by pyo3 as a BaseException."""
    return type(error).__name__ == "PanicException"


def quoted(name: str) -> str:
    # Registration parses the name as SQL and lower-cases it unless quoted.
    return '"' + name.replace('"', '""') + '"'


def batches(table: pa.Table) -> list[pa.RecordBatch]:
    # An empty table has no batches, and DataFusion needs one to see a schema.
    return table.to_batches() or [pa.RecordBatch.from_pylist([], schema=table.schema)]


def arrow_table(frame: datafusion.DataFrame) -> tuple[pa.Table, bool]:
    """The frame's result as one Arrow table, and whether `collect()` had to read
    it. On DataFusion 49 and 50, `to_arrow_table()` refuses a result whose
    batches are declared NOT NULL where the plan's schema is nullable (measured:
    `SELECT version()`, "Schema at index 0 was different"); the batches are then
    taken under the plan's schema, which only relaxes nullability."""
    try:
        return frame.to_arrow_table(), False
    except pa.ArrowInvalid as e:
        if "was different" not in str(e):
            raise
    schema = frame.schema()
    batches = [pa.RecordBatch.from_arrays(b.columns, schema=schema) for b in frame.collect()]
    return pa.Table.from_batches(batches, schema=schema), True


class DataFusionEngine(Engine):
    """`config` goes to SessionConfig (e.g. {"datafusion.execution.target_partitions": "1"}).
    `memory_pool_bytes`: a fair spill pool of that size instead of the unbounded
    default (a runtime setting, not a SessionConfig key), so that operators
    that can spill do, and the others fail with "Resources exhausted"."""

    name = "datafusion"
    product = "DataFusion"
    client = "datafusion-cli"
    dialect = DATAFUSION
    library = "datafusion"

    def __init__(self, config: Mapping[str, str] | None = None,
                 memory_pool_bytes: int | None = None) -> None:
        self._datafusion = self.import_library()
        self._config = dict(config or {})
        self._memory_pool_bytes = memory_pool_bytes
        self._ctx: datafusion.SessionContext | None = None
        self._registered: dict[str, pa.Table] = {}
        self._untrusted = False  # set by deny_file_access
        self._version: str | None = None
        self._probed: dict[str, str] = {"results": "to_arrow_table()"}
        # The release's own features and semantics: judged by what it supports.
        self.dialect = DATAFUSION.at(str(self._datafusion.__version__))

    def start(self) -> None:
        self._context()

    def version(self) -> str:
        # The Rust core's version (what decides behaviour) can be ahead of the
        # Python binding's: datafusion-python 55.0.0 reports core 55.2.0.
        # Releases before 43 have no version() (measured on 33, 36 and 40.1:
        # "Invalid function 'version'"); their binding's version is the core's.
        if self._version is None:
            try:
                text = self._collect("SELECT version() AS v").column(0)[0].as_py()
            except EngineError:
                text = ""
            match = re.search(r"DataFusion (\S+?),", text)
            self._version = match.group(1) if match else str(self._datafusion.__version__)
            self._probed["version"] = ("SELECT version() (the Rust core's)" if match else
                                       "the datafusion package's (this release has no version())")
        return self._version

    def probed(self) -> dict[str, str]:
        self.version()
        return dict(self._probed)

    def _context(self) -> datafusion.SessionContext:
        if self._ctx is None:
            config = self._datafusion.SessionConfig(self._config)
            runtime = None
            if self._memory_pool_bytes is not None:
                builder = self._datafusion.RuntimeEnvBuilder()
                runtime = builder.with_fair_spill_pool(self._memory_pool_bytes)
            self._ctx = self._datafusion.SessionContext(config, runtime)
            self._registered = {}
        return self._ctx

    def _register(self, ctx: datafusion.SessionContext, tables: Mapping[str, pa.Table]) -> None:
        for name in list(self._registered):
            if self._registered[name] is not tables.get(name):
                ctx.deregister_table(quoted(name))
                del self._registered[name]
        for name, table in tables.items():
            if name not in self._registered:
                ctx.register_record_batches(quoted(name), [batches(table)])
                self._registered[name] = table

    def deny_file_access(self) -> None:
        self._untrusted = True

    def run(self, tables: Mapping[str, pa.Table], sql: str) -> pa.Table:
        if self._untrusted and (word := _FILE_WORDS.search(strip_comments(sql))):
            raise FileAccessDenied(self.name, f"a statement naming {word[0].upper()} may read or write "
                                   "files (CREATE EXTERNAL TABLE, COPY): not run")
        self._register(self._context(), tables)
        return self._collect(sql)

    def _collect(self, sql: str) -> pa.Table:
        ctx = self._context()
        try:
            table, collected = arrow_table(ctx.sql(sql))
            if collected:
                self._probed["results"] = ("collect() where to_arrow_table() refuses a batch's "
                                           "nullability (DataFusion 49 and 50)")
            return table
        # datafusion-python raises plain Exception/ValueError for every engine
        # error (there is no narrower class), so this is the translation point.
        except Exception as e:
            raise EngineError(self.name, error_message(e)) from e
        except BaseException as e:
            if not is_panic(e):
                raise
            self._ctx = None  # do not trust a context a panic unwound through
            raise EngineCrash(self.name, "panic: " + error_message(e)) from e

    def close(self) -> None:
        self._ctx = None
        self._registered = {}
