"""PostgreSQL, through psycopg 3: one connection per adapter, tables in a private schema.

Where the server is, in this order: the `dsn` option (a libpq connection
string), a throwaway server of this adapter's own when `local` is set
(`harness.engines.postgres.local`; stopped by `close`), the environment
variable WINDOW_HARNESS_POSTGRES_DSN. Without any of them the engine is
unavailable. The command line (`--postgres-dsn`, `--postgres-local`) starts
one local server per command and hands its DSN to every adapter.

Each adapter works in a schema of its own (`wh_<pid>_<random>`, the only one
on its search_path, dropped at `close`), so adapters sharing a server never
see each other's tables. The session runs in UTC with ISO dates, every float
digit (extra_float_digits = 3) and standard-conforming strings.

Tables are loaded with CREATE UNLOGGED TABLE, in the dialect's type names,
and COPY, and reloaded only when the Arrow table object changes. Types map
one to one (int16 smallint, int32 integer, int64 bigint, float32 real,
float64 double precision, decimal(p,s) numeric(p,s), string text, bool
boolean, date, timestamp without time zone, duration interval). Strings get COLLATE "C", byte
order, as the reference sorts: the database's default collation may be
another on an external server (strings a query computes, e.g. a CAST to
VARCHAR, still sort by that default there; the local server's is C.UTF-8).
Data PostgreSQL cannot hold as it is makes the run Unsupported("data.<what>"):
TINYINT columns (no 1-byte integer, and nothing is silently widened),
lists, and strings holding NUL.

Results become Arrow by the column types the server declares (never by the
Python values): numeric(p,s) becomes decimal128(p, s), and a numeric without
precision (sum, avg, ...) decimal128(38, s), s the largest scale in the
column (decimal256(76, s) when 38 digits do not hold every value; beyond
76 digits, Unsupported("result.numeric-beyond-76-digits")), arrays
(array_agg) lists of their element type, intervals Arrow's month_day_nano
with PostgreSQL's own months, days and microseconds (psycopg's timedelta
would count a month as 30 days, and a months part must never pass for a
day-time value); any other type is an EngineError.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import secrets
import struct
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from harness.core.errors import (
    EngineCrash,
    EngineError,
    EngineTimeout,
    EngineUnavailable,
    FileAccessDenied,
    InvalidInput,
    Unsupported,
)
from harness.core.types import SqlType, TypeKind, from_arrow
from harness.engines.base import Engine, reload_tables, start_timeout
from harness.engines.postgres.dialect import (
    MONTH_DAY_NANO_DATA,
    NUL_DATA,
    OTHER_DATA,
    POSTGRES,
    UNREPRESENTABLE_DATA,
    WIDE_NUMERIC_RESULT,
)

if TYPE_CHECKING:
    import psycopg

    from harness.engines.postgres.local import LocalPostgres
    from harness.engines.postgres.untrusted import UntrustedRole

ENV_DSN = "WINDOW_HARNESS_POSTGRES_DSN"
NO_SERVER = ("no server: pass --postgres-dsn DSN, set WINDOW_HARNESS_POSTGRES_DSN, or "
             "--postgres-local to start a throwaway local server")
CONNECT_TIMEOUT = 10  # seconds

# Session settings: results in UTC, ISO dates, floats with every digit,
# backslashes in literals taken literally. client_connection_check_interval
# (PostgreSQL 14+) lets the server stop a query whose client was killed (a
# worker past its timeout) instead of running it to the end.
_SESSION = {
    "TimeZone": "UTC",
    "DateStyle": "ISO",
    "extra_float_digits": "3",
    "standard_conforming_strings": "on",
    "client_encoding": "UTF8",
}
_OPTIONAL_SESSION = {"client_connection_check_interval": "1000", "lc_messages": "C"}

# Result column types by type OID (pg_type), and their arrays' element types.
_SCALARS: dict[str, pa.DataType | None] = {
    "int2": pa.int16(), "int4": pa.int32(), "int8": pa.int64(),
    "float4": pa.float32(), "float8": pa.float64(),
    "numeric": None,  # sized to the column's values
    "text": pa.string(), "varchar": pa.string(), "bool": pa.bool_(),
    "date": pa.date32(), "timestamp": pa.timestamp("us"),
    "interval": pa.month_day_nano_interval(),  # loaded as its fields (`_interval_fields`)
}



def error_message(error: BaseException) -> str:
    """'[SQLSTATE] primary message', then the rest of the server's message as it
    sent it (the LINE context with its caret, DETAIL, HINT), blank lines dropped."""
    sqlstate = getattr(error, "sqlstate", None)
    diag = getattr(error, "diag", None)
    primary = getattr(diag, "message_primary", None) if diag is not None else None
    lines = [line.rstrip() for line in str(error).splitlines() if line.strip()]
    if primary and (not lines or lines[0].strip() != primary.strip()):
        lines.insert(0, primary)
    text = "\n".join(lines).strip() or type(error).__name__
    return f"[{sqlstate}] {text}" if sqlstate else text


def where(dsn: str) -> str:
    """host:port/dbname of a connection string, never its password."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:  # libpq cannot parse it
        return "the server the DSN names (which does not parse)"
    host = parts.get("host") or parts.get("hostaddr") or "the default socket"
    return f"{host}:{parts.get('port') or 5432}/{parts.get('dbname') or '(default database)'}"


