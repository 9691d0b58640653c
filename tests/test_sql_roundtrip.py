"""parse(write(q)) == q, and the writer's Unsupported contract, as properties.

Model equality is checked strictly: dataclass == cannot see the sign of -0.0,
the digits of Decimal('1.50') vs Decimal('1.5'), and is never true for NaN, so
`strict` compares the repr of every leaf value together with its Python type.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from harness.core import functions
from harness.core import types as T
from harness.core.dialect import Dialect, Feature, IgnoreNullsPlacement
from harness.core.errors import HarnessError, InvalidQuery, Unsupported
from harness.core.model import (
    CURRENT_ROW,
    SUBQUERY_EXPRS,
    UNBOUNDED_PRECEDING,
    AllColumns,
    BinaryOp,
    BinaryOperator,
    Bound,
    BoundKind,
    Cast,
    Column,
    CommonTable,
    Exclusion,
    Exists,
    Frame,
    FrameMode,
    FuncCall,
    InSubquery,
    Interval,
    IntervalUnit,
    Join,
    JoinKind,
    Literal,
    NamedWindow,
    NullTreatment,
    ScalarSubquery,
    Select,
    SelectItem,
    SortKey,
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
    walk,
    window_exprs,
)
from harness.generate.model_strategies import (
    Scope,
    Toggle,
    expressions,
    frames,
    model_queries,
)
from harness.sql import parse, parse_expr, write, write_expr
from harness.sql.correlation import is_aggregated, outer_references, source_names
from reference_impl.expressions import constant_value

PROPERTY = settings(max_examples=examples(400), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def strict(node: object) -> object:
    """A comparable image of a model node that tells -0.0, NaN and Decimal digits apart."""
    if dataclasses.is_dataclass(node):
        return (type(node).__name__,
                tuple(strict(getattr(node, f.name)) for f in dataclasses.fields(node)))
    if isinstance(node, tuple):
        return tuple(strict(v) for v in node)
    return (type(node).__name__, repr(node))


def first_difference(a: object, b: object, path: str = "q") -> str:
    """Where two model nodes first differ, for a readable failure message."""
    if dataclasses.is_dataclass(a) and type(a) is type(b):
        for f in dataclasses.fields(a):
            if strict(getattr(a, f.name)) != strict(getattr(b, f.name)):
                return first_difference(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if strict(x) != strict(y):
                return first_difference(x, y, f"{path}[{i}]")
    return f"{path}: {a!r} != {b!r}"


def assert_round_trip(q: object, text: str, back: object) -> None:
    assert strict(back) == strict(q), f"{first_difference(back, q)}\n--- SQL ---\n{text}"


# -- properties ----------------------------------------------------------------------


@PROPERTY
@given(model_queries())
def test_parse_of_write_is_identity(q):
    text = write(q)
    back = parse(text)
    assert_round_trip(q, text, back)
    assert write(back) == text


@PROPERTY
@given(expressions(Scope(frozenset(Toggle), aggregates=True, windows=())))
def test_parse_expr_of_write_expr_is_identity(e):
    text = write_expr(e)
    assert_round_trip(e, text, parse_expr(text))


INSIDE = Dialect(name="ignore-nulls-inside", ignore_nulls_placement=IgnoreNullsPlacement.INSIDE)


@settings(PROPERTY, max_examples=examples(100))
@given(model_queries())
def test_ignore_nulls_inside_reads_back_the_same(q):
    # The canonical parser also accepts `lag(x IGNORE NULLS)`, so this round-trips too.
    text = write(q, INSIDE)
    assert_round_trip(q, text, parse(text))


def features_used(q: object) -> set[Feature]:
    """Which Features a query uses: an independent restatement of the writer's checks."""
    used: set[Feature] = set()
    for n in walk(q):
        used |= _node_features(n)
        if _refines(n):
            used.add(Feature.NAMED_WINDOW_REFINEMENT)
        if isinstance(n, Select):
            used |= {Feature.FRAME_ON_RANKING for w in window_exprs(n) if _framed_ranking(w, n)}
            used |= {Feature.RANGE_WITHOUT_ORDER_BY for w in window_exprs(n) if _unordered_range(w, n)}
    return used | _subquery_features(q, (), condition=False, window=False)


