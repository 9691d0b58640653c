"""SQLite's SQL (measured on SQLite 3.40.1, through Python's sqlite3).

SQLite reads GROUPS, every EXCLUDE (NO OTHERS too), FILTER on window
aggregates, NULLS FIRST/LAST, named windows and windows refining them
(`OVER (w ROWS ...)`, `OVER (w ORDER BY ...)`), FULL JOIN, LIMIT n OFFSET m,
RANGE with a numeric offset (one ORDER BY key; the offset may be a REAL or a
CAST), and a frame that starts after it ends (it is empty). An explicit frame,
even with EXCLUDE, on rank/row_number/ntile/lag is accepted and ignored, as the
standard says. tests/test_sqlite.py runs one query per entry below.

Not expressible through the current hooks: OFFSET without LIMIT (SQLite's
grammar wants `LIMIT -1 OFFSET m`; the writer has no hook for it, see the
baseline), and a DECIMAL frame offset over a REAL key (the writer spells the
literal, which SQLite cannot, before asking `frame_offset_literal`).

SQLite has no DECIMAL, DATE, TIMESTAMP, INTERVAL or BOOLEAN type: a CAST to
one is a CAST to a type *affinity* (`CAST(1.50 AS DECIMAL(10,2))` is the REAL
1.5, `CAST('t' AS BOOLEAN)` is 0), so such casts and literals raise
Unsupported instead of being written with another meaning.

Identifiers are quoted with backticks, not double quotes: a double-quoted name
that resolves to no column is silently read as a *string literal* (SQLite's
"double-quoted string" misfeature: `SELECT "nosuch" FROM t` returns 'nosuch'),
while a backtick-quoted one is an error, as it should be.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from harness.core.dialect import NULLS_SMALLEST, Dialect, Feature
from harness.core.errors import Unsupported
from harness.core.names import CASE_ONLY_NAMES
from harness.core.semantics import SemanticsProfile, StringAggArgument
from harness.core.types import SqlType, TypeKind

UNSUPPORTED = frozenset({
    # `rank(ORDER BY x) OVER ()`: near "ORDER": syntax error (3.40).
    Feature.RANKING_ORDER_BY,
    Feature.INT_DIV_OPERATOR,  # `7 // 2`: near "/": syntax error (no DIV either)
    # `QUALIFY ...`: near "row_number": syntax error; `GROUP BY ALL`, `ORDER
    # BY ALL`: near "ALL": syntax error.
    Feature.QUALIFY,
    Feature.GROUP_BY_ALL,
    Feature.ORDER_BY_ALL,
    Feature.FRAME_OFFSET_INTERVAL_EXPRESSION,  # no intervals at all
    # `lag(v) IGNORE NULLS OVER (...)`, `RESPECT NULLS`, and DuckDB's inner
    # spelling: all `syntax error`.
    Feature.IGNORE_NULLS,
    Feature.NTH_VALUE_FROM_LAST,  # `nth_value(v, 2) FROM LAST OVER`: syntax error
    # "DISTINCT is not supported for window functions".
    Feature.DISTINCT_WINDOW_AGGREGATE,
    # `group_concat(s, ',' ORDER BY k)`: syntax error (added in SQLite 3.44).
    Feature.ORDERED_AGGREGATE,
    # No date or interval type: `INTERVAL '1' DAY` is a syntax error.
    Feature.RANGE_INTERVAL,
    Feature.RANGE_MIXED_INTERVAL_UNITS,  # no intervals at all
    Feature.INTERVAL_LITERAL,
    # NaN cannot be stored or written: `CAST('NaN' AS REAL)` is 0.0 and
    # 0.0/0.0 is NULL. (Infinities could be spelled 9e999, but the writer
    # gates every non-finite literal on this one feature.)
    Feature.NAN_LITERAL,
    # Python's sqlite3 (3.40.1) is built without the series extension:
    # `FROM generate_series(1, 5) AS g(x)` is `near "(": syntax error` and
    # `FROM generate_series(1, 5)` is "no such table: generate_series"; the
    # same for range.
    Feature.GENERATE_SERIES,
    Feature.RANGE_TABLE_FUNCTION,
    # `percentile_cont(0.5) WITHIN GROUP (ORDER BY v)`: near "(": syntax error.
    Feature.WITHIN_GROUP,
    Feature.WITHIN_GROUP_WINDOW,
    # Not a missing word but a query SQLite cannot finish: `ROWS BETWEEN 1
    # FOLLOWING AND 2147483647 FOLLOWING` (GROUPS too, and from 0 FOLLOWING) steps
    # through the end offset one row at a time, for each row (10^8 takes about a
    # second; 2^63 - 1 never ends). Declared so a campaign does not spend its
    # timeout on each such query; the standard's frame is the rows from n after
    # the current one to the partition's end (the reference and the other
    # engines answer at once). Found by issue 19's offset edges.
    Feature.FOLLOWING_FRAME_TO_HUGE_OFFSET,
})

# Aggregates SQLite 3.40 does not have: "no such function: stddev_samp", ...
MISSING_FUNCTIONS = frozenset({
    "stddev_samp", "stddev_pop", "var_samp", "var_pop", "bool_and", "bool_or",
    "array_agg",  # "no such function: array_agg" (3.40; no array type either)
    # Issue 16's aggregates, each "no such function: median" and so on
    # (percentile_cont/_disc need WITHIN GROUP, which is missing already).
    "median", "quantile_cont", "quantile_disc", "mode",
    "first", "last", "any_value", "covar_pop", "covar_samp", "corr", "regr_slope",
    "regr_intercept", "regr_count", "bit_and", "bit_or", "bit_xor", "count_if",
})

# string_agg arrived in 3.44; before it the same aggregate (NULLs skipped,
# NULL over no values, concatenated in frame order when used OVER a window)
# is group_concat(s, sep).
FUNCTION_NAMES = {"string_agg": "group_concat"}

# Words that must be quoted as identifiers on SQLite 3.40 beyond the shared
# KEYWORDS: measured by using every word of SQLite's own keyword list
# (sqlite3_keyword_name) and of Spark's, DuckDB's and PostgreSQL's lists
# unquoted as a column, alias and table name.
EXTRA_KEYWORDS = frozenset({
    "add", "alter", "autoincrement", "commit", "delete", "drop", "escape", "exists", "if",
    "index", "insert", "nothing", "raise", "set", "transaction", "update",
})

# Types SQLite has only as an affinity: a CAST to them changes the value.
UNREPRESENTABLE = {
    TypeKind.DECIMAL: "type.decimal",
    TypeKind.DATE: "type.date",
    TypeKind.TIMESTAMP: "type.timestamp",
    TypeKind.INTERVAL: "type.interval",
    TypeKind.BOOL: "type.boolean",
}


@dataclass(frozen=True, eq=False)
class SQLiteDialect(Dialect):
    def needs_quotes(self, name: str) -> bool:
        return super().needs_quotes(name) or name in EXTRA_KEYWORDS

    def type_name(self, t: SqlType) -> str:
        if t.kind in UNREPRESENTABLE:
            raise Unsupported(UNREPRESENTABLE[t.kind])
        return super().type_name(t)

    def string_literal(self, value: str) -> str:
        # Python's sqlite3 refuses SQL text holding a NUL ("the query contains
        # a null character"); char(0) builds one inside a string.
        if "\x00" not in value:
            return super().string_literal(value)
        parts = [super(SQLiteDialect, self).string_literal(p) for p in value.split("\x00")]
        return "(" + " || char(0) || ".join(parts) + ")"

    def decimal_literal(self, value: Decimal, t: SqlType) -> str:
        raise Unsupported(UNREPRESENTABLE[TypeKind.DECIMAL])

    def date_literal(self, value: dt.date) -> str:
        raise Unsupported(UNREPRESENTABLE[TypeKind.DATE])

    def timestamp_literal(self, value: dt.datetime) -> str:
        raise Unsupported(UNREPRESENTABLE[TypeKind.TIMESTAMP])


# Table columns the engine refuses to load (harness/engines/sqlite/adapter.py): SQLite
# would store them as another type, and NaN as NULL.
UNREPRESENTABLE_DATA = {
    TypeKind.DECIMAL: "data.decimal",
    TypeKind.DATE: "data.date",
    TypeKind.TIMESTAMP: "data.timestamp",
    TypeKind.BOOL: "data.boolean",
    TypeKind.INTERVAL: "data.interval",  # no interval type at all
}
NAN_DATA = "data.nan"
OTHER_DATA = "data.other-type"  # an Arrow type the harness has no SQL type for

SQLITE = SQLiteDialect(
    name="sqlite",
    unsupported=UNSUPPORTED,
    function_names=FUNCTION_NAMES,
    missing_functions=MISSING_FUNCTIONS,
    semantics=SemanticsProfile(
        name="sqlite",
        # NULL is the smallest value: first for ASC, last for DESC (measured).
        null_ordering=NULLS_SMALLEST,
        # The rest is the standard's: 7 / 2 = 3, sum(bigint) past 2^63 is an
        # error ("integer overflow"), avg(integer) is REAL. (No DECIMAL type.)
        # nth_value(v, 0) and (v, -1): "second argument to nth_value must be
        # a positive integer", the standard's refusal. No DATE or TIMESTAMP
        # type, so no string cast to one or compared with one. string_agg is
        # group_concat, which casts to text: group_concat(i, ',') is 1,-2
        # (floats 1.0e+20, 1.0e-07, and -0.0 as 0.0) (measured on 3.40.1).
        string_agg_argument=StringAggArgument.CAST_TO_TEXT,
    ),
    identifier_quote="`",
    # `(SELECT id, v FROM t) AS q(a, b)` and `(VALUES ...) AS v(x, y)` are
    # `near "(": syntax error`, but `WITH q(a, b) AS (...)` works (3.40.1): the
    # writer renames through a WITH query inside the derived table.
    derived_column_lists=False,
    # Names told apart only by letter case: CREATE TABLE t ("a", "A"): "duplicate column name: A" (3.40).
    unrepresentable=frozenset(
        [*UNREPRESENTABLE.values(), *UNREPRESENTABLE_DATA.values(), NAN_DATA, OTHER_DATA, CASE_ONLY_NAMES]),
)
