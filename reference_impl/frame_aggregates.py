"""Window aggregates over the frames of every row of a partition.

The definition (`each_frame`): the aggregate over each row's frame, its
rows in window order (`CompiledAggregate.evaluate`); rows whose frame is the
same (every row of a whole-partition frame, the peers of a RANGE frame)
share one computation. A frame that moves with the row (sliding, growing,
or with an EXCLUDE) is computed anew for each row, at the cost of its size.

Fast path (`frames_at_once`) for count, sum, avg, min and max, their FILTER
and the frame's EXCLUDE included, the cost of the partition's size (times its
logarithm for min and max) whatever the frames:

- count, sum and avg read prefix sums (over the partition, in window order)
  of what the definition sums: per run of a frame, the difference of two.
  Sums are exact, as the definition's are: integers and decimals as they
  are, doubles as integer multiples of 2**-1074 (see `numeric.exact_sum`),
  with NaN and the infinities counted apart (`special_float_sum` decides by
  which of them are present); the one rounding is then the definition's:
  `math.fsum` rounds the exact sum correctly, and so does int / int (an
  exact zero is +0.0 but of -0.0s alone, where it is what fsum makes of them).
- min and max read a sparse table: the extreme of each stretch of 2**k
  positions, a frame's run being the union of two (overlapping) stretches.
  Each position is keyed by its value's `order_key` (ordered as `compare`
  orders values) and its position, so that of equal values the first in
  window order wins, as Python's min and max keep the first of equals.

It declines (None) what it does not cover: DISTINCT (but for min and max:
dropping later duplicates keeps the first of equal values), an aggregate
ORDER BY (its sort may raise), values of more than one type, decimal NaN and
infinities; and anything that raises, so that the definition raises (or not)
as it does. tests/test_reference_frame_speed.py checks it against `each_frame`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from decimal import Decimal
from fractions import Fraction
from itertools import accumulate, chain
from operator import sub

from harness.core.errors import HarnessError
from harness.core.semantics import AvgType, Overflow
from harness.core.types import SqlType, TypeKind
from reference_impl.aggregates import (
    _MAGNITUDES,
    AggregateInput,
    CompiledAggregate,
    _exact_argument,
    _integer_sum,
)
from reference_impl.float_error import summed
from reference_impl.frames import Runs, run_positions
from reference_impl.numeric import (
    INTEGER_RANGES,
    exact_decimal,
    fit_decimal,
    round_half_up,
    to_float32,
)
from reference_impl.numeric_division import display_scale, numeric_div
from reference_impl.profile import active_profile
from reference_impl.relation import Row
from reference_impl.statistics import ROW_MAGNITUDES
from reference_impl.values import order_keys, plainly_ordered

Columns = tuple[list, list]  # per row of a partition: a value, and its magnitude


def each_frame(
    agg: CompiledAggregate, prepared: Sequence[AggregateInput], runs: Sequence[Runs]
) -> Columns:
    """The definition: `agg` over the rows of each frame, rows with the same
    frame sharing it; the values, and their magnitudes."""
    by_frame: dict[Runs, tuple[object, float | None]] = {}
    values, magnitudes = [], []
    for frame in runs:
        if frame not in by_frame:
            by_frame[frame] = agg.evaluate([prepared[p] for p in run_positions(frame)])
        value, magnitude = by_frame[frame]
        values.append(value)
        magnitudes.append(magnitude)
    return values, magnitudes


def frames_at_once(agg: CompiledAggregate, rows: Sequence[Row], runs: Sequence[Runs]) -> Columns | None:
    """`each_frame(agg, agg.prepare_rows(rows), runs)`, or None where the fast
    path does not apply."""
    at_once = _AT_ONCE.get(agg.call.name)
    if at_once is None or agg.order or agg.within:
        return None
    if agg.call.distinct and agg.call.name not in ("min", "max"):
        return None
    try:
        return at_once(agg, _Inputs(agg, rows), _Frames(runs))
    except (_Declined, HarnessError, ArithmeticError):
        return None  # the definition decides, and raises (or not) as it does


class _Declined(Exception):
    """Values the fast path leaves to the definition."""


class _Inputs:
    """What `prepare` makes of each row, as the fast path reads it: `kept`,
    whether FILTER keeps the row; `values`, the argument of each kept row
    (None for the others; all None for count(*)). The same calls as
    `prepare`'s in the same order, so the same first error, which the
    definition then raises; but no AggregateInput is made."""

    def __init__(self, agg: CompiledAggregate, rows: Sequence[Row]) -> None:
        argument = agg.args[0].fn if agg.args else lambda row: None
        keep = agg.filter
        if keep is None:
            self.kept = [True] * len(rows)
            self.values = list(map(argument, rows))
            return
        self.kept, self.values = [], []
        for row in rows:
            kept = keep(row) is True
            value = argument(row)
            self.kept.append(kept)
            self.values.append(value if kept else None)


class _Frames:
    """The runs of each frame, and where every frame is one run (or none),
    their starts and ends (`spans`: an empty frame starts where it ends),
    which the loops below read in C."""

    def __init__(self, runs: Sequence[Runs]) -> None:
        self.runs = runs
        self.spans: tuple[list[int], list[int]] | None = getattr(runs, "extents", None)
        if self.spans is None and all(len(frame) <= 1 for frame in runs):
            self.spans = [f[0][0] if f else 0 for f in runs], [f[0][1] if f else 0 for f in runs]

    def __len__(self) -> int:
        return len(self.runs)


AtOnce = Callable[[CompiledAggregate, _Inputs, _Frames], Columns]


def _with_magnitudes(
    agg: CompiledAggregate, values: list, magnitudes: Callable[[], list] | None = None
) -> Columns:
    """The values with their magnitudes, as `CompiledAggregate.evaluate` gives
    them (`magnitudes()`: the `_MAGNITUDES` rule of sum and avg, per frame)."""
    t = agg.result_type
    if t is None or not t.is_float:
        return values, [None] * len(values)
    assert agg.call.name not in ROW_MAGNITUDES
    if agg.call.name not in _MAGNITUDES:
        return values, [None if value is None else abs(value) for value in values]  # type: ignore[arg-type]
    assert magnitudes is not None
    return values, [None if v is None else m for v, m in zip(values, magnitudes(), strict=True)]


# ---------------------------------------------------------------------------
# count, sum and avg: sums over runs


def _prefix(items: Sequence) -> list:
    """prefix[p]: the sum of items[:p]."""
    return [0, *accumulate(items)]


def _totals(prefix: list, frames: _Frames) -> list:
    """Each frame's sum: per run, the difference of the prefix sums at its ends."""
    if frames.spans is not None:
        starts, ends = frames.spans
        return list(map(sub, map(prefix.__getitem__, ends), map(prefix.__getitem__, starts)))
    totals = []
    for frame in frames.runs:
        if len(frame) == 1:
            ((start, end),) = frame
            totals.append(prefix[end] - prefix[start])
        else:
            totals.append(sum(prefix[end] - prefix[start] for start, end in frame))
    return totals


