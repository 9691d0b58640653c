"""The aggregates issue 16 added: quantiles, mode, first/last/any_value, the
two-variable statistics, the bitwise aggregates and count_if.

Each takes the argument tuples of the rows that survived FILTER (and
DISTINCT), in the order the frame or the aggregate's ORDER BY gives, as the
functions of `reference_impl.aggregates` do. An ordered-set aggregate
(`percentile_cont(p) WITHIN GROUP (ORDER BY x)`) sees (x, p) tuples: its
WITHIN GROUP value first, then its arguments.

Undetermined answers: mode with several values equally frequent and
any_value with several distinct non-NULL values have more than one right
answer, and engines pick differently (measured: DuckDB's mode takes the first
in frame order, Spark's another), so the reference raises ReferenceGap exactly
when the candidates really differ, never a guess the comparator would hold
an engine to.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from functools import cmp_to_key
from typing import Protocol

from harness.core import types as T
from harness.core.errors import ReferenceGap
from reference_impl.float_error import summed
from reference_impl.numeric import round_float, sqrt_rounded
from reference_impl.values import compare, plainly_ordered, row_key


class CallOptions(Protocol):
    """What these aggregates read of their call (`aggregates.CompiledAggregate`
    provides it): declared here so that this module, which `aggregates`
    imports, needs nothing back from it."""

    @property
    def within(self) -> Sequence[object]: ...  # WITHIN GROUP's key, empty without one

    @property
    def descending(self) -> bool: ...  # WITHIN GROUP (ORDER BY ... DESC)

    @property
    def fraction(self) -> Fraction | None: ...  # a quantile's constant p


Aggregate = Callable[[list[tuple], CallOptions], object]


def _present(rows: list[tuple]) -> list:
    return [r[0] for r in rows if r[0] is not None]


def sorted_values(rows: list[tuple], descending: bool) -> list:
    """The non-NULL values in the WITHIN GROUP order (NaN is the largest value)."""
    values = _present(rows)
    if plainly_ordered(values):  # Python's own order is `compare`'s: sort natively
        return sorted(values, reverse=descending)
    return sorted(values, key=cmp_to_key(compare), reverse=descending)


# -- quantiles -----------------------------------------------------------------


def continuous_positions(n: int, p: Fraction) -> tuple[int, int, Fraction]:
    """The standard's row numbers for percentile_cont: RN = 1 + p * (n - 1),
    its floor and ceiling (0-based here), and the weight of the ceiling row."""
    rn = p * (n - 1)
    low = math.floor(rn)
    return low, math.ceil(rn), rn - low


def percentile_cont(values: list, p: Fraction) -> float | None:
    """Linear interpolation between the two rows around RN, exact, rounded once."""
    if not values:
        return None
    low, high, weight = continuous_positions(len(values), p)
    a, b = values[low], values[high]
    if weight == 0 or a == b:
        return float(a)
    if not (math.isfinite(a) and math.isfinite(b)):
        # The extended reals: a weighted mean with an infinity is that
        # infinity, of -inf and inf undefined (NaN), as is any mean with NaN.
        # (Engines differ here: measured, DuckDB's median(-inf, 5) is -inf,
        # DataFusion's quantile_cont(x, 0.5) NaN, the form lo + (hi - lo) * w.)
        return _extended_mean(float(a), float(b))
    return round_float(Fraction(a) + (Fraction(b) - Fraction(a)) * weight, T.FLOAT64)


def _extended_mean(a: float, b: float) -> float:
    """A mean of a and b with positive weights, where one is not finite."""
    if math.isnan(a) or math.isnan(b) or (math.isinf(a) and math.isinf(b)):
        return math.nan  # equal infinities were answered before
    return a if math.isinf(a) else b


def percentile_disc(values: list, p: Fraction) -> object:
    """The first value whose cumulative distribution (i / n) is at least p."""
    if not values:
        return None
    n = len(values)
    return values[max(math.ceil(p * n), 1) - 1]


def continuous_magnitude(values: list, p: Fraction) -> float:
    """The scale of the interpolation's float error: the two values it mixes."""
    low, high, _ = continuous_positions(len(values), p)
    return max(abs(float(values[low])), abs(float(values[high])))


def _quantile(discrete: bool) -> Aggregate:
    def fn(rows: list[tuple], agg: CallOptions) -> object:
        values = sorted_values(rows, agg.descending)
        assert agg.fraction is not None
        return percentile_disc(values, agg.fraction) if discrete else percentile_cont(values, agg.fraction)

    return fn


def _median(rows: list[tuple], agg: CallOptions) -> object:
    return percentile_cont(sorted_values(rows, False), Fraction(1, 2))


# -- values picked from the frame -------------------------------------------------


