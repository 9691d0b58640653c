"""Hypothesis strategies for random, structurally valid query models.

They exercise every construct of the model, for the SQL round-trip and the
dialect tests: window functions with every frame mode, bound kind and
exclusion, named windows and windows refining them, IGNORE NULLS, FROM
FIRST/LAST, FILTER, DISTINCT, ordered aggregates, literals of every type,
VALUES, generate_series/range, column lists, derived tables without alias, and
awkward names. "Valid" means what the canonical parser enforces plus the
standard's structural rules (arities, which function takes which clause, frame
bound order, GROUPS and RANGE offsets need ORDER BY keys, refinement rules of
`resolve_window`); names are not resolved against a schema and types are not
checked, so these queries are for SQL-level tests, not for running on engines.

Swarm testing: `feature_flags` switches a random subset of `Toggle`s off per
example and shrinks towards all of them on; each construct, when on, still
shrinks towards not being used. Names and literals come from `leaf_strategies`.
Entry point: `model_queries()`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from harness.core import types as T
from harness.core.functions import FUNCTIONS, FunctionKind, FunctionSpec
from harness.core.model import (
    AllColumns,
    BinaryOp,
    BinaryOperator,
    Bound,
    BoundKind,
    Case,
    Cast,
    Column,
    CommonTable,
    Exclusion,
    Exists,
    Expr,
    Frame,
    FrameMode,
    FuncCall,
    InList,
    InSubquery,
    IsNull,
    Join,
    JoinKind,
    Literal,
    NamedWindow,
    NullsOrder,
    NullTreatment,
    Query,
    ScalarSubquery,
    Select,
    SelectItem,
    SortKey,
    Source,
    Star,
    SubqueryRef,
    TableFunctionRef,
    TableRef,
    UnaryOp,
    UnaryOperator,
    UnionAll,
    Values,
    WindowExpr,
    WindowSpec,
    With,
    resolve_window,
)
from harness.core.table_functions import TABLE_FUNCTIONS
from harness.generate.leaf_strategies import (
    SQL_TYPES,
    Toggle,
    cached,
    decimal_literals,
    empty_or,
    feature_flags,
    float_literals,
    integer_literal,
    intervals,
    ints,
    literals,
    maybe,
    names,
    none_or,
    sampled,
    tuples,
)


@dataclass(frozen=True)
class Scope:
    """What an expression may contain where it is drawn.

    `windows` is the WINDOW clause in force, or None where window
    expressions are not allowed (WHERE, GROUP BY, inside another call).
    Scopes key the strategy caches; two scopes that compare equal (their
    windows may differ only in literal spelling, such as 1.5 and 1.50) have the
    same window names and shapes, which is all the strategies read from them.
    """

    on: frozenset[Toggle]
    aggregates: bool = False
    windows: tuple[NamedWindow, ...] | None = None

    @property
    def plain(self) -> Scope:
        return Scope(self.on)


# -- expressions ---------------------------------------------------------------------


@cached
def columns(on: frozenset[Toggle]) -> SearchStrategy[Column]:
    """Column references, sometimes qualified; shrinks towards an unqualified simple name."""
    return st.builds(Column, names(on), st.none() | names(on))


# The clauses a call may take, given its function and whether its argument is `*`.
Clauses = Callable[[FunctionSpec, bool], SearchStrategy[dict]]


def _calls(specs: list[FunctionSpec], arg: SearchStrategy[Expr],
           extra: Clauses) -> SearchStrategy[FuncCall]:
    """Calls of one of `specs` with an arity it takes; `extra` adds the clauses the
    function and its arguments allow."""

    @st.composite
    def draw_one(draw: st.DrawFn) -> FuncCall:
        spec = draw(sampled(tuple(specs)))
        if spec.star and draw(st.booleans()):
            args: tuple[Expr, ...] = (Star(),)
        else:  # count() is in the table's arity but is not SQL; it always has an argument
            low = spec.max_args if spec.within_group_optional else spec.min_args
            n = draw(ints(max(low, 1 if spec.star else 0), min(spec.max_args, 3)))
            args = tuple(draw(arg) for _ in range(n))
        return FuncCall(spec.name, args, **draw(extra(spec, args == (Star(),))))

    return draw_one()


def _specs(kind: FunctionKind) -> list[FunctionSpec]:
    return [s for s in FUNCTIONS.values() if s.kind is kind]


def _aggregate_clauses(scope: Scope) -> Clauses:
    on = scope.on

    @functools.cache
    def clauses(spec: FunctionSpec, star: bool) -> SearchStrategy[dict]:
        if spec.within_group:  # one WITHIN GROUP key, no DISTINCT or ORDER BY
            # (mode's WITHIN GROUP form is in tests/test_reference_statistics.py)
            return st.fixed_dictionaries({
                "filter": maybe(Toggle.FILTER in on, expressions(scope.plain)),
                "within_group": sort_keys(scope.plain).map(lambda keys: keys[:1]),
            })
        distinct = Toggle.DISTINCT in on and not star  # count(DISTINCT *) is not SQL
        ordered = spec.ordered_aggregate and Toggle.ORDERED_AGGREGATE in on
        return st.fixed_dictionaries({
            "distinct": st.booleans() if distinct else st.just(False),
            "filter": maybe(Toggle.FILTER in on, expressions(scope.plain)),
            "order_by": (st.just(()) | sort_keys(scope.plain)) if ordered else st.just(()),
        })

    return clauses


def _window_clauses(on: frozenset[Toggle]) -> Clauses:
    @functools.cache
    def clauses(spec: FunctionSpec, star: bool) -> SearchStrategy[dict]:
        return st.fixed_dictionaries({
            "null_treatment": maybe(spec.ignore_nulls and Toggle.NULL_TREATMENT in on,
                                     st.sampled_from(NullTreatment)),
            "from_last": maybe(spec.from_last and Toggle.FROM_LAST in on, st.booleans()),
        })

    return clauses


@cached
def aggregate_calls(scope: Scope) -> SearchStrategy[FuncCall]:
    """Aggregate calls (GROUP BY context) with DISTINCT, FILTER and ORDER BY when on;
    shrinks towards count(a)."""
    return _calls(_aggregate_specs(scope.on), expressions(scope.plain),
                  _aggregate_clauses(scope))


def _aggregate_specs(on: frozenset[Toggle]) -> list[FunctionSpec]:
    """The aggregates; the ordered-set ones (WITHIN GROUP) when their toggle is on."""
    return [s for s in _specs(FunctionKind.AGGREGATE)
            if not s.within_group or Toggle.WITHIN_GROUP in on]


def scalar_calls(arg: SearchStrategy[Expr]) -> SearchStrategy[FuncCall]:
    """coalesce/nullif/abs calls; shrinks towards coalesce of one argument."""
    return _calls(_specs(FunctionKind.SCALAR), arg, _no_clauses)


def _no_clauses(spec: FunctionSpec, star: bool) -> SearchStrategy[dict]:
    return st.just({})


@cached
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
            st.builds(Cast, inner, st.sampled_from(SQL_TYPES)),
            scalar_calls(inner),
        ]
        options.append(in_lists(inner))
        if scope.aggregates:
            options.append(aggregate_calls(scope))
        if scope.windows is not None:
            options.append(window_exprs(scope))
        if Toggle.EXPR_SUBQUERIES in scope.on:
            options.append(subquery_exprs(scope.on, inner))
        return st.one_of(options)

    return st.recursive(st.one_of(leaves), extend, max_leaves=5)


def in_lists(inner: SearchStrategy[Expr]) -> SearchStrategy[InList]:
    """`x [NOT] IN (a, ...)`; shrinks towards one item, not negated. One item that
    is a scalar subquery would read back as IN (SELECT ...): it gets a NULL beside it."""
    items = st.lists(inner, min_size=1, max_size=3).map(_in_list_items)
    return st.builds(InList, inner, items, st.booleans())


def _in_list_items(items: list[Expr]) -> tuple[Expr, ...]:
    if len(items) == 1 and isinstance(items[0], ScalarSubquery):
        return (items[0], Literal(None, None))
    return tuple(items)


def subquery_exprs(on: frozenset[Toggle], inner: SearchStrategy[Expr]) -> SearchStrategy[Expr]:
    """Scalar, IN and EXISTS subqueries, one level deep (the subquery's own
    expressions hold none) over one table; its columns, drawn with random
    qualifiers, often read the enclosing query. Shrinks towards a scalar
    subquery of `SELECT a`."""
    query = queries(on - {Toggle.EXPR_SUBQUERIES}, 0)
    return st.one_of(
        st.builds(ScalarSubquery, query),
        st.builds(InSubquery, inner, query, st.booleans()),
        st.builds(Exists, query, st.booleans()),
    )


@cached
def sort_keys(scope: Scope) -> SearchStrategy[tuple[SortKey, ...]]:
    """1-2 sort keys; shrinks towards one ASC key without NULLS FIRST/LAST."""
    nulls = maybe(Toggle.NULLS_ORDER in scope.on, st.sampled_from(NullsOrder))
    key = st.builds(SortKey, expressions(scope), st.booleans(), nulls)
    return st.lists(key, min_size=1, max_size=2).map(tuple)


# -- windows -------------------------------------------------------------------------

_START_KINDS = [BoundKind.UNBOUNDED_PRECEDING, BoundKind.CURRENT_ROW, BoundKind.PRECEDING,
                BoundKind.FOLLOWING]
_END_KINDS = [BoundKind.CURRENT_ROW, BoundKind.UNBOUNDED_FOLLOWING, BoundKind.FOLLOWING,
              BoundKind.PRECEDING]
_RANK = {kind: i for i, kind in enumerate(BoundKind)}
_OFFSET_KINDS = (BoundKind.PRECEDING, BoundKind.FOLLOWING)


@cached
def frame_offsets(mode: FrameMode, on: frozenset[Toggle]) -> SearchStrategy[Expr]:
    """Non-negative offsets: integers for ROWS/GROUPS; for RANGE also decimals,
    floats and (when on) intervals; when on, typed integer literals and
    constant expressions (`1 + 2`, `INTERVAL '1' DAY * 2`). Shrinks towards
    INTEGER 0."""
    ints = st.integers(0, 2**40).map(integer_literal)
    exprs = _offset_expressions(mode, on) if Toggle.OFFSET_EXPRESSIONS in on else []
    if mode is not FrameMode.RANGE:
        return st.one_of(ints, *exprs)
    extra = [decimal_literals(min_value=0), float_literals(on, finite_min=0.0)]
    return st.one_of(ints, *extra, *([intervals()] if Toggle.INTERVALS in on else []), *exprs)


def _offset_expressions(mode: FrameMode, on: frozenset[Toggle]) -> list[SearchStrategy[Expr]]:
    small = st.integers(0, 5).map(integer_literal)
    typed = st.builds(Literal, st.integers(0, 5), st.sampled_from((T.INT16, T.INT64)))
    options = [typed, st.builds(BinaryOp, st.sampled_from((BinaryOperator.ADD, BinaryOperator.MUL)),
                                small, small | typed)]
    if mode is FrameMode.RANGE and Toggle.INTERVALS in on:
        options.append(st.builds(BinaryOp, st.just(BinaryOperator.MUL), intervals(), small))
    return options


@st.composite
def frames(draw: st.DrawFn, on: frozenset[Toggle], order_keys: int) -> Frame:
    """A valid frame for a window with `order_keys` ORDER BY keys (GROUPS needs one or
    more, RANGE offsets exactly one); shrinks towards ROWS BETWEEN UNBOUNDED PRECEDING
    AND CURRENT ROW."""
    modes = [FrameMode.ROWS, FrameMode.RANGE]
    if order_keys and Toggle.GROUPS in on:
        modes.append(FrameMode.GROUPS)
    mode = draw(sampled(tuple(modes)))
    offsets_ok = mode is not FrameMode.RANGE or order_keys == 1
    kinds = [k for k in BoundKind if offsets_ok or k not in _OFFSET_KINDS]
    start_kind = draw(sampled(tuple(k for k in _START_KINDS if k in kinds)))
    # A frame may not start after it ends (in bound order), as in PostgreSQL.
    end_kind = draw(sampled(tuple(k for k in _END_KINDS
                                   if k in kinds and _RANK[k] >= _RANK[start_kind])))
    start, end = (Bound(k, draw(frame_offsets(mode, on)) if k in _OFFSET_KINDS else None)
                  for k in (start_kind, end_kind))
    exclusion = draw(none_or(sampled(tuple(Exclusion)))) if Toggle.EXCLUSION in on else None
    return Frame(mode, start, end, exclusion)


@st.composite
def window_specs(draw: st.DrawFn, scope: Scope, named: tuple[NamedWindow, ...],
                 definition: bool = False) -> WindowSpec:
    """An OVER clause or WINDOW definition (`definition`), maybe refining one of
    `named` within the rules of resolve_window; shrinks towards the empty window
    `OVER ()`. A definition naming a window copies it, so only a window without
    a frame; `OVER (w)` copies too, `OVER w` does not."""
    plain = scope.plain
    usable = [w for w in named if not definition or resolve_window(WindowSpec(w.name), named).frame is None]
    bases = tuple(w.name for w in usable) if Toggle.NAMED_WINDOWS in scope.on else ()
    base = draw(none_or(sampled(bases))) if bases else None
    inherited = resolve_window(WindowSpec(base), named) if base else WindowSpec()
    partition_by = () if base else draw(tuples(expressions(plain), 0, 2))
    can_order = not inherited.order_by and inherited.frame is None
    order_by = draw(empty_or(sort_keys(plain))) if can_order else ()
    keys = len(order_by or inherited.order_by)
    frame = None
    if Toggle.FRAMES in scope.on and inherited.frame is None:
        frame = draw(none_or(_frames(scope.on, keys)))
    spec = WindowSpec(base, partition_by, order_by, frame)
    if base and not definition and inherited.frame is None and spec == WindowSpec(base):
        return replace(spec, parenthesized=draw(st.booleans()))
    return spec


@cached
def _frames(on: frozenset[Toggle], order_keys: int) -> SearchStrategy[Frame]:
    return frames(on, order_keys)


@st.composite
def window_clauses(draw: st.DrawFn, scope: Scope) -> tuple[NamedWindow, ...]:
    """A WINDOW clause of 0-3 windows with distinct names, each maybe refining an
    earlier one; shrinks towards no WINDOW clause."""
    if Toggle.NAMED_WINDOWS not in scope.on:
        return ()
    named: list[NamedWindow] = []
    for name in draw(_unique_names(scope.on)):
        named.append(NamedWindow(name, draw(window_specs(scope, tuple(named), definition=True))))
    return tuple(named)


@cached
def _unique_names(on: frozenset[Toggle]) -> SearchStrategy[list[str]]:
    return st.lists(names(on), max_size=3, unique=True)


@cached
def window_exprs(scope: Scope) -> SearchStrategy[WindowExpr]:
    """`f(...) OVER ...` for window functions and aggregates, with the clauses each
    takes; shrinks towards row_number() OVER ()."""
    named = scope.windows or ()
    arg, clauses = expressions(scope.plain), _window_clauses(scope.on)
    window_fns = _calls(_specs(FunctionKind.WINDOW), arg, clauses)
    # The value functions take the most clauses (IGNORE NULLS, FROM LAST): draw
    # them more often than their share of the table would.
    value_fns = _calls([s for s in _specs(FunctionKind.WINDOW) if s.uses_frame], arg, clauses)
    aggregates = _calls(_aggregate_specs(scope.on), arg, _aggregate_clauses(scope))
    calls = window_fns | value_fns | aggregates
    return st.builds(WindowExpr, calls, window_specs(scope, named))


# -- queries --------------------------------------------------------------------------


@cached
def sources(on: frozenset[Toggle], depth: int) -> SearchStrategy[Source]:
    """Tables, aliased subqueries and joins (ON exactly when not CROSS); shrinks towards
    a table without alias."""
    table = st.builds(TableRef, names(on), st.none() | names(on))
    if depth <= 0:
        return table
    options: list[SearchStrategy] = [table]
    if Toggle.SUBQUERIES in on:
        options.append(st.builds(SubqueryRef, queries(on, depth - 1), names(on)))
    if Toggle.SUBQUERIES in on and Toggle.SOURCES in on:
        options.append(_derived_tables(on, depth))
    if Toggle.SOURCES in on:
        options.append(_table_functions(on))
    if Toggle.JOINS in on:
        kinds = [k for k in JoinKind if k is not JoinKind.FULL] + [JoinKind.FULL]
        side = sources(on, depth - 1)
        options += [st.builds(Join, st.just(kind), side, side,
                              st.none() if kind is JoinKind.CROSS else expressions(Scope(on)))
                     for kind in kinds]
    return st.one_of(options)


@st.composite
def _derived_tables(draw: st.DrawFn, on: frozenset[Toggle], depth: int) -> SubqueryRef:
    """A derived table without alias, or with a column list; shrinks towards no alias."""
    query = draw(queries(on, depth - 1))
    alias = draw(none_or(names(on)))
    columns = draw(tuples(names(on), 1, 3)) if alias is not None else ()
    return SubqueryRef(query, alias, columns)


@st.composite
def _table_functions(draw: st.DrawFn, on: frozenset[Toggle]) -> TableFunctionRef:
    """generate_series/range over 2-3 arguments, with an alias and a column name
    or not; shrinks towards `generate_series(a, a)` without alias."""
    name = draw(sampled(tuple(TABLE_FUNCTIONS)))
    args = draw(tuples(expressions(Scope(on)), 2, 3))
    alias = draw(none_or(names(on)))
    columns = draw(tuples(names(on), 0, 1)) if alias is not None else ()
    return TableFunctionRef(name, args, alias, columns)


@cached
def values_queries(on: frozenset[Toggle]) -> SearchStrategy[Values]:
    """VALUES of 1-3 rows of one width (1-3) of constant expressions; shrinks
    towards `VALUES (a)`."""
    row = ints(1, 3).flatmap(lambda width: tuples(expressions(Scope(on)), width, width))
    return row.flatmap(lambda first: st.lists(
        tuples(expressions(Scope(on)), len(first), len(first)), max_size=2).map(
            lambda rest: Values((first, *rest))))


@st.composite
def selects(draw: st.DrawFn, on: frozenset[Toggle], depth: int = 1) -> Select:
    """A SELECT with optional FROM, WHERE, GROUP BY/HAVING, WINDOW, ORDER BY, LIMIT;
    shrinks towards `SELECT a`."""
    grouped = Toggle.GROUP_BY in on and draw(st.booleans())
    windows = draw(_window_clauses_of(Scope(on)))
    scope = Scope(on, aggregates=grouped, windows=windows)
    plain = Scope(on)
    return Select(
        items=draw(tuples(select_items(scope), 1, 3)),
        source=draw(none_or(sources(on, depth))),
        where=draw(none_or(expressions(plain))),
        group_by=draw(_group_by(on)) if grouped else (),
        having=draw(none_or(expressions(replace(scope, windows=None)))) if grouped else None,
        windows=windows,
        order_by=draw(empty_or(_query_order_by(scope))),
        distinct=draw(st.booleans()),
        qualify=draw(none_or(expressions(scope))) if Toggle.QUALIFY in on else None,
        **draw(_limits(on)),
    )


@cached
def _group_by(on: frozenset[Toggle]) -> SearchStrategy[tuple[Expr, ...]]:
    """1-2 keys, or GROUP BY ALL when on; shrinks towards one key."""
    keys = tuples(expressions(Scope(on)), 1, 2)
    return keys | st.just((AllColumns(),)) if Toggle.ALL_KEYS in on else keys


@cached
def _query_order_by(scope: Scope) -> SearchStrategy[tuple[SortKey, ...]]:
    """A query's ORDER BY keys, or ORDER BY ALL when on; shrinks towards the keys."""
    if Toggle.ALL_KEYS not in scope.on:
        return sort_keys(scope)
    nulls = maybe(Toggle.NULLS_ORDER in scope.on, st.sampled_from(NullsOrder))
    every = st.builds(SortKey, st.just(AllColumns()), st.booleans(), nulls)
    return sort_keys(scope) | every.map(lambda k: (k,))