_QUERY_NODES = (Select, UnionAll, With, Values)


def _subquery_features(n: object, scopes: tuple[frozenset[str], ...], condition: bool,
                       window: bool) -> set[Feature]:
    """The subquery features, by where each subquery stands: in a condition (WHERE,
    HAVING, ON), in a window, and the FROM names of the SELECTs around it."""
    used: set[Feature] = set()
    if isinstance(n, SUBQUERY_EXPRS):
        used |= _features_of_subquery(n, scopes, condition, window)
    if isinstance(n, _QUERY_NODES):  # a query's own clauses start afresh
        condition = window = False
    if isinstance(n, Select):
        scopes = (*scopes, source_names(n.source))
    for name, child in _named_children(n):
        in_condition = condition or (isinstance(n, Select) and name in ("where", "having")) or (
            isinstance(n, Join) and name == "on")
        in_window = window or isinstance(n, (WindowExpr, NamedWindow))
        used |= _subquery_features(child, scopes, in_condition, in_window)
    return used


def _features_of_subquery(n: object, scopes: tuple[frozenset[str], ...], condition: bool,
                          window: bool) -> set[Feature]:
    kinds = {ScalarSubquery: Feature.SCALAR_SUBQUERY, InSubquery: Feature.IN_SUBQUERY,
             Exists: Feature.EXISTS_SUBQUERY}
    used = {kinds[type(n)]}
    if not isinstance(n, ScalarSubquery) and not condition:
        used.add(Feature.SUBQUERY_PREDICATE_AS_VALUE)
    outer = outer_references(n.query)
    if outer:
        used.add(Feature.CORRELATED_SUBQUERY)
        if window:
            used.add(Feature.CORRELATED_SUBQUERY_IN_WINDOW)
        if scopes and not outer <= scopes[-1]:
            used.add(Feature.CORRELATION_BEYOND_PARENT)
        if isinstance(n, ScalarSubquery) and not is_aggregated(n.query):
            used.add(Feature.CORRELATED_SCALAR_UNAGGREGATED)
    return used


def _named_children(n: object) -> list[tuple[str, object]]:
    """(field name, sub-node) of a model node, tuples flattened as `children` does."""
    out: list[tuple[str, object]] = []
    for f in getattr(n, "__dataclass_fields__", {}):
        value = getattr(n, f)
        values = value if isinstance(value, tuple) else (value,)
        for v in values:
            for item in (v if isinstance(v, tuple) else (v,)):
                if dataclasses.is_dataclass(item) and not isinstance(item, type):
                    out.append((f, item))
    return out


def _unordered_range(w: WindowExpr, select: Select) -> bool:
    spec = resolve_window(w.window, select.windows)
    return spec.frame is not None and spec.frame.mode is FrameMode.RANGE and not spec.order_by


def _refines(n: object) -> bool:
    """A window written as `(w ...)`: in the WINDOW clause always, in OVER unless bare."""
    if isinstance(n, NamedWindow):
        return n.spec.base is not None
    return isinstance(n, WindowExpr) and n.window.base is not None \
        and n.window != WindowSpec(base=n.window.base)


_MONTHS = {IntervalUnit.YEAR: 12, IntervalUnit.MONTH: 1}
_SECONDS = {IntervalUnit.DAY: 86400, IntervalUnit.HOUR: 3600, IntervalUnit.MINUTE: 60,
            IntervalUnit.SECOND: 1}


def _offset(b: Bound) -> tuple[str, object]:
    offset = _folded(b.offset)
    if isinstance(offset, Interval):
        scale = "months" if offset.unit in _MONTHS else "seconds"
        return scale, offset.count * {**_MONTHS, **_SECONDS}[offset.unit]
    return "number", offset.value


