"""The function table: one typed spec per function the model can call.

Everything that needs to know what a function is (the parser, the dialects,
the reference, the comparator's tie rules, later the generators) reads it
here, instead of keeping its own list of names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from harness.core import types as T
from harness.core.errors import InvalidQuery, ReferenceGap
from harness.core.types import SqlType, TypeKind


class FunctionKind(Enum):
    WINDOW = "window"  # only with OVER: ranking and value functions
    AGGREGATE = "aggregate"  # with GROUP BY, or with OVER as a window aggregate
    SCALAR = "scalar"


TypeRule = Callable[[tuple[SqlType | None, ...]], SqlType | None]


@dataclass(frozen=True)
class FunctionSpec:
    name: str
    kind: FunctionKind
    min_args: int
    max_args: int
    result: TypeRule
    # True when the value for a row can change with the order of its peers,
    # whatever the frame (row_number, ntile, lag/lead, ordered aggregates).
    order_sensitive: bool = False
    # True when the function reads the frame (aggregates, first/last/nth_value).
    uses_frame: bool = False
    ignore_nulls: bool = False  # accepts IGNORE/RESPECT NULLS
    from_last: bool = False  # accepts FROM FIRST/LAST
    star: bool = False  # accepts `*` as its only argument (count(*))
    # Aggregates whose value depends on the order of the rows fed to them.
    ordered_aggregate: bool = False
    # An ordered-set aggregate: `percentile_cont(0.5) WITHIN GROUP (ORDER BY
    # x)` reads the one WITHIN GROUP key; its arguments are constants.
    within_group: bool = False
    # Takes WITHIN GROUP in place of its one argument: `mode() WITHIN GROUP
    # (ORDER BY x)` is mode(x) with ties broken by that order (PostgreSQL's
    # and Spark's form; the first value in the order wins).
    within_group_optional: bool = False
    # Whether the coverage grid gives the function every bound pair of every
    # frame mode (the functions of the first road), or one cell per frame
    # mode (harness.cases.coverage): the bound logic is shared by all aggregates,
    # so a pair per function adds little once a few functions have them.
    full_grid: bool = True

    @property
    def takes_within_group(self) -> bool:
        return self.within_group or self.within_group_optional

    def check_arity(self, n: int) -> None:
        if not (self.min_args <= n <= self.max_args):
            want = (
                str(self.min_args)
                if self.min_args == self.max_args
                else f"{self.min_args} to {self.max_args}"
            )
            raise InvalidQuery(f"{self.name}() takes {want} arguments, got {n}")


def _fixed(t: SqlType) -> TypeRule:
    return lambda args: t


def _first_arg(args: tuple[SqlType | None, ...]) -> SqlType | None:
    return args[0] if args else None


def _value_or_default(args: tuple[SqlType | None, ...]) -> SqlType | None:
    """lag/lead(value, offset, default): value and default are one `anycompatible`
    type, so an untyped NULL value takes the default's type (PostgreSQL's rule)."""
    if not args:
        return None
    return args[0] if args[0] is not None or len(args) < 3 else args[2]


def _sum_type(args: tuple[SqlType | None, ...]) -> SqlType | None:
    t = args[0]
    if t is None:
        return None
    if t.is_integer:
        return T.INT64
    if t.kind is TypeKind.DECIMAL:
        return T.decimal(38, t.scale)
    if t.is_float:
        return T.FLOAT64
    if t.kind is TypeKind.INTERVAL:  # valid, but not modelled: the generator never draws it
        raise ReferenceGap("sum() of intervals")
    raise InvalidQuery(f"sum() needs a numeric argument, got {t}")


def _avg_type(args: tuple[SqlType | None, ...]) -> SqlType | None:
    t = args[0]
    if t is None:
        return None
    if t.kind is TypeKind.DECIMAL:
        # The standard keeps avg(decimal) exact; scale grows so the quotient fits.
        return T.decimal(38, min(max(t.scale + 4, 6), 18))
    if t.is_numeric:
        return T.FLOAT64
    if t.kind is TypeKind.INTERVAL:  # valid, but not modelled: the generator never draws it
        raise ReferenceGap("avg() of intervals")
    raise InvalidQuery(f"avg() needs a numeric argument, got {t}")


def _list_of_first(args: tuple[SqlType | None, ...]) -> SqlType | None:
    return T.list_of(args[0]) if args and args[0] is not None else None


def _double_of_number(args: tuple[SqlType | None, ...]) -> SqlType | None:
    """median, quantile_cont, percentile_cont: DOUBLE (PostgreSQL's double
    precision, and DuckDB's, DataFusion's and Spark's for integer and float
    input; measured). The value is interpolated, so no exact type holds it."""
    return _numeric_result(args, T.FLOAT64)


def _numeric_result(args: tuple[SqlType | None, ...], result: SqlType) -> SqlType | None:
    for t in args:
        if t is not None and not t.is_numeric:
            raise InvalidQuery(f"needs numeric arguments, got {t}")
    return result


def _common_type(args: tuple[SqlType | None, ...]) -> SqlType | None:
    known = [a for a in args if a is not None]
    return known[0] if known else None


def _spec(name: str, kind: FunctionKind, arity: tuple[int, int], result: TypeRule, **kw) -> FunctionSpec:
    return FunctionSpec(name, kind, arity[0], arity[1], result, **kw)


W, A, S = FunctionKind.WINDOW, FunctionKind.AGGREGATE, FunctionKind.SCALAR

_SPECS = [
    # Ranking functions: the frame is ignored by definition.
    _spec("row_number", W, (0, 0), _fixed(T.INT64), order_sensitive=True),
    _spec("rank", W, (0, 0), _fixed(T.INT64)),
    _spec("dense_rank", W, (0, 0), _fixed(T.INT64)),
    _spec("percent_rank", W, (0, 0), _fixed(T.FLOAT64)),
    _spec("cume_dist", W, (0, 0), _fixed(T.FLOAT64)),
    _spec("ntile", W, (1, 1), _fixed(T.INT64), order_sensitive=True),
    # Offset functions: relative to the current row in the partition's order.
    _spec("lag", W, (1, 3), _value_or_default, order_sensitive=True, ignore_nulls=True),
    _spec("lead", W, (1, 3), _value_or_default, order_sensitive=True, ignore_nulls=True),
    # Value functions: read the frame.
    _spec("first_value", W, (1, 1), _first_arg, order_sensitive=True, uses_frame=True, ignore_nulls=True),
    _spec("last_value", W, (1, 1), _first_arg, order_sensitive=True, uses_frame=True, ignore_nulls=True),
    _spec("nth_value", W, (2, 2), _first_arg, order_sensitive=True, uses_frame=True,
          ignore_nulls=True, from_last=True),
    # Aggregates.
    _spec("count", A, (1, 1), _fixed(T.INT64), uses_frame=True, star=True),
    _spec("sum", A, (1, 1), _sum_type, uses_frame=True),
    _spec("avg", A, (1, 1), _avg_type, uses_frame=True),
    _spec("min", A, (1, 1), _first_arg, uses_frame=True),
    _spec("max", A, (1, 1), _first_arg, uses_frame=True),
    _spec("stddev_samp", A, (1, 1), _fixed(T.FLOAT64), uses_frame=True),
    _spec("stddev_pop", A, (1, 1), _fixed(T.FLOAT64), uses_frame=True),
    _spec("var_samp", A, (1, 1), _fixed(T.FLOAT64), uses_frame=True),
    _spec("var_pop", A, (1, 1), _fixed(T.FLOAT64), uses_frame=True),
    _spec("bool_and", A, (1, 1), _fixed(T.BOOL), uses_frame=True),
    _spec("bool_or", A, (1, 1), _fixed(T.BOOL), uses_frame=True),
    _spec("string_agg", A, (2, 2), _fixed(T.STRING), uses_frame=True, ordered_aggregate=True),
    # The standard's array_agg keeps NULL elements; the list follows its own
    # ORDER BY, else the frame's order.
    _spec("array_agg", A, (1, 1), _list_of_first, uses_frame=True, ordered_aggregate=True),
    # Issue 16's aggregates: one cell per frame mode in the coverage grid.
    # Quantiles read the frame's sorted values, so the order of peers does not
    # matter (the multiset of values does); p is a constant in [0, 1].
    _spec("median", A, (1, 1), _double_of_number, uses_frame=True, full_grid=False),
    _spec("quantile_cont", A, (2, 2), _double_of_number, uses_frame=True, full_grid=False),
    _spec("quantile_disc", A, (2, 2), _first_arg, uses_frame=True, full_grid=False),
    _spec("percentile_cont", A, (1, 1), _double_of_number, uses_frame=True, within_group=True,
          full_grid=False),
    _spec("percentile_disc", A, (1, 1), _first_arg, uses_frame=True, within_group=True,
          full_grid=False),
    # The most frequent value: undetermined when several are (ReferenceGap),
    # unless WITHIN GROUP orders them.
    _spec("mode", A, (0, 1), _first_arg, uses_frame=True, full_grid=False,
          within_group_optional=True),
    # first/last: the value (NULL or not) of the first/last row fed to them,
    # as DuckDB and Spark define them: order-sensitive like first_value.
    _spec("first", A, (1, 1), _first_arg, uses_frame=True, ordered_aggregate=True, full_grid=False),
    _spec("last", A, (1, 1), _first_arg, uses_frame=True, ordered_aggregate=True, full_grid=False),
    # Any non-NULL value (SQL:2023): undetermined when they differ (ReferenceGap).
    _spec("any_value", A, (1, 1), _first_arg, uses_frame=True, full_grid=False),
    # Statistics over the (y, x) pairs where both are not NULL: DOUBLE, as the
    # standard and every engine measured have them; regr_count is BIGINT.
    *[_spec(name, A, (2, 2), lambda args: _numeric_result(args, T.FLOAT64), uses_frame=True,
            full_grid=False)
      for name in ("covar_pop", "covar_samp", "corr", "regr_slope", "regr_intercept")],
    _spec("regr_count", A, (2, 2), lambda args: _numeric_result(args, T.INT64), uses_frame=True,
          full_grid=False),
    # Bitwise aggregates over integers keep the argument's type (measured).
    *[_spec(name, A, (1, 1), _first_arg, uses_frame=True, full_grid=False)
      for name in ("bit_and", "bit_or", "bit_xor")],
    _spec("count_if", A, (1, 1), _fixed(T.INT64), uses_frame=True, full_grid=False),
    # Scalars that queries compose with.
    _spec("coalesce", S, (1, 16), _common_type),
    _spec("nullif", S, (2, 2), _first_arg),
    _spec("abs", S, (1, 1), _first_arg),
]

FUNCTIONS: dict[str, FunctionSpec] = {s.name: s for s in _SPECS}

# Other names for a function of the table, folded when SQL text is read (the
# model holds the canonical name, so parse(write(q)) == q, and each dialect
# writes its own name through Dialect.function_names): `variance` and
# `stddev` are var_samp and stddev_samp in DuckDB, Spark and PostgreSQL, and
# `every` is bool_and in Spark and PostgreSQL (same NULL rules, measured).
ALIASES: dict[str, str] = {
    "variance": "var_samp",
    "stddev": "stddev_samp",
    "every": "bool_and",
}


def lookup(name: str) -> FunctionSpec:
    spec = FUNCTIONS.get(name.lower())
    if spec is None:
        raise InvalidQuery(f"unknown function {name!r}")
    return spec


def canonical_name(name: str) -> str:
    """The function table's name for `name`, an alias folded (for the parser)."""
    lowered = name.lower()
    return ALIASES.get(lowered, lowered)


