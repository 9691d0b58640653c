"""Numeric division whose scale follows the quotient, as PostgreSQL's numeric has it.

PostgreSQL's numeric is a decimal of any length, kept in base-10000 digits
("words"). Its division (numeric_div: select_div_scale, then div_var) picks
the result scale from the operands: enough for at least 16 significant
digits (NUMERIC_MIN_SIG_DIGITS), judged from the leading words alone; never
less than either operand's display scale; between 0 and 1000. The quotient
is rounded half away from zero at that scale. avg over exact numbers (the
sum over the count) and the variances (numeric_stddev_internal) divide this
way: AvgType.NUMERIC and VarianceType.NUMERIC of `harness.core.semantics`.

Everything is computed exactly (ints and Fractions) and rounded once.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

from harness.core.types import SqlType, TypeKind
from reference_impl.numeric import EXACT, exact_sum, round_half_up

MIN_SIG_DIGITS = 16  # NUMERIC_MIN_SIG_DIGITS
MAX_DISPLAY_SCALE = 1000  # NUMERIC_MAX_DISPLAY_SCALE
WORD_DIGITS = 4  # DEC_DIGITS: a word holds four decimal digits


def display_scale(t: SqlType) -> int:
    """The display scale of an exact value of type `t`: every value of a
    NUMERIC(p,s) column has scale s; an integer has 0."""
    if t.kind is TypeKind.DECIMAL and t.scale is not None:
        return t.scale
    return 0


def leading_word(value: Fraction) -> tuple[int, int]:
    """(weight, first word) of |value| in base 10000, the first word being
    nonzero: |value| = first * 10000**weight + (less). Zero is (0, 0)."""
    if value == 0:
        return 0, 0
    magnitude = abs(value)
    weight = _floor_log10(magnitude) // WORD_DIGITS
    return weight, math.floor(magnitude / Fraction(10**WORD_DIGITS) ** weight)


def _floor_log10(value: Fraction) -> int:
    # n / d lies within [10^(a-b-1), 10^(a-b+1)) for a-digit n and b-digit d.
    exponent = len(str(value.numerator)) - len(str(value.denominator))
    return exponent - 1 if value < Fraction(10) ** exponent else exponent


def division_scale(dividend: Fraction, divisor: Fraction, dividend_scale: int,
                   divisor_scale: int = 0) -> int:
    """select_div_scale: the scale of dividend / divisor.

    The quotient's weight is estimated from the leading words: their weights'
    difference, one less when the dividend's first word is not the larger
    (so 1/3 counts as weight -1 and gets 16 + 4 = 20 digits after the point).
    """
    weight1, first1 = leading_word(dividend)
    weight2, first2 = leading_word(divisor)
    quotient_weight = weight1 - weight2 - (1 if first1 <= first2 else 0)
    scale = max(MIN_SIG_DIGITS - quotient_weight * WORD_DIGITS, dividend_scale, divisor_scale, 0)
    return min(scale, MAX_DISPLAY_SCALE)


def numeric_div(dividend: Fraction, divisor: Fraction, dividend_scale: int,
                divisor_scale: int = 0) -> Decimal:
    """dividend / divisor at `division_scale`, rounded half away from zero."""
    scale = division_scale(dividend, divisor, dividend_scale, divisor_scale)
    return round_half_up(dividend / divisor, scale)


def numeric_avg(values: list, scale: int) -> Decimal:
    """avg over exact values of display scale `scale`: their sum over their count."""
    return numeric_div(exact_sum(values), Fraction(len(values)), scale)


def numeric_variance(values: list, scale: int, sample: bool, root: bool) -> Decimal:
    """numeric_stddev_internal over exact values of display scale `scale` (n >= 1,
    and n >= 2 for a sample): the variance (N*sum(x^2) - sum(x)^2) / (N*(N-1)
    or N*N), its numerator exact (scale 2s), rounded at the division's scale;
    the standard deviation is the square root of that rounded variance,
    rounded at the same scale. A numerator <= 0 gives 0."""
    xs = [Fraction(v) for v in values]
    n = len(xs)
    numerator = n * sum(x * x for x in xs) - sum(xs) ** 2
    if numerator <= 0:
        return Decimal(0)
    divisor = Fraction(n * (n - 1 if sample else n))
    rscale = division_scale(numerator, divisor, 2 * scale)
    variance = round_half_up(numerator / divisor, rscale)
    return sqrt_half_up(variance, rscale) if root else variance


def sqrt_half_up(value: Decimal, scale: int) -> Decimal:
    """The square root of `value` >= 0 rounded half away from zero to `scale`
    digits: floor(sqrt(X) + 1/2) with X = value * 10^(2*scale), which is
    floor((floor(2*sqrt(X)) + 1) / 2) and floor(2*sqrt(X)) = isqrt(floor(4X))."""
    scaled = Fraction(value) * 10 ** (2 * scale)
    twice_root = math.isqrt(math.floor(4 * scaled))
    return Decimal((twice_root + 1) // 2).scaleb(-scale, EXACT)