def _mode(rows: list[tuple], agg: CallOptions) -> object:
    counts: dict[object, list] = {}
    for value in _present(rows):
        counts.setdefault(row_key((value,)), []).append(value)
    if not counts:
        return None
    top = max(len(vs) for vs in counts.values())
    winners = [vs[0] for vs in counts.values() if len(vs) == top]
    if len(winners) > 1 and agg.within:  # mode() WITHIN GROUP: the first in that order
        return sorted(winners, key=cmp_to_key(compare), reverse=agg.descending)[0]
    if len(winners) > 1:
        raise ReferenceGap("mode() with several values equally frequent: engines pick differently")
    return winners[0]


def _any_value(rows: list[tuple], agg: CallOptions) -> object:
    distinct = {row_key((v,)): v for v in _present(rows)}
    if len(distinct) > 1:
        raise ReferenceGap("any_value() over distinct non-NULL values: any of them is right")
    return next(iter(distinct.values()), None)


def _first(rows: list[tuple], agg: CallOptions) -> object:
    return rows[0][0] if rows else None


def _last(rows: list[tuple], agg: CallOptions) -> object:
    return rows[-1][0] if rows else None


# -- two-variable statistics over (y, x) pairs ---------------------------------------


class Pairs:
    """Sums of the standard's <binary set function>s, exact: the pairs whose
    y and x are both not NULL, with Sxx, Syy, Sxy the sums of squared and
    crossed deviations from the means."""

    def __init__(self, rows: list[tuple]) -> None:
        pairs = [(y, x) for y, x in rows if y is not None and x is not None]
        self.n = len(pairs)
        self.finite_y = all(math.isfinite(y) for y, _ in pairs)
        self.finite_x = all(math.isfinite(x) for _, x in pairs)
        self.finite = self.finite_y and self.finite_x
        self.ys = [Fraction(y) for y, _ in pairs] if self.finite_y else []
        self.xs = [Fraction(x) for _, x in pairs] if self.finite_x else []

    def mean(self, vs: list[Fraction]) -> Fraction:
        return sum(vs, Fraction(0)) / self.n

    def spread(self, a: list[Fraction], b: list[Fraction]) -> Fraction:
        ma, mb = self.mean(a), self.mean(b)
        return sum(((u - ma) * (v - mb) for u, v in zip(a, b, strict=True)), Fraction(0))

    def constant_x(self) -> bool:
        """x's spread is zero (decided on finite x values only)."""
        return self.finite_x and self.spread(self.xs, self.xs) == 0

    def constant_y(self) -> bool:
        return self.finite_y and self.spread(self.ys, self.ys) == 0


def _binary(needs: int, compute: Callable[[Pairs], Fraction | float | None],
            degenerate: Callable[[Pairs], bool] = lambda s: False) -> Aggregate:
    """A statistic NULL below `needs` pairs and where the standard's condition
    (`degenerate`: a zero spread, read on x or y alone) holds; else NaN when a
    value is not finite (as the variances are), else `compute` exactly,
    rounded once."""

    def fn(rows: list[tuple], agg: CallOptions) -> object:
        pairs = Pairs(rows)
        if pairs.n < needs or degenerate(pairs):
            return None
        if not pairs.finite:
            return math.nan
        value = compute(pairs)
        return round_float(value, T.FLOAT64) if isinstance(value, Fraction) else value

    return fn


def _corr(s: Pairs) -> float | None:
    sxx, syy, sxy = s.spread(s.xs, s.xs), s.spread(s.ys, s.ys), s.spread(s.xs, s.ys)
    if sxx == 0 or syy == 0:
        return None  # the standard: NULL when either variance is zero
    root = sqrt_rounded(sxy * sxy / (sxx * syy))
    return -root if sxy < 0 else root


def _slope(s: Pairs) -> Fraction | None:
    sxx = s.spread(s.xs, s.xs)
    return None if sxx == 0 else s.spread(s.xs, s.ys) / sxx


def _intercept(s: Pairs) -> Fraction | None:
    slope = _slope(s)
    return None if slope is None else s.mean(s.ys) - slope * s.mean(s.xs)


def _regr_count(rows: list[tuple], agg: CallOptions) -> int:
    return sum(1 for y, x in rows if y is not None and x is not None)


def pair_magnitude(rows: list[tuple]) -> float | None:
    """The scale of a covariance's float error: sqrt(mean(y^2) * mean(x^2)),
    which bounds both mean(|x*y|) and |mean(x) * mean(y)| (Cauchy-Schwarz);
    for corr and the slope, divided by the spreads they are divided by."""
    pairs = [(float(y), float(x)) for y, x in rows if y is not None and x is not None]
    if not pairs:
        return None
    ys = _bound_sum(y * y for y, _ in pairs) / len(pairs)
    xs = _bound_sum(x * x for _, x in pairs) / len(pairs)
    return math.sqrt(ys * xs)


