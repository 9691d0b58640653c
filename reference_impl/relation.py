"""The relation every operator consumes and produces: fields plus rows of values.

A row is a tuple of Python values, one per field. Hidden fields travel with
the rows but are not part of `SELECT *` nor of the rows shown to the
peer_order hook: synthetic columns (computed aggregates and window values,
named with a leading '#') and, for float columns computed by an aggregate,
the per-row magnitude against which float error is judged.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

import pyarrow as pa

from harness.errors import InvalidInput, InvalidQuery, ReferenceGap
from harness.model import Column
from harness.types import SqlType, from_arrow

Row = tuple[object, ...]

_uids = itertools.count()


@dataclass(frozen=True)
class Field:
    name: str
    type: SqlType | None
    table: str | None = None
    hidden: bool = False
    # For a magnitude field: the uid of the float field whose magnitudes it holds.
    magnitude_of: int | None = None
    uid: int = field(default_factory=lambda: next(_uids))


@dataclass
class Relation:
    fields: tuple[Field, ...]
    rows: list[Row]

    def resolve(self, column: Column) -> int:
        """The index of the field a column reference names (exact case first)."""
        for same_case in (True, False):
            found = [i for i, f in enumerate(self.fields) if _matches(f, column, same_case)]
            if len(found) > 1:
                raise InvalidQuery(f"column reference {_spell(column)!r} is ambiguous")
            if found:
                return found[0]
        raise InvalidQuery(f"column {_spell(column)!r} does not exist")

    def visible(self) -> list[int]:
        return [i for i, f in enumerate(self.fields) if not f.hidden]

    def magnitude_index(self, index: int) -> int | None:
        uid = self.fields[index].uid
        for i, f in enumerate(self.fields):
            if f.magnitude_of == uid:
                return i
        return None

    def row_mapping(self, row: Row) -> dict[str, object]:
        """A row as column name -> value, for the peer_order hook.

        A name that occurs twice (after a join) is qualified by its table.
        """
        visible = self.visible()
        names = [self.fields[i].name for i in visible]
        out: dict[str, object] = {}
        for i, name in zip(visible, names, strict=True):
            f = self.fields[i]
            key = name if names.count(name) == 1 else f"{f.table}.{name}"
            out[key] = row[i]
        return out

    def qualified(self, table: str) -> Relation:
        """The same rows, every field now belonging to `table` (FROM t AS alias)."""
        return Relation(tuple(replace(f, table=table) for f in self.fields), self.rows)


def _matches(f: Field, column: Column, same_case: bool) -> bool:
    if f.magnitude_of is not None:
        return False
    if same_case:
        return f.name == column.name and (column.table is None or f.table == column.table)
    same_table = column.table is None or (f.table or "").lower() == column.table.lower()
    return f.name.lower() == column.name.lower() and same_table


def _spell(column: Column) -> str:
    return f"{column.table}.{column.name}" if column.table else column.name


def from_arrow_table(table: pa.Table, name: str) -> Relation:
    """Scan an Arrow table: one field per column, values via to_pylist."""
    fields = []
    for arrow_field in table.schema:
        try:
            sql_type = from_arrow(arrow_field.type)
        except InvalidInput as e:
            raise ReferenceGap(f"column {arrow_field.name!r} of {name!r}: {e}") from None
        if pa.types.is_timestamp(arrow_field.type) and arrow_field.type.tz is not None:
            raise ReferenceGap(f"column {arrow_field.name!r}: timestamps with a time zone")
        fields.append(Field(arrow_field.name, sql_type, table=name))
    columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
    rows = list(zip(*columns, strict=True)) if columns else [() for _ in range(table.num_rows)]
    return Relation(tuple(fields), rows)
