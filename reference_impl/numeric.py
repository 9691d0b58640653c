"""Exact numeric helpers: integer ranges, decimal rounding, float rounding.

The reference computes exactly (Python int, Fraction, Decimal in a context
that traps any inexact step) and rounds once at the end, so it holds the
correctly rounded answer.
"""

from __future__ import annotations

import ctypes
import math
from decimal import Context, Decimal, Inexact, InvalidOperation, localcontext
from fractions import Fraction

from harness.core.errors import EvaluationError
from harness.core.types import SqlType, TypeKind

INTEGER_RANGES: dict[TypeKind, tuple[int, int]] = {
    TypeKind.INT8: (-(2**7), 2**7 - 1),
    TypeKind.INT16: (-(2**15), 2**15 - 1),
    TypeKind.INT32: (-(2**31), 2**31 - 1),
    TypeKind.INT64: (-(2**63), 2**63 - 1),
    TypeKind.INT128: (-(10**38) + 1, 10**38 - 1),  # what decimal128(38, 0) holds
}

# Decimal arithmetic that is exact or fails loudly: 1000 digits is far more
# than any sum of DECIMAL(38,s) values needs, and Inexact is trapped.
EXACT = Context(prec=1000, Emax=10**6, Emin=-(10**6), traps=[Inexact, InvalidOperation])


def exact_decimal():
    """A `with` block in which Decimal arithmetic is exact (or raises)."""
    return localcontext(EXACT)


def check_integer(value: int, t: SqlType) -> int:
    """The standard raises a data exception (numeric value out of range) on overflow."""
    low, high = INTEGER_RANGES[t.kind]
    if not low <= value <= high:
        raise EvaluationError(f"integer out of range for {t}: {value}")
    return value


def round_half_up(value: Fraction | Decimal | int, scale: int) -> Decimal:
    """`value` rounded to `scale` digits after the point, halves away from zero."""
    exact = Fraction(value) * 10**scale
    magnitude = math.floor(abs(exact) + Fraction(1, 2))
    signed = -magnitude if exact < 0 else magnitude
    return Decimal(signed).scaleb(-scale, EXACT)


def truncate(value: Fraction | Decimal | int, scale: int) -> Decimal:
    """`value` cut to `scale` digits after the point, toward zero."""
    exact = Fraction(value) * 10**scale
    magnitude = math.floor(abs(exact))
    signed = -magnitude if exact < 0 else magnitude
    return Decimal(signed).scaleb(-scale, EXACT)


def fit_decimal(value: Fraction | Decimal | int, t: SqlType, truncated: bool = False) -> Decimal:
    """`value` as a DECIMAL(p,s): rounded (or `truncated`) to s digits, and an
    error when it needs more than p."""
    assert t.precision is not None and t.scale is not None
    rounded = truncate(value, t.scale) if truncated else round_half_up(value, t.scale)
    # copy_abs, not abs(): abs() rounds to the context's 28 digits, and a
    # DECIMAL(38, s) value needs all 38 to be compared exactly.
    if rounded.copy_abs() >= Decimal(10).scaleb(t.precision - t.scale - 1):
        raise EvaluationError(f"numeric value out of range for {t}: {value}")
    return rounded


def to_float32(value: float) -> float:
    """Round a double to the nearest single-precision value (overflow gives inf)."""
    return float(ctypes.c_float(value).value)


def round_float(value: Fraction, t: SqlType) -> float:
    """An exact rational rounded once to the float type `t` (overflow gives +-inf)."""
    try:
        result = float(value)
    except OverflowError:
        result = math.inf if value > 0 else -math.inf
    return to_float32(result) if t.kind is TypeKind.FLOAT32 else result


def special_float_sum(values: list[float]) -> float | None:
    """The IEEE sum when NaN or an infinity takes part, else None.

    NaN anywhere, or +inf with -inf, gives NaN; otherwise the infinity wins.
    """
    if math.isfinite(sum(values)):
        return None  # a NaN or an infinity would have made the plain sum one too
    if any(math.isnan(v) for v in values):
        return math.nan
    has_pos = any(v == math.inf for v in values)
    has_neg = any(v == -math.inf for v in values)
    if has_pos and has_neg:
        return math.nan
    if has_pos:
        return math.inf
    if has_neg:
        return -math.inf
    return None


# Every finite double is an integer multiple of 2**-1074 (the smallest subnormal).
_DOUBLE_UNIT = 2**1074


def exact_sum(values: list[int | float | Decimal]) -> Fraction:
    """The exact sum of finite numbers.

    Doubles are summed as integer multiples of 2**-1074 (plain int additions,
    much faster than adding Fractions); ints and Decimals in an exact context.
    """
    scaled = 0
    others: list[int | Decimal] = []
    for v in values:
        if isinstance(v, float):
            numerator, denominator = v.as_integer_ratio()  # the denominator is a power of 2
            scaled += numerator * (_DOUBLE_UNIT // denominator)
        else:
            others.append(v)
    if not others:
        return Fraction(scaled, _DOUBLE_UNIT)
    if all(type(v) is int for v in others):
        rest = sum(others)  # ints need no decimal context
    else:
        with exact_decimal():
            rest = sum(others, 0)
    # Adding a zero Fraction costs as much as any other addition.
    return Fraction(rest) if scaled == 0 else Fraction(scaled, _DOUBLE_UNIT) + Fraction(rest)


def float_sum(values: list[float]) -> float:
    """The float sum, computed exactly and rounded once."""
    special = special_float_sum(values)
    if special is not None:
        return special
    try:
        return math.fsum(values)  # correctly rounded (Shewchuk's algorithm, one rounding)
    except OverflowError:  # an intermediate partial overflowed; the exact sum may not
        return round_float(exact_sum(values), SqlType(TypeKind.FLOAT64))


def trunc_div(a: int, b: int) -> int:
    """Integer division truncating toward zero (PostgreSQL, C, the standard's exact division)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def trunc_mod(a: int, b: int) -> int:
    """The remainder with the sign of the dividend, so a == b * trunc_div(a, b) + mod."""
    return a - b * trunc_div(a, b)


def sqrt_rounded(value: Fraction) -> float:
    """The float nearest to the square root of an exact rational >= 0.

    Scales by 4**k so that the integer square root s has far more than 53
    bits; then sqrt lies in [s, s + 1), where no rounding boundary of a double
    falls, so s (if exact) or s + 1/2 rounds exactly as the true root does.
    """
    if value == 0:
        return 0.0
    k = 64 + value.denominator.bit_length()
    scaled, remainder = divmod(value.numerator * 4**k, value.denominator)
    s = math.isqrt(scaled)
    if s * s == scaled and remainder == 0:
        return round_float(Fraction(s, 2**k), SqlType(TypeKind.FLOAT64))
    return round_float(Fraction(2 * s + 1, 2 ** (k + 1)), SqlType(TypeKind.FLOAT64))