class PostgresEngine(Engine):
    """See the module docstring; `dsn` and `local` say where the server is."""

    name = "postgres"
    product = "PostgreSQL"
    client = "psql"
    dialect = POSTGRES
    needs_server = True
    library = "psycopg"

    def __init__(self, dsn: str | None = None, local: bool = False) -> None:
        self._psycopg = self.import_library()
        # None: this adapter's own local server (`local`), started on first use.
        self._dsn = dsn or (None if local else os.environ.get(ENV_DSN)) or None
        if self._dsn is None and not local:
            raise EngineUnavailable(self.name, NO_SERVER)
        self._server: LocalPostgres | None = None
        self._con: psycopg.Connection | None = None
        self._connected = False  # once: a failed reconnection is then a crash
        self._schema = f"wh_{os.getpid()}_{secrets.token_hex(4)}"
        self._loaded: dict[str, pa.Table] = {}
        self._version: str | None = None
        self._untrusted: UntrustedRole | None = None  # set by deny_file_access
        self._admin: psycopg.Connection | None = None  # the DSN's user's, beside an untrusted role's

    @classmethod
    def started_with(cls, options: Mapping[str, object]) -> str:
        dsn = options.get("dsn") or (None if options.get("local") else os.environ.get(ENV_DSN))
        return f"on the server at {where(str(dsn))}" if dsn else "on a throwaway local server"

    # -- lifecycle ----------------------------------------------------------------

    def start(self) -> None:
        self._connection()

    def version(self) -> str:
        if self._version is None:
            text = self._connection().execute("SHOW server_version").fetchone()[0]
            self._version = str(text).split()[0]  # '15.18 (Debian 15.18-0+deb12u1)'
        return self._version

    def deny_file_access(self) -> None:
        from harness.engines.postgres.untrusted import UntrustedRole

        self.close()
        self._untrusted = UntrustedRole(f"{self._schema}_untrusted")

    def _connection(self) -> psycopg.Connection:
        if self._con is None or self._con.closed:
            dsn = self._dsn or self._start_server()
            try:
                self._con = self._connect(dsn) if self._untrusted is None else self._connect_untrusted(dsn)
            except EngineUnavailable as e:
                if self._connected:  # it answered before: the server went away
                    raise EngineCrash(self.name, e.reason) from e
                raise
            self._connected = True
            self._loaded = {}
        return self._con

    def _start_server(self) -> str:
        from harness.engines.postgres.local import LocalPostgres

        if self._server is None:
            self._server = LocalPostgres()
        self._server.start()
        return self._server.dsn

    def _connect(self, dsn: str, make_schema: bool = True, as_whom: str = "") -> psycopg.Connection:
        try:
            # A server that never answers is unavailable within the start timeout
            # (libpq waits at least 2 s).
            wait = max(2, math.ceil(min(CONNECT_TIMEOUT, start_timeout())))
            con = self._psycopg.connect(dsn, autocommit=True, connect_timeout=wait)
        except self._psycopg.Error as e:
            raise EngineUnavailable(self.name, f"cannot connect to {where(dsn)}{as_whom}: "
                                    f"{error_message(e)}") from None
        try:
            self._prepare_session(con, make_schema)
        except self._psycopg.Error as e:
            con.close()
            raise EngineUnavailable(self.name, f"cannot prepare a session on {where(dsn)}{as_whom} "
                                    f"(settings, schema {self._schema}): {error_message(e)}") from None
        return con

    def _connect_untrusted(self, dsn: str) -> psycopg.Connection:
        """A connection for untrusted SQL (`untrusted.py`): the DSN's own when its
        user touches no server file, else one as the adapter's untrusted role, in
        the schema the DSN's user made (that connection kept to drop both)."""
        assert self._untrusted is not None
        admin = self._connect(dsn)
        try:
            login = self._untrusted.login(admin, dsn, self.dialect.quote(self._schema))
        except self._psycopg.Error as e:
            admin.close()
            raise EngineUnavailable(self.name, f"cannot make a role without file access on {where(dsn)} "
                                    f"for untrusted SQL: {error_message(e)}") from None
        if login is None:
            return admin
        if self._admin is not None:
            self._admin.close()
        self._admin = admin  # kept first: `close` drops the role even if the login fails
        return self._connect(login, make_schema=False,
                             as_whom=f" as {self._untrusted.name}, the role made for untrusted SQL")

    def _prepare_session(self, con: psycopg.Connection, make_schema: bool = True) -> None:
        con.adapters.register_loader("interval", _interval_fields())
        for setting, value in _SESSION.items():
            con.execute(f"SELECT set_config('{setting}', %s, false)", (value,))
        for setting, value in _OPTIONAL_SESSION.items():
            # Unknown before PostgreSQL 14, or reserved to superusers: then not set.
            with contextlib.suppress(self._psycopg.Error):
                con.execute(f"SELECT set_config('{setting}', %s, false)", (value,))
        schema = self.dialect.quote(self._schema)
        if make_schema:
            con.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            con.execute(f"CREATE SCHEMA {schema}")
        con.execute(f"SET search_path TO {schema}")

    def close(self) -> None:
        con, self._con = self._con, None
        admin, self._admin = self._admin, None
        self._loaded = {}
        if admin is not None:
            if con is not None:
                con.close()  # the untrusted role's: the schema is the DSN's user's to drop
            con = admin
        if con is not None and not con.closed:
            with contextlib.suppress(self._psycopg.Error):
                con.execute(f"DROP SCHEMA IF EXISTS {self.dialect.quote(self._schema)} CASCADE")
            if self._untrusted is not None:
                self._untrusted.drop(con, self._psycopg.Error)
            con.close()
        if self._server is not None:
            self._server.stop()
            self._server = None

    # -- queries ----------------------------------------------------------------------

    def run(self, tables: Mapping[str, pa.Table], sql: str) -> pa.Table:
        con = self._connection()
        try:
            self._load(con, tables)
            cursor = con.cursor(binary=True)
            cursor.execute(sql)
            description = cursor.description or []
            rows = cursor.fetchall() if description else []
        except self._psycopg.Error as e:
            raise self._translate(e) from e
        return to_arrow([ResultColumn(d.name, d.type_code, d.precision, d.scale)
                         for d in description], rows)

    def _translate(self, error: Exception) -> EngineError:
        message = error_message(error)
        if self._con is None or self._con.broken or self._con.closed:
            self._con, self._loaded = None, {}  # the next query connects afresh
            return EngineCrash(self.name, f"lost the connection: {message}")
        if isinstance(error, self._psycopg.errors.QueryCanceled):  # the server's statement_timeout
            return EngineTimeout(self.name, message)
        if self._untrusted is not None and isinstance(error, self._psycopg.errors.InsufficientPrivilege):
            return FileAccessDenied(self.name, message)  # what the role without file access may not do
        return EngineError(self.name, message)

    # -- loading --------------------------------------------------------------------------

    def _load(self, con: psycopg.Connection, tables: Mapping[str, pa.Table]) -> None:
        reload_tables(self._loaded, tables,
                      lambda name: con.execute(f"DROP TABLE IF EXISTS {self.dialect.quote(name)}"),
                      lambda name, table: self._create(con, name, table))

    def _create(self, con: psycopg.Connection, name: str, table: pa.Table) -> None:
        check_representable(table)
        q = self.dialect.quote
        columns = ", ".join(f"{q(f.name)} {self._declared_type(f)}" for f in table.schema)
        rows = zip(*(c.to_pylist() for c in table.columns), strict=True)
        with con.transaction():  # a failed COPY leaves no half-loaded table behind
            con.execute(f"CREATE UNLOGGED TABLE {q(name)} ({columns})")
            with con.cursor().copy(f"COPY {q(name)} FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)

    def _declared_type(self, f: pa.Field) -> str:
        return self.dialect.declared_type(_logical(f))


def _logical(f: pa.Field) -> SqlType:
    try:
        return from_arrow(f.type)
    except InvalidInput as e:
        raise Unsupported(OTHER_DATA, f"column {f.name!r} is {f.type}: {e}") from None


def check_representable(table: pa.Table) -> None:
    """Raise Unsupported when a table holds what PostgreSQL would store differently."""
    for field, column in zip(table.schema, table.columns, strict=True):
        kind = _logical(field).kind
        if pa.types.is_interval(field.type):  # the harness's intervals are durations
            raise Unsupported(MONTH_DAY_NANO_DATA, f"column {field.name!r} is {field.type}")
        if kind in UNREPRESENTABLE_DATA:
            raise Unsupported(UNREPRESENTABLE_DATA[kind], f"column {field.name!r} is {field.type}")
        if kind is TypeKind.STRING and pc.any(pc.match_substring(column, "\x00")).as_py():
            raise Unsupported(NUL_DATA, f"column {field.name!r} holds a NUL character")


# -- results ------------------------------------------------------------------------------


class ResultColumn(NamedTuple):
    """A result column as the server declares it: name, type OID, and for a
    numeric(p,s) its precision and scale (None for an unconstrained numeric)."""

    name: str
    oid: int
    precision: int | None = None
    scale: int | None = None


def to_arrow(columns: Sequence[ResultColumn], rows: list[tuple]) -> pa.Table:
    """Rows of a result, typed by the types the server declared for its columns."""
    values = list(zip(*rows, strict=True)) if rows else [() for _ in columns]
    arrays = [_array(c, list(column)) for c, column in zip(columns, values, strict=True)]
    return pa.Table.from_arrays(arrays, names=[c.name for c in columns])


def _array(column: ResultColumn, values: list) -> pa.Array:
    scalars, arrays = _oid_maps()
    scalar = scalars.get(column.oid)
    if scalar is not None:
        return pa.array(values, type=_arrow_type(column, scalar, values))
    element = arrays.get(column.oid)
    if element is not None:
        elements = [x for v in values if v is not None for x in v]
        return pa.array(values, type=pa.list_(_arrow_type(column, element, elements)))
    raise EngineError("postgres", f"result column {column.name!r} has type "
                      f"{_type_name(column.oid)}, which the harness does not map to Arrow")


def _arrow_type(column: ResultColumn, pg_type: str, values: list) -> pa.DataType:
    arrow_type = _SCALARS[pg_type]
    if arrow_type is not None:
        return arrow_type
    if column.precision is not None and column.scale is not None and column.precision <= 38:
        return pa.decimal128(column.precision, column.scale)  # a numeric(p,s) column or CAST
    return decimal_type(column.name, values)


def decimal_type(name: str, values: list) -> pa.DataType:
    """decimal128(38, s), s the largest scale among `values`; decimal256(76, s)
    when 38 digits do not hold them all. NaN and infinities have no Arrow form."""
    whole, scale = 0, 0
    for value in values:
        if value is None:
            continue
        if not value.is_finite():
            raise EngineError("postgres", f"result column {name!r} holds the numeric {value}, "
                              "which an Arrow decimal cannot")
        _, digits, exponent = value.as_tuple()
        scale = max(scale, -exponent)
        if value != 0:  # 0 has a digit, but needs none before the point
            whole = max(whole, len(digits) + exponent)
    for arrow_type, precision in ((pa.decimal128, 38), (pa.decimal256, 76)):
        if whole + scale <= precision:
            return arrow_type(precision, scale)
    # PostgreSQL's numeric has no such limit (a variance of DECIMAL(38,38)
    # values can have 80 digits after the point): a limit of what can be
    # compared, not an error of the engine's.
    raise Unsupported(WIDE_NUMERIC_RESULT, f"result column {name!r} needs {whole + scale} digits")


@functools.cache
def _interval_fields() -> type:
    """A psycopg loader of binary intervals as (months, days, nanoseconds), the
    fields of Arrow's month_day_nano: PostgreSQL sends microseconds (int64),
    days (int32) and months (int32)."""
    from psycopg.adapt import Loader
    from psycopg.pq import Format

    class IntervalFields(Loader):
        format = Format.BINARY

        def load(self, data: bytes) -> tuple[int, int, int]:  # type: ignore[override]
            micros, days, months = struct.unpack("!qii", data)
            return months, days, micros * 1000

    return IntervalFields


def _type_name(oid: int) -> str:
    from psycopg.postgres import types

    info = types.get(oid)
    return info.name if info is not None else f"OID {oid}"


@functools.cache
def _oid_maps() -> tuple[dict[int, str], dict[int, str]]:
    """OID -> type name of _SCALARS, and array OID -> its element's type name
    (psycopg is imported only once an engine exists)."""
    from psycopg.postgres import types

    scalars, arrays = {}, {}
    for name in _SCALARS:
        info = types[name]
        scalars[info.oid] = name
        arrays[info.array_oid] = name
    return scalars, arrays
