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

from harness import types as T
from harness.types import SqlType, TypeKind


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
    WIDEN = "widen"  # sum(integer) is a 128-bit integer (DuckDB's HUGEINT)


class AvgType(Enum):
    DOUBLE = "double"
    EXACT = "exact"  # a DECIMAL (for avg over decimals): DECIMAL(38, s+4 within 6..18), rounded
    # avg over DECIMAL(p,s) is DECIMAL(p+4, s+4) (each at most 38), the
    # quotient cut to that scale toward zero, or rounded half away from zero.
    PLUS4_TRUNCATED = "decimal(p+4,s+4), truncated"
    PLUS4_ROUNDED = "decimal(p+4,s+4), rounded half up"


class ArrayAgg(Enum):
    STANDARD = "standard"  # NULL elements kept; no rows gives NULL
    # Spark's array_agg is collect_list: NULL elements dropped, no rows gives [].
    COLLECT_LIST = "collect_list"


@dataclass(frozen=True)
class SemanticsProfile:
    name: str = "standard"
    # Null order for ORDER BY keys that leave it unwritten.
    null_ordering: NullOrdering = NULLS_LARGEST
    integer_division: IntegerDivision = IntegerDivision.TRUNCATE
    sum_overflow: Overflow = Overflow.ERROR
    # avg over integers is DOUBLE on every engine measured; the standard says
    # exact numeric with implementation-defined precision (PostgreSQL: numeric).
    avg_of_integers: AvgType = AvgType.DOUBLE
    avg_of_decimals: AvgType = AvgType.EXACT
    array_agg: ArrayAgg = ArrayAgg.STANDARD

    def aggregate_type(self, name: str, args: tuple[SqlType | None, ...], standard: SqlType | None) -> SqlType | None:
        """The result type of aggregate `name` under this profile (`standard` otherwise)."""
        arg = args[0] if args else None
        if arg is None or standard is None:
            return standard
        if name == "sum" and arg.is_integer and self.sum_overflow is Overflow.WIDEN:
            return T.INT128
        if name == "avg" and arg.is_integer and self.avg_of_integers is AvgType.EXACT:
            return T.decimal(38, 6)
        if name == "avg" and arg.kind is TypeKind.DECIMAL and self.avg_of_decimals is AvgType.DOUBLE:
            return T.FLOAT64
        if name == "avg" and arg.kind is TypeKind.DECIMAL and self.avg_of_decimals in _PLUS4:
            return T.decimal(min(arg.precision + 4, 38), min(arg.scale + 4, 38))
        return standard

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
STANDARD = SemanticsProfile()
