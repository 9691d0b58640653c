"""SQL value semantics on plain Python values.

A SQL value is represented as: None (NULL), bool, int, float, Decimal, str,
datetime.date, datetime.datetime, datetime.timedelta (a day-time interval:
compared as a duration, so 1 day equals 24 hours). This module holds the rules every operator
shares: three-valued logic, comparison (with the harness's NaN and -0.0
rules), and the key under which values are "not distinct" for grouping,
partitioning and DISTINCT.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from decimal import Decimal

from harness.core.errors import EvaluationError
from harness.core.model import Interval
from reference_impl.intervals import day_time


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


# The family of each usual type of value, by exact type: `category` looks
# these up before its isinstance checks (it is called for every comparison),
# and `order_keys` covers exactly these.
_FAMILIES: dict[type, str] = {
    bool: "boolean",
    int: "number",
    float: "number",
    Decimal: "number",
    str: "string",
    dt.date: "datetime",
    dt.datetime: "datetime",
    dt.timedelta: "interval",
}


def category(value: object) -> str:
    """The comparison family of a non-NULL value: values compare only within one."""
    family = _FAMILIES.get(type(value))
    if family is not None:
        return family
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
    if isinstance(a, Interval) or isinstance(b, Interval):  # a constant: as a duration
        a, b = day_time(a), day_time(b)
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
    kind = type(a)
    if kind is type(b) and (
        kind in _PLAINLY_ORDERED or (kind in _NUMBERS_BUT_NAN and a == a and b == b)
    ):
        return (a > b) - (a < b)  # what the definition concludes for these, sooner
    return compare_by_definition(a, b)


# Types whose values, two of the same type, compare as Python compares them
# (one family, no NaN, no DATE against TIMESTAMP); so do two floats or two
# decimals that are not NaN (x == x fails for NaN only).
_PLAINLY_ORDERED = frozenset({bool, int, str, dt.date, dt.timedelta})
_NUMBERS_BUT_NAN = frozenset({float, Decimal})


def plainly_ordered(values: list) -> bool:
    """Values of one type that Python orders as `compare` does (its fast path), so
    they sort natively: a median over each of 2,000 growing frames sorts 10^6 values."""
    kinds = {type(v) for v in values}
    if len(kinds) != 1:
        return not kinds
    (kind,) = kinds
    return kind in _PLAINLY_ORDERED or (kind in _NUMBERS_BUT_NAN and all(v == v for v in values))


def compare_by_definition(a: object, b: object) -> int:
    """`compare`, step by step."""
    a, b = _comparable(a, b)
    a_nan, b_nan = is_nan(a), is_nan(b)
    if a_nan or b_nan:
        return int(a_nan) - int(b_nan)
    if a < b:  # type: ignore[operator]
        return -1
    if a > b:  # type: ignore[operator]
        return 1
    return 0


# Fast path for sorting by `compare` (see ordering.py), which runs Python code
# for every pair of values. Most columns hold values of one family that
# Python already orders as `compare` does, so each value gets a key whose
# natural order (compared in C) is `compare`'s order. The tests check the
# keys against `compare` on random values (tests/test_reference_speed.py).


def order_keys(values: Sequence[object], null_key: tuple = (0,)) -> list[tuple] | None:
    """A key per value whose natural order and equality are those of
    `compare`, NULL keyed `null_key` (below every value unless told), or None
    when the non-NULL values are not all of one family `order_key` covers
    (then `compare` itself decides, raising where it raises)."""
    keys: list[tuple] = []
    family = None
    for value in values:
        if value is None:
            keys.append(null_key)
            continue
        this = _FAMILIES.get(type(value))
        key = order_key(value)
        if key is None or (family is not None and this != family):
            return None
        family = this
        keys.append(key)
    return keys


def order_key(value: object) -> tuple | None:
    """The key of one non-NULL value (see `order_keys`), or None for a value
    of a type it does not cover.

    (1, 1, 0) for NaN, above (1, 0, x) for any other number x; a DATE is
    midnight of its day, as `_comparable` makes it; -0.0 == 0.0 and exact
    comparison across int, float and Decimal are Python's own.
    """
    kind = type(value)
    if kind not in _FAMILIES:
        return None
    if kind is float and value != value:  # NaN
        return (1, 1, 0)
    if kind is dt.date:
        return (1, 0, _as_timestamp(value))
    if kind is dt.datetime and value.tzinfo is not None:  # type: ignore[attr-defined]
        return None  # aware and naive timestamps: left to `compare`
    if kind is Decimal and value.is_nan():  # type: ignore[attr-defined]
        return None  # a decimal NaN: left to `compare`
    return (1, 0, value)


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
    if type(value) in _OWN_GROUP_KEY:
        return value  # what the definition concludes for these types, sooner
    return group_key_by_definition(value)


# The types whose values are their own grouping key (no NaN, no -0.0, no array).
_OWN_GROUP_KEY = frozenset({type(None), bool, int, Decimal, str, dt.date, dt.datetime, dt.timedelta})


def group_key_by_definition(value: object) -> object:
    """`group_key`, step by step."""
    if is_nan(value):
        return _NAN_KEY
    if isinstance(value, float) and value == 0.0:
        return 0.0
    if isinstance(value, list):  # an array (array_agg): compared element by element
        return tuple(group_key(v) for v in value)
    return value


def row_key(values: tuple[object, ...]) -> tuple[object, ...]:
    return tuple(map(group_key, values))
