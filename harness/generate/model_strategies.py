"""Hypothesis strategies for random, structurally valid query models.

They exercise every construct of the model, for the SQL round-trip and the
dialect tests: window functions with every frame mode, bound kind and
exclusion, named windows and windows refining them, IGNORE NULLS, FROM
FIRST/LAST, FILTER, DISTINCT, ordered aggregates, literals of every type, and
awkward names. "Valid" means what the canonical parser enforces plus the
standard's structural rules (arities, which function takes which clause, frame
bound order, GROUPS and RANGE offsets need ORDER BY keys, refinement rules of
`resolve_window`); names are not resolved against a schema and types are not
checked, so these queries are for SQL-level tests, not for running on engines.

Swarm testing: `feature_flags` switches a random subset of `Toggle`s off per
example and shrinks towards all of them on; each construct, when on, still
shrinks towards not being used.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal
from enum import Enum

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from harness import types as T
from harness.dialects.base import KEYWORDS
from harness.functions import FUNCTIONS, FunctionKind, FunctionSpec
from harness.model import (
    BinaryOp,
    BinaryOperator,
    Bound,
    BoundKind,
    Case,
    Cast,
    Column,
    CommonTable,
    Exclusion,
    Expr,
    Frame,
    FrameMode,
    FuncCall,
    Interval,
    IntervalUnit,
    IsNull,
    Join,
    JoinKind,
    Literal,
    NamedWindow,
    NullsOrder,
    NullTreatment,
    Query,
    Select,
    SelectItem,
    SortKey,
    Source,
    Star,
    SubqueryRef,
    TableRef,
    UnaryOp,
    UnaryOperator,
    UnionAll,
    WindowExpr,
    WindowSpec,
    With,
    resolve_window,
)
from harness.sql.literals import natural_integer_type


class Toggle(Enum):
    """Features that swarm testing switches off as a group."""

    AWKWARD_NAMES = "awkward names"
    NAMED_WINDOWS = "named windows"
    FRAMES = "frames"
    GROUPS = "GROUPS frames"
    EXCLUSION = "EXCLUDE"
    NULL_TREATMENT = "IGNORE/RESPECT NULLS"
    FROM_LAST = "FROM FIRST/LAST"
    FILTER = "FILTER"
    DISTINCT = "DISTINCT"
    ORDERED_AGGREGATE = "ordered aggregates"
    NULLS_ORDER = "NULLS FIRST/LAST"
    INTERVALS = "intervals"
    SPECIAL_FLOATS = "NaN and infinities"
    JOINS = "joins"
    SUBQUERIES = "subqueries"
    SET_OPS = "UNION ALL and WITH"
    GROUP_BY = "GROUP BY"
    LIMIT = "LIMIT/OFFSET"


@st.composite
def feature_flags(draw: st.DrawFn) -> frozenset[Toggle]:
    """The toggles switched on; shrinks towards all on (each off-switch towards False)."""
    return frozenset(t for t in Toggle if not draw(st.booleans()))


@dataclass(frozen=True)
class Scope:
    """What an expression may contain where it is drawn.

    `windows` is the WINDOW clause in force, or None where window
    expressions are not allowed (WHERE, GROUP BY, inside another call).
    """

    on: frozenset[Toggle]
    aggregates: bool = False
    windows: tuple[NamedWindow, ...] | None = None

    @property
    def plain(self) -> Scope:
        return Scope(self.on)


# -- names -------------------------------------------------------------------------

_AWKWARD = ["A", "Mixed Case", 'say "hi"', "it's", "ünïcödé", "名前", "tab\there", "1st", "x y"]


def simple_names() -> SearchStrategy[str]:
    """Lower-case ASCII names that need no quotes; shrinks towards 'a'."""
    first = st.sampled_from(string.ascii_lowercase + "_")
    rest = st.text(string.ascii_lowercase + string.digits + "_", max_size=6)
    return st.builds(str.__add__, first, rest).filter(lambda n: n not in KEYWORDS)


def names(on: frozenset[Toggle]) -> SearchStrategy[str]:
    """Names, awkward ones (keywords, case, quotes, spaces, unicode) when switched on;
    shrinks towards a simple name."""
    if Toggle.AWKWARD_NAMES not in on:
        return simple_names()
    anything = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)),
                       min_size=1, max_size=10)
    return st.one_of(simple_names(), st.sampled_from(sorted(KEYWORDS)), st.sampled_from(_AWKWARD),
                     simple_names().map(str.upper), anything)


# -- literals ----------------------------------------------------------------------


def integer_literals(kind: T.SqlType | None = None) -> SearchStrategy[Literal]:
    """Integer literals of every width (or of `kind`); shrinks towards INTEGER 0."""
    kinds = [kind] if kind else [T.INT32, T.INT64, T.INT16, T.INT8]
    return st.sampled_from(kinds).flatmap(lambda t: st.builds(
        Literal, st.integers(-(2 ** (_BITS[t] - 1)), 2 ** (_BITS[t] - 1) - 1), st.just(t)))


_BITS = {T.INT8: 8, T.INT16: 16, T.INT32: 32, T.INT64: 64}


def decimal_literals(min_value: int | None = None) -> SearchStrategy[Literal]:
    """DECIMAL(p,s) literals holding exactly s places; shrinks towards DECIMAL(1,0) 0."""

    @st.composite
    def draw_one(draw: st.DrawFn) -> Literal:
        p = draw(st.integers(1, 38))
        s = draw(st.integers(0, p))
        n = draw(st.integers(min_value if min_value is not None else 1 - 10**p, 10**p - 1))
        # Built from text: Decimal arithmetic would round to the context's 28 digits.
        negative_zero = n == 0 and min_value is None and draw(st.booleans())
        value = Decimal(f"{'-' if negative_zero else ''}{n}E-{s}")
        return Literal(value, T.decimal(p, s))

    return draw_one()


def float_literals(on: frozenset[Toggle], finite_min: float | None = None) -> SearchStrategy[Literal]:
    """REAL and DOUBLE PRECISION literals incl. -0.0 and, when on, NaN and infinities;
    shrinks towards DOUBLE 0.0."""
    special = Toggle.SPECIAL_FLOATS in on and finite_min is None
    doubles = st.floats(min_value=finite_min, allow_nan=special, allow_infinity=special)
    singles = st.floats(min_value=finite_min, width=32, allow_nan=special, allow_infinity=special)
    return st.one_of(st.builds(Literal, doubles, st.just(T.FLOAT64)),
                     st.builds(Literal, singles, st.just(T.FLOAT32)))


_TYPES = [T.INT32, T.INT64, T.INT8, T.INT16, T.BOOL, T.FLOAT64, T.FLOAT32, T.decimal(10, 2),
          T.STRING, T.DATE, T.TIMESTAMP, T.INTERVAL]


def literals(on: frozenset[Toggle]) -> SearchStrategy[Literal]:
    """Literals of every type, typed and untyped NULLs; shrinks towards INTEGER 0."""
    return st.one_of(
        integer_literals(),
        st.builds(Literal, st.booleans(), st.just(T.BOOL)),
        st.just(Literal(None, None)),
        st.builds(Literal, st.text(st.characters(blacklist_characters="\x00",
                                                 blacklist_categories=("Cs",))), st.just(T.STRING)),
        decimal_literals(),
        float_literals(on),
        st.builds(Literal, st.dates(), st.just(T.DATE)),
        st.builds(Literal, st.datetimes(), st.just(T.TIMESTAMP)),
        st.builds(Literal, st.none(), st.sampled_from(_TYPES)),
    )


def intervals() -> SearchStrategy[Interval]:
    """INTERVAL 'n' UNIT constants; shrinks towards INTERVAL '0' YEAR."""
    return st.builds(Interval, st.integers(0, 10_000), st.sampled_from(IntervalUnit))


# -- expressions ---------------------------------------------------------------------


def columns(on: frozenset[Toggle]) -> SearchStrategy[Column]:
    """Column references, sometimes qualified; shrinks towards an unqualified simple name."""
    return st.builds(Column, names(on), st.none() | names(on))


Clauses = Callable[[FunctionSpec, tuple[Expr, ...]], SearchStrategy[dict]]


def _calls(specs: list[FunctionSpec], arg: SearchStrategy[Expr],
           extra: Clauses) -> SearchStrategy[FuncCall]:
    """Calls of one of `specs` with an arity it takes; `extra` adds the clauses the
    function and its arguments allow."""

    @st.composite
    def draw_one(draw: st.DrawFn) -> FuncCall:
        spec = draw(st.sampled_from(specs))
        if spec.star and draw(st.booleans()):
            args: tuple[Expr, ...] = (Star(),)
        else:  # count() is in the table's arity but is not SQL; it always has an argument
            n = draw(st.integers(max(spec.min_args, 1 if spec.star else 0), min(spec.max_args, 3)))
            args = tuple(draw(arg) for _ in range(n))
        return FuncCall(spec.name, args, **draw(extra(spec, args)))

    return draw_one()


def _specs(kind: FunctionKind) -> list[FunctionSpec]:
    return [s for s in FUNCTIONS.values() if s.kind is kind]


def _maybe(flag: bool, strategy: SearchStrategy) -> SearchStrategy:
    """None when the flag is off, else None or a value; shrinks towards None."""
    return st.none() | strategy if flag else st.none()


def _aggregate_clauses(scope: Scope) -> Clauses:
    on = scope.on

    def clauses(spec: FunctionSpec, args: tuple[Expr, ...]) -> SearchStrategy[dict]:
        distinct = Toggle.DISTINCT in on and args != (Star(),)  # count(DISTINCT *) is not SQL
        ordered = spec.ordered_aggregate and Toggle.ORDERED_AGGREGATE in on
        return st.fixed_dictionaries({
            "distinct": st.booleans() if distinct else st.just(False),
            "filter": _maybe(Toggle.FILTER in on, expressions(scope.plain)),
            "order_by": (st.just(()) | sort_keys(scope.plain)) if ordered else st.just(()),
        })

    return clauses


def _window_clauses(on: frozenset[Toggle]) -> Clauses:
    def clauses(spec: FunctionSpec, args: tuple[Expr, ...]) -> SearchStrategy[dict]:
        return st.fixed_dictionaries({
            "null_treatment": _maybe(spec.ignore_nulls and Toggle.NULL_TREATMENT in on,
                                     st.sampled_from(NullTreatment)),
            "from_last": _maybe(spec.from_last and Toggle.FROM_LAST in on, st.booleans()),
        })

    return clauses


def aggregate_calls(scope: Scope) -> SearchStrategy[FuncCall]:
    """Aggregate calls (GROUP BY context) with DISTINCT, FILTER and ORDER BY when on;
    shrinks towards count(*) or the first aggregate over a column."""
    return _calls(_specs(FunctionKind.AGGREGATE), expressions(scope.plain),
                  _aggregate_clauses(scope))


def scalar_calls(arg: SearchStrategy[Expr]) -> SearchStrategy[FuncCall]:
    """coalesce/nullif/abs calls; shrinks towards coalesce of one argument."""
    return _calls(_specs(FunctionKind.SCALAR), arg, lambda spec, args: st.just({}))


def expressions(scope: Scope) -> SearchStrategy[Expr]:
    """Scalar expressions over columns and literals, with aggregates and window
    expressions where the scope allows; shrinks towards a single column."""
    leaves = [columns(scope.on), literals(scope.on)]
    if Toggle.INTERVALS in scope.on:
        leaves.append(intervals())

    def extend(inner: SearchStrategy[Expr]) -> SearchStrategy[Expr]:
        options = [
            st.builds(BinaryOp, st.sampled_from(BinaryOperator), inner, inner),
            st.builds(UnaryOp, st.sampled_from(UnaryOperator), inner),
            st.builds(IsNull, inner, st.booleans()),
            st.builds(Case, st.lists(st.tuples(inner, inner), min_size=1, max_size=2).map(tuple),
                      st.none() | inner),
            st.builds(Cast, inner, st.sampled_from(_TYPES)),
            scalar_calls(inner),
        ]
        if scope.aggregates:
            options.append(aggregate_calls(scope))
        if scope.windows is not None:
            options.append(window_exprs(scope))
        return st.one_of(options)

    return st.recursive(st.one_of(leaves), extend, max_leaves=5)


def sort_keys(scope: Scope) -> SearchStrategy[tuple[SortKey, ...]]:
    """1-2 sort keys; shrinks towards one ASC key without NULLS FIRST/LAST."""
    nulls = _maybe(Toggle.NULLS_ORDER in scope.on, st.sampled_from(NullsOrder))
    key = st.builds(SortKey, expressions(scope), st.booleans(), nulls)
    return st.lists(key, min_size=1, max_size=2).map(tuple)


# -- windows -------------------------------------------------------------------------

_START_KINDS = [BoundKind.UNBOUNDED_PRECEDING, BoundKind.CURRENT_ROW, BoundKind.PRECEDING,
                BoundKind.FOLLOWING]
_END_KINDS = [BoundKind.CURRENT_ROW, BoundKind.UNBOUNDED_FOLLOWING, BoundKind.FOLLOWING,
              BoundKind.PRECEDING]
_RANK = {kind: i for i, kind in enumerate(BoundKind)}
_OFFSET_KINDS = (BoundKind.PRECEDING, BoundKind.FOLLOWING)


def frame_offsets(mode: FrameMode, on: frozenset[Toggle]) -> SearchStrategy[Expr]:
    """Non-negative offsets: integers for ROWS/GROUPS; for RANGE also decimals,
    floats and (when on) intervals. Shrinks towards INTEGER 0."""
    ints = st.integers(0, 2**40).map(lambda n: Literal(n, natural_integer_type(n)))
    if mode is not FrameMode.RANGE:
        return ints
    extra = [decimal_literals(min_value=0), float_literals(on, finite_min=0.0)]
    return st.one_of(ints, *extra, *([intervals()] if Toggle.INTERVALS in on else []))


@st.composite
def frames(draw: st.DrawFn, on: frozenset[Toggle], order_keys: int) -> Frame:
    """A valid frame for a window with `order_keys` ORDER BY keys (GROUPS needs one or
    more, RANGE offsets exactly one); shrinks towards ROWS BETWEEN UNBOUNDED PRECEDING
    AND CURRENT ROW."""
    modes = [FrameMode.ROWS, FrameMode.RANGE]
    if order_keys and Toggle.GROUPS in on:
        modes.append(FrameMode.GROUPS)
    mode = draw(st.sampled_from(modes))
    offsets_ok = mode is not FrameMode.RANGE or order_keys == 1
    kinds = [k for k in BoundKind if offsets_ok or k not in _OFFSET_KINDS]
    start_kind = draw(st.sampled_from([k for k in _START_KINDS if k in kinds]))
    # A frame may not start after it ends (in bound order), as in PostgreSQL.
    end_kind = draw(st.sampled_from([k for k in _END_KINDS
                                     if k in kinds and _RANK[k] >= _RANK[start_kind]]))
    start, end = (Bound(k, draw(frame_offsets(mode, on)) if k in _OFFSET_KINDS else None)
                  for k in (start_kind, end_kind))
    exclusion = draw(_maybe(Toggle.EXCLUSION in on, st.sampled_from(Exclusion)))
    return Frame(mode, start, end, exclusion)


@st.composite
def window_specs(draw: st.DrawFn, scope: Scope, named: tuple[NamedWindow, ...]) -> WindowSpec:
    """An OVER clause or WINDOW definition, maybe refining one of `named` within the
    rules of resolve_window; shrinks towards the empty window `OVER ()`."""
    plain = scope.plain
    bases = [w.name for w in named] if Toggle.NAMED_WINDOWS in scope.on else []
    base = draw(st.none() | st.sampled_from(bases)) if bases else None
    inherited = resolve_window(WindowSpec(base), named) if base else WindowSpec()
    partition_by = () if base else tuple(draw(st.lists(expressions(plain), max_size=2)))
    can_order = not inherited.order_by and inherited.frame is None
    order_by = draw(st.just(()) | sort_keys(plain)) if can_order else ()
    keys = len(order_by or inherited.order_by)
    frame = None
    if Toggle.FRAMES in scope.on and inherited.frame is None:
        frame = draw(st.none() | frames(scope.on, keys))
    return WindowSpec(base, partition_by, order_by, frame)


@st.composite
def window_clauses(draw: st.DrawFn, scope: Scope) -> tuple[NamedWindow, ...]:
    """A WINDOW clause of 0-3 windows with distinct names, each maybe refining an
    earlier one; shrinks towards no WINDOW clause."""
    if Toggle.NAMED_WINDOWS not in scope.on:
        return ()
    named: list[NamedWindow] = []
    for name in draw(st.lists(names(scope.on), max_size=3, unique=True)):
        named.append(NamedWindow(name, draw(window_specs(scope, tuple(named)))))
    return tuple(named)


def window_exprs(scope: Scope) -> SearchStrategy[WindowExpr]:
    """`f(...) OVER ...` for window functions and aggregates, with the clauses each
    takes; shrinks towards row_number() OVER ()."""
    named = scope.windows or ()
    window_fns = _calls(_specs(FunctionKind.WINDOW), expressions(scope.plain),
                        _window_clauses(scope.on))
    aggregates = _calls(_specs(FunctionKind.AGGREGATE), expressions(scope.plain),
                        _aggregate_clauses(scope))
    return st.builds(WindowExpr, window_fns | aggregates, window_specs(scope, named))


# -- queries --------------------------------------------------------------------------


def sources(on: frozenset[Toggle], depth: int) -> SearchStrategy[Source]:
    """Tables, aliased subqueries and joins (ON exactly when not CROSS); shrinks towards
    a table without alias."""
    table = st.builds(TableRef, names(on), st.none() | names(on))
    if depth <= 0:
        return table
    options: list[SearchStrategy[Source]] = [table]
    if Toggle.SUBQUERIES in on:
        options.append(st.builds(SubqueryRef, queries(on, depth - 1), names(on)))
    if Toggle.JOINS in on:
        kinds = [k for k in JoinKind if k is not JoinKind.FULL] + [JoinKind.FULL]
        options.append(st.sampled_from(kinds).flatmap(lambda kind: st.builds(
            Join, st.just(kind), sources(on, depth - 1), sources(on, depth - 1),
            st.none() if kind is JoinKind.CROSS else expressions(Scope(on)))))
    return st.one_of(options)


@st.composite
def selects(draw: st.DrawFn, on: frozenset[Toggle], depth: int = 1) -> Select:
    """A SELECT with optional FROM, WHERE, GROUP BY/HAVING, WINDOW, ORDER BY, LIMIT;
    shrinks towards `SELECT a`."""
    grouped = Toggle.GROUP_BY in on and draw(st.booleans())
    windows = draw(window_clauses(Scope(on)))
    scope = Scope(on, aggregates=grouped, windows=windows)
    item = st.builds(SelectItem, expressions(scope), st.none() | names(on))
    stars = st.builds(SelectItem, st.builds(Star, st.none() | names(on)))
    items = draw(st.lists(item | stars, min_size=1, max_size=3))
    group_by = tuple(draw(st.lists(expressions(Scope(on)), min_size=1, max_size=2))) if grouped else ()
    return Select(
        items=tuple(items),
        source=draw(st.none() | sources(on, depth)),
        where=draw(st.none() | expressions(Scope(on))),
        group_by=group_by,
        having=draw(st.none() | expressions(replace(scope, windows=None))) if grouped else None,
        windows=windows,
        order_by=draw(st.just(()) | sort_keys(scope)),
        distinct=draw(st.booleans()),
        **draw(st.fixed_dictionaries(_limit_args(on))),
    )


def queries(on: frozenset[Toggle], depth: int = 2) -> SearchStrategy[Query]:
    """SELECT, UNION ALL and WITH nested up to `depth`; shrinks towards a single SELECT."""
    if depth <= 0 or Toggle.SET_OPS not in on:
        return selects(on, depth)
    inner = queries(on, depth - 1)
    unions = st.builds(UnionAll, inner, inner, st.just(()) | sort_keys(Scope(on)), **_limit_args(on))
    ctes = st.lists(st.builds(CommonTable, names(on), inner), min_size=1, max_size=2,
                    unique_by=lambda c: c.name).map(tuple)
    return st.one_of(selects(on, depth), unions, st.builds(With, ctes, inner))


def _limit_args(on: frozenset[Toggle]) -> dict[str, SearchStrategy[int | None]]:
    """LIMIT and OFFSET, each unset or a count; shrinks towards unset."""
    count = _maybe(Toggle.LIMIT in on, st.integers(0, 2**31))
    return {"limit": count, "offset": count}


@st.composite
def model_queries(draw: st.DrawFn, depth: int = 2) -> Query:
    """A whole query under a swarm of feature flags; shrinks towards `SELECT a` with
    every feature switched on but unused."""
    return draw(queries(draw(feature_flags()), depth))