def _bound_sum(values: Iterable[float]) -> float:
    """A sum for an error scale: math.fsum, or inf where an infinity or an overflow
    is among the terms (fsum refuses -inf + inf, and overflows past the largest
    double: either way the value it scales is no finite number then)."""
    try:
        return math.fsum(values)
    except (ValueError, OverflowError):
        return math.inf


def _as_float(exact: Fraction) -> float:
    """An exact non-negative spread as a float; past the largest double, inf (a spread
    of values near 1e300 squared: the error it scales is then below any float's)."""
    try:
        return float(exact)
    except OverflowError:
        return math.inf


def _scaled_magnitude(by_x_only: bool) -> Callable[[list[tuple]], float | None]:
    """corr's (and regr_slope's) error: the covariance's, over the spread(s)."""

    def fn(rows: list[tuple]) -> float | None:
        base = pair_magnitude(rows)
        pairs = Pairs(rows)
        if base is None or not pairs.finite or pairs.n == 0:
            return base
        vx = _as_float(pairs.spread(pairs.xs, pairs.xs) / pairs.n)
        vy = _as_float(pairs.spread(pairs.ys, pairs.ys) / pairs.n)
        denominator = vx if by_x_only else math.sqrt(vx * vy)
        return max(base / denominator, 1.0) if denominator > 0 else base

    return fn


def _intercept_magnitude(rows: list[tuple]) -> float | None:
    slope_scale = _scaled_magnitude(True)(rows)
    pairs = [(float(y), float(x)) for y, x in rows if y is not None and x is not None]
    if slope_scale is None or not pairs:
        return slope_scale
    mean_y = abs(_bound_sum(y for y, _ in pairs)) / len(pairs)
    mean_x = abs(_bound_sum(x for _, x in pairs)) / len(pairs)
    return mean_y + slope_scale * mean_x


# -- bitwise and counting --------------------------------------------------------------


def _bitwise(op: Callable[[int, int], int]) -> Aggregate:
    def fn(rows: list[tuple], agg: CallOptions) -> object:
        values = _present(rows)
        if not values:
            return None
        out = values[0]
        for v in values[1:]:
            out = op(out, v)  # Python's ints act as two's complement of any width
        return out

    return fn


def _count_if(rows: list[tuple], agg: CallOptions) -> int:
    return sum(1 for (b,) in rows if b is True)


AGGREGATES: dict[str, Aggregate] = {
    "median": _median,
    "quantile_cont": _quantile(discrete=False),
    "quantile_disc": _quantile(discrete=True),
    "percentile_cont": _quantile(discrete=False),
    "percentile_disc": _quantile(discrete=True),
    "mode": _mode,
    "first": _first,
    "last": _last,
    "any_value": _any_value,
    "covar_pop": _binary(1, lambda s: s.spread(s.xs, s.ys) / s.n),
    "covar_samp": _binary(2, lambda s: s.spread(s.xs, s.ys) / (s.n - 1)),
    "corr": _binary(1, _corr, lambda s: s.constant_x() or s.constant_y()),
    "regr_slope": _binary(1, _slope, Pairs.constant_x),
    "regr_intercept": _binary(1, _intercept, Pairs.constant_x),
    "regr_count": _regr_count,
    "bit_and": _bitwise(lambda a, b: a & b),
    "bit_or": _bitwise(lambda a, b: a | b),
    "bit_xor": _bitwise(lambda a, b: a ^ b),
    "count_if": _count_if,
}

def _quantile_magnitude(rows: list[tuple], agg: CallOptions) -> float | None:
    values = sorted_values(rows, agg.descending)
    p = Fraction(1, 2) if agg.fraction is None else agg.fraction
    return continuous_magnitude(values, p) if values else None


def _of_rows(fn: Callable[[list[tuple]], float | None], summing: bool = False) -> RowMagnitude:
    """`fn` of the rows; for an aggregate that sums over its pairs, grown with
    their number (`reference_impl.float_error`)."""
    if not summing:
        return lambda rows, agg: fn(rows)

    def grown(rows: list[tuple], agg: CallOptions) -> float | None:
        scale = fn(rows)
        pairs = sum(1 for row in rows if row[0] is not None and row[1] is not None)
        return None if scale is None else summed(scale, pairs)

    return grown


RowMagnitude = Callable[[list[tuple], CallOptions], "float | None"]

# Magnitudes computed from the argument tuples (the others from the values).
ROW_MAGNITUDES: dict[str, RowMagnitude] = {
    "median": _quantile_magnitude,
    "quantile_cont": _quantile_magnitude,
    "percentile_cont": _quantile_magnitude,
    "covar_pop": _of_rows(pair_magnitude, summing=True),
    "covar_samp": _of_rows(pair_magnitude, summing=True),
    "corr": _of_rows(_scaled_magnitude(False), summing=True),
    "regr_slope": _of_rows(_scaled_magnitude(True), summing=True),
    "regr_intercept": _of_rows(_intercept_magnitude, summing=True),
}
