"""Aggregate functions, shared by GROUP BY and by window aggregates over a frame.

Per the standard's <aggregate function>: the rows for which FILTER is not
true are dropped; the argument is evaluated on the rest; with DISTINCT,
duplicates (not distinct from each other) are dropped; then NULL arguments
are dropped by every function except count(*). Over no rows, count gives 0
and the others NULL.

Exact arithmetic: integer and decimal sums are exact; float results are
computed exactly (Fraction) and rounded once. Each call also yields a
*magnitude* for float results: the scale against which float error is judged
(sum of |x| for sum, that over the count for avg, the mean square for the
variances, its root for the standard deviations).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cmp_to_key
from typing import NamedTuple

from harness.core import types as T
from harness.core.errors import EvaluationError, ReferenceGap
from harness.core.functions import FunctionKind, FunctionSpec, lookup
from harness.core.model import BinaryOp, Cast, FuncCall, Literal, Star, UnaryOp, walk
from harness.core.semantics import (
    ArrayAgg,
    AvgType,
    Overflow,
    SemanticsProfile,
    StringAggArgument,
    VarianceType,
)
from harness.core.types import SqlType, TypeKind
from reference_impl.casts import cast_value
from reference_impl.compiled import Compiled, Evaluator
from reference_impl.expressions import compile_expr, compile_predicate
from reference_impl.float_error import summed
from reference_impl.numeric import (
    check_integer,
    exact_sum,
    fit_decimal,
    float_sum,
    round_float,
    round_half_up,
    special_float_sum,
    sqrt_rounded,
)
from reference_impl.numeric_division import display_scale, numeric_avg, numeric_variance
from reference_impl.ordering import SortSpec, sort_spec, stable_sort
from reference_impl.profile import active_profile
from reference_impl.relation import Relation, Row
from reference_impl.statistics import AGGREGATES as STATISTICS
from reference_impl.statistics import ROW_MAGNITUDES
from reference_impl.values import compare, row_key


class AggregateInput(NamedTuple):  # a tuple: made for every row of every window
    """What one row contributes: its arguments, FILTER outcome and ORDER BY keys."""

    args: tuple[object, ...]
    keep: bool
    order: tuple[object, ...]


@dataclass(frozen=True)
class CompiledAggregate:
    call: FuncCall
    args: list[Compiled]
    filter: Evaluator | None
    order: list[Compiled]
    order_specs: list[SortSpec]
    result_type: SqlType | None
    # An ordered-set aggregate's WITHIN GROUP value (one key) and direction.
    within: list[Compiled] = field(default_factory=list)
    descending: bool = False
    # A quantile's constant p, exact.
    fraction: Fraction | None = None

    @property
    def star(self) -> bool:
        return self.call.args == (Star(),)

    def prepare(self, row: Row) -> AggregateInput:
        keep = self.filter is None or self.filter(row) is True
        args = tuple([a.fn(row) for a in [*self.within, *self.args]])
        return AggregateInput(args, keep, tuple([k.fn(row) for k in self.order]))

    def prepare_rows(self, rows: Sequence[Row]) -> list[AggregateInput]:
        """`[self.prepare(row) for row in rows]`, with the lookups made once (a
        window aggregate prepares every row of its input): the same calls in
        the same order, so the same first error."""
        if self.filter is not None or self.order:
            return [self.prepare(row) for row in rows]
        fns = [a.fn for a in [*self.within, *self.args]]
        if len(fns) == 1:
            (fn,) = fns
            return [AggregateInput((fn(row),), True, ()) for row in rows]
        return [AggregateInput(tuple([f(row) for f in fns]), True, ()) for row in rows]

    def evaluate(self, inputs: Sequence[AggregateInput]) -> tuple[object, float | None]:
        """The aggregate over `inputs` (in the order given), and its magnitude."""
        kept = [x for x in inputs if x.keep]
        if self.order:
            kept = stable_sort(kept, [x.order for x in kept], self.order_specs)
        rows = [x.args for x in kept]
        if self.call.distinct:
            rows = _distinct(rows)
        value = _AGGREGATES[self.call.name](rows, self)
        if value is None or self.result_type is None or not self.result_type.is_float:
            return value, None
        if self.call.name in ROW_MAGNITUDES:
            return value, ROW_MAGNITUDES[self.call.name](rows, self)
        magnitude = _MAGNITUDES.get(self.call.name, lambda xs: abs(value))(_non_null(rows))
        return value, magnitude


def compile_aggregate(
    call: FuncCall, rel: Relation, profile: SemanticsProfile
) -> CompiledAggregate:
    spec = lookup(call.name)
    _check_clauses(call, spec)
    spec.check_arity(len(call.args))
    is_star = call.args == (Star(),)
    args = [] if is_star else [compile_expr(a, rel) for a in call.args]
    if call.name == "string_agg" and profile.string_agg_argument is StringAggArgument.CAST_TO_TEXT:
        args[0] = _as_text(args[0])
    within = [compile_expr(k.expr, rel) for k in call.within_group]
    # An ordered-set aggregate's value comes first, then its arguments.
    arg_types = tuple(a.type for a in [*within, *args])
    _check_argument_types(call.name, arg_types)
    return CompiledAggregate(
        call=call,
        args=args,
        filter=compile_predicate(call.filter, rel) if call.filter is not None else None,
        order=[compile_expr(k.expr, rel) for k in call.order_by],
        order_specs=[sort_spec(k, profile) for k in call.order_by],
        result_type=profile.aggregate_type(call.name, arg_types, spec.result(arg_types)),
        within=within,
        descending=bool(call.within_group) and call.within_group[0].descending,
        fraction=quantile_fraction(call, args),
    )


_FRACTION_ARGUMENT = {"quantile_cont": 1, "quantile_disc": 1, "percentile_cont": 0,
                      "percentile_disc": 0}
_CONSTANT_NODES = (Literal, Cast, BinaryOp, UnaryOp, SqlType)


def quantile_fraction(call: FuncCall, args: list[Compiled]) -> Fraction | None:
    """A quantile's p: a constant (DuckDB, DataFusion, Spark and PostgreSQL all
    insist), in [0, 1] by the standard, read exactly as written."""
    index = _FRACTION_ARGUMENT.get(call.name)
    if index is None:
        return None
    if not all(isinstance(n, _CONSTANT_NODES) for n in walk(call.args[index])):
        raise EvaluationError(f"{call.name}(): the fraction must be a constant")
    compiled = args[index]
    if compiled.type is None or not compiled.type.is_numeric:
        raise EvaluationError(f"{call.name}(): the fraction must be a number, got {compiled.type}")
    value = compiled.fn(())
    if value is None:
        raise ReferenceGap(f"{call.name}() with a NULL fraction")
    if isinstance(value, float) and not math.isfinite(value):
        raise EvaluationError(f"{call.name}(): the fraction {value} is not between 0 and 1")
    p = Fraction(value)
    if not 0 <= p <= 1:
        raise EvaluationError(f"{call.name}(): the fraction {value} is not between 0 and 1")
    return p


def _check_clauses(call: FuncCall, spec: FunctionSpec) -> None:
    if spec.kind is not FunctionKind.AGGREGATE:
        raise EvaluationError(f"{call.name}() is not an aggregate function")
    if call.null_treatment is not None or call.from_last is not None:
        raise EvaluationError(f"{call.name}() takes no IGNORE/RESPECT NULLS or FROM FIRST/LAST")
    is_star = call.args == (Star(),)
    if is_star and (not spec.star or call.distinct):
        raise EvaluationError(f"{call.name}(*) is not allowed here")
    if not call.args and not call.within_group:
        raise EvaluationError(f"{call.name}() needs an argument")
    if call.distinct and any(k.expr not in call.args for k in call.order_by):
        raise ReferenceGap("DISTINCT aggregate ordered by an expression not among its arguments")
    _check_within_group(call, spec)


def _check_within_group(call: FuncCall, spec: FunctionSpec) -> None:
    """WITHIN GROUP is for ordered-set aggregates, and they need exactly one key."""
    if (spec.within_group and not call.within_group) or (call.within_group and not spec.takes_within_group):
        needs = "needs" if spec.within_group else "takes no"
        raise EvaluationError(f"{call.name}() {needs} WITHIN GROUP (ORDER BY ...)")
    if spec.within_group_optional and call.within_group and call.args:
        raise EvaluationError(f"{call.name}() with WITHIN GROUP takes no argument")
    if call.within_group and (len(call.within_group) != 1 or call.order_by or call.distinct):
        raise EvaluationError(f"{call.name}() takes one WITHIN GROUP key, no DISTINCT or ORDER BY")


_NUMBER = ("a number", lambda t: t.is_numeric)
_ARGUMENT_CHECKS: dict[str, tuple[str, Callable[[SqlType], bool]]] = {
    "stddev_samp": _NUMBER,
    "stddev_pop": _NUMBER,
    "var_samp": _NUMBER,
    "var_pop": _NUMBER,
    "bool_and": ("a BOOLEAN", lambda t: t == T.BOOL),
    "bool_or": ("a BOOLEAN", lambda t: t == T.BOOL),
    "string_agg": ("text", lambda t: t == T.STRING),
    **{name: _NUMBER for name in (
        "median", "quantile_cont", "percentile_cont", "covar_pop", "covar_samp", "corr",
        "regr_slope", "regr_intercept", "regr_count")},
    **{name: ("an integer", lambda t: t.is_integer) for name in ("bit_and", "bit_or", "bit_xor")},
    "count_if": ("a BOOLEAN", lambda t: t == T.BOOL),
}


def _check_argument_types(name: str, types: tuple[SqlType | None, ...]) -> None:
    if name not in _ARGUMENT_CHECKS:
        return  # sum and avg check theirs in the function table's result rule
    need, ok = _ARGUMENT_CHECKS[name]
    for t in types:
        if t is not None and not ok(t):
            raise EvaluationError(f"{name}() needs {need}, got {t}")


# Types whose text engines spell alike (measured: DuckDB 2.0, DataFusion 55,
# Spark 4.3; SQLite 3.40 for integers): 1, -2; 1.50, -0.05 (the scale kept);
# 2024-01-02; true, false. Floats are not (1e+20, 1e20, 1.0E20, 1.0e+20;
# SQLite writes -0.0 as 0.0) nor timestamps (DataFusion: 2024-01-02T10:30:00,
# fractions .500 where DuckDB and Spark write .5).
_SPELLED_ALIKE = (TypeKind.BOOL, TypeKind.DECIMAL, TypeKind.DATE)


def _as_text(arg: Compiled) -> Compiled:
    """string_agg's argument cast to text, as `StringAggArgument.CAST_TO_TEXT` reads it."""
    if arg.type is None or arg.type.kind is TypeKind.STRING:
        return arg
    if not (arg.type.is_integer or arg.type.kind in _SPELLED_ALIKE):
        raise ReferenceGap(f"string_agg over {arg.type}: engines spell its text differently")
    fn = arg.fn
    return Compiled(lambda row: cast_value(fn(row), T.STRING), T.STRING)


