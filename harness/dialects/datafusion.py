"""Apache DataFusion's SQL (measured on datafusion-python 55.0.0, core 55.2.0).

DataFusion reads GROUPS, DISTINCT and FILTER on window aggregates, standard
`lag(v) IGNORE NULLS OVER (...)`, RANGE with INTERVAL offsets and every
canonical type name. An explicit frame on rank/row_number/ntile/lag is accepted
and ignored, as the standard says.

A frame offset must be a bare number, string or interval literal: `CAST(...)`,
even `(1)`, is rejected ("frame offsets for RANGE must be either a numeric
value, a string value or an interval"), so `frame_offset_literal` writes
DECIMAL and REAL offsets as bare numbers; DataFusion casts the offset to the
ORDER BY key's type, and a bare `0.7500000000000000001` is read exactly.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from decimal import Decimal

from harness.dialects.base import NULLS_LARGEST, Dialect, Feature
from harness.semantics import AvgType, Overflow, SemanticsProfile
from harness.types import SqlType, TypeKind

UNSUPPORTED = frozenset({
    Feature.INT_DIV_OPERATOR,  # `a // b` is DuckDB's spelling (provisional: to be measured)
    Feature.EXCLUDE,  # any EXCLUDE, NO OTHERS included: ParserError
    Feature.NTH_VALUE_FROM_LAST,  # ParserError
    # `string_agg(s, ',' ORDER BY k) OVER (...)`: "Aggregate ORDER BY is not
    # implemented for window functions". (It works with GROUP BY, but the
    # feature table has one flag for both.)
    Feature.ORDERED_AGGREGATE,
    # `percentile_cont(0.25) WITHIN GROUP (ORDER BY v) OVER (...)`: "OVER and
    # WITHIN GROUP clause cannot be used together" (GROUP BY works).
    Feature.WITHIN_GROUP_WINDOW,
})

# Aggregates DataFusion 55 does not have, as a window aggregate or with GROUP
# BY: "Error during planning: Invalid function 'mode'" (likewise quantile_disc,
# percentile_disc, first, last, count_if). Its median, quantile_cont,
# any_value, covar/corr/regr_* and bit_* are the canonical ones.
MISSING_FUNCTIONS = frozenset({
    "mode", "quantile_disc", "percentile_disc", "first", "last", "count_if",
})

# Valid queries DataFusion refuses (error conformance: `wrongly-rejected`).
REFUSALS = {
    # `ROWS BETWEEN 2 FOLLOWING AND 1 FOLLOWING` (also RANGE and GROUPS): the
    # standard makes the frame empty; DataFusion 55 says at planning "Invalid
    # window frame: start bound (2 FOLLOWING) cannot be larger than end bound
    # (1 FOLLOWING)".
    Feature.FRAME_START_AFTER_END: r"Invalid window frame: start bound .* cannot be larger than end bound",
}

# Words that must be quoted as identifiers on DataFusion 55 beyond the shared
# KEYWORDS: measured by using every word of Spark's, DuckDB's and PostgreSQL's
# keyword lists unquoted as a column, alias and table name. Most are niladic
# functions (`SELECT current_date FROM t` calls the function).
EXTRA_KEYWORDS = frozenset({
    "current_catalog", "current_date", "current_time", "current_timestamp", "current_user",
    "exists", "localtime", "localtimestamp", "returning", "session_user", "struct", "trim",
    "unnest", "user"
})

# DataFusion's TIMESTAMP is Timestamp(ns), which holds only 1677..2262 and
# differs from the loaded Arrow columns (us); TIMESTAMP(6) is Timestamp(us).
_TIMESTAMP = "TIMESTAMP(6)"


@dataclass(frozen=True, eq=False)
class DataFusionDialect(Dialect):
    def needs_quotes(self, name: str) -> bool:
        return super().needs_quotes(name) or name in EXTRA_KEYWORDS

    def decimal_literal(self, value: Decimal, t: SqlType) -> str:
        # A bare 1.50 is a Float64 here, so CAST(1.50 AS DECIMAL(38,10)) goes
        # through a double and loses digits (measured: ...678.1234567890 came
        # back as ...460.6797053952). A string is cast exactly.
        return f"CAST('{format(value, 'f')}' AS {self.type_name(t)})"

    def frame_offset_literal(self, value: object, t: SqlType) -> str | None:
        if isinstance(value, Decimal):
            return format(value, "f")
        if isinstance(value, float) and math.isfinite(value):
            return repr(value)
        return None

    def timestamp_literal(self, value: dt.datetime) -> str:
        # TIMESTAMP '0001-01-01 00:00:00' overflows Timestamp(ns).
        return f"CAST('{value.isoformat(sep=' ')}' AS {_TIMESTAMP})"


DATAFUSION = DataFusionDialect(
    name="datafusion",
    unsupported=UNSUPPORTED,
    refusals=REFUSALS,
    not_implemented=(r"This feature is not implemented",),
    # "Aggregate can not be used as a sliding accumulator because
    # `retract_batch` is not implemented" once the frame start moves (55.2).
    no_moving_frame_start=frozenset({"bool_and", "bool_or", "string_agg", "any_value", "bit_and",
                                     "bit_or"}),
    missing_functions=MISSING_FUNCTIONS,
    semantics=SemanticsProfile(
        name="datafusion",
        null_ordering=NULLS_LARGEST,
        # a / b on integers truncates; sum(bigint) wraps silently past 2^63
        # (measured on 55: 2^62 + 2^62 = -2^63).
        sum_overflow=Overflow.WRAP,
        # avg(DECIMAL(10,2)) is DECIMAL(14,6), cut toward zero: avg(-2.00,
        # 1.43, -2.00) = -0.856666 (measured on 55.2; the standard leaves the
        # scale and the rounding implementation-defined).
        avg_of_decimals=AvgType.PLUS4_TRUNCATED,
    ),
    type_names={TypeKind.TIMESTAMP: _TIMESTAMP},
)
