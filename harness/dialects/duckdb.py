"""DuckDB's SQL (measured on duckdb 2.0.0).

DuckDB reads canonical SQL almost entirely: GROUPS, EXCLUDE (NO OTHERS too),
DISTINCT and FILTER on window aggregates, `string_agg(s, ',' ORDER BY k)` OVER
a window, RANGE with INTERVAL offsets, and every canonical type name. An
explicit frame (even with EXCLUDE) on rank/row_number/ntile/lag is accepted and
ignored, as the standard says.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from harness.dialects.base import NULLS_ALWAYS_LAST, Dialect, Feature, IgnoreNullsPlacement
from harness.semantics import AvgType, IntegerDivision, Overflow, SemanticsProfile
from harness.types import SqlType

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
    not_implemented=(
        r"^Not implemented Error",
        # first(v) / last(v) OVER (...) are DuckDB's first_value/last_value,
        # which take no FILTER: "Binder Error: FILTER is not implemented for
        # the window function "first_value"" (measured on 2.0.0).
        r"FILTER is not implemented for the window function",
    ),
    # `lag(v) IGNORE NULLS OVER (...)` is a parser error; DuckDB reads
    # `lag(v, 1, 0 IGNORE NULLS) OVER (...)` (and RESPECT NULLS likewise).
    ignore_nulls_placement=IgnoreNullsPlacement.INSIDE,
    # NULLs last for ASC *and* DESC (since 0.8; 0.7 and older: always first).
    semantics=SemanticsProfile(
        name="duckdb",
        null_ordering=NULLS_ALWAYS_LAST,
        # a / b is DOUBLE (// truncates); sum(integer) is HUGEINT, so it never
        # overflows at 64 bits; avg(decimal) is DOUBLE.
        integer_division=IntegerDivision.TO_DOUBLE,
        sum_overflow=Overflow.WIDEN,
        avg_of_decimals=AvgType.DOUBLE,
    ),
)