def _folded(e: object) -> Literal | Interval:
    """The offsets the strategies write as expressions (a + b, a * b, i * n), folded."""
    if not isinstance(e, BinaryOp):
        return e
    left, right = _folded(e.left), _folded(e.right)
    if isinstance(left, Interval):
        return Interval(left.count * right.value, left.unit)
    op = {BinaryOperator.ADD: lambda a, b: a + b, BinaryOperator.MUL: lambda a, b: a * b}[e.op]
    return Literal(op(left.value, right.value), None)


def _backwards(f: Frame) -> bool:
    same = f.start.kind is f.end.kind and f.start.kind in (BoundKind.PRECEDING,
                                                          BoundKind.FOLLOWING)
    if not same or _offset(f.start)[0] != _offset(f.end)[0]:
        return False
    start, end = _offset(f.start)[1], _offset(f.end)[1]
    return start < end if f.start.kind is BoundKind.PRECEDING else start > end


INT_MAX = 2**31 - 1


def _int_offset(e: object) -> int | None:
    """A frame offset's value when it is a whole number (folded), else None."""
    if e is None or any(isinstance(x, Interval) for x in walk(e)):
        return None
    value = getattr(_folded(e), "value", None)
    return value if type(value) is int else None


def _row_offsets(f: Frame) -> list[int]:
    """The whole-number offsets of a ROWS or GROUPS frame (RANGE offsets are values)."""
    if f.mode is FrameMode.RANGE:
        return []
    return [v for v in (_int_offset(b.offset) for b in (f.start, f.end)) if v is not None]


def _lag_features(n: object) -> set[Feature]:
    """What lag/lead(value, offset, default) asks beyond the standard's constant
    offset: an offset or a default per row (one that reads a row), an offset
    with no value here (NULL, or a constant that cannot be evaluated, such as
    CAST(0 AS DATE)), an offset past INTEGER."""
    if not (isinstance(n, FuncCall) and n.name in ("lag", "lead")):
        return set()
    offset = n.args[1] if len(n.args) > 1 else None
    default = n.args[2] if len(n.args) > 2 else None
    used: set[Feature] = set()
    if offset is not None and _reads_a_row(offset):
        used.add(Feature.LAG_ROW_OFFSET)
    elif offset is not None:
        try:
            value = offset.value if isinstance(offset, Literal) else constant_value(offset)
        except (HarnessError, ArithmeticError):
            value = None
        if value is None:
            used.add(Feature.LAG_NULL_OFFSET)
        elif type(value) is int and value > INT_MAX:
            used.add(Feature.OFFSET_BEYOND_INT)
    if default is not None and _reads_a_row(default):
        used.add(Feature.LAG_ROW_DEFAULT)
    return used


def _reads_a_row(e: object) -> bool:
    return any(isinstance(x, (Column, Star, ScalarSubquery, InSubquery, Exists, WindowExpr)) for x in walk(e))