def _counts(flags: list[bool], frames: _Frames) -> list[int]:
    """Per frame, how many of its positions are flagged."""
    if not any(flags):
        return [0] * len(frames)
    return _totals(_prefix([int(f) for f in flags]), frames)


def _count(agg: CompiledAggregate, inputs: _Inputs, frames: _Frames) -> Columns:
    flags = inputs.kept if agg.star else [v is not None for v in inputs.values]
    return _with_magnitudes(agg, _counts(flags, frames))


class _Sums:
    """Per frame, the count of the non-NULL values the aggregate reads and
    their exact sum (ints, Decimals, or doubles in units of 2**-1074), with the
    NaN, +inf, -inf and -0.0 among them counted apart. `kind`: the values'
    type, None when there are none."""

    def __init__(self, values: list, frames: _Frames) -> None:
        kinds = {type(v) for v in values if v is not None}
        self.kind = kinds.pop() if len(kinds) == 1 else None
        if kinds or self.kind not in (None, int, float, Decimal):
            raise _Declined  # several types, or bools: left to the definition
        self.counts = _counts([v is not None for v in values], frames)
        self.special = False  # some NaN, infinity or -0.0
        if self.kind is Decimal:
            if not all(v.is_finite() for v in values if v is not None):
                raise _Declined
            with exact_decimal():  # traps an inexact step (then the definition decides)
                self.totals = _totals(_prefix([v or 0 for v in values]), frames)
        elif self.kind is float:
            self.scaled = [_scaled(v) for v in values]
            self.totals = _totals(_prefix(self.scaled), frames)
            self.special = not all(
                -math.inf < v < math.inf and (v or math.copysign(1, v) > 0)
                for v in values
                if v is not None
            )
            if self.special:
                self.nans = _counts([v is not None and v != v for v in values], frames)
                self.pos = _counts([v == math.inf for v in values], frames)
                self.neg = _counts([v == -math.inf for v in values], frames)
                self.negative_zeros = _counts(
                    [v == 0 and math.copysign(1, v) < 0 for v in values], frames
                )
        else:
            self.totals = _totals(_prefix([v or 0 for v in values]), frames)

    def exact(self, i: int) -> Fraction:
        """`exact_sum` of frame i's values (finite ones, for doubles)."""
        if self.kind is float:
            return Fraction(self.totals[i], _DOUBLE_UNIT)
        return Fraction(self.totals[i])

    def special_sum(self, i: int) -> float | None:
        """`special_float_sum` of frame i's doubles."""
        if not self.special:
            return None
        if self.nans[i] or (self.pos[i] and self.neg[i]):
            return math.nan
        if self.pos[i]:
            return math.inf
        return -math.inf if self.neg[i] else None

    def float_sums(self) -> list[float]:
        """`float_sum` of each frame's doubles: their special sum, or else
        their exact sum rounded once (as fsum rounds it)."""
        if not self.special:
            try:  # an exact zero is +0.0 (there is no -0.0)
                return [total / _DOUBLE_UNIT for total in self.totals]
            except OverflowError:
                return [_divided(total, _DOUBLE_UNIT) for total in self.totals]
        return [self._float_sum(i) for i in range(len(self.totals))]

    def _float_sum(self, i: int) -> float:
        special = self.special_sum(i)
        if special is not None:
            return special
        if self.totals[i] == 0:
            return _ZERO_OF_NEGATIVE_ZEROS if self.negative_zeros[i] == self.counts[i] else 0.0
        return _divided(self.totals[i], _DOUBLE_UNIT)


