"""Day-time interval values: Python `datetime.timedelta`, written as ISO-8601 durations.

A table's INTERVAL column holds day-time intervals only (days, hours,
minutes, seconds to the microsecond): the standard compares them as
durations, so INTERVAL '1' DAY equals INTERVAL '24' HOUR. A case file writes
one as an ISO-8601 duration with an optional leading minus sign that negates
the whole value: `P1DT2H3M4.5S`, `PT30M`, `-PT22H`, `P0D`. Year-month
intervals (`P1M`, `P1Y`) have no fixed length and are refused.
"""

from __future__ import annotations

import datetime as dt
import re

from harness.core.errors import InvalidInput

_DURATION = re.compile(
    r"(?P<sign>-)?P(?:(?P<days>\d+)D)?"
    r"(?:T(?=\d)(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?(?:(?P<seconds>\d+)(?:\.(?P<fraction>\d{1,6}))?S)?)?"
)
_YEAR_MONTH = re.compile(r"-?P(?:\d+[YM])")


def parse_day_time(text: str, where: str | None = None) -> dt.timedelta:
    """An ISO-8601 day-time duration (`P1DT2H`, `-PT30M`) as a timedelta."""
    match = _DURATION.fullmatch(text.strip())
    if match is None or not any(match.group(g) for g in ("days", "hours", "minutes", "seconds")):
        if _YEAR_MONTH.match(text.strip()):
            raise InvalidInput(f"{text!r} has years or months: only day-time intervals "
                               "(days, hours, minutes, seconds) are column values", where)
        raise InvalidInput(f"{text!r} is not a day-time interval; write an ISO-8601 duration "
                           "such as 'P1DT2H3M4.5S', 'PT30M' or '-PT22H'", where)
    fraction = (match["fraction"] or "").ljust(6, "0")
    try:
        value = dt.timedelta(days=int(match["days"] or 0), hours=int(match["hours"] or 0),
                             minutes=int(match["minutes"] or 0), seconds=int(match["seconds"] or 0),
                             microseconds=int(fraction))
    except OverflowError:
        raise InvalidInput(f"{text!r} is out of the interval range "
                           f"(at most {dt.timedelta.max.days} days)", where) from None
    return -value if match["sign"] else value


def format_day_time(value: dt.timedelta) -> str:
    """The ISO-8601 duration `parse_day_time` reads back to `value`."""
    sign = "-" if value < dt.timedelta(0) else ""
    value = abs(value)
    hours, rest = divmod(value.seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    time = "".join(f"{n}{unit}" for n, unit in ((hours, "H"), (minutes, "M")) if n)
    if seconds or value.microseconds:
        fraction = f".{value.microseconds:06d}".rstrip("0") if value.microseconds else ""
        time += f"{seconds}{fraction}S"
    days = f"{value.days}D" if value.days or not time else ""
    return f"{sign}P{days}{'T' + time if time else ''}"