def _node_features(n: object) -> set[Feature]:
    checks = {
        # ROWS/GROUPS offsets past INTEGER; n FOLLOWING to a huge FOLLOWING (SQLite loops).
        Feature.OFFSET_BEYOND_INT: isinstance(n, Frame) and any(v > INT_MAX for v in _row_offsets(n)),
        Feature.FOLLOWING_FRAME_TO_HUGE_OFFSET: isinstance(n, Frame) and n.mode is not FrameMode.RANGE
        and n.start.kind is BoundKind.FOLLOWING and n.end.kind is BoundKind.FOLLOWING
        and (_int_offset(n.end.offset) or 0) >= INT_MAX,
        Feature.GROUPS_FRAME: isinstance(n, Frame) and n.mode is FrameMode.GROUPS,
        Feature.RANGE_OFFSET: isinstance(n, Frame) and n.mode is FrameMode.RANGE
        and any(b.offset is not None for b in (n.start, n.end)),
        Feature.RANGE_INTERVAL: isinstance(n, Bound) and n.offset is not None
        and any(isinstance(x, Interval) for x in walk(n.offset)),
        Feature.FRAME_OFFSET_EXPRESSION: isinstance(n, Bound) and n.offset is not None
        and not isinstance(n.offset, (Literal, Interval)),
        Feature.FRAME_OFFSET_INTERVAL_EXPRESSION: isinstance(n, Bound)
        and isinstance(n.offset, BinaryOp) and any(isinstance(x, Interval) for x in walk(n.offset)),
        Feature.QUALIFY: isinstance(n, Select) and n.qualify is not None,
        Feature.GROUP_BY_ALL: isinstance(n, Select) and AllColumns() in n.group_by,
        Feature.ORDER_BY_ALL: isinstance(n, SortKey) and isinstance(n.expr, AllColumns),
        Feature.EXCLUDE: isinstance(n, Frame) and n.exclusion is not None,
        Feature.FRAME_START_AFTER_END: isinstance(n, Frame) and _backwards(n),
        Feature.RANGE_MIXED_INTERVAL_UNITS: isinstance(n, Frame)
        and all(isinstance(_folded(b.offset), Interval) for b in (n.start, n.end))
        and _folded(n.start.offset).unit != _folded(n.end.offset).unit,
        Feature.IGNORE_NULLS: isinstance(n, FuncCall) and n.null_treatment is not None,
        Feature.NTH_VALUE_FROM_LAST: isinstance(n, FuncCall) and n.from_last is not None,
        Feature.DISTINCT_WINDOW_AGGREGATE: isinstance(n, WindowExpr) and n.func.distinct,
        Feature.FILTER_WINDOW_AGGREGATE: isinstance(n, WindowExpr) and n.func.filter is not None,
        Feature.ORDERED_AGGREGATE: isinstance(n, FuncCall) and bool(n.order_by),
        Feature.WITHIN_GROUP: isinstance(n, FuncCall) and bool(n.within_group),
        Feature.WITHIN_GROUP_WINDOW: isinstance(n, WindowExpr) and bool(n.func.within_group),
        Feature.NULLS_ORDER: isinstance(n, SortKey) and n.nulls is not None,
        Feature.NAMED_WINDOW: (isinstance(n, Select) and bool(n.windows))
        or (isinstance(n, WindowSpec) and n.base is not None),
        Feature.LIMIT_OFFSET: isinstance(n, (Select, UnionAll)) and n.offset is not None,
        Feature.FULL_JOIN: isinstance(n, Join) and n.kind is JoinKind.FULL,
        Feature.INTERVAL_LITERAL: isinstance(n, Interval),
        Feature.INT_DIV_OPERATOR: isinstance(n, BinaryOp) and n.op is BinaryOperator.INT_DIV,
        Feature.NAN_LITERAL: isinstance(n, Literal) and isinstance(n.value, float)
        and not math.isfinite(n.value),
        Feature.VALUES: isinstance(n, Values),
        Feature.SUBQUERY_WITHOUT_ALIAS: isinstance(n, SubqueryRef) and n.alias is None,
        Feature.COLUMN_ALIASES: isinstance(n, (SubqueryRef, CommonTable)) and bool(n.columns),
        Feature.GENERATE_SERIES: isinstance(n, TableFunctionRef) and n.name == "generate_series",
        Feature.RANGE_TABLE_FUNCTION: isinstance(n, TableFunctionRef) and n.name == "range",
    }
    return {feature for feature, used in checks.items() if used} | _lag_features(n)


def _framed_ranking(w: WindowExpr, select: Select) -> bool:
    spec = functions.lookup(w.func.name)
    return not spec.uses_frame and resolve_window(w.window, select.windows).frame is not None


