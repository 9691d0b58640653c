"""Scalar expressions: compile a model expression against a relation's fields
into a function of one row, together with its declared type.

Aggregates and window functions never reach this module: the query operators
compute them first and rewrite them into columns (see `rewrite.py`), so
meeting one here means it stood where the standard forbids it (WHERE, an
argument of another window function, ...).
"""

from __future__ import annotations

import operator
from collections.abc import Callable

from harness.core import types as T
from harness.core.errors import EvaluationError, InvalidQuery, ReferenceGap
from harness.core.functions import FunctionKind, lookup
from harness.core.model import (
    COMPARISONS,
    BinaryOp,
    BinaryOperator,
    Case,
    Cast,
    Column,
    Exists,
    Expr,
    FuncCall,
    InList,
    InSubquery,
    Interval,
    IntervalUnit,
    IsNull,
    Literal,
    ScalarSubquery,
    Star,
    UnaryOp,
    UnaryOperator,
    WindowExpr,
    walk,
)
from harness.core.semantics import DatetimeVsString
from harness.core.types import SqlType, TypeKind
from reference_impl.arithmetic import apply_arithmetic, negate
from reference_impl.casts import cast_value
from reference_impl.compiled import Compiled, Evaluator, converted
from reference_impl.intervals import (
    add_interval,
    interval_operation,
    interval_result_type,
    scale_interval,
)
from reference_impl.profile import active_profile
from reference_impl.relation import Relation, Row
from reference_impl.scalar_functions import SCALAR_FUNCTIONS
from reference_impl.sqltypes import arithmetic_type, common_type
from reference_impl.subqueries import compile_exists, compile_scalar, in_values, outer_column
from reference_impl.values import and3, compare, not3, or3


def compile_expr(expr: Expr, rel: Relation) -> Compiled:
    compiler = _COMPILERS.get(type(expr))
    if compiler is None:
        raise ReferenceGap(f"expression {type(expr).__name__}")
    return compiler(expr, rel)


def compile_predicate(expr: Expr, rel: Relation) -> Evaluator:
    """A condition (WHERE, HAVING, ON, FILTER, WHEN): BOOLEAN or an untyped NULL."""
    compiled = compile_expr(expr, rel)
    if compiled.type not in (None, T.BOOL):
        raise EvaluationError(f"a condition must be BOOLEAN, got {compiled.type}")
    return compiled.fn


def constant_value(expr: Expr) -> object:
    """The value of an expression that reads no column (a frame offset, say)."""
    if any(isinstance(node, Column) for node in walk(expr)):
        raise ReferenceGap(f"a column where a constant is needed (per-row offsets): {expr}")
    return compile_expr(expr, Relation((), [])).fn(())


# ---------------------------------------------------------------------------
# Leaves


def _column(expr: Column, rel: Relation) -> Compiled:
    index = rel.find(expr)
    if index is None:  # a column of an enclosing query (a correlated subquery), or none
        outer = outer_column(expr)
        if outer is not None:
            return outer
        index = rel.resolve(expr)  # raises: the column does not exist
    return Compiled(operator.itemgetter(index), rel.fields[index].type)


def _literal(expr: Literal, rel: Relation) -> Compiled:
    value = expr.value
    return Compiled(lambda row: value, expr.type)


def _interval(expr: Interval, rel: Relation) -> Compiled:
    return Compiled(lambda row: expr, T.INTERVAL)


def _not_here(expr: Expr, rel: Relation) -> Compiled:
    if isinstance(expr, Star):
        raise EvaluationError("* is only allowed in count(*) and the select list")
    raise EvaluationError("a window function is not allowed here")


# ---------------------------------------------------------------------------
# Operators


def _binary(expr: BinaryOp, rel: Relation) -> Compiled:
    left, right = compile_expr(expr.left, rel), compile_expr(expr.right, rel)
    if expr.op in (BinaryOperator.AND, BinaryOperator.OR):
        return _logical(expr.op, left, right)
    if expr.op in COMPARISONS:
        return _comparison(expr.op, *_string_literal_as_datetime(expr, left, right))
    if expr.op in _DISTINCTNESS:
        return _distinctness(expr.op, left, right)
    if expr.op is BinaryOperator.CONCAT:
        return _concat(left, right)
    if _is_interval_arithmetic(left.type, right.type):
        return _interval_arithmetic(expr.op, left, right)
    if T.INTERVAL in (left.type, right.type):
        return _datetime_arithmetic(expr, left, right)
    if expr.op is BinaryOperator.INT_DIV:
        return _int_div(left, right)
    return _arithmetic(expr.op, left, right)


