"""Datetime arithmetic with interval constants (DATE/TIMESTAMP +- INTERVAL).

Day-time units add a fixed duration; YEAR and MONTH move along the calendar
and clamp the day to the end of the target month (2024-01-31 + 1 MONTH is
2024-02-29), as PostgreSQL, DuckDB and Spark do.
"""

from __future__ import annotations

import calendar
import datetime as dt

from harness import types as T
from harness.model import Interval, IntervalUnit
from harness.types import SqlType

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


def interval_result_type(value_type: SqlType, interval: Interval) -> SqlType:
    """The declared type of DATE/TIMESTAMP +- interval."""
    if value_type == T.DATE and interval.unit in (
        IntervalUnit.DAY,
        IntervalUnit.MONTH,
        IntervalUnit.YEAR,
    ):
        return T.DATE
    return T.TIMESTAMP