@settings(PROPERTY, max_examples=examples(300))
@given(model_queries(), st.sampled_from(Feature))
def test_a_missing_feature_raises_exactly_when_used(q, feature):
    dialect = Dialect(name=f"without-{feature.value}", unsupported=frozenset({feature}))
    if feature in features_used(q):
        with pytest.raises(Unsupported) as raised:
            write(q, dialect)
        assert raised.value.feature == feature.value
    else:
        assert write(q, dialect) == write(q)


@pytest.mark.parametrize(("sql", "feature"), [
    ("SELECT a, lag(a, CAST(0 AS DATE)) OVER () AS l FROM t", Feature.LAG_NULL_OFFSET),  # met in CI
    ("SELECT a, lag(a, CAST(NULL AS BIGINT)) OVER () AS l FROM t", Feature.LAG_NULL_OFFSET),
    ("SELECT a, lead(a, a % 2) OVER () AS l FROM t", Feature.LAG_ROW_OFFSET),
    ("SELECT a, lag(a, 1, a) OVER () AS l FROM t", Feature.LAG_ROW_DEFAULT),
    ("SELECT a, lag(a, 2147483648) OVER () AS l FROM t", Feature.OFFSET_BEYOND_INT),
])
def test_the_restatement_knows_lag_offsets(sql, feature):
    """The property's restatement of the writer's checks (`features_used`) agrees
    with the writer on lag/lead offsets and defaults."""
    q = parse(sql)
    assert feature in features_used(q)
    with pytest.raises(Unsupported, match=feature.value):
        write(q, Dialect(name=f"without-{feature.value}", unsupported=frozenset({feature})))


FRAME_FEATURES = [Feature.GROUPS_FRAME, Feature.RANGE_OFFSET, Feature.RANGE_INTERVAL,
                  Feature.EXCLUDE, Feature.FRAME_START_AFTER_END, Feature.INTERVAL_LITERAL,
                  Feature.NAN_LITERAL, Feature.RANGE_MIXED_INTERVAL_UNITS,
                  Feature.FRAME_OFFSET_EXPRESSION, Feature.FRAME_OFFSET_INTERVAL_EXPRESSION]


@settings(PROPERTY, max_examples=examples(300))
@given(frames(frozenset(Toggle), order_keys=1))
def test_every_frame_round_trips_and_raises_exactly_when_used(frame):
    # Frames are a small part of a whole query; here each example is one.
    q = _query_with(WindowSpec(order_by=(SortKey(Column("k")),), frame=frame),
                    FuncCall("sum", (Column("x"),)))
    text = write(q)
    assert_round_trip(q, text, parse(text))
    used = features_used(q)
    for feature in FRAME_FEATURES:
        dialect = Dialect(name=f"without-{feature.value}", unsupported=frozenset({feature}))
        if feature in used:
            with pytest.raises(Unsupported, match=feature.value):
                write(q, dialect)
        else:
            assert write(q, dialect) == text


# -- focused examples --------------------------------------------------------------------

