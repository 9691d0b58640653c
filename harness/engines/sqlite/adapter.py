"""SQLite, through Python's sqlite3: one in-memory database per adapter.

Tables are loaded from Arrow with CREATE TABLE (declared types, so columns get
SQLite's INTEGER, REAL and TEXT affinities) and executemany. SQLite is judged
only on data it can hold faithfully: a table with a DECIMAL (stored as REAL),
DATE or TIMESTAMP (no such types), BOOLEAN (stored as 0/1 INTEGER) column, or
a NaN (stored as NULL), makes the run Unsupported("data.<what>").

Results carry no column types (SQLite types values, not columns), so each
column's Arrow type is inferred from its Python values: int -> int64, float
-> float64, str -> string, bytes -> binary, nothing but NULL -> null. A column
mixing integers and reals (SQLite's dynamic typing, e.g. `lag(f, 1, 0)` over a
REAL column) is float64, as a typed engine would cast it.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from harness.core.errors import (
    EngineError,
    EngineTimeout,
    FileAccessDenied,
    InvalidInput,
    Unsupported,
)
from harness.core.types import TypeKind, from_arrow
from harness.engines.base import Engine, reload_tables
from harness.engines.sqlite.dialect import NAN_DATA, OTHER_DATA, SQLITE, UNREPRESENTABLE_DATA

# Arrow types whose values SQLite cannot hold as they are.
_UNREPRESENTABLE = [
    (pa.types.is_decimal, UNREPRESENTABLE_DATA[TypeKind.DECIMAL]),
    (pa.types.is_date, UNREPRESENTABLE_DATA[TypeKind.DATE]),
    (pa.types.is_timestamp, UNREPRESENTABLE_DATA[TypeKind.TIMESTAMP]),
    (pa.types.is_boolean, UNREPRESENTABLE_DATA[TypeKind.BOOL]),
    (pa.types.is_duration, UNREPRESENTABLE_DATA[TypeKind.INTERVAL]),
]


def error_message(error: BaseException) -> str:
    """SQLite's message whole (one line as a rule), blank lines dropped."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return "\n".join(lines) or type(error).__name__


def check_representable(tables: Mapping[str, pa.Table]) -> None:
    """Raise Unsupported when a table holds what SQLite would store differently."""
    for table in tables.values():
        for field, column in zip(table.schema, table.columns, strict=True):
            for check, feature in _UNREPRESENTABLE:
                if check(field.type):
                    raise Unsupported(feature, f"column {field.name!r} is {field.type}")
            if pa.types.is_floating(field.type) and pc.any(pc.is_nan(column)).as_py():
                raise Unsupported(NAN_DATA, f"column {field.name!r} holds NaN")


def column_type(values: Sequence[object]) -> pa.DataType:
    """The Arrow type of one result column, from the Python types of its values."""
    kinds = {type(v) for v in values if v is not None}
    if not kinds:
        return pa.null()
    if kinds <= {int}:
        return pa.int64()
    if kinds <= {int, float}:
        return pa.float64()
    if kinds == {str}:
        return pa.string()
    if kinds == {bytes}:
        return pa.binary()
    names = ", ".join(sorted(k.__name__ for k in kinds))
    raise EngineError("sqlite", f"a result column mixes values of types {names}")


def to_arrow(names: list[str], rows: list[tuple]) -> pa.Table:
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in names]
    arrays = []
    for values in columns:
        t = column_type(values)
        arrays.append(pa.array([float(v) if pa.types.is_float64(t) and v is not None else v
                                for v in values], type=t))
    return pa.Table.from_arrays(arrays, names=names)


# A query's time limit in this process (the campaign's default per-query timeout),
# checked every PROGRESS_STEPS virtual-machine steps.
QUERY_SECONDS = 30.0
PROGRESS_STEPS = 100_000


# What untrusted SQL may not do (`deny_file_access`): ATTACH opens or creates a
# file, and so does VACUUM INTO (which attaches its target). Python's sqlite3
# loads no extension unless asked (enable_load_extension), and the CLI's
# readfile/writefile are not in the library.
_FILE_ACTIONS = {sqlite3.SQLITE_ATTACH: "ATTACH", sqlite3.SQLITE_DETACH: "DETACH"}


