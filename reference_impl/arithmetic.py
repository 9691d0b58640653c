"""Arithmetic on non-NULL numbers, computed in the declared result type.

Exact types stay exact: integers are Python ints checked against the result
type's range (the standard raises on overflow), decimals are computed in an
exact context and rounded to the result scale; floats are IEEE doubles,
rounded to single precision for REAL results.
"""

from __future__ import annotations

import operator
from decimal import Decimal

from harness.core.errors import EvaluationError
from harness.core.model import BinaryOperator
from harness.core.semantics import DivisionByZero
from harness.core.types import SqlType, TypeKind
from reference_impl.numeric import (
    check_integer,
    exact_decimal,
    fit_decimal,
    to_float32,
    trunc_div,
    trunc_mod,
)
from reference_impl.profile import active_profile


def apply_arithmetic(op: BinaryOperator, a: object, b: object, t: SqlType) -> object:
    """`a op b` for non-NULL numbers, computed in the result type `t`."""
    if op in (BinaryOperator.DIV, BinaryOperator.MOD) and b == 0:
        if active_profile().division_by_zero is DivisionByZero.NULL:
            return None
        raise EvaluationError("division by zero")
    if t.is_float:
        result = _FLOAT_OPS[op](float(a), float(b))  # type: ignore[arg-type]
        return to_float32(result) if t.kind is TypeKind.FLOAT32 else result
    if t.is_integer:
        return check_integer(_INTEGER_OPS[op](a, b), t)
    with exact_decimal():
        result = _DECIMAL_OPS[op](Decimal(a), Decimal(b))  # type: ignore[arg-type]
    return fit_decimal(result, t)


_FLOAT_OPS = {
    BinaryOperator.ADD: operator.add,
    BinaryOperator.SUB: operator.sub,
    BinaryOperator.MUL: operator.mul,
    BinaryOperator.DIV: operator.truediv,
}
# Integer division truncates toward zero (PostgreSQL; the standard's exact quotient).
_INTEGER_OPS = {**_FLOAT_OPS, BinaryOperator.DIV: trunc_div, BinaryOperator.MOD: trunc_mod}
# Decimal's % keeps the sign of the dividend, like the standard's MOD.
_DECIMAL_OPS = {**_FLOAT_OPS, BinaryOperator.MOD: operator.mod}


def negate(value: object, t: SqlType) -> object:
    if value is None:
        return None
    result = -value  # type: ignore[operator]
    return check_integer(result, t) if t.is_integer else result
