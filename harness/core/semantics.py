"""Semantics profiles: the by-design differences between engines, as data.

The SQL standard leaves some behaviour to the implementation (where NULLs
sort when ORDER BY does not say, the type of avg over exact numbers) and
engines deliberately differ from it in other places (integer division,
overflow). A profile names one choice for each; every dialect declares its
engine's profile, and the reference evaluates a query under the profile of
the engine it judges. A difference that a profile explains is by design, not
a finding; queries that write every default explicitly give the same answer
under every profile, apart from these knobs.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from harness.core import types as T
from harness.core.types import SqlType, TypeKind


@dataclass(frozen=True)
class NullOrdering:
    """Where an engine puts NULLs when ORDER BY says nothing."""

    nulls_first_asc: bool
    nulls_first_desc: bool

    def nulls_first(self, descending: bool) -> bool:
        return self.nulls_first_desc if descending else self.nulls_first_asc


NULLS_LARGEST = NullOrdering(nulls_first_asc=False, nulls_first_desc=True)  # PostgreSQL, DataFusion
NULLS_SMALLEST = NullOrdering(nulls_first_asc=True, nulls_first_desc=False)  # Spark, SQLite
NULLS_ALWAYS_LAST = NullOrdering(nulls_first_asc=False, nulls_first_desc=False)  # DuckDB >= 0.8


class IntegerDivision(Enum):
    TRUNCATE = "truncate"  # 7 / 2 = 3 (PostgreSQL, DataFusion, SQLite)
    TO_DOUBLE = "double"  # 7 / 2 = 3.5 (Spark, DuckDB >= 0.8)


class Overflow(Enum):
    ERROR = "error"  # the standard: a data exception (Spark in ANSI mode)
    WRAP = "wrap"  # two's complement wrap-around at 64 bits
    WIDEN = "widen"  # sum(integer) is a 128-bit integer (DuckDB's HUGEINT); a decimal sum has no limit


class AvgType(Enum):
    DOUBLE = "double"
    EXACT = "exact"  # a DECIMAL (for avg over decimals): DECIMAL(38, s+4 within 6..18), rounded
    # avg over DECIMAL(p,s) is DECIMAL(p+4, s+4) (each at most 38), the
    # quotient cut to that scale toward zero, or rounded half away from zero.
    PLUS4_TRUNCATED = "decimal(p+4,s+4), truncated"
    PLUS4_ROUNDED = "decimal(p+4,s+4), rounded half up"
    # PostgreSQL: numeric, the sum divided by the count with numeric division's
    # own scale (select_div_scale: 16 significant digits at least, at least the
    # sum's scale), rounded half away from zero; the scale follows each quotient.
    NUMERIC = "numeric, PostgreSQL's division scale"


class VarianceType(Enum):
    """var_samp, var_pop, stddev_samp and stddev_pop over exact numbers."""

    DOUBLE = "double"  # the function table's (and every engine's but one)
    # PostgreSQL: numeric. (N*sum(x^2) - sum(x)^2) / (N*(N-1) or N*N) computed
    # exactly and rounded half away from zero at numeric division's scale;
    # the standard deviation is the square root of that rounded variance, at
    # the same scale; a numerator <= 0 gives 0.
    NUMERIC = "numeric, PostgreSQL's division scale"


class ArrayAgg(Enum):
    STANDARD = "standard"  # NULL elements kept; no rows gives NULL
    # Spark's array_agg is collect_list: NULL elements dropped, no rows gives [].
    COLLECT_LIST = "collect_list"


class NthValueBelowOne(Enum):
    """nth_value(x, n) with n < 1 (n NULL gives NULL under every choice)."""

    ERROR = "error"  # the standard: a data exception (PostgreSQL, Spark, SQLite)
    NULL = "null"  # DuckDB: NULL for every n < 1
    # DataFusion: 0 gives NULL, -k the k-th value from the frame's end.
    FROM_END = "from the end"


class DateFromString(Enum):
    """CAST of a string that is not just a date to DATE ('2024-01-02 10:30:00')."""

    STRICT = "date only"  # the standard: a data exception (invalid datetime format)
    # A string the timestamp cast reads gives its date (PostgreSQL, DuckDB, DataFusion).
    TIMESTAMP_DATE = "a timestamp's date"
    # Spark: the date before a space or a T, whatever follows ('2024-01-02 junk').
    DATE_PREFIX = "the date before ' ' or 'T'"


class DatetimeVsString(Enum):
    """A DATE or TIMESTAMP compared with a character string literal (d > '2024-01-01')."""

    ERROR = "error"  # the standard: the operands are not comparable (a syntax rule)
    # The literal is cast to the other side's type (PostgreSQL's unknown literal;
    # DuckDB, DataFusion, Spark), by the profile's own cast (`date_from_string`).
    LITERAL_CAST = "the literal cast to the datetime's type"


class StringAggArgument(Enum):
    """string_agg(x, ',') over an x that is not a character string."""

    ERROR = "error"  # the standard's LISTAGG takes character strings (PostgreSQL)
    CAST_TO_TEXT = "cast to text"  # DuckDB, DataFusion, Spark, SQLite


class InvalidString(Enum):
    """A CAST of a character string the target type cannot read ('x' AS INTEGER,
    'not a date' AS DATE), also where a comparison casts a string literal."""

    ERROR = "error"  # the standard: a data exception (Spark in ANSI mode, its default since 4.0)
    NULL = "null"  # Spark with ANSI mode off (its default before 4.0): NULL


class DivisionByZero(Enum):
    """x / 0 and x % 0 for numbers."""

    ERROR = "error"  # the standard: a data exception
    NULL = "null"  # Spark with ANSI mode off (its default before 4.0): NULL


@dataclass(frozen=True)
class SemanticsProfile:
    name: str = "standard"
    # Null order for ORDER BY keys that leave it unwritten.
    null_ordering: NullOrdering = NULLS_LARGEST
    integer_division: IntegerDivision = IntegerDivision.TRUNCATE
    sum_overflow: Overflow = Overflow.ERROR
    # sum over DECIMAL(p,s) past 38 digits: the standard's error (ERROR), or
    # none at all (WIDEN: PostgreSQL's numeric has no such limit).
    decimal_sum_overflow: Overflow = Overflow.ERROR
    # avg over integers is DOUBLE on every engine measured but PostgreSQL; the
    # standard says exact numeric with implementation-defined precision.
    avg_of_integers: AvgType = AvgType.DOUBLE
    avg_of_decimals: AvgType = AvgType.EXACT
    array_agg: ArrayAgg = ArrayAgg.STANDARD
    # The variances and standard deviations over integers and decimals.
    variance_of_exact: VarianceType = VarianceType.DOUBLE
    # Lenient readings of queries the standard refuses: an engine that
    # answers them by design is judged by its profile's answer, with a note.
    nth_value_below_one: NthValueBelowOne = NthValueBelowOne.ERROR
    date_from_string: DateFromString = DateFromString.STRICT
    datetime_vs_string: DatetimeVsString = DatetimeVsString.ERROR
    string_agg_argument: StringAggArgument = StringAggArgument.ERROR
    invalid_string_cast: InvalidString = InvalidString.ERROR
    division_by_zero: DivisionByZero = DivisionByZero.ERROR

    def aggregate_type(self, name: str, args: tuple[SqlType | None, ...], standard: SqlType | None) -> SqlType | None:
        """The result type of aggregate `name` under this profile (`standard` otherwise)."""
        arg = args[0] if args else None
        if arg is None or standard is None:
            return standard
        exact = arg.is_integer or arg.kind is TypeKind.DECIMAL
        if name == "sum" and arg.is_integer and self.sum_overflow is Overflow.WIDEN:
            return T.INT128
        if name == "avg" and exact and self.avg_type(arg) is AvgType.NUMERIC:
            return numeric_quotient_type(integer_digits(arg))
        if name == "avg" and arg.is_integer and self.avg_of_integers is AvgType.EXACT:
            return T.decimal(38, 6)
        if name == "avg" and arg.kind is TypeKind.DECIMAL and self.avg_of_decimals is AvgType.DOUBLE:
            return T.FLOAT64
        if name == "avg" and arg.kind is TypeKind.DECIMAL and self.avg_of_decimals in _PLUS4:
            return T.decimal(min(arg.precision + 4, 38), min(arg.scale + 4, 38))
        if name in VARIANCES and exact and self.variance_of_exact is VarianceType.NUMERIC:
            return numeric_quotient_type(2 * integer_digits(arg))
        return standard

    def avg_type(self, arg: SqlType) -> AvgType:
        """The knob that rules avg over `arg`."""
        return self.avg_of_integers if arg.is_integer else self.avg_of_decimals

    def division_type(self, left: SqlType, right: SqlType, standard: SqlType) -> SqlType:
        """The type of `left / right` under this profile."""
        both_integer = left.is_integer and right.is_integer
        if both_integer and self.integer_division is IntegerDivision.TO_DOUBLE:
            return T.FLOAT64
        return standard

    def differences(self, other: SemanticsProfile) -> list[str]:
        """The knobs on which two profiles differ, by name."""
        return [
            name
            for name in self.__dataclass_fields__
            if name != "name" and getattr(self, name) != getattr(other, name)
        ]


_PLUS4 = (AvgType.PLUS4_TRUNCATED, AvgType.PLUS4_ROUNDED)
VARIANCES = ("var_samp", "var_pop", "stddev_samp", "stddev_pop")

# Decimal digits before the point that a value of each integer type may need.
_INTEGER_DIGITS = {TypeKind.INT8: 3, TypeKind.INT16: 5, TypeKind.INT32: 10, TypeKind.INT64: 19,
                   TypeKind.INT128: 38}


def integer_digits(t: SqlType) -> int:
    """How many digits before the point a value of the exact type `t` may have."""
    if t.kind is TypeKind.DECIMAL:
        assert t.precision is not None and t.scale is not None
        return t.precision - t.scale
    return _INTEGER_DIGITS[t.kind]


def numeric_quotient_type(whole_digits: int) -> SqlType:
    """The declared type of a numeric quotient whose scale follows its value
    (AvgType.NUMERIC, VarianceType.NUMERIC): DECIMAL(38, s) with room for
    `whole_digits` before the point. A quotient may still need more digits
    than that (its scale grows as it shrinks: 1/3 has 20 of them, 1e18/7 16),
    so the reference sizes such a column to its values when it answers
    (`reference_impl.output`), as PostgreSQL's unconstrained numeric is."""
    return T.decimal(38, max(38 - min(whole_digits, 38), 0))


STANDARD = SemanticsProfile()
