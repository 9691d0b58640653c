"""The reference's answer: a relation's visible columns as an Arrow table,
with the magnitudes of its float columns."""

from __future__ import annotations

import pyarrow as pa

from harness.errors import ReferenceGap
from harness.types import SqlType, TypeKind, to_arrow
from reference_impl.api import Evaluation, WindowKey
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
    return pa.array(values, type=_arrow_type(rel.fields[index].type), from_pandas=False)


def _arrow_type(t: SqlType | None) -> pa.DataType:
    if t is None:
        return pa.null()  # an untyped NULL column
    if t.kind is TypeKind.INTERVAL:
        raise ReferenceGap("an INTERVAL result column")
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