def is_aggregate(name: str) -> bool:
    spec = FUNCTIONS.get(name.lower())
    return spec is not None and spec.kind is FunctionKind.AGGREGATE


def contains_aggregate(node: object) -> bool:
    """Does `node` call an aggregate over the groups of its own query?

    That makes a SELECT grouped even without GROUP BY (`SELECT count(*) FROM
    t`, `sum(min(x)) OVER ()`). A window function's own function is not one,
    its arguments, FILTER and window may hold one; a subquery's aggregates
    group its own rows (only IN's operand belongs to this query).
    """
    from harness.core.model import (
        SUBQUERY_EXPRS,
        FuncCall,
        InSubquery,
        Select,
        SubqueryRef,
        WindowExpr,
        children,
    )

    if isinstance(node, InSubquery):
        return contains_aggregate(node.operand)
    if isinstance(node, (*SUBQUERY_EXPRS, Select, SubqueryRef)):
        return False
    if isinstance(node, WindowExpr):
        return any(contains_aggregate(c) for c in (*children(node.func), node.window))
    if isinstance(node, FuncCall) and is_aggregate(node.name):
        return True
    return any(contains_aggregate(c) for c in children(node))


def frame_is_whole_partition(frame: object) -> bool:
    """True for a frame that always spans the whole partition."""
    from harness.core.model import BoundKind, Exclusion, Frame

    return (
        isinstance(frame, Frame)
        and frame.start.kind is BoundKind.UNBOUNDED_PRECEDING
        and frame.end.kind is BoundKind.UNBOUNDED_FOLLOWING
        and frame.exclusion in (None, Exclusion.NO_OTHERS)
    )


