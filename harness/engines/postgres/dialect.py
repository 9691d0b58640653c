"""PostgreSQL's SQL (measured on PostgreSQL 15.18, Debian's build, through psycopg 3).

PostgreSQL reads canonical SQL almost entirely: GROUPS, every EXCLUDE (NO
OTHERS too), FILTER on window aggregates, NULLS FIRST/LAST, named windows and
windows refining them (`OVER (w ROWS ...)`, `OVER (w ORDER BY ...)`), FULL
JOIN, LIMIT/OFFSET (OFFSET alone too), RANGE with numeric offsets (integer,
float and numeric keys) and with INTERVAL offsets over dates and timestamps,
two offsets of different interval units in one frame, RANGE without ORDER BY,
a frame that starts after it ends (it is empty), NaN and infinite float
literals, and every canonical type name but TINYINT and HUGEINT. An explicit
frame, even with EXCLUDE, on rank/row_number/ntile/lag is accepted and
ignored, as the standard says. tests/test_postgres.py runs one query per entry.

Measured refusals that are not a missing feature but PostgreSQL's typing
(`not_implemented` below): RANGE offsets whose type has no in_range support
for the key ("RANGE with offset PRECEDING/FOLLOWING is not supported for
column type integer and offset type numeric", SQLSTATE 0A000), and the
functions that exist only for other argument types: min/max over BOOLEAN
(bool_and/bool_or are PostgreSQL's), ntile(bigint), and nth_value, lag and
lead with a BIGINT offset (only INTEGER ones exist), each "function ...
does not exist" (42883).

Literals: a number with a point or an exponent is NUMERIC in PostgreSQL, so
`1.5E0` is not a double, and `CAST(-0.0E0 AS DOUBLE PRECISION)` is 0 (numeric
has no negative zero): float literals are CASTs of strings, `CAST('-0.0' AS
DOUBLE PRECISION)`. A string
cannot hold the NUL character (text is NUL-terminated; "invalid byte sequence
for encoding UTF8: 0x00"), so neither a literal nor a loaded string may
(harness/engines/postgres/adapter.py). Identifiers longer than 63 bytes would be
truncated silently (NAMEDATALEN), so they are refused instead.

No word needs quoting beyond the shared KEYWORDS (which are PostgreSQL's
reserved words plus the window vocabulary): measured by using every word of
`pg_get_keywords()` and of the other dialects' EXTRA_KEYWORDS unquoted as a
table name, a column name, an alias (`AS w`), a CTE and subquery name, and
in PARTITION BY / ORDER BY, each query returning the column's value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness.core.dialect import NULLS_LARGEST, Dialect, Feature
from harness.core.errors import Unsupported
from harness.core.semantics import (
    AvgType,
    DateFromString,
    DatetimeVsString,
    Overflow,
    SemanticsProfile,
    VarianceType,
)
from harness.core.types import SqlType, TypeKind

UNSUPPORTED = frozenset({
    # `rank(ORDER BY x) OVER ()`: syntax error at or near "ORDER" (15).
    Feature.RANKING_ORDER_BY,
    # `7 // 2`: [42883] operator does not exist: integer // integer. div(7, 2)
    # truncates too, but is NUMERIC where DuckDB's // keeps the integer type.
    Feature.INT_DIV_OPERATOR,
    # `QUALIFY ...`, `GROUP BY ALL`, `ORDER BY ALL`: [42601] syntax errors.
    Feature.QUALIFY,
    Feature.GROUP_BY_ALL,
    Feature.ORDER_BY_ALL,
    # `lag(v) IGNORE NULLS OVER (...)` and `RESPECT NULLS`: syntax error at or
    # near "nulls" (PostgreSQL 15; IGNORE NULLS is not implemented up to 17).
    Feature.IGNORE_NULLS,
    # `nth_value(v, 2) FROM LAST OVER (...)`, and FROM FIRST: syntax errors.
    Feature.NTH_VALUE_FROM_LAST,
    # 0A000 "DISTINCT is not implemented for window functions".
    Feature.DISTINCT_WINDOW_AGGREGATE,
    # 0A000 "aggregate ORDER BY is not implemented for window functions". (It
    # works with GROUP BY, but the feature table has one flag for both.)
    Feature.ORDERED_AGGREGATE,
    # 42601 "subquery in FROM must have an alias" (and "VALUES in FROM must
    # have an alias"); PostgreSQL 16 lifts it, 15 is the engine measured.
    Feature.SUBQUERY_WITHOUT_ALIAS,
    # 42883 "function range(integer, integer) does not exist": PostgreSQL has
    # generate_series only.
    Feature.RANGE_TABLE_FUNCTION,
    # 0A000 "OVER is not supported for ordered-set aggregate percentile_cont"
    # (WITHIN GROUP with GROUP BY works).
    Feature.WITHIN_GROUP_WINDOW,
})

# Aggregates PostgreSQL 15 does not have: "function median(integer) does not
# exist" (likewise quantile_cont, quantile_disc, first, last, count_if;
# any_value arrived in 16). Its mode is the ordered-set `mode() WITHIN GROUP
# (ORDER BY v)` only: `mode(v)` is refused in the words NOT_IMPLEMENTED names.
MISSING_FUNCTIONS = frozenset({
    "median", "quantile_cont", "quantile_disc", "first", "last", "any_value", "count_if",
})

NOT_IMPLEMENTED = (
    r"^\[0A000\]",  # feature_not_supported, whatever the words
    r"^\[42883\] function (min|max)\(boolean\) does not exist",
    r"^\[42883\] function ntile\(bigint\) does not exist",
    r"WITHIN GROUP is required for ordered-set aggregate mode",  # mode(v): only mode() WITHIN GROUP
    r"^\[42883\] function (nth_value|lag|lead)\([^,]+, bigint(, [^)]+)?\) does not exist",
)

# Types PostgreSQL does not have: it has no 1-byte integer and no 128-bit one.
# A wider type would hold the values but overflow elsewhere, so nothing is
# silently widened.
UNREPRESENTABLE = {
    TypeKind.INT8: "type.tinyint",
    TypeKind.INT128: "type.hugeint",
}
NUL_LITERAL = "literal.nul-character"
LONG_IDENTIFIER = "identifier.longer-than-63-bytes"
MAX_IDENTIFIER_BYTES = 63  # NAMEDATALEN - 1

# Table columns the engine refuses to load (harness/engines/postgres/adapter.py).
UNREPRESENTABLE_DATA = {
    TypeKind.INT8: "data.tinyint",
    TypeKind.LIST: "data.list",
}
# Arrow's month_day_nano: its nanoseconds, and months beside days, are not
# PostgreSQL's interval (the harness's own INTERVAL columns are durations).
MONTH_DAY_NANO_DATA = "data.month-day-nano-interval"
NUL_DATA = "data.nul-character"
OTHER_DATA = "data.other-type"  # an Arrow type the harness has no SQL type for
# A numeric result no Arrow decimal holds (more than 76 digits at one scale).
WIDE_NUMERIC_RESULT = "result.numeric-beyond-76-digits"


@dataclass(frozen=True, eq=False)
class PostgresDialect(Dialect):
    def quote(self, name: str) -> str:
        if len(name.encode()) > MAX_IDENTIFIER_BYTES:
            raise Unsupported(LONG_IDENTIFIER, name[:20] + "...")
        return super().quote(name)

    def type_name(self, t: SqlType) -> str:
        if t.kind in UNREPRESENTABLE:
            raise Unsupported(UNREPRESENTABLE[t.kind])
        if t.kind is TypeKind.LIST:
            assert t.element is not None
            return self.type_name(t.element) + "[]"
        return super().type_name(t)

    def declared_type(self, t: SqlType) -> str:
        # Byte order, as the reference compares strings.
        text = self.type_name(t)
        return text + ' COLLATE "C"' if t.kind is TypeKind.STRING else text

    def string_literal(self, value: str) -> str:
        if "\x00" in value:
            raise Unsupported(NUL_LITERAL)
        return super().string_literal(value)

    def float_literal(self, value: float, t: SqlType) -> str:
        if not math.isfinite(value):
            return super().float_literal(value, t)
        # A bare 1.5E0 is NUMERIC here, and CAST(-0.0E0 AS DOUBLE PRECISION)
        # is 0 (numeric has no -0): a string goes to float8in/float4in as is.
        return f"CAST('{value!r}' AS {self.type_name(t)})"


POSTGRES = PostgresDialect(
    name="postgres",
    unsupported=UNSUPPORTED,
    not_implemented=NOT_IMPLEMENTED,
    missing_functions=MISSING_FUNCTIONS,
    semantics=SemanticsProfile(
        name="postgres",
        # NULL is the largest value: last for ASC, first for DESC.
        null_ordering=NULLS_LARGEST,
        # 7 / 2 = 3 on integers (the standard's). sum(smallint) and
        # sum(integer) are bigint, sum(bigint) is numeric: never an overflow;
        # nor past 38 digits for sum(numeric): numeric has no such limit.
        sum_overflow=Overflow.WIDEN,
        decimal_sum_overflow=Overflow.WIDEN,
        # avg over integers and over numerics is numeric, at numeric
        # division's scale: avg(1, 2, 2) = 1.6666666666666667, avg(-1, 1, 1)
        # = 0.33333333333333333333; var_samp/stddev_samp of (1, 2, 2) are
        # 0.33333333333333333333 and 0.57735026918962576451.
        avg_of_integers=AvgType.NUMERIC,
        avg_of_decimals=AvgType.NUMERIC,
        variance_of_exact=VarianceType.NUMERIC,
        # Lenient readings (measured on 15.18): nth_value(v, 0) and (v, -1)
        # are refused as the standard asks ([22016] argument of nth_value must
        # be greater than zero), and so is string_agg(i, ',') over a non-text
        # argument ([42883] function string_agg(integer, unknown) does not
        # exist; also for bigint, double precision, numeric, date, boolean,
        # timestamp). CAST('2024-01-02 10:30:00' AS DATE) (with a T, '.5'
        # seconds, or no seconds) is 2024-01-02, while '2024-01-02 25:99:00'
        # is [22008] out of range and '2024-01-02 junk' [22007] invalid input
        # syntax; an untyped literal compared with a date or timestamp is
        # read as one (d = '2024-01-02 10:30:00' is true for 2024-01-02;
        # 'not a date' is [22007]), but a varchar column is not ([42883]
        # operator does not exist: date = character varying).
        date_from_string=DateFromString.TIMESTAMP_DATE,
        datetime_vs_string=DatetimeVsString.LITERAL_CAST,
    ),
    unrepresentable=frozenset([*UNREPRESENTABLE.values(), NUL_LITERAL, LONG_IDENTIFIER,
                               *UNREPRESENTABLE_DATA.values(), NUL_DATA, MONTH_DAY_NANO_DATA, OTHER_DATA,
                               WIDE_NUMERIC_RESULT]),
)