CANONICAL_TEXTS = [
    "SELECT lag(x) IGNORE NULLS OVER (ORDER BY k ASC) AS l\nFROM t",
    "SELECT nth_value(x, 2) FROM LAST RESPECT NULLS OVER w\nFROM t\nWINDOW w AS (ORDER BY k DESC)",
    ("SELECT sum(x) OVER (w ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)\nFROM t\n"
    "WINDOW w AS (PARTITION BY g ORDER BY k ASC NULLS FIRST)"),
    ("SELECT count(*) FILTER (WHERE x > 0) OVER (ORDER BY k ASC GROUPS BETWEEN UNBOUNDED PRECEDING "
    "AND 2 FOLLOWING EXCLUDE NO OTHERS)\nFROM t"),
    ("SELECT string_agg(s, ',' ORDER BY k DESC NULLS LAST)\nFROM t\nGROUP BY g\n"
    "HAVING count(DISTINCT s) > 1"),
    ("SELECT sum(x) OVER (ORDER BY d ASC RANGE BETWEEN INTERVAL '3' DAY PRECEDING "
     "AND CURRENT ROW)\nFROM t"),
    "SELECT -5, -(5), -(-5), a - (-5), CAST((5) AS BIGINT), CAST(5 AS BIGINT)",
    "SELECT \"Mixed Case\", \"say \"\"hi\"\"\", \"select\", \"ünï\"\nFROM \"T\" AS \"from\"",
    ("SELECT a\nFROM x CROSS JOIN (y FULL JOIN z ON y.k = z.k) "
    "LEFT JOIN (SELECT 1 AS k) AS s ON TRUE"),
    ("(SELECT a\nFROM t\nLIMIT 1)\nUNION ALL\n(SELECT b\nFROM u\nUNION ALL\nSELECT c\nFROM v)\n"
    "ORDER BY 1 ASC\nLIMIT 5\nOFFSET 2"),
    ("WITH a AS (SELECT 1 AS x), b AS (SELECT x\nFROM a)\nSELECT DISTINCT *\nFROM b\n"
    "WHERE NOT (x IS NULL)"),
    ("WITH v(x, \"select\") AS (VALUES (1, 'a'), (-2, NULL))\nSELECT x, sum(x) OVER (ORDER BY x ASC)\n"
     "FROM v CROSS JOIN generate_series(1, 5) AS g(n) CROSS JOIN range(0, 10, 2) AS r "
     "CROSS JOIN range(1, 2) CROSS JOIN (SELECT 1) CROSS JOIN (VALUES (TRUE)) AS b(\"c d\")"),
    "VALUES (1), (2)\nUNION ALL\nVALUES (3)\nUNION ALL\nSELECT column1\nFROM (VALUES (4)) AS v",
]


@pytest.mark.parametrize("text", CANONICAL_TEXTS)
def test_canonical_text_is_a_fixed_point(text):
    assert write(parse(text)) == text


A, B, C = Column("a"), Column("b"), Column("c")


def lit(value: object, t: T.SqlType | None) -> Literal:
    return Literal(value, t)


SPECIAL_LITERALS = [
    lit(math.nan, T.FLOAT64), lit(math.inf, T.FLOAT32), lit(-math.inf, T.FLOAT64),
    lit(-0.0, T.FLOAT64), lit(-0.0, T.FLOAT32), lit(1e16, T.FLOAT64), lit(5e-324, T.FLOAT64),
    lit(Decimal("1.50"), T.decimal(10, 2)), lit(Decimal("1.5"), T.decimal(10, 2)),
    lit(Decimal("-0.00"), T.decimal(3, 2)), lit(Decimal("12345678901234567890123456789012345678"),
                                             T.decimal(38, 0)),
    lit(-(2**31), T.INT32), lit(2**31, T.INT64), lit(-(2**63), T.INT64), lit(7, T.INT64),
    lit(7, T.INT8), lit(None, T.INT16), lit(None, None), lit("", T.STRING),
    lit("it's\n-- not a comment /* nor this */", T.STRING), lit(True, T.BOOL),
]


@pytest.mark.parametrize("literal", SPECIAL_LITERALS, ids=repr)
def test_literals_round_trip_exactly(literal):
    text = write_expr(literal)
    assert_round_trip(literal, text, parse_expr(text))


@pytest.mark.parametrize("expr", [
    Cast(lit("NaN", T.STRING), T.FLOAT64),
    Cast(lit(5, T.INT32), T.INT64),
    Cast(lit(None, None), T.INT32),
    Cast(lit(1.5, T.FLOAT32), T.FLOAT64),
    UnaryOp(UnaryOperator.NEG, lit(5, T.INT32)),
    UnaryOp(UnaryOperator.NEG, lit(-5, T.INT32)),
    BinaryOp(BinaryOperator.SUB, Column("a"), lit(-5, T.INT32)),
    BinaryOp(BinaryOperator.MUL, BinaryOp(BinaryOperator.ADD, A, B), C),
    BinaryOp(BinaryOperator.OR, A, BinaryOp(BinaryOperator.OR, B, C)),
    Interval(-3, IntervalUnit.HOUR),
], ids=repr)
def test_lookalike_models_stay_apart(expr):
    text = write_expr(expr)
    assert_round_trip(expr, text, parse_expr(text))


