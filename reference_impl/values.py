"""SQL value semantics on plain Python values.

A SQL value is represented as: None (NULL), bool, int, float, Decimal, str,
datetime.date, datetime.datetime. This module holds the rules every operator
shares: three-valued logic, comparison (with the harness's NaN and -0.0
rules), and the key under which values are "not distinct" for grouping,
partitioning and DISTINCT.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

from harness.errors import EvaluationError


def is_nan(value: object) -> bool:
    return isinstance(value, float) and math.isnan(value)


# ---------------------------------------------------------------------------
# Three-valued logic: the truth tables of the standard's <boolean value
# expression>, where NULL is "unknown".


def and3(a: bool | None, b: bool | None) -> bool | None:
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def or3(a: bool | None, b: bool | None) -> bool | None:
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


def not3(a: bool | None) -> bool | None:
    return None if a is None else not a


# ---------------------------------------------------------------------------
# Comparison


def category(value: object) -> str:
    """The comparison family of a non-NULL value: values compare only within one."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float, Decimal)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dt.date):  # datetime.datetime is a date too
        return "datetime"
    return type(value).__name__


def _comparable(a: object, b: object) -> tuple[object, object]:
    if category(a) != category(b):
        raise EvaluationError(f"cannot compare {a!r} with {b!r}")
    # A DATE compares with a TIMESTAMP as midnight of that day (the standard
    # casts the date to the timestamp type before comparing).
    if isinstance(a, dt.datetime) != isinstance(b, dt.datetime):
        a, b = _as_timestamp(a), _as_timestamp(b)
    return a, b


def _as_timestamp(value: object) -> object:
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return dt.datetime.combine(value, dt.time())
    return value


def compare(a: object, b: object) -> int:
    """-1, 0 or 1: the order of two non-NULL values.

    NaN equals NaN and sorts above every other number, +inf included (the
    rule of PostgreSQL, Spark and DuckDB); -0.0 equals 0.0 (IEEE equality).
    Python compares int, float and Decimal exactly with each other.
    """
    a, b = _comparable(a, b)
    a_nan, b_nan = is_nan(a), is_nan(b)
    if a_nan or b_nan:
        return int(a_nan) - int(b_nan)
    if a < b:  # type: ignore[operator]
        return -1
    if a > b:  # type: ignore[operator]
        return 1
    return 0


def equal3(a: object, b: object) -> bool | None:
    """`a = b` under three-valued logic."""
    if a is None or b is None:
        return None
    return compare(a, b) == 0


class _NanKey:
    """The grouping key of every NaN: NaN is not distinct from NaN."""

    def __repr__(self) -> str:
        return "NaN"


_NAN_KEY = _NanKey()


def group_key(value: object) -> object:
    """A hashable key equal for values that are "not distinct" from each other.

    Used for GROUP BY, PARTITION BY, DISTINCT and aggregate DISTINCT: NULL is
    not distinct from NULL, NaN from NaN, -0.0 from 0.0.
    """
    if is_nan(value):
        return _NAN_KEY
    if isinstance(value, float) and value == 0.0:
        return 0.0
    if isinstance(value, list):  # an array (array_agg): compared element by element
        return tuple(group_key(v) for v in value)
    return value


def row_key(values: tuple[object, ...]) -> tuple[object, ...]:
    return tuple(group_key(v) for v in values)
