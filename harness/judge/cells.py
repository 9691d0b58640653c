"""Result cells: logical type classes, Python values and the rules that equate them.

The comparator (`harness.judge.compare`) judges whole answers; this module holds
the per-value rules it applies: NULL equals NULL, NaN equals NaN, -0.0
equals 0.0 (noted), exact numbers compare exactly whatever their width, and
floats compare within `float_tolerance`.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum

import pyarrow as pa

from reference_impl.float_error import FLOAT_ULPS

# Float results may differ from the correctly rounded answer by FLOAT_ULPS
# units of the magnitude's last place: the magnitude grows with the number of
# terms summed (`reference_impl.float_error`).


class TypeClass(Enum):
    EXACT = "exact numeric"
    FLOAT = "float"
    STRING = "string"
    BOOL = "boolean"
    DATE = "date"
    TIMESTAMP = "timestamp"
    # A day-time interval, whether the engine spells it as Arrow's duration
    # (DataFusion's Duration, Spark's DAY TO SECOND) or month_day_nano (DuckDB,
    # DataFusion's Interval): the values compare as durations (`_normalise_column`).
    INTERVAL = "interval"
    LIST = "list"
    NULL = "null"
    OTHER = "other"


def type_class(t: pa.DataType) -> TypeClass:
    """Engines spell one logical type many ways (int32, uint64, HUGEINT as decimal(38,0))."""
    if pa.types.is_integer(t) or pa.types.is_decimal(t):
        return TypeClass.EXACT
    if pa.types.is_floating(t):
        return TypeClass.FLOAT
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return TypeClass.STRING
    checks = [
        (pa.types.is_boolean, TypeClass.BOOL),
        (pa.types.is_date, TypeClass.DATE),
        (pa.types.is_timestamp, TypeClass.TIMESTAMP),
        (pa.types.is_duration, TypeClass.INTERVAL),
        (pa.types.is_interval, TypeClass.INTERVAL),
        (pa.types.is_list, TypeClass.LIST),
        (pa.types.is_large_list, TypeClass.LIST),
        (pa.types.is_null, TypeClass.NULL),
    ]
    return next((cls for check, cls in checks if check(t)), TypeClass.OTHER)


def float_tolerance(expected: float, magnitude: float | None, single: bool) -> float:
    """The one float rule: FLOAT_ULPS units in the last place of the magnitude."""
    eps = 2.0**-23 if single else 2.0**-52
    scale = max(abs(expected), magnitude or 0.0, 2.0**-1022)
    return FLOAT_ULPS * eps * scale


@dataclass
class Rows:
    """A result as Python rows, with what is needed to compare its cells."""

    rows: list[tuple]
    names: list[str]
    classes: list[TypeClass]
    single: list[bool]  # float32 columns
    magnitudes: list[list[float | None] | None]


def rows_of(table: pa.Table, magnitudes: dict[str, list] | None = None) -> Rows:
    columns = [_normalise_column(c) for c in table.columns]
    types = [f.type for f in table.schema]
    mags = [(magnitudes or {}).get(name) for name in table.column_names]
    return Rows(
        rows=list(zip(*columns, strict=True)) if columns else [() for _ in range(table.num_rows)],
        names=list(table.column_names),
        classes=[type_class(t) for t in types],
        single=[pa.types.is_float32(t) or pa.types.is_float16(t) for t in types],
        magnitudes=mags,
    )


def _normalise_column(column: pa.ChunkedArray) -> list:
    if _is_interval(column.type):
        return _intervals(column)
    if _is_list(column.type) and _is_interval(column.type.value_type):  # array_agg(iv)
        flat = pa.chunked_array([c.flatten() for c in column.chunks], column.type.value_type)
        elements = iter(_intervals(flat))
        return [None if v is None else [next(elements) for _ in v] for v in column.to_pylist()]
    values = column.to_pylist()
    if pa.types.is_timestamp(column.type) and column.type.tz is not None:
        return [v if v is None else v.astimezone(dt.UTC).replace(tzinfo=None) for v in values]
    return values


def _is_list(t: pa.DataType) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t)


def _is_interval(t: pa.DataType) -> bool:
    return pa.types.is_duration(t) or pa.types.is_interval(t)


@dataclass(frozen=True)
class CalendarInterval:
    """An engine's interval that is no day-time duration: it has a months part
    (a month has no fixed length), or a fraction of a microsecond. It equals no
    timedelta, so it never matches the reference's day-time value."""

    months: int
    days: int
    nanoseconds: int

    def __str__(self) -> str:
        return f"{self.months} months {self.days} days {self.nanoseconds} ns"


_NANOSECONDS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
_DAY_NS = 86_400 * 10**9


def _intervals(column: pa.ChunkedArray) -> list:
    """Interval cells as day-time durations (timedelta): DuckDB gives
    month_day_nano with the time in nanoseconds, DataFusion with days apart;
    both are the same duration. Compared whole, never field by field."""
    if pa.types.is_duration(column.type):
        scale = _NANOSECONDS[column.type.unit]
        triples = [None if v is None else (0, 0, v * scale) for v in column.cast(pa.int64()).to_pylist()]
    else:
        triples = [None if v is None else tuple(v) for v in column.to_pylist()]
    return [None if t is None else _day_time(*t) for t in triples]


def _day_time(months: int, days: int, nanoseconds: int) -> object:
    total = days * _DAY_NS + nanoseconds
    if months or total % 1000:
        return CalendarInterval(months, days, nanoseconds)
    try:
        return dt.timedelta(microseconds=total // 1000)
    except OverflowError:  # past timedelta's 999,999,999 days
        return CalendarInterval(months, days, nanoseconds)


def cells_equal(a: object, b: object, tol: float) -> bool:
    """`a` from the engine, `b` from the reference (its magnitude gave `tol`)."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list) or isinstance(b, list):
        # array_agg: element by element, each element by the same rules.
        both = isinstance(a, list) and isinstance(b, list) and len(a) == len(b)
        return both and all(cells_equal(x, y, element_tolerance(y)) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) or isinstance(b, float):
        if not isinstance(a, (int, float, Decimal)) or not isinstance(b, (int, float, Decimal)):
            return False
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return a == b
        return abs(a - b) <= tol
    return a == b


def element_tolerance(expected: object) -> float:
    """A list element was aggregated from one value: only rounding of that value."""
    if isinstance(expected, float) and math.isfinite(expected):
        return float_tolerance(expected, None, False)
    return 0.0


def cell_tolerance(expected: Rows, col: int, row: int, single: bool) -> float:
    value = expected.rows[row][col]
    if not isinstance(value, float) or not math.isfinite(value):
        return 0.0
    mags = expected.magnitudes[col]
    return float_tolerance(value, mags[row] if mags else None, single)


def zero_sign_note(a: object, b: object) -> str | None:
    both_zero = isinstance(a, float) and isinstance(b, float) and a == 0.0 == b
    if both_zero and math.copysign(1, a) != math.copysign(1, b):
        return f"engine {a!r} where the reference has {b!r} (equal values)"
    return None


def hashable(v: object) -> object:
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, list):
        return tuple(hashable(x) for x in v)
    if isinstance(v, (int, float, Decimal)) and not isinstance(v, bool):
        return Decimal(v) if not isinstance(v, float) else v + 0.0  # -0.0 and 0.0 hash alike
    return v