def test_negative_zero_keeps_its_sign():
    back = parse_expr(write_expr(lit(-0.0, T.FLOAT64)))
    assert math.copysign(1.0, back.value) == -1.0


def _query_with(window: WindowSpec, func: FuncCall, named: tuple[NamedWindow, ...] = ()) -> Select:
    return Select((SelectItem(WindowExpr(func, window)),), TableRef("t"), windows=named)


def test_only_base_is_written_as_over_name():
    named = (NamedWindow("w", WindowSpec(order_by=(SortKey(Column("k")),))),)
    bare = _query_with(WindowSpec(base="w"), FuncCall("rank"), named)
    refined = _query_with(WindowSpec(base="w", frame=Frame(
        FrameMode.ROWS, Bound(BoundKind.UNBOUNDED_PRECEDING), Bound(BoundKind.CURRENT_ROW))),
        FuncCall("sum", (Column("x"),)), named)
    assert "rank() OVER w\n" in write(bare)
    assert "OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)" in write(refined)


def test_frame_inherited_through_named_window_counts_for_ranking_functions():
    frame = Frame(FrameMode.ROWS, UNBOUNDED_PRECEDING, CURRENT_ROW)
    named = (NamedWindow("w", WindowSpec(order_by=(SortKey(Column("k")),), frame=frame)),)
    q = _query_with(WindowSpec(base="w"), FuncCall("rank"), named)
    dialect = Dialect(name="x", unsupported=frozenset({Feature.FRAME_ON_RANKING}))
    with pytest.raises(Unsupported, match="frame.on-ranking-function"):
        write(q, dialect)
    # The same frame on an aggregate is fine.
    assert write(_query_with(WindowSpec(base="w"), FuncCall("sum", (Column("x"),)), named), dialect)


def test_exclude_no_others_is_not_dropped():
    frame = Frame(FrameMode.ROWS, UNBOUNDED_PRECEDING, CURRENT_ROW, Exclusion.NO_OTHERS)
    q = _query_with(WindowSpec(frame=frame), FuncCall("sum", (Column("x"),)))
    with pytest.raises(Unsupported, match="frame.exclude"):
        write(q, Dialect(name="x", unsupported=frozenset({Feature.EXCLUDE})))


def test_missing_function_names_the_function():
    q = _query_with(WindowSpec(), FuncCall("nth_value", (Column("x"), lit(2, T.INT32))))
    with pytest.raises(Unsupported) as raised:
        write(q, Dialect(name="x", missing_functions=frozenset({"nth_value"})))
    assert raised.value.feature == "function.nth_value"


def test_dialect_spelling_hooks_are_used():
    dialect = Dialect(name="x", identifier_quote="`", function_names={"stddev_samp": "stddev"},
                      type_names={T.TypeKind.FLOAT64: "DOUBLE"},
                      ignore_nulls_placement=IgnoreNullsPlacement.INSIDE)
    call = FuncCall("lag", (Column("My Col"), lit(1, T.INT32)), null_treatment=NullTreatment.IGNORE)
    expected = "lag(`My Col`, 1 IGNORE NULLS) OVER ()"
    assert write_expr(WindowExpr(call, WindowSpec()), dialect) == expected
    assert write_expr(FuncCall("stddev_samp", (Column("x"),)), dialect) == "stddev(x)"
    assert write_expr(lit(1.5, T.FLOAT64), dialect) == "CAST(1.5E0 AS DOUBLE)"
    assert write_expr(Star(), dialect) == "*"


