"""Spark SQL, as pyspark 4.3.0 reads it (ANSI mode on, its default).

Every entry below was measured with queries run on Spark 4.3.0 in local mode
(see tests/test_dialects.py, which renders and runs one query per feature).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.core.dialect import NULLS_SMALLEST, Dialect, Feature, Release
from harness.core.semantics import (
    ArrayAgg,
    AvgType,
    DateFromString,
    DatetimeVsString,
    DivisionByZero,
    IntegerDivision,
    InvalidString,
    Overflow,
    SemanticsProfile,
    StringAggArgument,
)
from harness.core.types import SqlType, TypeKind

UNSUPPORTED = frozenset({
    # `rank(ORDER BY x) OVER ()`: PARSE_SYNTAX_ERROR at 'BY' (4.3.0).
    Feature.RANKING_ORDER_BY,
    # Offsets are INTs (4.3.0): `ROWS BETWEEN 9223372036854775807 PRECEDING ...`
    # is DATATYPE_MISMATCH.SPECIFIED_WINDOW_FRAME_UNACCEPTED_TYPE, `lag(v,
    # 9223372036854775807)` CAST_OVERFLOW; `lag(v, k)` is NON_FOLDABLE_INPUT
    # ("the input `offset` should be a foldable INT expression"), and `lag(v,
    # CAST(NULL AS INT))` fails at run time. (A per-row default works.)
    Feature.OFFSET_BEYOND_INT,
    Feature.LAG_ROW_OFFSET,
    Feature.LAG_NULL_OFFSET,
    # `7 // 2` is a PARSE_SYNTAX_ERROR. Spark's `7 DIV 2` truncates too, but is
    # always BIGINT (DuckDB's // keeps the operands' integer type) and also
    # takes decimals, which DuckDB's // divides exactly: not the same meaning.
    Feature.INT_DIV_OPERATOR,
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
    # "[UNRESOLVABLE_TABLE_VALUED_FUNCTION] Could not resolve `generate_series`
    # to a table-valued function." (4.3.0; `range` is there).
    Feature.GENERATE_SERIES,
    # A subquery reading a column two queries out: `(SELECT count(*) FROM t AS
    # u WHERE EXISTS (SELECT 1 FROM t AS w WHERE w.k = t.k))` fails with
    # UNRESOLVED_COLUMN.WITH_SUGGESTION on `t`.`k` (4.3.0).
    Feature.CORRELATION_BEYOND_PARENT,
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
    # `RANGE BETWEEN INTERVAL '1' DAY * 2 PRECEDING ...` (also 2 * INTERVAL):
    # "Frame bound value must be a literal", though `INTERVAL '1' DAY +
    # INTERVAL '1' DAY` and `1 + 1` are taken as offsets (4.3.0).
    Feature.FRAME_OFFSET_INTERVAL_EXPRESSION: r"INVALID_SQL_SYNTAX\.INVALID_WINDOW_FRAME_BOUND",
}

# Words that must be quoted as identifiers on Spark 4.3.0 beyond the shared
# KEYWORDS: measured by using every word of `sql_keywords()` (and DuckDB's and
# PostgreSQL's lists) unquoted as a column, alias and table name.
EXTRA_KEYWORDS = frozenset({"anti", "current_path", "minus", "semi"})


# How pyspark 3.5 differs from 4.3 (measured on 3.5.9 against 4.3.0: the
# corpus, `run cases/ --engines reference,spark,spark@old --engine-python
# spark@old=VENV/bin/python`, and single queries). Spark 3.5's ANSI mode is
# off by default (on since 4.0), and the harness runs each release under its
# own defaults, so 3.5 is judged by its non-ANSI answers.
RELEASES = (
    Release(
        versions="<4",
        measured="pyspark 3.5.9: 27 of 373 corpus cases answered otherwise than on 4.3.0",
        lacks=frozenset({
            # "[_LEGACY_ERROR_TEMP_1030] Window aggregate function with filter
            # predicate is not supported yet." (aggregate/filter_sum_count)
            Feature.FILTER_WINDOW_AGGREGATE,
            # PARSE_SYNTAX_ERROR at 'QUALIFY' (syntax/qualify_named_window)
            Feature.QUALIFY,
        }),
        # "[UNRESOLVED_ROUTINE] Cannot resolve function `string_agg`" (also no
        # listagg): semantics/string_agg_integer, coverage/rows/string_agg.
        missing_functions=frozenset({"string_agg"}),
        # RANGE over a DATE key with an INTERVAL offset: "[DATATYPE_MISMATCH.
        # RANGE_FRAME_INVALID_TYPE] ... The data type "DATE" used in the order
        # specification does not match the data type "INTERVAL DAY"" (TIMESTAMP
        # keys work): frames/range/date_interval_day.
        # mode(x) is there, but not its ordered-set spelling (4.0 added it;
        # percentile_cont/_disc WITHIN GROUP work): "[PARSE_SYNTAX_ERROR] Syntax
        # error at or near '('" (functions/mode_within_group_rows). The
        # pattern needs the query excerpt of the engine's message.
        not_implemented=(r'RANGE_FRAME_INVALID_TYPE\].*"DATE" used in the order specification',
                         r"(?s)\[PARSE_SYNTAX_ERROR\].*== SQL ==.*\bmode\(\) WITHIN GROUP"),
        fields={"refusals": {
            **REFUSALS,
            # The same refusal under its 3.5 name: "[_LEGACY_ERROR_TEMP_0064]
            # Frame bound value must be a literal." (syntax/range_interval_expression).
            Feature.FRAME_OFFSET_INTERVAL_EXPRESSION:
                r"INVALID_SQL_SYNTAX\.INVALID_WINDOW_FRAME_BOUND|_LEGACY_ERROR_TEMP_0064",
        }},
        # spark.sql.ansi.enabled is false by default: sum(bigint) past 2^63 wraps
        # (9223372036854775807 + 1 gives -9223372036854775808: defaults/sum_overflow),
        # a string that does not read as the type casts to NULL ('x' AS INT,
        # 'not a date' AS DATE, also DATE '2024-01-01' > 'not a date':
        # semantics/date_vs_invalid_string_literal), 1/0 and 7 % 0 are NULL.
        semantics={
            "sum_overflow": Overflow.WRAP,
            "invalid_string_cast": InvalidString.NULL,
            "division_by_zero": DivisionByZero.NULL,
        },
    ),
)


@dataclass(frozen=True, eq=False)
class SparkDialect(Dialect):
    def needs_quotes(self, name: str) -> bool:
        return super().needs_quotes(name) or name in EXTRA_KEYWORDS

    def frame_offset_literal(self, value: object, t: SqlType) -> str | None:
        # A ROWS offset must be an INT: `CAST(2 AS BIGINT) PRECEDING` is
        # DATATYPE_MISMATCH.SPECIFIED_WINDOW_FRAME_UNACCEPTED_TYPE. A bare 2
        # counts the same rows, and RANGE compares it by value.
        return str(value) if type(value) is int else None

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
    # UNSUPPORTED_DATATYPE: a type Spark does not have, e.g. CAST(5 AS HUGEINT)
    # ('[UNSUPPORTED_DATATYPE] Unsupported data type "HUGEINT"', 4.3.0).
    not_implemented=(r"\[UNSUPPORTED_FEATURE\b", r"\[UNSUPPORTED_DATATYPE\]"),
    # VALUES names its columns col1, col2, ... and range its column `id`
    # (measured on 4.3.0), so the writer spells the names out.
    explicit_source_columns=True,
    tables_as_views=True,
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
        # Lenient readings (measured on 4.3.0): nth_value(v, 0) and (v, -1)
        # are refused as the standard asks (DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE
        # "The offset must be between (0, 9223372036854775807]"). A string
        # cast to DATE keeps the date before a space or a T whatever follows:
        # '2024-01-02 10:30:00', '2024-01-02 25:99:00' and '2024-01-02 junk'
        # are all 2024-01-02 (and '2024' is 2024-01-01, beyond this knob);
        # d > '2024-01-01' and ts = '2024-01-02 10:30:00' read the literal as
        # the column's type ('not a date' is CAST_INVALID_INPUT);
        # string_agg(i, ',') casts to text: 1,-2; 1.50,-0.05; true,false;
        # 2024-01-01 (floats 1.0E20, 1.0E-7; timestamps 2024-01-03 00:00:00.5).
        date_from_string=DateFromString.DATE_PREFIX,
        datetime_vs_string=DatetimeVsString.LITERAL_CAST,
        string_agg_argument=StringAggArgument.CAST_TO_TEXT,
    ),
    identifier_quote="`",
    releases=RELEASES,
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
