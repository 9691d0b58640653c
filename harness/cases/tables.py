"""A case file's tables: their columns' types, and their rows as Arrow tables.

Each value of a row is checked against its column's type, and every error
names the file, the table, the row, the column. A large table's rows are taken
one at a time as the file is read (`rows_sink`), and turned into Arrow a chunk
at a time: the rows never all live as Python lists, so loading a case takes a
few times its data's size, not ten.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Context, Decimal, InvalidOperation, localcontext

import pyarrow as pa

from harness.core.day_time import parse_day_time
from harness.core.errors import InvalidCase, InvalidInput
from harness.core.model import ColumnDef, TableSchema
from harness.core.names import schema_problem
from harness.core.types import MAX_HUGEINT, SqlType, TypeKind, parse_type_name, to_arrow

# Rows turned into Arrow at a time: large enough that Arrow's per-call cost does
# not show, small enough that the rows' Python values take little memory.
CHUNK_ROWS = 65_536


def require(doc: dict, key: str, kind: type, where: str):
    if key not in doc:
        raise InvalidCase("missing", f"{where}: {key}")
    value = doc[key]
    if not isinstance(value, kind):
        raise InvalidCase(f"must be a {kind.__name__}", f"{where}: {key}")
    return value


def load_tables(raw: dict, where: str) -> tuple[tuple[TableSchema, ...], dict[str, pa.Table]]:
    """The `tables` field: each table's schema and rows (rows a `rows_sink` took are
    already a table)."""
    schemas, tables = [], {}
    for name, spec in raw.items():
        at = f"{where}: tables.{name}"
        if not isinstance(spec, dict):
            raise InvalidCase("must be a mapping with columns and rows", at)
        schema = load_schema(str(name), require(spec, "columns", dict, at), at)
        rows = spec.get("rows")
        if isinstance(rows, _TakenRows) and rows.schema == schema:
            table = rows.table
        else:
            sink = RowSink(schema, at)
            for row in require(spec, "rows", list, at):
                sink.add(row)
            table = sink.done().table
        schemas.append(schema)
        tables[schema.name] = table
    return tuple(schemas), tables


def load_schema(name: str, columns: dict, where: str) -> TableSchema:
    defs = []
    for col, type_text in columns.items():
        at = f"{where}.columns.{col}"
        if not isinstance(type_text, str):
            raise InvalidCase("a column's type must be a string", at)
        column_type = parse_type_name(type_text, at)
        defs.append(ColumnDef(str(col), column_type))
    if not defs:
        raise InvalidCase("a table needs at least one column", f"{where}.columns")
    schema = TableSchema(name, tuple(defs))
    if (problem := schema_problem(schema)) is not None:
        raise InvalidCase(problem, where)
    return schema


def rows_sink(where: str):
    """For `yamldoc.read_yaml`: a RowSink for `tables.NAME.rows` when the table's
    columns came before its rows and are valid; else None (the rows are a list,
    and `load_tables` says what is wrong)."""
    def sink(keys: tuple[object, ...], table: dict) -> RowSink | None:
        if len(keys) != 3 or keys[0] != "tables" or keys[2] != "rows":
            return None
        at = f"{where}: tables.{keys[1]}"
        try:
            return RowSink(load_schema(str(keys[1]), table["columns"], at), at)
        except (KeyError, TypeError, AttributeError, InvalidInput):
            return None
    return sink


class _TakenRows:
    """The rows of a table a RowSink took, as the document holds them."""

    def __init__(self, schema: TableSchema, table: pa.Table) -> None:
        self.schema, self.table = schema, table

    def __repr__(self) -> str:
        return f"<{self.table.num_rows} rows>"


class RowSink:
    """A table's rows, one at a time, into Arrow columns a chunk at a time."""

    def __init__(self, schema: TableSchema, where: str) -> None:
        self.schema, self.where = schema, where
        self.width = len(schema.columns)
        self.pending: list[list[object]] = [[] for _ in range(self.width)]
        self.chunks: list[list[pa.Array]] = [[] for _ in range(self.width)]
        self.taken = self.converted = 0

    def add(self, row: object) -> None:
        if type(row) is not list or len(row) != self.width:
            raise InvalidCase(f"must be a list of {self.width} values", f"{self.where}.rows[{self.taken}]")
        for values, value in zip(self.pending, row, strict=True):
            values.append(value)
        self.taken += 1
        if self.taken - self.converted >= CHUNK_ROWS:
            self._convert()

    def done(self) -> _TakenRows:
        if self.taken > self.converted or not self.chunks[0]:
            self._convert()
        arrays = [chunks[0] if len(chunks) == 1 else pa.concat_arrays(chunks) for chunks in self.chunks]
        self.chunks = []
        table = pa.Table.from_arrays(arrays, names=[c.name for c in self.schema.columns])
        return _TakenRows(self.schema, table)

    def _convert(self) -> None:
        for j, (values, column) in enumerate(zip(self.pending, self.schema.columns, strict=True)):
            self.chunks[j].append(self._array(j, values, column))
        self.pending = [[] for _ in range(self.width)]
        self.converted = self.taken

    def _array(self, j: int, values: list[object], column: ColumnDef) -> pa.Array:
        coerced = _unchanged(values, column.type)
        if coerced is None:
            first = self.converted
            coerced = [coerce_value(v, column.type, f"{self.where}.rows[{first + i}][{j}] ({column.name})")
                       for i, v in enumerate(values)]
        try:
            return pa.array(coerced, type=to_arrow(column.type))
        except (pa.ArrowException, OverflowError) as e:  # what coerce_value let through
            raise InvalidCase(f"a value does not fit {column.type}: {e}",
                              f"{self.where}.rows ({column.name})") from None