def _logical(op: BinaryOperator, left: Compiled, right: Compiled) -> Compiled:
    for side in (left, right):
        if side.type not in (None, T.BOOL):
            raise EvaluationError(f"{op.value} needs BOOLEAN operands, got {side.type}")
    lf, rf = left.fn, right.fn
    # The right side is skipped when the left decides, as engines do, so that
    # `x <> 0 AND 1 / x > 0` does not raise where the engines do not.
    decided, combine = (False, and3) if op is BinaryOperator.AND else (True, or3)

    def fn(row: Row) -> bool | None:
        a = lf(row)
        return decided if a is decided else combine(a, rf(row))  # type: ignore[arg-type]

    return Compiled(fn, T.BOOL)


_TESTS: dict[BinaryOperator, Callable[[int], bool]] = {
    BinaryOperator.EQ: lambda c: c == 0,
    BinaryOperator.NE: lambda c: c != 0,
    BinaryOperator.LT: lambda c: c < 0,
    BinaryOperator.LE: lambda c: c <= 0,
    BinaryOperator.GT: lambda c: c > 0,
    BinaryOperator.GE: lambda c: c >= 0,
}


def _family(t: SqlType | None) -> str | None:
    if t is None:
        return None
    if t.is_numeric:
        return "number"
    return "datetime" if t.kind in (TypeKind.DATE, TypeKind.TIMESTAMP) else t.kind.value


def _comparison(op: BinaryOperator, left: Compiled, right: Compiled) -> Compiled:
    families = {_family(left.type), _family(right.type)} - {None}
    if len(families) > 1:
        raise EvaluationError(f"cannot compare {left.type} with {right.type}")
    lf, rf, test = left.fn, right.fn, _TESTS[op]

    def fn(row: Row) -> bool | None:
        a, b = lf(row), rf(row)
        return None if a is None or b is None else test(compare(a, b))

    return Compiled(fn, T.BOOL)


def _string_literal_as_datetime(expr: BinaryOp, left: Compiled, right: Compiled) -> tuple[Compiled, Compiled]:
    """A character string literal compared with a DATE or TIMESTAMP.

    The standard refuses the comparison: its operands must be comparable (8.2
    <comparison predicate>, Syntax Rules) and the literal is a CHARACTER string
    (5.3 <literal>), which no datetime is comparable with; `DATE '2024-01-01'`
    is the standard's spelling. Engines read the literal as the datetime's type
    (PostgreSQL's unknown-typed literal), as the profile's
    `DatetimeVsString.LITERAL_CAST` does, by its own cast to that type."""
    if active_profile().datetime_vs_string is DatetimeVsString.ERROR:
        return left, right
    if _is_string_literal(expr.right) and left.type in (T.DATE, T.TIMESTAMP):
        return left, _cast_literal(expr.right, left.type)
    if _is_string_literal(expr.left) and right.type in (T.DATE, T.TIMESTAMP):
        return _cast_literal(expr.left, right.type), right
    return left, right


def _is_string_literal(expr: Expr) -> bool:
    return isinstance(expr, Literal) and expr.type is not None and expr.type.kind is TypeKind.STRING \
        and expr.value is not None


def _cast_literal(literal: Expr, to: SqlType) -> Compiled:
    assert isinstance(literal, Literal)
    value = cast_value(literal.value, to)  # an invalid literal is invalid whatever the rows
    return Compiled(lambda row: value, to)
_DISTINCTNESS = {BinaryOperator.IS_DISTINCT_FROM: True, BinaryOperator.IS_NOT_DISTINCT_FROM: False}


def _distinctness(op: BinaryOperator, left: Compiled, right: Compiled) -> Compiled:
    """IS [NOT] DISTINCT FROM: never NULL; two NULLs are not distinct, a NULL
    and a value are; two values are distinct when they do not compare equal."""
    families = {_family(left.type), _family(right.type)} - {None}
    if len(families) > 1:
        raise EvaluationError(f"cannot compare {left.type} with {right.type}")
    lf, rf, wanted = left.fn, right.fn, _DISTINCTNESS[op]

    def fn(row: Row) -> bool:
        a, b = lf(row), rf(row)
        distinct = (a is None) != (b is None) if a is None or b is None else compare(a, b) != 0
        return distinct == wanted

    return Compiled(fn, T.BOOL)


def _concat(left: Compiled, right: Compiled) -> Compiled:
    if not {left.type, right.type} <= {None, T.STRING}:
        raise ReferenceGap(f"|| over {left.type} and {right.type} (implicit casts to text)")
    lf, rf = left.fn, right.fn

    def fn(row: Row) -> str | None:
        a, b = lf(row), rf(row)
        return None if a is None or b is None else a + b  # type: ignore[operator]

    return Compiled(fn, T.STRING)


