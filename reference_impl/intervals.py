"""Datetime arithmetic with interval constants (DATE/TIMESTAMP +- INTERVAL),
and arithmetic on interval constants themselves (INTERVAL '1' DAY * 2).

Day-time units add a fixed duration; YEAR and MONTH move along the calendar
and clamp the day to the end of the target month (2024-01-31 + 1 MONTH is
2024-02-29), as PostgreSQL, DuckDB and Spark do.
"""

from __future__ import annotations

import calendar
import datetime as dt
from collections.abc import Callable

from harness.core import types as T
from harness.core.errors import EvaluationError, ReferenceGap
from harness.core.model import BinaryOperator, Interval, IntervalUnit
from harness.core.types import SqlType

_DAY_TIME = {
    IntervalUnit.DAY: "days",
    IntervalUnit.HOUR: "hours",
    IntervalUnit.MINUTE: "minutes",
    IntervalUnit.SECOND: "seconds",
}


def add_interval(value: dt.date, interval: Interval, sign: int) -> dt.date:
    """`value + sign * interval`. Raises OverflowError outside years 1..9999."""
    count = sign * interval.count
    if interval.unit is IntervalUnit.YEAR:
        return _add_months(value, 12 * count)
    if interval.unit is IntervalUnit.MONTH:
        return _add_months(value, count)
    delta = dt.timedelta(**{_DAY_TIME[interval.unit]: count})
    if not isinstance(value, dt.datetime) and interval.unit is not IntervalUnit.DAY:
        # DATE + a sub-day interval is a TIMESTAMP (the date at midnight, moved).
        value = dt.datetime.combine(value, dt.time())
    return value + delta


def _add_months(value: dt.date, months: int) -> dt.date:
    total = value.year * 12 + (value.month - 1) + months
    year, month = divmod(total, 12)
    if not dt.MINYEAR <= year <= dt.MAXYEAR:
        raise OverflowError(f"year {year} is out of range")
    day = min(value.day, calendar.monthrange(year, month + 1)[1])
    return value.replace(year=year, month=month + 1, day=day)


def day_time(value: object) -> object:
    """An interval value as a day-time duration (a timedelta): a column's value
    is one already, a constant of days, hours, minutes or seconds becomes one;
    a constant of years or months has no fixed length (ReferenceGap)."""
    if not isinstance(value, Interval):
        return value
    if value.unit not in _DAY_TIME:
        raise ReferenceGap(f"a year-month interval value ({value.count} {value.unit.value})")
    try:
        return dt.timedelta(**{_DAY_TIME[value.unit]: value.count})
    except OverflowError:
        raise ReferenceGap(f"an interval past {dt.timedelta.max.days} days") from None


def interval_result_type(value_type: SqlType, interval: Interval) -> SqlType:
    """The declared type of DATE/TIMESTAMP +- interval."""
    if value_type == T.DATE and interval.unit in (
        IntervalUnit.DAY,
        IntervalUnit.MONTH,
        IntervalUnit.YEAR,
    ):
        return T.DATE
    return T.TIMESTAMP


# Interval constants kept exact: units of one scale (months, or seconds)
# combine in the finer unit; months and days never mix (a month has no fixed
# number of days).
_MONTHS = {IntervalUnit.YEAR: 12, IntervalUnit.MONTH: 1}
_SECONDS = {IntervalUnit.DAY: 86400, IntervalUnit.HOUR: 3600, IntervalUnit.MINUTE: 60,
            IntervalUnit.SECOND: 1}


def scale_interval(interval: Interval | dt.timedelta, factor: int) -> Interval | dt.timedelta:
    if isinstance(interval, dt.timedelta):  # a column's value
        return _checked(lambda: interval * factor)
    return Interval(interval.count * factor, interval.unit)


def _checked(compute: Callable[[], dt.timedelta]) -> dt.timedelta:
    try:
        return compute()
    except OverflowError:
        raise ReferenceGap(f"an interval past {dt.timedelta.max.days} days") from None


def _in_unit(interval: Interval, unit: IntervalUnit) -> Interval:
    scale = _MONTHS if unit in _MONTHS else _SECONDS
    if interval.unit not in scale:
        raise ReferenceGap("an interval of months combined with one of days or seconds")
    return Interval(interval.count * scale[interval.unit] // scale[unit], unit)


def _finer(a: IntervalUnit, b: IntervalUnit) -> IntervalUnit:
    order = list(IntervalUnit)  # YEAR ... SECOND, coarse to fine
    return a if order.index(a) > order.index(b) else b


def _sum(a: Interval, b: Interval, sign: int) -> Interval | dt.timedelta:
    if isinstance(a, dt.timedelta) or isinstance(b, dt.timedelta):  # a column's value: a duration
        x, y = day_time(a), day_time(b)
        return _checked(lambda: x + sign * y)  # type: ignore[operator]
    unit = _finer(a.unit, b.unit)
    x, y = _in_unit(a, unit), _in_unit(b, unit)
    return Interval(x.count + sign * y.count, unit)


def _times(a: object, b: object) -> Interval:
    interval, n = (a, b) if isinstance(a, Interval) else (b, a)
    if isinstance(n, bool) or not isinstance(n, int):
        raise ReferenceGap(f"an interval times a non-integer {n!r} (fractions of a unit)")
    return scale_interval(interval, n)  # type: ignore[arg-type]


def _divided(a: Interval | dt.timedelta, n: object) -> Interval | dt.timedelta:
    if isinstance(n, bool) or not isinstance(n, int):
        raise ReferenceGap(f"an interval divided by a non-integer {n!r}")
    if n == 0:
        raise EvaluationError("division by zero")
    if isinstance(a, dt.timedelta):
        if a % dt.timedelta(microseconds=abs(n)):
            raise ReferenceGap("an interval divided into fractions of a microsecond")
        return a // n
    if a.count % n:
        raise ReferenceGap("an interval divided into fractions of its unit")
    return Interval(a.count // n, a.unit)


def interval_operation(
    op: BinaryOperator, left: SqlType | None, right: SqlType | None
) -> Callable[[object, object], Interval]:
    """How `left op right` combines two non-NULL values, one of them an interval."""
    both = left == T.INTERVAL and right == T.INTERVAL
    if both and op in (BinaryOperator.ADD, BinaryOperator.SUB):
        sign = 1 if op is BinaryOperator.ADD else -1
        return lambda a, b: _sum(a, b, sign)  # type: ignore[arg-type]
    if not both and op is BinaryOperator.MUL:
        return _times
    if left == T.INTERVAL and op is BinaryOperator.DIV and not both:
        return _divided  # type: ignore[return-value]
    raise EvaluationError(f"operator {op.value} does not apply to {left} and {right}")