@cached
def select_items(scope: Scope) -> SearchStrategy[SelectItem]:
    """Select-list items, window expressions offered directly (they are the point of
    the harness), `*` and `t.*`; shrinks towards an unaliased column."""
    expr = expressions(scope) | window_exprs(scope)
    star = st.builds(SelectItem, st.builds(Star, none_or(names(scope.on))))
    return st.builds(SelectItem, expr, none_or(names(scope.on))) | star


@cached
def _window_clauses_of(scope: Scope) -> SearchStrategy[tuple[NamedWindow, ...]]:
    return window_clauses(scope)


@cached
def _limits(on: frozenset[Toggle]) -> SearchStrategy[dict]:
    return st.fixed_dictionaries(_limit_args(on))


@cached
def queries(on: frozenset[Toggle], depth: int = 2) -> SearchStrategy[Query]:
    """SELECT, UNION ALL and WITH nested up to `depth`; shrinks towards a single SELECT."""
    values = [values_queries(on)] if Toggle.SOURCES in on else []
    if depth <= 0 or Toggle.SET_OPS not in on:
        return st.one_of(selects(on, depth), *values)
    inner = queries(on, depth - 1)
    order_by = empty_or(_query_order_by(Scope(on)))
    unions = st.builds(UnionAll, inner, inner, order_by, **_limit_args(on))
    columns = tuples(names(on), 1, 3) if Toggle.SOURCES in on else st.just(())
    ctes = st.lists(st.builds(CommonTable, names(on), inner, empty_or(columns)), min_size=1,
                    max_size=2, unique_by=_cte_name).map(tuple)
    return st.one_of(selects(on, depth), unions, st.builds(With, ctes, inner), *values)


def _cte_name(cte: CommonTable) -> str:
    return cte.name


@cached
def _limit_args(on: frozenset[Toggle]) -> dict[str, SearchStrategy[int | None]]:
    """LIMIT and OFFSET, each unset or a count; shrinks towards unset."""
    count = maybe(Toggle.LIMIT in on, st.integers(0, 2**31))
    return {"limit": count, "offset": count}


@st.composite
def model_queries(draw: st.DrawFn, depth: int = 2) -> Query:
    """A whole query under a swarm of feature flags; shrinks towards `SELECT a` with
    every feature switched on but unused."""
    return draw(queries(draw(feature_flags()), depth))