def _arithmetic(op: BinaryOperator, left: Compiled, right: Compiled) -> Compiled:
    if left.type is None or right.type is None:
        return Compiled(lambda row: None, left.type or right.type)
    result_type = arithmetic_type(op, left.type, right.type)
    if op is BinaryOperator.DIV:
        result_type = active_profile().division_type(left.type, right.type, result_type)
    if op is BinaryOperator.MOD and result_type.is_float:
        raise ReferenceGap("% over floats (the standard's MOD is for exact numbers)")
    lf, rf = left.fn, right.fn

    def fn(row: Row) -> object:
        a, b = lf(row), rf(row)
        return None if a is None or b is None else apply_arithmetic(op, a, b, result_type)

    return Compiled(fn, result_type)


def _int_div(left: Compiled, right: Compiled) -> Compiled:
    """`a // b` as DuckDB computes it (measured on 2.0.1): on two integers the
    quotient truncated toward zero, in their common integer type (an error on
    overflow, as -128 // -1 in TINYINT); on other numbers an ordinary division
    in DOUBLE (7.5 // 2 = 3.75), or REAL (see `_int_div_float_type`)."""
    if left.type is None or right.type is None:
        return Compiled(lambda row: None, left.type or right.type)
    result_type = arithmetic_type(BinaryOperator.DIV, left.type, right.type) if (
        left.type.is_integer and right.type.is_integer) else _int_div_float_type(left.type, right.type)
    lf, rf = left.fn, right.fn

    def fn(row: Row) -> object:
        a, b = lf(row), rf(row)
        if a is None or b is None:
            return None
        return apply_arithmetic(BinaryOperator.DIV, a, b, result_type)

    return Compiled(fn, result_type)


def _int_div_float_type(a: SqlType, b: SqlType) -> SqlType:
    """DuckDB 2.0.1: DOUBLE if either is DOUBLE, else REAL if either is REAL
    (REAL // 2 is REAL), else DOUBLE (7.5 // 2, a DECIMAL, is DOUBLE)."""
    if not (a.is_numeric and b.is_numeric):
        raise EvaluationError(f"operator // needs numbers, got {a} and {b}")
    kinds = {a.kind, b.kind}
    return T.FLOAT32 if TypeKind.FLOAT32 in kinds and TypeKind.FLOAT64 not in kinds else T.FLOAT64


def _is_interval_arithmetic(left: SqlType | None, right: SqlType | None) -> bool:
    """An interval with an interval, a number or NULL (not with a datetime)."""
    if left == T.INTERVAL:
        return right is None or right == T.INTERVAL or right.is_numeric
    return right == T.INTERVAL and left is not None and left.is_numeric


def _interval_arithmetic(op: BinaryOperator, left: Compiled, right: Compiled) -> Compiled:
    """Intervals with intervals (+ -) and with integers (* /), kept exact."""
    lf, rf = left.fn, right.fn
    combine = interval_operation(op, left.type, right.type)

    def fn(row: Row) -> object:
        a, b = lf(row), rf(row)
        return None if a is None or b is None else combine(a, b)

    return Compiled(fn, T.INTERVAL)


def _datetime_arithmetic(expr: BinaryOp, left: Compiled, right: Compiled) -> Compiled:
    if right.type != T.INTERVAL or expr.op not in (BinaryOperator.ADD, BinaryOperator.SUB):
        raise ReferenceGap("interval arithmetic other than datetime +- INTERVAL constant")
    interval = expr.right if isinstance(expr.right, Interval) else constant_value(expr.right)
    if not isinstance(interval, Interval):
        raise EvaluationError("datetime +- a NULL interval")
    sign = 1 if expr.op is BinaryOperator.ADD else -1
    if left.type not in (T.DATE, T.TIMESTAMP):
        raise EvaluationError(f"cannot add an interval to {left.type}")
    if left.type == T.DATE and interval.unit not in (
        IntervalUnit.DAY,
        IntervalUnit.MONTH,
        IntervalUnit.YEAR,
    ):
        raise ReferenceGap("DATE +- a sub-day interval (engines disagree on the result type)")
    lf = left.fn

    def fn(row: Row) -> object:
        value = lf(row)
        if value is None:
            return None
        try:
            return add_interval(value, interval, sign)  # type: ignore[arg-type]
        except OverflowError:
            raise EvaluationError(f"datetime out of range: {value} +- {interval}") from None

    return Compiled(fn, interval_result_type(left.type, interval))