# Ranking and distribution functions that take an ORDER BY of their own
# (`rank(ORDER BY x) OVER (...)`, DuckDB's extension, `Feature.RANKING_ORDER_BY`):
# the function is computed over the row's frame, ordered by its own keys instead
# of the window's. DuckDB 2.0 refuses it on dense_rank.
ARGUMENT_ORDERED_RANKING = frozenset({"row_number", "rank", "percent_rank", "cume_dist", "ntile"})


def _sorted_by_its_value(call: object) -> bool:
    """An aggregate's own ORDER BY whose first key is its argument, the other
    arguments constants (string_agg's separator): the value it gives does not
    depend on the order of the rows it reads."""
    from harness.core.model import Literal

    args = call.args  # type: ignore[attr-defined]
    order_by = call.order_by  # type: ignore[attr-defined]
    return (bool(args) and bool(order_by) and order_by[0].expr == args[0]
            and all(isinstance(a, Literal) for a in args[1:]))


def is_order_sensitive(call: object, frame: object, has_order_by: bool) -> bool:
    """Can this window call's value change with the order of peers?

    `frame` is the resolved frame (None = default). Ranking/offset/value
    functions and ordered aggregates always can; other aggregates can only
    over a ROWS frame that is not the whole partition (RANGE and GROUPS
    frames are unions of peer groups, and the default frame is RANGE).
    EXCLUDE CURRENT ROW / TIES over ROWS also depends on the row's position.
    The generator's view; the judge's is `depends_on_peer_order`.
    """
    from harness.core.model import FuncCall

    assert isinstance(call, FuncCall)
    spec = lookup(call.name)
    # A ranking function with its own ORDER BY reads its frame as an aggregate
    # does (ties of its own keys are the reference's gap, never a peer order).
    ranks_its_frame = bool(call.order_by) and call.name in ARGUMENT_ORDERED_RANKING
    if (spec.order_sensitive and not ranks_its_frame) or spec.ordered_aggregate:
        return True
    return _frame_reads_positions(spec, frame, ranks_its_frame)


def depends_on_peer_order(call: object, frame: object, has_order_by: bool) -> bool:
    """`is_order_sensitive`, except for an ordered aggregate (array_agg,
    string_agg, first, last) sorted by its own argument first
    (`array_agg(DISTINCT x ORDER BY x)`): rows its ORDER BY ties have equal
    values, so it is like the other aggregates, where only which rows the
    frame holds matters, not their order. What the reference searches orders
    of peers for, and the instrumenter reveals them for."""
    from harness.core.model import FuncCall

    assert isinstance(call, FuncCall)
    spec = lookup(call.name)
    if spec.ordered_aggregate and _sorted_by_its_value(call):
        return _frame_reads_positions(spec, frame)
    return is_order_sensitive(call, frame, has_order_by)


def _frame_reads_positions(spec: FunctionSpec, frame: object, ranks_its_frame: bool = False) -> bool:
    from harness.core.model import FrameMode

    if (spec.kind is not FunctionKind.AGGREGATE and not ranks_its_frame) or frame is None:
        return False
    return frame.mode is FrameMode.ROWS and not frame_is_whole_partition(frame)  # type: ignore[attr-defined]
