"""Logical SQL types of the harness and their Arrow counterparts.

The model, the case files and the reference speak these types; each dialect
spells them in its own way (see `harness/engines/*/dialect.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

import pyarrow as pa

from harness.core.errors import InvalidInput


class TypeKind(Enum):
    BOOL = "bool"
    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    # A 128-bit integer (DuckDB's HUGEINT): what sum(integer) returns under a
    # profile that widens instead of overflowing. Arrow has no int128, so it
    # travels as decimal128(38, 0) and holds |x| < 10^38.
    INT128 = "int128"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    DECIMAL = "decimal"
    STRING = "string"
    DATE = "date"
    TIMESTAMP = "timestamp"
    INTERVAL = "interval"
    LIST = "list"  # array_agg's result: a list of `element`


# The widest DECIMAL every engine holds (and Arrow's decimal128).
MAX_DECIMAL_PRECISION = 38
# HUGEINT travels as decimal128(38, 0): |x| < 10^38, narrower than 128 bits.
MAX_HUGEINT = 10**MAX_DECIMAL_PRECISION - 1

INTEGER_KINDS = (TypeKind.INT8, TypeKind.INT16, TypeKind.INT32, TypeKind.INT64, TypeKind.INT128)
FLOAT_KINDS = (TypeKind.FLOAT32, TypeKind.FLOAT64)


@dataclass(frozen=True)
class SqlType:
    kind: TypeKind
    precision: int | None = None  # DECIMAL only
    scale: int | None = None  # DECIMAL only
    element: SqlType | None = None  # LIST only

    def __post_init__(self) -> None:
        if (self.element is not None) != (self.kind is TypeKind.LIST):
            raise InvalidInput("a LIST type needs an element type, and only a LIST has one")
        if self.kind is TypeKind.DECIMAL:
            if self.precision is None or self.scale is None:
                raise InvalidInput("DECIMAL needs a precision and a scale")
            if not (1 <= self.precision <= MAX_DECIMAL_PRECISION and 0 <= self.scale <= self.precision):
                raise InvalidInput(f"invalid DECIMAL({self.precision},{self.scale})")
        elif self.precision is not None or self.scale is not None:
            raise InvalidInput(f"{self.kind.value} takes no precision or scale")

    @property
    def is_integer(self) -> bool:
        return self.kind in INTEGER_KINDS

    @property
    def is_float(self) -> bool:
        return self.kind in FLOAT_KINDS

    @property
    def is_numeric(self) -> bool:
        return self.is_integer or self.is_float or self.kind is TypeKind.DECIMAL

    def __str__(self) -> str:
        return canonical_type_name(self)


BOOL = SqlType(TypeKind.BOOL)
INT8 = SqlType(TypeKind.INT8)
INT16 = SqlType(TypeKind.INT16)
INT32 = SqlType(TypeKind.INT32)
INT64 = SqlType(TypeKind.INT64)
INT128 = SqlType(TypeKind.INT128)
FLOAT32 = SqlType(TypeKind.FLOAT32)
FLOAT64 = SqlType(TypeKind.FLOAT64)
STRING = SqlType(TypeKind.STRING)
DATE = SqlType(TypeKind.DATE)
TIMESTAMP = SqlType(TypeKind.TIMESTAMP)
INTERVAL = SqlType(TypeKind.INTERVAL)


def decimal(precision: int, scale: int) -> SqlType:
    return SqlType(TypeKind.DECIMAL, precision, scale)


def list_of(element: SqlType) -> SqlType:
    return SqlType(TypeKind.LIST, element=element)


# Canonical spelling (PostgreSQL's, plus TINYINT which PostgreSQL lacks).
_CANONICAL_NAMES = {
    TypeKind.BOOL: "BOOLEAN",
    TypeKind.INT8: "TINYINT",
    TypeKind.INT16: "SMALLINT",
    TypeKind.INT32: "INTEGER",
    TypeKind.INT64: "BIGINT",
    TypeKind.INT128: "HUGEINT",
    TypeKind.FLOAT32: "REAL",
    TypeKind.FLOAT64: "DOUBLE PRECISION",
    TypeKind.STRING: "VARCHAR",
    TypeKind.DATE: "DATE",
    TypeKind.TIMESTAMP: "TIMESTAMP",
    TypeKind.INTERVAL: "INTERVAL",
}

# Names accepted when reading a type (case files, CAST in canonical SQL).
# PostgreSQL's and DuckDB's byte-sized names (int2, int4, int8, float4, float8)
# count bytes, as the SQL that users and engines' suites write means them; the
# bit-sized ones (int16, int32, int64, float32, float64) count bits.
_ALIASES = {
    "boolean": BOOL, "bool": BOOL,
    "tinyint": INT8, "int1": INT8,
    "smallint": INT16, "int2": INT16, "int16": INT16,
    "integer": INT32, "int": INT32, "int4": INT32, "int32": INT32,
    "bigint": INT64, "int8": INT64, "int64": INT64,
    "hugeint": INT128, "int128": INT128,
    "real": FLOAT32, "float4": FLOAT32, "float32": FLOAT32,
    "double precision": FLOAT64, "double": FLOAT64, "float8": FLOAT64, "float64": FLOAT64,
    "varchar": STRING, "text": STRING, "string": STRING,
    "date": DATE,
    "timestamp": TIMESTAMP,
    "interval": INTERVAL,
}


# Names engines read differently: no one meaning to keep.
_AMBIGUOUS = {"float": "REAL in DuckDB and Spark, DOUBLE PRECISION in PostgreSQL"}


def canonical_type_name(t: SqlType) -> str:
    if t.kind is TypeKind.DECIMAL:
        return f"DECIMAL({t.precision},{t.scale})"
    if t.kind is TypeKind.LIST:
        return f"{canonical_type_name(t.element)}[]"
    return _CANONICAL_NAMES[t.kind]


# Leading zeros allowed; more digits than that is no precision any engine has.
_DECIMAL = re.compile(r"(?:decimal|numeric) ?\( ?0*([0-9]{1,4}) ?, ?0*([0-9]{1,4}) ?\)")


def parse_type_name(text: str, where: str | None = None) -> SqlType:
    """Read a type name such as 'bigint', 'DOUBLE PRECISION' or 'decimal(10,2)'."""
    name = " ".join(text.strip().lower().split())
    if name.startswith(("decimal", "numeric")):
        parts = _DECIMAL.fullmatch(name)
        if parts is None:
            raise InvalidInput(f"DECIMAL needs (precision, scale), got {text!r}", where)
        precision, scale = int(parts[1]), int(parts[2])
        if not (1 <= precision <= MAX_DECIMAL_PRECISION and scale <= precision):
            raise InvalidInput(f"{text!r}: DECIMAL's precision is 1 to {MAX_DECIMAL_PRECISION} (the "
                               "engines' most) and its scale 0 to the precision", where)
        return decimal(precision, scale)
    if name in _AMBIGUOUS:
        raise InvalidInput(f"type {text!r} means {_AMBIGUOUS[name]}: write the one meant", where)
    if name not in _ALIASES:
        known = ", ".join(sorted({canonical_type_name(t).lower() for t in _ALIASES.values()}))
        raise InvalidInput(f"unknown type {text!r} (known: {known}, decimal(p,s))", where)
    return _ALIASES[name]


_TO_ARROW = {
    TypeKind.BOOL: pa.bool_(),
    TypeKind.INT8: pa.int8(),
    TypeKind.INT16: pa.int16(),
    TypeKind.INT32: pa.int32(),
    TypeKind.INT64: pa.int64(),
    TypeKind.INT128: pa.decimal128(38, 0),
    TypeKind.FLOAT32: pa.float32(),
    TypeKind.FLOAT64: pa.float64(),
    TypeKind.STRING: pa.string(),
    TypeKind.DATE: pa.date32(),
    # Timestamps are naive (no time zone) everywhere; engines run in UTC.
    TypeKind.TIMESTAMP: pa.timestamp("us"),
    # A day-time interval (`harness.core.day_time`): a duration in microseconds,
    # which DuckDB loads as INTERVAL, Spark as INTERVAL DAY TO SECOND, DataFusion
    # as Duration and PostgreSQL (through Python timedeltas) as interval; Spark
    # cannot load Arrow's month_day_nano at all (measured, DuckDB 2.0, Spark 4.3).
    TypeKind.INTERVAL: pa.duration("us"),
}


def to_arrow(t: SqlType) -> pa.DataType:
    if t.kind is TypeKind.DECIMAL:
        return pa.decimal128(t.precision, t.scale)
    if t.kind is TypeKind.LIST:
        return pa.list_(to_arrow(t.element))
    return _TO_ARROW[t.kind]


def from_arrow(t: pa.DataType) -> SqlType:
    """The logical type of an Arrow type; wider engine types map to the nearest one."""
    if pa.types.is_decimal(t):
        return decimal(min(t.precision, 38), t.scale)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return list_of(from_arrow(t.value_type))
    if pa.types.is_timestamp(t):
        return TIMESTAMP
    if pa.types.is_date(t):
        return DATE
    if pa.types.is_duration(t) or pa.types.is_interval(t):
        return INTERVAL  # an engine's answer: month_day_nano (DuckDB, DataFusion) or a duration
    if pa.types.is_large_string(t) or pa.types.is_string(t) or pa.types.is_string_view(t):
        return STRING
    for kind, arrow_type in _TO_ARROW.items():
        if t == arrow_type:
            return SqlType(kind)
    if pa.types.is_unsigned_integer(t):
        return INT64
    raise InvalidInput(f"no logical type for Arrow type {t}")