def test_frame_offset_hook_spells_literal_offsets():
    class BareNumbers(Dialect):
        def frame_offset_literal(self, value: object, t: T.SqlType) -> str | None:
            return format(value, "f") if isinstance(value, Decimal) else None

    offset = lit(Decimal("1.50"), T.decimal(10, 2))
    frame = Frame(FrameMode.RANGE, Bound(BoundKind.PRECEDING, offset), CURRENT_ROW)
    q = _query_with(WindowSpec(order_by=(SortKey(Column("k")),), frame=frame),
                    FuncCall("sum", (Column("x"),)))
    assert "RANGE BETWEEN 1.50 PRECEDING AND CURRENT ROW" in write(q, BareNumbers(name="x"))
    assert "CAST(1.50 AS DECIMAL(10,2)) PRECEDING" in write(q)


def test_refining_a_named_window_is_its_own_feature():
    named = (NamedWindow("w", WindowSpec(order_by=(SortKey(Column("k")),))),)
    frame = Frame(FrameMode.ROWS, UNBOUNDED_PRECEDING, CURRENT_ROW)
    dialect = Dialect(name="x", unsupported=frozenset({Feature.NAMED_WINDOW_REFINEMENT}))
    plain = _query_with(WindowSpec(base="w"), FuncCall("sum", (Column("x"),)), named)
    refined = _query_with(WindowSpec(base="w", frame=frame), FuncCall("sum", (Column("x"),)), named)
    assert write(plain, dialect) == write(plain)
    with pytest.raises(Unsupported, match="window.refine-named"):
        write(refined, dialect)


@pytest.mark.parametrize("model, message", [
    (Frame(FrameMode.ROWS, Bound(BoundKind.PRECEDING), CURRENT_ROW), "needs an offset"),
    (Frame(FrameMode.ROWS, Bound(BoundKind.PRECEDING, Column("a")), CURRENT_ROW),
     "constant expression"),
    (Frame(FrameMode.ROWS, Bound(BoundKind.CURRENT_ROW, lit(1, T.INT32)), CURRENT_ROW),
     "takes no offset"),
], ids=["no-offset", "column-offset", "offset-on-current-row"])
def test_an_unwritable_model_is_refused(model, message):
    q = _query_with(WindowSpec(frame=model), FuncCall("sum", (Column("x"),)))
    with pytest.raises(InvalidQuery, match=message):
        write(q)


@pytest.mark.parametrize("start, end", [
    (CURRENT_ROW, Bound(BoundKind.PRECEDING, lit(1, T.INT32))),
    (Bound(BoundKind.UNBOUNDED_FOLLOWING), CURRENT_ROW),
    (CURRENT_ROW, Bound(BoundKind.UNBOUNDED_PRECEDING)),
], ids=["backwards", "from-unbounded-following", "to-unbounded-preceding"])
def test_a_frame_the_syntax_rules_forbid_is_written_as_it_is(start, end):
    # Error conformance sends such queries to the engines, which must refuse them;
    # the parser keeps them only when asked to, as a case expecting an error does.
    q = _query_with(WindowSpec(frame=Frame(FrameMode.ROWS, start, end)), FuncCall("sum", (Column("x"),)))
    text = write(q)
    spelled = [b.kind.value if b.offset is None else f"1 {b.kind.value}" for b in (start, end)]
    assert f"ROWS BETWEEN {spelled[0]} AND {spelled[1]}" in text
    with pytest.raises(InvalidQuery, match="cannot run from"):
        parse(text)
    assert parse(text, keep_invalid=True) == q


@pytest.mark.parametrize("bad", [
    lit(True, T.INT32), lit(2**31, T.INT32), lit(1, T.FLOAT64),
    lit(Decimal("1.234"), T.decimal(5, 2)),
    lit(dt.datetime(2024, 1, 1), T.DATE), lit(1, None), lit(1, T.INTERVAL),
    Join(JoinKind.INNER, TableRef("a"), TableRef("b")),
], ids=repr)
def test_a_literal_that_cannot_be_spelled_faithfully_is_refused(bad):
    with pytest.raises(InvalidQuery):
        write_expr(bad)
