"""The scalar functions queries compose with: coalesce, nullif, abs."""

from __future__ import annotations

from collections.abc import Callable

from harness.core.errors import EvaluationError
from reference_impl.compiled import Compiled, converted
from reference_impl.numeric import check_integer
from reference_impl.relation import Row
from reference_impl.sqltypes import common_type
from reference_impl.values import equal3


def _coalesce(args: list[Compiled]) -> Compiled:
    result_type = common_type([a.type for a in args])
    fns = [converted(a, result_type) for a in args]

    def fn(row: Row) -> object:
        for f in fns:
            value = f(row)
            if value is not None:
                return value
        return None

    return Compiled(fn, result_type)


def _nullif(args: list[Compiled]) -> Compiled:
    first, second = args[0].fn, args[1].fn

    def fn(row: Row) -> object:
        value = first(row)
        return None if equal3(value, second(row)) is True else value

    return Compiled(fn, args[0].type)


def _abs(args: list[Compiled]) -> Compiled:
    (arg,) = args
    t = arg.type
    if t is not None and not t.is_numeric:
        raise EvaluationError(f"abs() needs a number, got {t}")
    f = arg.fn

    def fn(row: Row) -> object:
        value = f(row)
        if value is None:
            return None
        result = abs(value)  # type: ignore[arg-type]
        return check_integer(result, t) if t is not None and t.is_integer else result

    return Compiled(fn, t)


SCALAR_FUNCTIONS: dict[str, Callable[[list[Compiled]], Compiled]] = {
    "coalesce": _coalesce,
    "nullif": _nullif,
    "abs": _abs,
}