_DOUBLE_UNIT = 2**1074  # every finite double is an integer multiple of 2**-1074
# What fsum makes of nothing but -0.0s; an exact zero made of anything else is +0.0.
_ZERO_OF_NEGATIVE_ZEROS = math.fsum([-0.0, -0.0])


def _scaled(v: float | None) -> int:
    """A finite double in units of 2**-1074; 0 for NULL, NaN and the infinities."""
    if v is None or not math.isfinite(v):
        return 0
    numerator, denominator = v.as_integer_ratio()  # the denominator is 2**k, k <= 1074
    return numerator << (1075 - denominator.bit_length())  # numerator * 2**(1074 - k)


def _divided(numerator: int, denominator: int) -> float:
    """`round_float(Fraction(numerator, denominator), FLOAT64)`, the denominator
    positive: float(Fraction) is int / int, which rounds correctly however the
    fraction is written."""
    try:
        return numerator / denominator
    except OverflowError:
        return math.inf if numerator > 0 else -math.inf


def _abs_sums(values: list, frames: _Frames) -> _Sums:
    """The sums of the values' |float(v)|, which `_sum_abs` adds up with `float_sum`."""
    return _Sums([None if v is None else abs(float(v)) for v in values], frames)


def _sums_of_abs(sums: _Sums, values: list, frames: _Frames) -> list[float]:
    """`_abs_sums(values, frames).float_sums()`; for doubles without NaN,
    infinity or -0.0, from the same scaled values: |v| in units is |v in units|."""
    if sums.kind is not float or sums.special:
        return _abs_sums(values, frames).float_sums()
    prefix = _prefix([abs(x) for x in sums.scaled])
    try:
        return [total / _DOUBLE_UNIT for total in _totals(prefix, frames)]
    except OverflowError:
        return [_divided(total, _DOUBLE_UNIT) for total in _totals(prefix, frames)]