def _distinct(rows: list[tuple]) -> list[tuple]:
    seen: set[tuple] = set()
    out = []
    for row in rows:
        key = row_key(row)
        if key not in seen:
            seen.add(key)
            out.append(row)
    return out


def _non_null(rows: list[tuple]) -> list:
    return [r[0] for r in rows if r[0] is not None]


# ---------------------------------------------------------------------------
# The functions: each takes the argument tuples and the compiled call.


def _count(rows: list[tuple], agg: CompiledAggregate) -> int:
    return len(rows) if agg.star else len(_non_null(rows))


def _sum(rows: list[tuple], agg: CompiledAggregate) -> object:
    values, t = _non_null(rows), agg.result_type
    if not values or t is None:
        return None
    if t.is_integer:
        return _integer_sum(sum(values), t)
    if t.kind is TypeKind.DECIMAL:
        if active_profile().decimal_sum_overflow is Overflow.WIDEN:
            # No limit on the digits; at the type's scale the sum is exact.
            return round_half_up(exact_sum(values), t.scale or 0)
        return fit_decimal(exact_sum(values), t)
    return float_sum([float(v) for v in values])


def _integer_sum(total: int, t: SqlType) -> int:
    """The standard raises on overflow; a profile may wrap at 64 bits instead."""
    if active_profile().sum_overflow is Overflow.WRAP:
        return (total + 2**63) % 2**64 - 2**63
    return check_integer(total, t)