def _unary(expr: UnaryOp, rel: Relation) -> Compiled:
    operand = compile_expr(expr.operand, rel)
    f = operand.fn
    if expr.op is UnaryOperator.NOT:
        if operand.type not in (None, T.BOOL):
            raise EvaluationError(f"NOT needs a BOOLEAN, got {operand.type}")
        return Compiled(lambda row: not3(f(row)), T.BOOL)  # type: ignore[arg-type]
    t = operand.type
    if t is None:
        return Compiled(lambda row: None, None)
    if t == T.INTERVAL:
        return Compiled(lambda row: None if f(row) is None else scale_interval(f(row), -1), t)
    if not t.is_numeric:
        raise EvaluationError(f"unary minus needs a number, got {t}")
    return Compiled(lambda row: negate(f(row), t), t)


def _is_null(expr: IsNull, rel: Relation) -> Compiled:
    f, negated = compile_expr(expr.operand, rel).fn, expr.negated
    return Compiled(lambda row: (f(row) is None) != negated, T.BOOL)


def _case(expr: Case, rel: Relation) -> Compiled:
    conditions = [compile_predicate(cond, rel) for cond, _ in expr.whens]
    results = [compile_expr(result, rel) for _, result in expr.whens]
    default = compile_expr(expr.default, rel) if expr.default is not None else None
    result_type = common_type([r.type for r in results] + [default.type if default else None])
    branches = [converted(r, result_type) for r in results]
    otherwise = converted(default, result_type) if default else (lambda row: None)

    def fn(row: Row) -> object:
        for condition, branch in zip(conditions, branches, strict=True):
            if condition(row) is True:  # a NULL condition is not satisfied
                return branch(row)
        return otherwise(row)

    return Compiled(fn, result_type)


def _cast(expr: Cast, rel: Relation) -> Compiled:
    f, target = compile_expr(expr.operand, rel).fn, expr.to
    return Compiled(lambda row: cast_value(f(row), target), target)


# ---------------------------------------------------------------------------
# Subqueries and IN lists


def _scalar_subquery(expr: ScalarSubquery, rel: Relation) -> Compiled:
    return compile_scalar(expr.query, rel)


def _exists(expr: Exists, rel: Relation) -> Compiled:
    return compile_exists(expr.query, expr.negated, rel)


def _in_list(expr: InList, rel: Relation) -> Compiled:
    """The standard's definition: `x IN (a, b)` is `x = a OR x = b`."""
    if not expr.items:
        raise InvalidQuery("an IN list needs at least one item")
    tests = [BinaryOp(BinaryOperator.EQ, expr.operand, item) for item in expr.items]
    chain = tests[0]
    for test in tests[1:]:
        chain = BinaryOp(BinaryOperator.OR, chain, test)
    return compile_expr(UnaryOp(UnaryOperator.NOT, chain) if expr.negated else chain, rel)


def _in_subquery(expr: InSubquery, rel: Relation) -> Compiled:
    """`x IN (SELECT ...)`: TRUE on an equal value; else NULL if x or some value
    is NULL (the comparison is unknown), else FALSE; FALSE over no rows."""
    operand = compile_expr(expr.operand, rel)
    sub, value_type = in_values(expr.query, rel)
    _comparison(BinaryOperator.EQ, operand, Compiled(lambda row: None, value_type))  # types
    lf, negated = operand.fn, expr.negated

    def fn(row: Row) -> bool | None:
        values = [r[0] for r in sub.rows(row)]
        return _membership(lf(row), values) if not negated else not3(_membership(lf(row), values))

    return Compiled(fn, T.BOOL)


def _membership(x: object, values: list[object]) -> bool | None:
    if not values:
        return False
    if x is None:
        return None
    if any(v is not None and compare(x, v) == 0 for v in values):
        return True
    return None if any(v is None for v in values) else False


# ---------------------------------------------------------------------------
# Scalar functions


def _func_call(expr: FuncCall, rel: Relation) -> Compiled:
    spec = lookup(expr.name)
    if spec.kind is not FunctionKind.SCALAR:
        raise EvaluationError(f"{expr.name}() is not allowed here")
    spec.check_arity(len(expr.args))
    if expr.distinct or expr.filter is not None or expr.order_by or expr.null_treatment:
        raise EvaluationError(f"{expr.name}() takes no DISTINCT, FILTER, ORDER BY or NULLS clause")
    args = [compile_expr(a, rel) for a in expr.args]
    return SCALAR_FUNCTIONS[spec.name](args)


_COMPILERS: dict[type, Callable[[object, Relation], Compiled]] = {
    Column: _column,
    Literal: _literal,
    Interval: _interval,
    Star: _not_here,
    WindowExpr: _not_here,
    BinaryOp: _binary,
    UnaryOp: _unary,
    IsNull: _is_null,
    Case: _case,
    Cast: _cast,
    FuncCall: _func_call,
    ScalarSubquery: _scalar_subquery,
    Exists: _exists,
    InList: _in_list,
    InSubquery: _in_subquery,
}  # type: ignore[dict-item]