def _sum(agg: CompiledAggregate, inputs: _Inputs, frames: _Frames) -> Columns:
    values = inputs.values
    sums, t = _Sums(values, frames), agg.result_type
    if t is None or sums.kind is None:
        return [None] * len(frames), [None] * len(frames)
    if t.is_integer and sums.kind is int:
        results = _integer_sums(sums.totals, t)
    elif t.kind is TypeKind.DECIMAL and sums.kind in (int, Decimal):
        widen = active_profile().decimal_sum_overflow is Overflow.WIDEN
        exact = [Fraction(total) for total in sums.totals]
        results = [round_half_up(x, t.scale or 0) if widen else fit_decimal(x, t) for x in exact]
    elif t.is_float and sums.kind is float:
        results = sums.float_sums()
    else:
        raise _Declined  # `_sum` converts the values (which may fail): left to it
    results = [None if n == 0 else value for n, value in zip(sums.counts, results, strict=True)]

    def magnitudes() -> list:
        sums_of_abs = _sums_of_abs(sums, values, frames)
        return [summed(m, n) for m, n in zip(sums_of_abs, sums.counts, strict=True)]

    return _with_magnitudes(agg, results, magnitudes)


def _integer_sums(totals: list[int], t: SqlType) -> list[int]:
    """`_integer_sum` of each total: the total itself, unless some is out of
    range (the definition then raises) or the profile wraps."""
    low, high = INTEGER_RANGES[t.kind]
    if active_profile().sum_overflow is Overflow.WRAP or not low <= min(totals) <= max(totals) <= high:
        return [_integer_sum(total, t) for total in totals]
    return totals


def _avg(agg: CompiledAggregate, inputs: _Inputs, frames: _Frames) -> Columns:
    values = inputs.values
    sums, t = _Sums(values, frames), agg.result_type
    if t is None or sums.kind is None:
        return [None] * len(frames), [None] * len(frames)
    if sums.kind is float and not t.is_float:
        raise _Declined  # `exact_sum` of a NaN or an infinity fails: left to `_avg`
    exact = _exact_argument(agg)
    numeric = exact is not None and active_profile().avg_type(exact) is AvgType.NUMERIC
    if not numeric and t.is_float and sums.kind in (int, float) and not sums.special:
        results = _means(sums, t)
    else:
        results = _each_mean(sums, t, numeric, exact)

    def magnitudes() -> list:
        sums_of_abs = _sums_of_abs(sums, values, frames)
        return [summed(m / n, n) if n else None for m, n in zip(sums_of_abs, sums.counts, strict=True)]

    return _with_magnitudes(agg, results, magnitudes)


def _means(sums: _Sums, t: SqlType) -> list[float | None]:
    """`round_float(exact_sum(values) / n, t)` of each frame's ints or finite
    doubles (NULL for none): int / int rounds correctly."""
    unit = _DOUBLE_UNIT if sums.kind is float else 1
    means = [total / (unit * n) if n else None for total, n in zip(sums.totals, sums.counts, strict=True)]
    if t.kind is TypeKind.FLOAT32:
        return [None if m is None else to_float32(m) for m in means]
    return means  # type: ignore[return-value]


def _each_mean(sums: _Sums, t: SqlType, numeric: bool, exact: SqlType | None) -> list:
    """`_avg` of each frame, from its count and exact sum."""
    truncated = active_profile().avg_of_decimals is AvgType.PLUS4_TRUNCATED
    results: list = []
    for i, n in enumerate(sums.counts):
        if not n:
            value: object = None
        elif numeric:
            value = numeric_div(sums.exact(i), Fraction(n), display_scale(exact))  # type: ignore[arg-type]
        elif t.kind is TypeKind.DECIMAL:
            value = fit_decimal(sums.exact(i) / n, t, truncated)
        else:
            value = sums.special_sum(i)
            if value is None:
                value = _mean(sums, i, n)
                value = to_float32(value) if t.kind is TypeKind.FLOAT32 else value
        results.append(value)
    return results