def _exact_argument(agg: CompiledAggregate) -> SqlType | None:
    """The argument's type when it is an exact number (integer or decimal)."""
    t = agg.args[0].type if agg.args else None
    return t if t is not None and (t.is_integer or t.kind is TypeKind.DECIMAL) else None


def _avg(rows: list[tuple], agg: CompiledAggregate) -> object:
    values, t = _non_null(rows), agg.result_type
    if not values or t is None:
        return None
    exact = _exact_argument(agg)
    if exact is not None and active_profile().avg_type(exact) is AvgType.NUMERIC:
        return numeric_avg(values, display_scale(exact))
    if t.kind is TypeKind.DECIMAL:
        truncated = active_profile().avg_of_decimals is AvgType.PLUS4_TRUNCATED
        return fit_decimal(exact_sum(values) / len(values), t, truncated)
    special = special_float_sum([v for v in values if isinstance(v, float)])
    if special is not None:
        return special
    return round_float(exact_sum(values) / len(values), t)


def _min(rows: list[tuple], agg: CompiledAggregate) -> object:
    values = _non_null(rows)
    return min(values, key=cmp_to_key(compare)) if values else None


def _max(rows: list[tuple], agg: CompiledAggregate) -> object:
    values = _non_null(rows)  # NaN is the largest value
    return max(values, key=cmp_to_key(compare)) if values else None