def _unchanged(values: list[object], t: SqlType) -> list[object] | None:
    """`values` as they are when every one is already its column's value (what
    `coerce_value` would give back unchanged); else None, to coerce each."""
    kinds = set(map(type, values))
    nulls = type(None) in kinds
    kinds.discard(type(None))
    if not kinds <= _AS_IS.get(t.kind, set()):
        return None
    if t.is_integer:
        low, high = _INT_RANGES[t.kind]
        present = [v for v in values if v is not None] if nulls else values
        if present and (min(present) < low or max(present) > high):
            return None
    if t.is_float and any(v != v for v in values):  # a NaN: coerce_value clears its sign
        return None
    return values


# The Python types a column's values already have when nothing is to change.
_AS_IS = {
    **{kind: {int} for kind in (TypeKind.INT8, TypeKind.INT16, TypeKind.INT32, TypeKind.INT64,
                                TypeKind.INT128)},
    TypeKind.FLOAT32: {float}, TypeKind.FLOAT64: {float},
    TypeKind.STRING: {str}, TypeKind.BOOL: {bool}, TypeKind.DATE: {dt.date},
    TypeKind.INTERVAL: {dt.timedelta},
}


def coerce_value(value: object, t: SqlType, where: str) -> object:
    """A YAML value as the Python value of SQL type `t` (None stays None)."""
    if value is None:
        return None
    if t.kind not in _COERCE:
        raise InvalidCase(f"no {t} value can be written in a case file", where)
    try:
        return _COERCE[t.kind](value, t)
    except OverflowError:
        raise InvalidCase(f"{value!r} is out of {t}'s range", where) from None
    except _Explained as e:
        raise InvalidCase(str(e), where) from None
    except (TypeError, ValueError, InvalidOperation):
        raise InvalidCase(f"{value!r} is not a valid {t}", where) from None


class _Explained(ValueError):
    """A bad value whose message says why (and what to write instead)."""


def _to_int(value: object, t: SqlType) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(value)
    low, high = _INT_RANGES[t.kind]
    if not low <= value <= high:
        raise OverflowError(value)
    return value


_INT_RANGES = {
    **{kind: (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) for kind, bits in (
        (TypeKind.INT8, 8), (TypeKind.INT16, 16), (TypeKind.INT32, 32), (TypeKind.INT64, 64))},
    TypeKind.INT128: (-MAX_HUGEINT, MAX_HUGEINT),  # held as decimal128(38, 0), not 128 bits
}


def _to_float(value: object, t: SqlType) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(value)
    # YAML's .nan has its sign bit set (PyYAML computes it as -inf/inf), and
    # some engines order NaNs by that bit. A case's `.nan` means plain NaN.
    return math.nan if math.isnan(value) else float(value)


def _to_decimal(value: object, t: SqlType) -> Decimal:
    if isinstance(value, bool) or isinstance(value, float) and not math.isfinite(value):
        raise TypeError(value)
    d = Decimal(str(value))
    quantum = Decimal(1).scaleb(-(t.scale or 0))
    # The default context keeps 28 digits; DECIMAL(38, s) needs 38 and more.
    with localcontext(Context(prec=80)):
        q = d.quantize(quantum)
    if d != q or len(q.as_tuple().digits) > t.precision:
        raise ValueError(value)
    return q


def _to_string(value: object, t: SqlType) -> str:
    if not isinstance(value, str):
        raise TypeError(value)
    return value


def _to_bool(value: object, t: SqlType) -> bool:
    if not isinstance(value, bool):
        raise TypeError(value)
    return value


def _to_date(value: object, t: SqlType) -> dt.date:
    if isinstance(value, dt.datetime):
        raise TypeError(value)
    if isinstance(value, dt.date):
        return value
    return dt.date.fromisoformat(str(value))


def _to_timestamp(value: object, t: SqlType) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None) if value.tzinfo is None else _naive_utc(value)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    return dt.datetime.fromisoformat(str(value))


def _naive_utc(value: dt.datetime) -> dt.datetime:
    return value.astimezone(dt.UTC).replace(tzinfo=None)


def _to_interval(value: object, t: SqlType) -> dt.timedelta:
    """A day-time interval, written as an ISO-8601 duration (`P1DT2H`, `-PT30M`)."""
    if isinstance(value, dt.timedelta):
        return value
    if not isinstance(value, str):
        raise TypeError(value)
    try:
        return parse_day_time(value)
    except InvalidInput as e:
        raise _Explained(str(e)) from None


def _to_list(value: object, t: SqlType) -> list:
    if not isinstance(value, list):
        raise TypeError(value)
    return [coerce_value(v, t.element, "list element") for v in value]


_COERCE = {
    TypeKind.LIST: _to_list,
    TypeKind.INT8: _to_int,
    TypeKind.INT16: _to_int,
    TypeKind.INT32: _to_int,
    TypeKind.INT64: _to_int,
    TypeKind.INT128: _to_int,
    TypeKind.FLOAT32: _to_float,
    TypeKind.FLOAT64: _to_float,
    TypeKind.DECIMAL: _to_decimal,
    TypeKind.STRING: _to_string,
    TypeKind.BOOL: _to_bool,
    TypeKind.DATE: _to_date,
    TypeKind.TIMESTAMP: _to_timestamp,
    TypeKind.INTERVAL: _to_interval,
}
