"""The relation every operator consumes and produces: fields plus rows of values.

A row is a tuple of Python values, one per field. Hidden fields travel with
the rows but are not part of `SELECT *` nor of the rows shown to the
peer_order hook: synthetic columns (computed aggregates and window values,
named with a leading '#') and, for float columns computed by an aggregate,
the per-row magnitude against which float error is judged.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import lru_cache

import pyarrow as pa

from harness.core.errors import InvalidInput, InvalidQuery, ReferenceGap
from harness.core.model import Column
from harness.core.types import SqlType, from_arrow

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

    def in_table(self, table: str | None) -> Field:
        """The same field (same uid), belonging to `table`."""
        return Field(self.name, self.type, table, self.hidden, self.magnitude_of, self.uid)


@dataclass
class Relation:
    fields: tuple[Field, ...]
    rows: list[Row]
    # The field indexes by lower-cased name, made on first use (for `fields`).
    _by_name: tuple[tuple[Field, ...], dict[str, list[int]]] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    # `row_mapping`'s (index, key) pairs, made on first use (for `fields`).
    _mapping_keys: tuple[tuple[Field, ...], list[tuple[int, str]]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def resolve(self, column: Column) -> int:
        """The index of the field a column reference names (exact case first)."""
        index = self.find(column)
        if index is None:
            raise InvalidQuery(f"column {_spell(column)!r} does not exist")
        return index

    def find(self, column: Column) -> int | None:
        """`resolve`, with None where no field matches (an ambiguous name still raises)."""
        # Only the fields of the same name up to case can match.
        candidates = self._named(column.name.lower())
        for same_case in (True, False):
            found = [i for i in candidates if _matches(self.fields[i], column, same_case)]
            if len(found) > 1:
                raise InvalidQuery(f"column reference {_spell(column)!r} is ambiguous")
            if found:
                return found[0]
        return None

    def _named(self, lowered: str) -> list[int]:
        if self._by_name is None or self._by_name[0] is not self.fields:
            by_name: dict[str, list[int]] = {}
            for i, f in enumerate(self.fields):
                by_name.setdefault(f.name.lower(), []).append(i)
            self._by_name = (self.fields, by_name)
        return self._by_name[1].get(lowered, [])

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
        return {key: row[i] for i, key in self._keys()}

    def _keys(self) -> list[tuple[int, str]]:
        """Once per list of fields: the hook is called for every tied row at scale."""
        if self._mapping_keys is None or self._mapping_keys[0] is not self.fields:
            visible = self.visible()
            names = [self.fields[i].name for i in visible]
            keys = [(i, name if names.count(name) == 1 else f"{self.fields[i].table}.{name}")
                    for i, name in zip(visible, names, strict=True)]
            self._mapping_keys = (self.fields, keys)
        return self._mapping_keys[1]

    def qualified(self, table: str | None) -> Relation:
        """The same rows, every field now belonging to `table` (FROM t AS alias)."""
        return Relation(tuple(f.in_table(table) for f in self.fields), self.rows)


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
    if table.num_rows <= KEPT_SCAN_ROWS:
        types, rows = _kept_scan(_Same(table), name)
    else:
        types, rows = _scan(table, name)
    fields = tuple(Field(column, sql_type, table=name) for column, sql_type in types)
    return Relation(fields, list(rows))


# The last scans are kept, by table object (Arrow tables are immutable): a
# case's tables are scanned again under every semantics profile and every
# peer order, one evaluation after the other. Large tables are not kept.
KEPT_SCANS = 64
KEPT_SCAN_ROWS = 10_000


class _Same:
    """A table compared by identity (holding it, so its id stays its own)."""

    __slots__ = ("table",)

    def __init__(self, table: pa.Table) -> None:
        self.table = table

    def __hash__(self) -> int:
        return id(self.table)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.table is self.table


@lru_cache(maxsize=KEPT_SCANS)
def _kept_scan(table: _Same, name: str) -> tuple[tuple[tuple[str, SqlType], ...], tuple[Row, ...]]:
    return _scan(table.table, name)


def _scan(table: pa.Table, name: str) -> tuple[tuple[tuple[str, SqlType], ...], tuple[Row, ...]]:
    types = []
    for arrow_field in table.schema:
        try:
            sql_type = _sql_type(arrow_field.type)
        except InvalidInput as e:
            raise ReferenceGap(f"column {arrow_field.name!r} of {name!r}: {e}") from None
        if pa.types.is_timestamp(arrow_field.type) and arrow_field.type.tz is not None:
            raise ReferenceGap(f"column {arrow_field.name!r}: timestamps with a time zone")
        types.append((arrow_field.name, sql_type))
    columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
    rows = (
        tuple(zip(*columns, strict=True)) if columns else tuple(() for _ in range(table.num_rows))
    )
    return tuple(types), rows


@lru_cache(maxsize=256)  # by Arrow type (compared by value): every new table's columns
def _sql_type(arrow_type: pa.DataType) -> SqlType:
    return from_arrow(arrow_type)