class _FileGuard:
    """SQLite's authorizer for untrusted SQL: denies the file actions and
    remembers the last one denied, so the error can say why."""

    def __init__(self) -> None:
        self.denied: str | None = None

    def __call__(self, action: int, *_: object) -> int:
        if action in _FILE_ACTIONS:
            self.denied = _FILE_ACTIONS[action]
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK


class SQLiteEngine(Engine):
    name = "sqlite"
    product = "SQLite"
    client = "sqlite3"
    dialect = SQLITE

    def __init__(self) -> None:
        self._con: sqlite3.Connection | None = None
        self._loaded: dict[str, pa.Table] = {}
        self._guard: _FileGuard | None = None  # set by deny_file_access
        self.dialect = SQLITE.at(sqlite3.sqlite_version)  # the library this Python links

    def start(self) -> None:
        self._connection()

    def version(self) -> str:
        return sqlite3.sqlite_version

    def _connection(self) -> sqlite3.Connection:
        if self._con is None:
            # Autocommit: loading opens its own transaction; queries need none.
            self._con = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            self._loaded = {}
            if self._guard is not None:
                self._con.set_authorizer(self._guard)
                self._con.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        return self._con

    def deny_file_access(self) -> None:
        self.close()
        self._guard = _FileGuard()

    def run(self, tables: Mapping[str, pa.Table], sql: str) -> pa.Table:
        check_representable(tables)
        con = self._connection()
        deadline = time.monotonic() + QUERY_SECONDS
        # SQLite runs in this process: its own progress handler stops a query that
        # runs away (3.40 loops on `ROWS BETWEEN 1 FOLLOWING AND 9223372036854775807
        # FOLLOWING`), where the other engines' workers are killed from outside.
        con.set_progress_handler(lambda: time.monotonic() > deadline, PROGRESS_STEPS)
        if self._guard is not None:
            self._guard.denied = None
        try:
            self._load(con, tables)
            cursor = con.execute(sql)
            rows = cursor.fetchall()
        except (sqlite3.Error, sqlite3.Warning) as e:
            if isinstance(e, sqlite3.OperationalError) and time.monotonic() > deadline:
                raise EngineTimeout(self.name, f"did not answer within {QUERY_SECONDS:g} s; interrupted") from e
            if self._guard is not None and self._guard.denied:
                raise FileAccessDenied(self.name, f"{self._guard.denied}: {error_message(e)}") from e
            raise EngineError(self.name, error_message(e)) from e
        finally:
            con.set_progress_handler(None, PROGRESS_STEPS)
        names = [d[0] for d in cursor.description or ()]
        return to_arrow(names, rows)

    def _load(self, con: sqlite3.Connection, tables: Mapping[str, pa.Table]) -> None:
        reload_tables(self._loaded, tables,
                      lambda name: con.execute(f"DROP TABLE {self.dialect.quote(name)}"),
                      lambda name, table: self._create(con, name, table))

    def _create(self, con: sqlite3.Connection, name: str, table: pa.Table) -> None:
        q = self.dialect.quote
        columns = ", ".join(f"{q(f.name)} {self._declared_type(f)}" for f in table.schema)
        con.execute("BEGIN")
        try:
            con.execute(f"CREATE TABLE {q(name)} ({columns})")
            marks = ", ".join("?" for _ in table.schema)
            rows = zip(*(c.to_pylist() for c in table.columns), strict=True)
            con.executemany(f"INSERT INTO {q(name)} VALUES ({marks})", rows)
        except BaseException:  # whatever stopped the load: undo it, then let it propagate
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")

    def _declared_type(self, f: pa.Field) -> str:
        try:
            return self.dialect.type_name(from_arrow(f.type))
        except InvalidInput as e:
            raise Unsupported(OTHER_DATA, f"{f.type}: {e}") from None

    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None
            self._loaded = {}
