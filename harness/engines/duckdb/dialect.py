"""DuckDB's SQL (measured on duckdb 2.0.0).

DuckDB reads canonical SQL almost entirely: GROUPS, EXCLUDE (NO OTHERS too),
DISTINCT and FILTER on window aggregates, `string_agg(s, ',' ORDER BY k)` OVER
a window, RANGE with INTERVAL offsets, and every canonical type name. An
explicit frame (even with EXCLUDE) on rank/row_number/ntile/lag is accepted and
ignored, as the standard says. Also (measured on 2.0.1): QUALIFY (after
WINDOW, before ORDER BY), GROUP BY ALL, ORDER BY ALL [ASC|DESC] [NULLS ...],
constant expressions and typed literals as frame offsets (`1 + 1`,
`CAST(2 AS BIGINT)`, `INTERVAL '1' DAY * 2`), IS [NOT] DISTINCT FROM, and
`a // b`: on integers the quotient truncated toward zero in the operands'
common integer type (-7 // 2 = -3; an error on overflow and on / 0); on any
other number an ordinary division (7.5 // 2 = 3.75 DOUBLE).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from harness.core.dialect import NULLS_ALWAYS_LAST, Dialect, Feature, IgnoreNullsPlacement, Release
from harness.core.names import CASE_ONLY_NAMES
from harness.core.semantics import (
    AvgType,
    DateFromString,
    DatetimeVsString,
    IntegerDivision,
    NthValueBelowOne,
    NullOrdering,
    Overflow,
    SemanticsProfile,
    StringAggArgument,
)
from harness.core.types import SqlType

UNSUPPORTED = frozenset({
    Feature.NTH_VALUE_FROM_LAST,  # `nth_value(v, 2) FROM LAST OVER (...)`: parser error
    # `percentile_cont(0.25) WITHIN GROUP (ORDER BY v) OVER (...)`, with or
    # without ORDER BY in the window: "Catalog Error: Aggregate Function with
    # name percentile_cont does not exist!" (it works with GROUP BY, and
    # quantile_cont(v, 0.25) OVER (...) computes the same).
    Feature.WITHIN_GROUP_WINDOW,
})

# Words that must be quoted as identifiers on DuckDB 2.0.0 beyond the shared
# KEYWORDS: measured by using every word of `duckdb_keywords()` (and Spark's
# and PostgreSQL's lists) unquoted as a column, alias and table name.
EXTRA_KEYWORDS = frozenset({
    "analyse", "analyze", "anti", "asof", "asymmetric", "at", "authorization", "binary",
    "check", "collate", "collation", "column", "concurrently", "constraint", "create",
    "deferrable", "describe", "do", "foreign", "freeze", "glob", "ilike", "initially", "into",
    "isnull", "lambda", "notnull", "only", "overlaps", "pivot", "pivot_longer", "pivot_wider",
    "placing", "positional", "primary", "qualify", "references", "returning", "semi", "show",
    "similar", "summarize", "symmetric", "tablesample", "unpack", "unpivot", "variadic",
    "verbose"
})

# Older releases, measured on duckdb 0.7.1, 0.8.1, 0.9.2, 0.10.3, 1.0.0, 1.1.0,
# 1.1.3, 1.2.2, 1.3.2, 1.4.4, 1.5.6 and 2.0.1 (one probe query per feature, each
# release in its own virtualenv). A range names the first release measured
# to differ; the releases between two measured ones are assumed to be like
# the older (1.1.0 and 1.1.3 refuse GROUPS, 1.2.2 answers: 1.2.0 and 1.2.1 were
# not measured).
RELEASES = (
    Release(
        "<1.2", "1.1.3 and older: 'GROUPS mode for window functions is not implemented yet' "
        "(0.9.2 and older: a syntax error at GROUPS); 'ORDER BY is not implemented for window "
        "functions!' for string_agg(s, ',' ORDER BY k) OVER (...); a syntax error at ORDER in "
        "cume_dist(ORDER BY v) OVER (...); 'count_if is not an aggregate function'",
        lacks=frozenset({Feature.GROUPS_FRAME, Feature.ORDERED_AGGREGATE, Feature.RANKING_ORDER_BY}),
        missing_functions=frozenset({"count_if"}),
    ),
    Release(
        "<0.10", "0.9.2 and older: a syntax error at EXCLUDE; 'DISTINCT is not implemented for "
        "window functions!'",
        lacks=frozenset({Feature.EXCLUDE, Feature.DISTINCT_WINDOW_AGGREGATE}),
    ),
    Release(
        "<0.8", "0.7.1: NULLs first for ASC and DESC when ORDER BY does not say; 7 / 2 = 3 "
        "(INTEGER); 'Scalar Function with name // does not exist!'",
        lacks=frozenset({Feature.INT_DIV_OPERATOR}),
        semantics={"null_ordering": NullOrdering(nulls_first_asc=True, nulls_first_desc=True),
                   "integer_division": IntegerDivision.TRUNCATE},
    ),
)


@dataclass(frozen=True, eq=False)
class DuckDBDialect(Dialect):
    def decimal_literal(self, value: Decimal, t: SqlType) -> str:
        # A literal with more than 18 digits after the point is read as a
        # DOUBLE, so CAST(0.79...(38 digits) AS DECIMAL(38,38)) goes through a
        # double (measured on 2.0: "Could not cast 1.0"). A string is exact.
        return f"CAST('{format(value, 'f')}' AS {self.type_name(t)})"

    def needs_quotes(self, name: str) -> bool:
        return super().needs_quotes(name) or name in EXTRA_KEYWORDS


DUCKDB = DuckDBDialect(
    name="duckdb",
    unsupported=UNSUPPORTED,
    # Names told apart only by letter case: columns "a" and "A" of one Arrow table: the answer reads "a" for both (2.0.1).
    unrepresentable=frozenset({CASE_ONLY_NAMES}),
    not_implemented=(
        r"^Not implemented Error",
        # first(v) / last(v) OVER (...) are DuckDB's first_value/last_value,
        # which take no FILTER: "Binder Error: FILTER is not implemented for
        # the window function "first_value"" (measured on 2.0.0). Nor DISTINCT
        # (`last(DISTINCT v ORDER BY v) OVER (...)`, and first_value, last_value,
        # nth_value: "Binder Error: DISTINCT is not implemented for the window
        # function "last_value"", measured on 2.0.1).
        r"(FILTER|DISTINCT) is not implemented for the window function",
    ),
    # VALUES names its columns col0, col1, ... (measured on 2.0.1: `SELECT *
    # FROM (VALUES (1, 'a')) AS v` gives col0, col1); generate_series/range
    # name theirs by the alias or the function, as the canonical rule says.
    explicit_source_columns=True,
    # `lag(v) IGNORE NULLS OVER (...)` is a parser error; DuckDB reads
    # `lag(v, 1, 0 IGNORE NULLS) OVER (...)` (and RESPECT NULLS likewise).
    ignore_nulls_placement=IgnoreNullsPlacement.INSIDE,
    # NULLs last for ASC *and* DESC (since 0.8; 0.7 and older: always first).
    releases=RELEASES,
    semantics=SemanticsProfile(
        name="duckdb",
        null_ordering=NULLS_ALWAYS_LAST,
        # a / b is DOUBLE (// truncates); sum(integer) is HUGEINT, so it never
        # overflows at 64 bits; avg(decimal) is DOUBLE.
        integer_division=IntegerDivision.TO_DOUBLE,
        sum_overflow=Overflow.WIDEN,
        avg_of_decimals=AvgType.DOUBLE,
        # Lenient readings (measured on 2.0.1): nth_value(v, 0) and (v, -2)
        # are NULL (documented), whatever the frame or IGNORE NULLS;
        # CAST('2024-01-02 10:30:00' AS DATE), and with a T or '.5' seconds,
        # is 2024-01-02, while '2024-01-02 25:99:00' and '2024-01-02 junk' are
        # "Conversion Error: invalid date field format"; d > '2024-01-01' and
        # ts = '2024-01-02T10:30:00' read the literal as the column's type
        # (d < '2024-1-5' is a date comparison, d = '2024-01-02 10:30:00' is
        # true for 2024-01-02, 'not a date' a Conversion Error);
        # string_agg(i, ',') casts to text: 1,-2; 1.50,-0.05; true,false;
        # 2024-01-01 (floats 1e+20, 1e-07; timestamps 2024-01-03 00:00:00.5).
        nth_value_below_one=NthValueBelowOne.NULL,
        date_from_string=DateFromString.TIMESTAMP_DATE,
        datetime_vs_string=DatetimeVsString.LITERAL_CAST,
        string_agg_argument=StringAggArgument.CAST_TO_TEXT,
    ),
)
