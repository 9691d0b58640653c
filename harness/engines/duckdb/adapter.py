"""DuckDB: one in-memory connection per adapter, tables registered from Arrow."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import pyarrow as pa

from harness.core.errors import EngineError, FileAccessDenied
from harness.engines.base import Engine
from harness.engines.duckdb.dialect import DUCKDB

if TYPE_CHECKING:
    import duckdb

# Untrusted SQL (`deny_file_access`): DuckDB's own switch turns off every file system
# operation (COPY, read_csv and the other readers, ATTACH, INSTALL, EXPORT, stored
# secrets) and extension loading; the lock stops the SQL from setting it back (or
# setting any other option, a profiling output path included).
NO_FILE_ACCESS = {"enable_external_access": "false", "autoinstall_known_extensions": "false",
                  "autoload_known_extensions": "false", "lock_configuration": "true"}


def error_message(error: BaseException) -> str:
    """A DuckDB error whole: its first line ('Binder Error: ...') and what follows
    (the 'LINE 1: ...' context with its caret, candidate lists), which may hold
    the cause; blank lines and trailing spaces dropped. Displays that have room
    for one line show the first (the signature reads it too)."""
    lines = [line.rstrip() for line in str(error).splitlines() if line.strip()]
    return "\n".join(lines) or type(error).__name__


class DuckDBEngine(Engine):
    """`config` goes to duckdb.connect (e.g. {"threads": "1", "memory_limit": "64MB"})."""

    name = "duckdb"
    product = "DuckDB"
    client = "the duckdb CLI"
    dialect = DUCKDB
    library = "duckdb"

    def __init__(self, config: Mapping[str, str] | None = None) -> None:
        self._duckdb = self.import_library()
        self._config = dict(config or {})
        self._con: duckdb.DuckDBPyConnection | None = None
        self._registered: dict[str, pa.Table] = {}
        # The release's own features and semantics: judged by what it supports.
        self.dialect = DUCKDB.at(self.version())

    def start(self) -> None:
        self._connection()

    def version(self) -> str:
        return str(self._duckdb.__version__)

    def _connection(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            self._con = self._duckdb.connect(":memory:", config=self._config)
            self._registered = {}
        return self._con

    def _register(self, con: duckdb.DuckDBPyConnection, tables: Mapping[str, pa.Table]) -> None:
        # Drop what this query does not name, so a stale table never answers.
        for name in [n for n in self._registered if n not in tables]:
            con.unregister(name)
            del self._registered[name]
        for name, table in tables.items():
            if self._registered.get(name) is not table:
                con.register(name, table)
                self._registered[name] = table

    def deny_file_access(self) -> None:
        self.close()  # the options apply from the next connection on
        self._config.update(NO_FILE_ACCESS)

    def run(self, tables: Mapping[str, pa.Table], sql: str) -> pa.Table:
        con = self._connection()
        self._register(con, tables)
        try:
            relation = con.sql(sql)
            return relation.to_arrow_table() if relation is not None else pa.table({})
        except self._duckdb.Error as e:
            if isinstance(e, (self._duckdb.FatalException, self._duckdb.InternalException)):
                # DuckDB invalidates the database after these; start afresh.
                self.close()
            if isinstance(e, getattr(self._duckdb, "PermissionException", ())):
                raise FileAccessDenied(self.name, error_message(e)) from e
            raise EngineError(self.name, error_message(e)) from e

    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None
            self._registered = {}
