"""Type rules: the declared type of arithmetic results and of common supertypes.

Follows the standard's rules for exact and approximate numerics (PostgreSQL
reads them the same way): integers widen to the wider operand, an exact
numeric meeting an approximate one gives DOUBLE PRECISION, and DECIMAL
precision and scale grow so that + - * stay exact.
"""

from __future__ import annotations

from harness.core import types as T
from harness.core.errors import EvaluationError, ReferenceGap
from harness.core.model import BinaryOperator
from harness.core.types import INTEGER_KINDS, SqlType, TypeKind

# The DECIMAL that holds every value of an integer type.
_INTEGER_AS_DECIMAL = {
    TypeKind.INT8: T.decimal(3, 0),
    TypeKind.INT16: T.decimal(5, 0),
    TypeKind.INT32: T.decimal(10, 0),
    TypeKind.INT64: T.decimal(19, 0),
    TypeKind.INT128: T.decimal(38, 0),
}

MAX_PRECISION = 38


def as_decimal(t: SqlType) -> SqlType:
    return _INTEGER_AS_DECIMAL[t.kind] if t.is_integer else t


def _wider_integer(a: SqlType, b: SqlType) -> SqlType:
    return a if INTEGER_KINDS.index(a.kind) >= INTEGER_KINDS.index(b.kind) else b


def _float_of(a: SqlType, b: SqlType) -> SqlType:
    both_single = a.kind is TypeKind.FLOAT32 and b.kind is TypeKind.FLOAT32
    return T.FLOAT32 if both_single else T.FLOAT64


def _decimal(precision: int, scale: int) -> SqlType:
    if scale > MAX_PRECISION:
        raise ReferenceGap(f"a DECIMAL result scale of {scale} exceeds {MAX_PRECISION}")
    return T.decimal(min(precision, MAX_PRECISION), scale)


def arithmetic_type(op: BinaryOperator, a: SqlType, b: SqlType) -> SqlType:
    """The declared type of `a op b` for numeric operands (+ - * / %)."""
    if not (a.is_numeric and b.is_numeric):
        datetimes = (T.DATE, T.TIMESTAMP)
        if op in (BinaryOperator.ADD, BinaryOperator.SUB) and (a in datetimes or b in datetimes):
            # `d1 - d2`, `d - 1`: the standard subtracts datetimes only with an
            # interval qualifier (`(d1 - d2) DAY`), but every engine answers the
            # bare form, each with its own result type (an integer count of days,
            # an INTERVAL): a gap in the oracle, not an invalid query.
            raise ReferenceGap(f"datetime arithmetic {a} {op.value} {b} (engines differ in its type)")
        raise EvaluationError(f"operator {op.value} needs numbers, got {a} and {b}")
    if a.is_float or b.is_float:
        return _float_of(a, b)
    if a.is_integer and b.is_integer:
        return _wider_integer(a, b)
    return _decimal_arithmetic_type(op, as_decimal(a), as_decimal(b))


def _decimal_arithmetic_type(op: BinaryOperator, a: SqlType, b: SqlType) -> SqlType:
    p1, s1, p2, s2 = a.precision, a.scale, b.precision, b.scale
    assert p1 is not None and s1 is not None and p2 is not None and s2 is not None
    scale = max(s1, s2)
    if op in (BinaryOperator.ADD, BinaryOperator.SUB):
        return _decimal(max(p1 - s1, p2 - s2) + scale + 1, scale)
    if op is BinaryOperator.MUL:
        return _decimal(p1 + p2 + 1, s1 + s2)
    if op is BinaryOperator.MOD:
        return _decimal(min(p1 - s1, p2 - s2) + scale, scale)
    # The scale of an exact quotient is implementation-defined in the standard,
    # and the engines pick different ones (PostgreSQL, DuckDB and Spark differ).
    raise ReferenceGap("DECIMAL division: the result scale is implementation-defined")


def common_type(types: list[SqlType | None]) -> SqlType | None:
    """The type every one of `types` converts to (CASE, COALESCE, UNION ALL)."""
    result: SqlType | None = None
    for t in types:
        result = t if result is None else (result if t is None else _common_pair(result, t))
    return result


def _common_pair(a: SqlType, b: SqlType) -> SqlType:
    if a == b:
        return a
    if a.is_numeric and b.is_numeric:
        return _common_numeric(a, b)
    datetimes = {TypeKind.DATE, TypeKind.TIMESTAMP}
    if a.kind in datetimes and b.kind in datetimes:
        return T.TIMESTAMP
    raise EvaluationError(f"no common type for {a} and {b}")


def _common_numeric(a: SqlType, b: SqlType) -> SqlType:
    if a.is_float or b.is_float:
        return _float_of(a, b)
    if a.is_integer and b.is_integer:
        return _wider_integer(a, b)
    a, b = as_decimal(a), as_decimal(b)
    assert a.precision is not None and a.scale is not None
    assert b.precision is not None and b.scale is not None
    scale = max(a.scale, b.scale)
    return _decimal(max(a.precision - a.scale, b.precision - b.scale) + scale, scale)