def _mean(sums: _Sums, i: int, n: int) -> float:
    """`round_float(exact_sum(values) / n, FLOAT64)`."""
    if sums.kind is float:
        return _divided(sums.totals[i], _DOUBLE_UNIT * n)
    exact = sums.exact(i)
    return _divided(exact.numerator, exact.denominator * n)


# ---------------------------------------------------------------------------
# min and max: a sparse table


def _extreme(largest: bool) -> AtOnce:
    pick = max if largest else min
    sign = -1 if largest else 1  # a position's key, so that the first of equal values wins

    def over_runs(agg: CompiledAggregate, inputs: _Inputs, frames: _Frames) -> Columns:
        values = inputs.values
        # The values the aggregate reads, in window order, with their keys; a
        # frame's runs as runs of indexes into them (`before[p]`: how many
        # come before position p).
        present = [p for p, v in enumerate(values) if v is not None]
        keys = _comparison_keys([values[p] for p in present])
        before = _prefix([int(v is not None) for v in values])
        items = [(k, sign * i) for i, k in enumerate(keys)]
        if frames.spans is not None:
            starts, ends = (list(map(before.__getitem__, bounds)) for bounds in frames.spans)
            best = _picks_of_spans(items, starts, ends, pick)
            return _with_magnitudes(agg, [None if b is None else values[present[sign * b[1]]] for b in best])
        runs = [tuple((before[s], before[e]) for s, e in frame) for frame in frames.runs]
        longest = max((e - s for frame in runs for s, e in frame), default=0)
        table = _sparse_table(items, longest, pick)
        results = []
        for frame in runs:
            best = None
            for start, end in frame:
                if start < end:
                    level = (end - start).bit_length() - 1
                    stretches = table[level]
                    found = pick(stretches[start], stretches[end - (1 << level)])
                    best = found if best is None else pick(best, found)
            results.append(None if best is None else values[present[sign * best[1]]])
        return _with_magnitudes(agg, results)

    return over_runs


def _comparison_keys(values: list) -> list:
    """Keys whose order and equality are `compare`'s: the values themselves
    where Python orders them as `compare` does (values of one type that
    `compare` leaves to Python's order), else their `order_keys`."""
    if values and plainly_ordered(values):
        return values
    keys = order_keys(values)
    if keys is None:
        raise _Declined  # values `order_key` does not cover: `compare` decides
    return keys


def _picks_of_spans(items: list, starts: list[int], ends: list[int], pick: Callable) -> list:
    """`pick` of items[start:end] for each span (None for an empty one): the
    query loop of `over_runs` with every step a pass in C, over the sparse
    table's levels laid end to end (and an item more, which empty spans read)."""
    lengths = list(map(sub, ends, starts))
    table = _sparse_table(items, max(lengths, default=0), pick)
    offsets = list(accumulate((len(level) for level in table), initial=0))
    flat = [*chain.from_iterable(table), ()]
    # A span of length m reads the stretches of 2**k = the largest power of 2 <= m.
    tiers = list(map(int.bit_length, lengths))  # k + 1, or 0 for an empty span
    empty = len(flat) - 1
    firsts = [offsets[t - 1] + s if t else empty for s, t in zip(starts, tiers, strict=True)]
    lasts = [offsets[t - 1] + e - (1 << (t - 1)) if t else empty for e, t in zip(ends, tiers, strict=True)]
    picked = map(pick, map(flat.__getitem__, firsts), map(flat.__getitem__, lasts))
    return [best if t else None for best, t in zip(picked, tiers, strict=True)]


def _sparse_table(items: list, longest: int, pick: Callable) -> list[list]:
    """table[k][p]: `pick` of items[p : p + 2**k], for each 2**k <= longest."""
    table, width = [items], 1
    while 2 * width <= longest:
        previous = table[-1]
        table.append(list(map(pick, previous[: len(previous) - width], previous[width:])))
        width *= 2
    return table


_AT_ONCE: dict[str, AtOnce] = {
    "count": _count,
    "sum": _sum,
    "avg": _avg,
    "min": _extreme(largest=False),
    "max": _extreme(largest=True),
}
