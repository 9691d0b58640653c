"""The reference's answer: a relation's visible columns as an Arrow table,
with the magnitudes of its float columns."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa

from harness.core.errors import ReferenceGap
from harness.core.types import SqlType, TypeKind, to_arrow
from reference_impl.evaluation import Evaluation, WindowKey
from reference_impl.intervals import day_time
from reference_impl.numeric import exact_decimal
from reference_impl.relation import Relation


def to_evaluation(rel: Relation, peer_groups: list[tuple[WindowKey, int]]) -> Evaluation:
    visible = rel.visible()
    names = [rel.fields[i].name for i in visible]
    arrays = [_arrow_column(rel, i) for i in visible]
    magnitudes = {
        rel.fields[i].name: _magnitudes(rel, i)
        for i in visible
        if rel.fields[i].type is not None and rel.fields[i].type.is_float
    }
    table = pa.Table.from_arrays(arrays, names=names)
    return Evaluation(table=table, magnitudes=magnitudes, peer_groups=list(peer_groups))


def _arrow_column(rel: Relation, index: int) -> pa.Array:
    # from_pandas=False is the default for a list; passing it skips a lookup per call.
    values = [row[index] for row in rel.rows]
    t = rel.fields[index].type
    if t is not None and t.kind is TypeKind.INTERVAL:
        values = [day_time(v) for v in values]
    if t is None and any(v is not None for v in values):
        raise ReferenceGap(f"column {rel.fields[index].name!r} has no type but holds values")
    try:
        return pa.array(values, type=_arrow_type(t), from_pandas=False)
    except pa.ArrowInvalid:
        if t is None or t.kind is not TypeKind.DECIMAL:
            raise
    # A numeric quotient whose scale follows its value (PostgreSQL's avg and
    # variances: harness.core.semantics.numeric_quotient_type) may need more digits
    # than its declared DECIMAL(38, s) has; it travels sized to its values.
    sized = decimal_type_holding(values)
    return pa.array([_at_scale(v, sized.scale) for v in values], type=sized, from_pandas=False)


def decimal_type_holding(values: list) -> pa.DataType:
    """The Arrow decimal that holds every value exactly: decimal128(38, s) with
    s the largest scale they need, else decimal256(76, s)."""
    whole, scale = 0, 0
    for value in values:
        if isinstance(value, Decimal) and value != 0:
            digits, exponent = _significant(value)
            whole, scale = max(whole, digits + exponent), max(scale, -exponent)
    for arrow_type, precision in ((pa.decimal128, 38), (pa.decimal256, 76)):
        if whole + scale <= precision:
            return arrow_type(precision, scale)
    raise ReferenceGap(f"a DECIMAL result column needs {whole + scale} digits, more than 76")


def _at_scale(value: object, scale: int) -> object:
    # Exactly `scale` digits after the point: Arrow reads a Decimal at its own
    # length first, and 80 digits ending in zeros do not fit decimal256.
    if not isinstance(value, Decimal):
        return value
    with exact_decimal():
        return value.quantize(Decimal(1).scaleb(-scale))


def _significant(value: Decimal) -> tuple[int, int]:
    """(digits, exponent) of a finite decimal without its trailing zeros."""
    _, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    count = len(digits)
    while count > 1 and digits[count - 1] == 0:
        count, exponent = count - 1, exponent + 1
    return count, exponent


def _arrow_type(t: SqlType | None) -> pa.DataType:
    if t is None:
        return pa.null()  # an untyped NULL column
    return to_arrow(t)


def _magnitudes(rel: Relation, index: int) -> list[float | None]:
    """Per row: the magnitude an aggregate recorded, else |value|."""
    carried = rel.magnitude_index(index)
    out: list[float | None] = []
    for row in rel.rows:
        value = row[index]
        if value is None:
            out.append(None)
        elif carried is not None and row[carried] is not None:
            out.append(row[carried])
        else:
            out.append(abs(value))  # type: ignore[arg-type]
    return out
