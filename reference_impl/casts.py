"""CAST between numeric, string, boolean, date and timestamp types.

Where the standard leaves a conversion implementation-defined and the engines
disagree (float to integer rounding, float to text spelling), the reference
raises ReferenceGap rather than pick a side; exact conversions are computed
exactly.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from harness.core import types as T
from harness.core.errors import EvaluationError, ReferenceGap
from harness.core.semantics import DateFromString, InvalidString
from harness.core.types import SqlType, TypeKind
from reference_impl.numeric import check_integer, fit_decimal, to_float32
from reference_impl.profile import active_profile


def cast_value(value: object, target: SqlType) -> object:
    """`CAST(value AS target)`; NULL casts to NULL."""
    if value is None:
        return None
    if isinstance(value, str) and active_profile().invalid_string_cast is InvalidString.NULL:
        return _string_or_null(value, target)
    return _convert(value, target)


def _convert(value: object, target: SqlType) -> object:
    if target.is_integer:
        return _to_integer(value, target)
    return _CONVERTERS[target.kind](value, target)


def _string_or_null(text: str, target: SqlType) -> object:
    """A string cast that gives NULL where it cannot read the string (InvalidString.NULL)."""
    try:
        return _convert(text, target)
    except EvaluationError:
        if target.is_integer and _parses_as(text, Decimal):
            # Spark without ANSI mode reads '1.5' AS INTEGER as 1, and one past the
            # type's range wraps: not a NULL, and not computed here.
            raise ReferenceGap(f"CAST of {text!r} to {target} without ANSI mode") from None
        return None


def _parses_as(text: str, kind: Callable[[str], object]) -> bool:
    try:
        _parse_number(text, kind)
    except EvaluationError:
        return False
    return True


def _to_integer(value: object, t: SqlType) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        value = _parse_number(value, int)
    if isinstance(value, float) and not math.isfinite(value):
        raise EvaluationError(f"cannot cast {value} to {t}")
    if isinstance(value, (float, Decimal)):
        if value != int(value):
            # Rounding or truncation is implementation-defined (PostgreSQL
            # rounds, Spark truncates), so only exact conversions are defined here.
            raise ReferenceGap(f"CAST of the non-integral {value} to {t} rounds by engine choice")
        value = int(value)
    if not isinstance(value, int):
        raise EvaluationError(f"cannot cast {value!r} to {t}")
    return check_integer(value, t)


def _to_float(value: object, t: SqlType) -> float:
    if isinstance(value, str):
        value = _parse_number(value, float)
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        raise EvaluationError(f"cannot cast {value!r} to {t}")
    result = float(value)  # int and Decimal convert correctly rounded
    return to_float32(result) if t.kind is TypeKind.FLOAT32 else result


def _to_decimal(value: object, t: SqlType) -> Decimal:
    if isinstance(value, str):
        value = _parse_number(value, Decimal)
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        raise EvaluationError(f"cannot cast {value!r} to {t}")
    if isinstance(value, float):
        return _float_to_decimal(value, t)
    return fit_decimal(Fraction(value), t)


def _float_to_decimal(value: float, t: SqlType) -> Decimal:
    if not math.isfinite(value):
        raise EvaluationError(f"cannot cast {value} to {t}")
    exact = fit_decimal(Fraction(value), t)
    # Engines round either the exact binary value or its printed digits; they
    # agree unless the printed digits sit on a rounding tie (2.675 is stored
    # as 2.67499999...).
    if fit_decimal(Decimal(repr(value)), t) != exact:
        raise ReferenceGap(f"CAST({value!r} AS {t}) rounds differently by engine")
    return exact


def _parse_number(text: str, kind: Callable[[str], object]) -> object:
    # Python's parsers also read "1_000"; SQL does not.
    if "_" in text:
        raise EvaluationError(f"invalid number {text!r}")
    try:
        value = kind(text.strip())
    except (ValueError, InvalidOperation):
        raise EvaluationError(f"invalid number {text!r}") from None
    if isinstance(value, Decimal) and not value.is_finite():
        raise EvaluationError(f"invalid number {text!r}")
    return value


def _to_string(value: object, t: SqlType) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, dt.datetime):
        if value.microsecond:
            raise ReferenceGap("CAST of a timestamp with fractional seconds to text")
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    # Float spelling differs by engine (1e+20, 1.0E20, 100000000000000000000).
    raise ReferenceGap(f"CAST of {type(value).__name__} to text is spelled differently by engines")


def _to_bool(value: object, t: SqlType) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value != 0
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ReferenceGap(f"CAST of {value!r} to BOOLEAN")


def _to_date(value: object, t: SqlType) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        return _parse_date(value)
    raise EvaluationError(f"cannot cast {value!r} to DATE")


# The standard's <unquoted date string>: years-months-days, each an unsigned
# integer (so '2024-1-5' too), inside leading and trailing spaces.
_DATE_STRING = re.compile(r" *(\d{1,4})-(\d{1,2})-(\d{1,2}) *")
# Spark's prefix: a date string ended by a space or a T, whatever follows.
_DATE_PREFIX = re.compile(r" *(\d{1,4})-(\d{1,2})-(\d{1,2})[ T].*", re.DOTALL)


def _parse_date(text: str) -> dt.date:
    """A string cast to DATE: the standard reads only a date (a data exception
    otherwise); the profile may read a timestamp's date (`DateFromString`)."""
    match = _DATE_STRING.fullmatch(text)
    prefix = _DATE_PREFIX.fullmatch(text) if match is None else None
    lenient = active_profile().date_from_string
    if prefix is not None and lenient is DateFromString.TIMESTAMP_DATE:
        _check_timestamp(text)
    if prefix is not None and lenient is not DateFromString.STRICT:
        match = prefix
    try:
        if match is None:
            raise ValueError
        return dt.date(*map(int, match.groups()))
    except ValueError:
        raise EvaluationError(f"invalid date {text!r}") from None


def _check_timestamp(text: str) -> None:
    """Raise unless `text` is a timestamp the TIMESTAMP cast reads (without a zone)."""
    try:
        stamp = _to_timestamp(text, T.TIMESTAMP)
    except EvaluationError:
        raise EvaluationError(f"invalid date {text!r} (nor a timestamp)") from None
    if stamp.tzinfo is not None:  # engines drop or apply the offset as they like
        raise ReferenceGap(f"CAST of {text!r}, a timestamp with a time zone, to DATE")


def _to_timestamp(value: object, t: SqlType) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime.combine(value, dt.time())
    if isinstance(value, str):
        try:
            return dt.datetime.fromisoformat(value.strip())
        except ValueError:
            raise EvaluationError(f"invalid timestamp {value!r}") from None
    raise EvaluationError(f"cannot cast {value!r} to TIMESTAMP")


def _no_cast(value: object, t: SqlType) -> object:
    raise ReferenceGap(f"CAST to {t}")


_CONVERTERS: dict[TypeKind, Callable[[object, SqlType], object]] = {
    TypeKind.FLOAT32: _to_float,
    TypeKind.FLOAT64: _to_float,
    TypeKind.DECIMAL: _to_decimal,
    TypeKind.STRING: _to_string,
    TypeKind.BOOL: _to_bool,
    TypeKind.DATE: _to_date,
    TypeKind.TIMESTAMP: _to_timestamp,
    TypeKind.INTERVAL: _no_cast,
}
