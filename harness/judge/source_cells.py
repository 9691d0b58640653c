"""One printed value of a source's recorded answer beside the reference's value.

An engine's test suite records values as text (sqllogictest result lines,
psql's aligned output, Spark's golden files). Each printed value is read in
the type of the reference's column and compared under one rule per type:

- floats at the precision they were printed with: a value printed with k
  significant digits agrees when the reference's value rounds to it (either
  way at a tie), widened by the comparator's float tolerance
  (`harness.judge.cells.float_tolerance`); NaN and infinities by any of
  their spellings (nan, NaN, inf, Infinity, ...);
- exact numbers exactly (a printed "3.0" is 3), but under slt's R type,
  which prints a number rounded, by the float rule;
- booleans as true/false/t/f/1/0, any case;
- dates and timestamps as ISO values ('T' or ' ' between date and time);
- NULL as the format prints it (slt and Spark "NULL", psql an empty field);
  slt's "(empty)" is the empty string.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal, InvalidOperation

from harness.judge.cells import TypeClass, float_tolerance

# How each format prints NULL (a YAML null is NULL in every format).
NULL_SPELLINGS = {"slt": ("NULL",), "spark-golden": ("NULL",), "pg-regress": ("",)}
_NAN = {"nan", "-nan", "+nan"}
_INF = {"inf", "+inf", "infinity", "+infinity"}
_TRUE = {"true", "t", "1"}
_FALSE = {"false", "f", "0"}


def cell_agrees(printed: str | None, value: object, cls: TypeClass, fmt: str, rounded: bool = False) -> bool:
    """Whether the source's `printed` value is the reference's `value` of type class
    `cls`; `rounded`: the source printed the column as slt's R (a rounded number)."""
    if printed is None or value is None:
        return _null_agrees(printed, value, fmt)
    if fmt == "slt" and printed == "(empty)":
        printed = ""
    try:
        return _AGREES.get(cls, _text_agrees)(printed, value, rounded)
    except (ValueError, InvalidOperation, TypeError, OverflowError):
        return False


def _null_agrees(printed: str | None, value: object, fmt: str) -> bool:
    # psql prints NULL and '' alike: an empty field is either (a string's
    # empty field is read as the string where the reference has one).
    return value is None and (printed is None or printed in NULL_SPELLINGS.get(fmt, ()))


def _float_agrees(printed: str, value: object, rounded: bool = False) -> bool:
    ref = float(value)  # type: ignore[arg-type]
    word = printed.strip().lower()
    if math.isnan(ref) or word in _NAN:
        return math.isnan(ref) and word in _NAN
    if math.isinf(ref) or word.lstrip("-") in _INF or word.lstrip("+") in _INF:
        return math.isinf(ref) and word.lstrip("+-") in _INF and (ref < 0) == word.startswith("-")
    return within_printed(Decimal(word), Decimal(ref), float_tolerance(ref, None, False))


def within_printed(printed: Decimal, ref: Decimal, tolerance: float = 0.0) -> bool:
    """`ref` rounds to `printed` at the precision it was printed with (half its last
    digit's unit either way, plus `tolerance` for the reference's own float error)."""
    half = Decimal(1).scaleb(printed.as_tuple().exponent) / 2  # type: ignore[arg-type]
    return abs(ref - printed) <= half + Decimal(tolerance)


def _exact_agrees(printed: str, value: object, rounded: bool = False) -> bool:
    ref = Decimal(value) if not isinstance(value, Decimal) else value  # type: ignore[arg-type]
    shown = Decimal(printed.strip())
    return within_printed(shown, ref) if rounded else shown == ref


def _bool_agrees(printed: str, value: object, rounded: bool = False) -> bool:
    word = printed.strip().lower()
    return (word in _TRUE and value is True) or (word in _FALSE and value is False)


def _date_agrees(printed: str, value: object, rounded: bool = False) -> bool:
    return dt.date.fromisoformat(printed.strip()) == value


def _timestamp_agrees(printed: str, value: object, rounded: bool = False) -> bool:
    shown = dt.datetime.fromisoformat(printed.strip())
    if isinstance(value, dt.datetime) and value.tzinfo is not None and shown.tzinfo is None:
        value = value.replace(tzinfo=None)
    return shown == value


def _string_agrees(printed: str, value: object, rounded: bool = False) -> bool:
    return printed == value


def _text_agrees(printed: str, value: object, rounded: bool = False) -> bool:
    """Types without a rule of their own (lists, intervals): the printed text and
    the reference's value shown as the sources show it, spaces and case aside."""
    return _squeezed(printed) == _squeezed(shown(value))


def _squeezed(text: str) -> str:
    return "".join(text.split()).lower()


def shown(value: object) -> str:
    """A reference value as a source would print it: NULL, lists in brackets."""
    if value is None:
        return "NULL"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(shown(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    return str(value)


_AGREES = {
    TypeClass.FLOAT: _float_agrees,
    TypeClass.EXACT: _exact_agrees,
    TypeClass.BOOL: _bool_agrees,
    TypeClass.DATE: _date_agrees,
    TypeClass.TIMESTAMP: _timestamp_agrees,
    TypeClass.STRING: _string_agrees,
}


def sort_token(printed: str | None) -> tuple:
    """A key that puts a printed value near its reference twin (`value_token`):
    numbers by value, everything else by text; NULLs first."""
    if printed is None or printed in ("NULL", ""):
        return (0, 0.0, "")
    try:
        number = float(printed)
    except ValueError:
        return (2, 0.0, printed)
    return (1, -math.inf if math.isnan(number) else number, "")


def value_token(value: object) -> tuple:
    """`sort_token` of a reference value."""
    if value is None:
        return (0, 0.0, "")
    if isinstance(value, bool):
        return (2, 0.0, shown(value))
    if isinstance(value, (int, float, Decimal)):
        number = float(value)
        return (1, -math.inf if math.isnan(number) else number, "")
    return (2, 0.0, shown(value))