def _variance(sample: bool, root: bool) -> Callable[[list[tuple], CompiledAggregate], object]:
    def fn(rows: list[tuple], agg: CompiledAggregate) -> object:
        values = _non_null(rows)
        n = len(values)
        if n == 0 or (sample and n == 1):
            return None
        exact = _exact_argument(agg)
        if exact is not None and active_profile().variance_of_exact is VarianceType.NUMERIC:
            return numeric_variance(values, display_scale(exact), sample, root)
        if any(isinstance(v, float) and not math.isfinite(v) for v in values):
            return math.nan
        variance = scaled_variance(values, sample)  # = exact_variance(values, sample)
        return sqrt_rounded(variance) if root else round_float(variance, T.FLOAT64)

    return fn


def exact_variance(values: list, sample: bool) -> Fraction:
    """The definition: the sum of the squared deviations from the mean, over
    n - 1 (a sample) or n, in exact rationals."""
    n = len(values)
    xs = [Fraction(v) for v in values]
    mean = sum(xs, Fraction(0)) / n
    return sum(((x - mean) ** 2 for x in xs), Fraction(0)) / (n - 1 if sample else n)


# Fast path for `exact_variance`: Fraction arithmetic runs in Python, one new
# object per step. With each value scaled to an integer a = x * D (D the
# values' common denominator), the same rational is
# (n * sum(a^2) - sum(a)^2) / (n * (n - 1 or n) * D^2), all in integers.
# tests/test_reference_speed.py checks it against the definition.


def scaled_variance(values: list, sample: bool) -> Fraction:
    ratios = [v.as_integer_ratio() for v in values]
    common = math.lcm(*(denominator for _, denominator in ratios))
    scaled = [numerator * (common // denominator) for numerator, denominator in ratios]
    n = len(scaled)
    spread = n * sum(a * a for a in scaled) - sum(scaled) ** 2
    return Fraction(spread, n * (n - 1 if sample else n) * common * common)


def _bool_and(rows: list[tuple], agg: CompiledAggregate) -> object:
    values = _non_null(rows)
    return all(values) if values else None


def _bool_or(rows: list[tuple], agg: CompiledAggregate) -> object:
    values = _non_null(rows)
    return any(values) if values else None


def _string_agg(rows: list[tuple], agg: CompiledAggregate) -> object:
    # Each value after the first is preceded by its own row's delimiter
    # (PostgreSQL); a NULL delimiter counts as empty.
    parts: list[str] = []
    for value, delimiter in rows:
        if value is not None:
            parts.extend([delimiter or "", value] if parts else [value])
    return "".join(parts) if parts else None


def _array_agg(rows: list[tuple], agg: CompiledAggregate) -> object:
    # The standard keeps NULL elements, and no rows give NULL, not [].
    if active_profile().array_agg is ArrayAgg.COLLECT_LIST:
        return [value for (value,) in rows if value is not None]
    return [value for (value,) in rows] if rows else None


_AGGREGATES: dict[str, Callable[[list[tuple], CompiledAggregate], object]] = {
    "count": _count,
    "sum": _sum,
    "avg": _avg,
    "min": _min,
    "max": _max,
    "stddev_samp": _variance(sample=True, root=True),
    "stddev_pop": _variance(sample=False, root=True),
    "var_samp": _variance(sample=True, root=False),
    "var_pop": _variance(sample=False, root=False),
    "bool_and": _bool_and,
    "bool_or": _bool_or,
    "string_agg": _string_agg,
    "array_agg": _array_agg,
    **STATISTICS,
}


def _sum_abs(values: list) -> float:
    return float_sum([abs(float(v)) for v in values])


def _mean_square(values: list) -> float:
    return float_sum([float(v) * float(v) for v in values]) / len(values)


# Each sums its terms, so its magnitude grows with their number (`summed`).
_MAGNITUDES: dict[str, Callable[[list], float]] = {
    "sum": lambda xs: summed(_sum_abs(xs), len(xs)),
    "avg": lambda xs: summed(_sum_abs(xs) / len(xs), len(xs)),
    "var_samp": lambda xs: summed(_mean_square(xs), len(xs)),
    "var_pop": lambda xs: summed(_mean_square(xs), len(xs)),
    "stddev_samp": lambda xs: summed(math.sqrt(_mean_square(xs)), len(xs)),
    "stddev_pop": lambda xs: summed(math.sqrt(_mean_square(xs)), len(xs)),
}
