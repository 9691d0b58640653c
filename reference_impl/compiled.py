"""A compiled expression: a function of one row plus its declared type."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness.core.types import SqlType
from reference_impl.casts import cast_value
from reference_impl.relation import Row

Evaluator = Callable[[Row], object]


@dataclass(frozen=True)
class Compiled:
    fn: Evaluator
    type: SqlType | None


def converted(compiled: Compiled, target: SqlType | None) -> Evaluator:
    """The compiled expression's values converted to `target` (a common type)."""
    if target is None or compiled.type is None or compiled.type == target:
        return compiled.fn
    fn = compiled.fn
    return lambda row: cast_value(fn(row), target)
