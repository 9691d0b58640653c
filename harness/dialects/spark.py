"""Spark SQL, as pyspark 4.3.0 reads it (ANSI mode on, its default).

Every entry below was measured with queries run on Spark 4.3.0 in local mode
(see tests/test_dialects.py, which renders and runs one query per feature).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.dialects.base import NULLS_SMALLEST, Dialect, Feature
from harness.semantics import ArrayAgg, AvgType, IntegerDivision, SemanticsProfile
from harness.types import TypeKind

UNSUPPORTED = frozenset({
    Feature.INT_DIV_OPERATOR,  # `a // b` is DuckDB's spelling (provisional: to be measured)
    # `ROWS/RANGE` only: `GROUPS BETWEEN ...` is a PARSE_SYNTAX_ERROR.
    Feature.GROUPS_FRAME,
    # Any EXCLUDE, NO OTHERS included, is a PARSE_SYNTAX_ERROR (SPARK-28428).
    Feature.EXCLUDE,
    # rank/row_number/ntile/percent_rank accept only their own fixed frame
    # ("Window Frame ... must match the required frame"), lag/lead no frame at
    # all ("Cannot specify window frame for lag function").
    Feature.FRAME_ON_RANKING,
    Feature.NTH_VALUE_FROM_LAST,  # PARSE_SYNTAX_ERROR
    Feature.DISTINCT_WINDOW_AGGREGATE,  # DISTINCT_WINDOW_FUNCTION_UNSUPPORTED
    # `string_agg(s, ',' ORDER BY k)` is a parse error; Spark spells it
    # `string_agg(s, ',') WITHIN GROUP (ORDER BY k)` (works, also OVER a
    # window), which the Dialect has no hook for yet.
    Feature.ORDERED_AGGREGATE,
    # `OVER (w ORDER BY ...)` / `OVER (w ROWS ...)` is a PARSE_SYNTAX_ERROR;
    # `OVER w` works.
    Feature.NAMED_WINDOW_REFINEMENT,
})

# Spark 4.3 has no quantile_disc ("[UNRESOLVED_ROUTINE] Cannot resolve routine
# `quantile_disc`"). Its any_value(v) keeps NULLs unless asked not to
# (documented; measured: NULL over a frame holding NULL, 10 and 20), which
# is another function than the standard's any non-NULL value.
MISSING_FUNCTIONS = frozenset({"quantile_disc", "any_value"})

# percentile(x, p) is Spark's exact percentile with linear interpolation
# between the two nearest rows, p in [0, 1]: quantile_cont's meaning
# (measured equal over ROWS and RANGE frames and with GROUP BY).
FUNCTION_NAMES = {"quantile_cont": "percentile"}

# "[INVALID_WINDOW_SPEC_FOR_AGGREGATION_FUNC] Cannot specify ORDER BY or a
# window frame for "median(v)"" (and for percentile_cont/_disc WITHIN GROUP);
# OVER (PARTITION BY ...) works.
UNORDERED_WINDOW_ONLY = frozenset({"median", "percentile_cont", "percentile_disc"})

# Valid queries Spark refuses at analysis though it implements the construct
# (error conformance: `wrongly-rejected`), by the error class it names.
REFUSALS = {
    # "The lower bound of a window frame must be less than or equal to the
    # upper bound": the standard makes ROWS BETWEEN 2 FOLLOWING AND 1
    # FOLLOWING an empty frame.
    Feature.FRAME_START_AFTER_END: r"DATATYPE_MISMATCH\.SPECIFIED_WINDOW_FRAME_WRONG_COMPARISON",
    # Even RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW, where every row
    # of the partition is a peer (measured in the first campaign).
    Feature.RANGE_WITHOUT_ORDER_BY: r"DATATYPE_MISMATCH\.RANGE_FRAME_WITHOUT_ORDER",
    # INTERVAL '1' DAY and INTERVAL '1' HOUR are different types to Spark.
    Feature.RANGE_MIXED_INTERVAL_UNITS: r"DATATYPE_MISMATCH\.SPECIFIED_WINDOW_FRAME_DIFF_TYPES",
}

# Words that must be quoted as identifiers on Spark 4.3.0 beyond the shared
# KEYWORDS: measured by using every word of `sql_keywords()` (and DuckDB's and
# PostgreSQL's lists) unquoted as a column, alias and table name.
EXTRA_KEYWORDS = frozenset({"anti", "current_path", "minus", "semi"})


@dataclass(frozen=True, eq=False)
class SparkDialect(Dialect):
    def needs_quotes(self, name: str) -> bool:
        return super().needs_quotes(name) or name in EXTRA_KEYWORDS

    def string_literal(self, value: str) -> str:
        # Spark reads a backslash in a string literal as an escape ('a\nb' is
        # a newline), so the standard '' doubling is not enough: escape the
        # backslash and the quote. Everything else (unicode, NUL, raw
        # newlines) round-trips as is; measured on 27 awkward strings.
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


SPARK = SparkDialect(
    name="spark",
    unsupported=UNSUPPORTED,
    refusals=REFUSALS,
    missing_functions=MISSING_FUNCTIONS,
    function_names=FUNCTION_NAMES,
    unordered_window_only=UNORDERED_WINDOW_ONLY,
    not_implemented=(r"\[UNSUPPORTED_FEATURE\b",),
    # WINDOW_FUNCTION_FRAME_NOT_ORDERED without an ORDER BY (first_value and
    # last_value are accepted; measured on 4.3.0).
    needs_order_by=frozenset({
        "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile",
        "lag", "lead", "nth_value",
    }),
    semantics=SemanticsProfile(
        name="spark",
        null_ordering=NULLS_SMALLEST,
        # a / b is always DOUBLE; ANSI mode (on by default in Spark 4) raises
        # ARITHMETIC_OVERFLOW on sum(bigint) past 2^63.
        integer_division=IntegerDivision.TO_DOUBLE,
        # avg(DECIMAL(10,2)) is DECIMAL(14,6), rounded half up: avg(-2.00,
        # 1.43, -2.00) = -0.856667; DECIMAL(38,0) gives DECIMAL(38,4) (4.3.0).
        avg_of_decimals=AvgType.PLUS4_ROUNDED,
        # array_agg is an alias of collect_list, which drops NULLs and gives
        # an empty array over an empty frame (documented; measured on 4.3.0).
        array_agg=ArrayAgg.COLLECT_LIST,
    ),
    identifier_quote="`",
    type_names={
        # `DOUBLE PRECISION` is a parse error and bare `VARCHAR` needs a length.
        # REAL, TINYINT, SMALLINT, INTEGER, BIGINT, BOOLEAN, DATE, DECIMAL(p,s)
        # are read as canonical. TIMESTAMP is Spark's TIMESTAMP_LTZ, which is
        # also the type createDataFrame gives a naive Arrow timestamp, so
        # literals and CASTs compare with loaded columns (session zone UTC).
        TypeKind.FLOAT64: "DOUBLE",
        TypeKind.STRING: "STRING",
    },
)
