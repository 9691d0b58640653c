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

from harness.core.dialect import NULLS_LARGEST, Dialect, Feature, Release
from harness.core.semantics import (
    AvgType,
    DateFromString,
    DatetimeVsString,
    NthValueBelowOne,
    Overflow,
    SemanticsProfile,
    StringAggArgument,
)
from harness.core.types import SqlType, TypeKind

UNSUPPORTED = frozenset({
    # `rank(ORDER BY x) OVER ()`: 'ParserError("Expected: ), found: BY")' (55).
    Feature.RANKING_ORDER_BY,
    # `7 // 2`: "This feature is not implemented: Operator DIV is not yet
    # supported"; `7 DIV 2` and div(7, 2) do not parse or exist either (55.2).
    Feature.INT_DIV_OPERATOR,
    # `ORDER BY ALL`: "Schema error: No field named all" (GROUP BY ALL works).
    Feature.ORDER_BY_ALL,
    # Any offset but a bare number, string or interval literal, even `(2)` or
    # `1 + 1`: "Invalid window frame: frame offsets for ROWS / GROUPS must be
    # non negative integers" (RANGE: "... must be either a numeric value, a
    # string value or an interval"). Typed literals go through
    # `frame_offset_literal` as bare numbers.
    Feature.FRAME_OFFSET_EXPRESSION,
    Feature.FRAME_OFFSET_INTERVAL_EXPRESSION,
    Feature.EXCLUDE,  # any EXCLUDE, NO OTHERS included: ParserError
    Feature.NTH_VALUE_FROM_LAST,  # ParserError
    # `string_agg(s, ',' ORDER BY k) OVER (...)`: "Aggregate ORDER BY is not
    # implemented for window functions". (It works with GROUP BY, but the
    # feature table has one flag for both.)
    Feature.ORDERED_AGGREGATE,
    # Subqueries (measured on 55.2.0). IN and EXISTS are planned only as
    # filters and joins (WHERE, HAVING, ON, even inside a CASE there); in the
    # select list or a window's arguments: "This feature is not implemented:
    # Physical plan does not support logical expression InSubquery(...)" /
    # "... Exists(...)".
    Feature.SUBQUERY_PREDICATE_AS_VALUE,
    # `sum((SELECT count(*) FROM t AS u WHERE u.k = t.k)) OVER (...)`, and the
    # same in PARTITION BY: "Correlated scalar subquery can only be used in
    # Projection, Filter, Aggregate plan nodes".
    Feature.CORRELATED_SUBQUERY_IN_WINDOW,
    # `(SELECT u.v FROM t AS u WHERE u.id = t.id)`: "Correlated scalar
    # subquery must be aggregated to return at most one row".
    Feature.CORRELATED_SCALAR_UNAGGREGATED,
    # A column of the query two levels out: "Schema error: No field named t.k.
    # Did you mean '__correlated_sq_1.k'?".
    Feature.CORRELATION_BEYOND_PARENT,
    # `percentile_cont(0.25) WITHIN GROUP (ORDER BY v) OVER (...)`: "OVER and
    # WITHIN GROUP clause cannot be used together" (GROUP BY works).
    Feature.WITHIN_GROUP_WINDOW,
    # `lag(v, k % 3) OVER (...)`, `lag(v, 1, id) OVER (...)`: "This feature is
    # not implemented: There is only support Literal types for field at idx: 1
    # (idx: 2) in Window Function" (55.0).
    Feature.LAG_ROW_OFFSET,
    Feature.LAG_ROW_DEFAULT,
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
# Older releases, measured on datafusion-python 33.0.0, 36.0.0, 40.1.0, 43.1.0,
# 46.0.0, 49.0.0, 50.0.0, 51.0.0, 52.0.0, 53.0.0, 54.1.0 and 55.0.0 (one probe
# query per feature, each release in its own virtualenv). A range names the
# first release measured to differ; the releases between two measured ones
# are assumed to be like the older.
RELEASES = (
    Release(
        "<55", "54.1.0 and older: 'Invalid function 'any_value''",
        missing_functions=frozenset({"any_value"}),
    ),
    Release(
        "<54", "53.0.0 and older: array_agg(v) OVER (... ROWS BETWEEN 1 PRECEDING AND CURRENT ROW): "
        "'Aggregate can not be used as a sliding accumulator because `retract_batch` is not "
        "implemented' (54.1.0 answers)",
        no_moving_frame_start=frozenset({"array_agg"}),
    ),
    Release(
        "<52", "51.0.0 and older print an engine error as Rust's Debug form: "
        "'NotImplemented(\"VAR(DISTINCT) aggregations are not available\")' where 52.0.0 says "
        "'This feature is not implemented: ...'",
        not_implemented=(r'NotImplemented\("',),
    ),
    Release(
        "<51", "50.0.0 and older: 'Invalid function 'quantile_cont'' and 'percentile_cont' "
        "(WITHIN GROUP: a parser error up to 36.0.0, 'WITHIN GROUP is not supported yet' in 40.1.0)",
        lacks=frozenset({Feature.WITHIN_GROUP}),
        missing_functions=frozenset({"quantile_cont", "percentile_cont"}),
    ),
    Release(
        "<50", "49.0.0 and older: sum(v) FILTER (WHERE ...) OVER (...) is a parser error "
        "('Expected: end of statement, found: ('); 'NotImplemented(\"QUALIFY\")' up to 43.1.0, "
        "and 49.0.0 plans QUALIFY wrongly",
        lacks=frozenset({Feature.FILTER_WINDOW_AGGREGATE, Feature.QUALIFY}),
    ),
    Release(
        "<46", "43.1.0 and older: 'table function 'generate_series' not found', and 'range'",
        lacks=frozenset({Feature.GENERATE_SERIES, Feature.RANGE_TABLE_FUNCTION}),
    ),
    Release(
        "<43", "40.1.0 and older: bit_xor(v) OVER (... ROWS BETWEEN 1 PRECEDING AND CURRENT ROW): "
        "'Aggregate can not be used as a sliding accumulator'",
        no_moving_frame_start=frozenset({"bit_xor"}),
    ),
    Release(
        "<40", "36.0.0 and older: 'Null treatment in aggregate functions is not supported: IGNORE "
        "NULLS'; OVER (w ORDER BY ...) is a parser error ('Expected ROWS, RANGE, GROUPS, found: w'); "
        "array_agg(v) OVER (...) is a parser error ('Expected end of statement, found: (': declared "
        "missing as a whole, though it aggregates under GROUP BY); CAST('2024-01-02 10:30:00' AS "
        "DATE) is an error ('Cannot cast string ... to value of Date32 type'; 40.1.0 reads the date)",
        lacks=frozenset({Feature.IGNORE_NULLS, Feature.NAMED_WINDOW_REFINEMENT}),
        missing_functions=frozenset({"array_agg"}),
        semantics={"date_from_string": DateFromString.STRICT},
    ),
    Release(
        "<36", "33.0.0: 'Invalid function 'string_agg''; an interval result: 'The datatype "
        "\"Interval(MonthDayNano)\" is still not supported in Rust implementation', and an "
        "interval argument 'Unsupported creation of Duration(Microsecond) array'",
        missing_functions=frozenset({"string_agg"}),
        not_implemented=(r"is still not supported in Rust implementation",
                         r"Unsupported creation of Duration"),
    ),
)

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
        # CAST(2 AS BIGINT) is refused; a bare 2 counts the same rows (ROWS,
        # GROUPS) and is cast to the key's type (RANGE).
        if type(value) is int:
            return str(value)
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
    not_implemented=(
        r"This feature is not implemented",
        # A window ordered by an INTERVAL key with a RANGE frame, the default
        # one included (so `row_number() OVER (ORDER BY iv)` too): "Internal
        # error: Cannot run range queries on datatype: Duration(µs)" (or
        # Interval(MonthDayNano)), at planning; ROWS and GROUPS frames over the
        # same key, and intervals as arguments, run (measured on 55.2).
        r"Cannot run range queries on datatype: (Duration|Interval)",
    ),
    # generate_series/range name their column `value` whatever the alias
    # (measured on 55.2: `SELECT g.generate_series FROM generate_series(1, 3) g`
    # is "No field named g.generate_series. Valid fields are g.value"); VALUES
    # names column1, column2, ... as the standard's rule does.
    explicit_source_columns=True,
    # "Aggregate can not be used as a sliding accumulator because
    # `retract_batch` is not implemented" once the frame start moves (55.2).
    no_moving_frame_start=frozenset({"bool_and", "bool_or", "string_agg", "any_value", "bit_and",
                                     "bit_or"}),
    releases=RELEASES,
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
        # Lenient readings (measured on 55.2): nth_value(v, 0) is NULL and
        # nth_value(v, -k) the k-th value from the frame's end: nth_value(id,
        # -2) over ids 1..3 is 2, over ROWS 2 PRECEDING it is the row before,
        # with IGNORE NULLS the k-th non-NULL from the end, past the frame
        # NULL. CAST('2024-01-02 10:30:00' AS DATE) (with a T, with '.5'
        # seconds) is 2024-01-02, '2024-01-02 25:99:00', '2024-01-02 junk' and
        # '2024-01-02 10:30' (no seconds) are "Cannot cast string ... to value
        # of Date32 type" (arrow-rs falls back to its timestamp parser for a
        # string longer than a date: apache/arrow-rs#5282); d > '2024-01-01' and ts = '2024-01-02 10:30:00'
        # read the literal as the column's type (as DuckDB; 'not a date' is
        # the same cast error); string_agg(i, ',') casts to text: 1,-2;
        # 1.50,-0.05; true,false; 2024-01-01 (floats 1e20, 1e-7; timestamps
        # 2024-01-02T10:30:00, 2024-01-03T00:00:00.500).
        nth_value_below_one=NthValueBelowOne.FROM_END,
        date_from_string=DateFromString.TIMESTAMP_DATE,
        datetime_vs_string=DatetimeVsString.LITERAL_CAST,
        string_agg_argument=StringAggArgument.CAST_TO_TEXT,
    ),
    type_names={TypeKind.TIMESTAMP: _TIMESTAMP},
)
