"""A table read back from the materialising engine, as a case holds it: every
column of a type the model has (`harness.core.types`), names folded to lower
case as the canonical parser folds the query's unquoted names."""

from __future__ import annotations

import pyarrow as pa

from harness.core.errors import InvalidInput
from harness.core.types import from_arrow, to_arrow
from harness.importers.setup import SetupFailed


def as_case_table(name: str, table: pa.Table) -> pa.Table:
    columns = [_column(name, field, table.column(i)) for i, field in enumerate(table.schema)]
    names = _folded(table.column_names)
    return pa.Table.from_arrays(columns, names=names)


def _column(table: str, field: pa.Field, column: pa.ChunkedArray) -> pa.ChunkedArray:
    try:
        target = to_arrow(from_arrow(field.type))
    except InvalidInput:
        raise SetupFailed(f"table {table} column {field.name} has type {field.type}, "
                          "which the model has no type for") from None
    if column.type == target:
        return column
    try:
        return column.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise SetupFailed(f"table {table} column {field.name} ({field.type}) does not fit "
                          f"{target}: {e}") from None


def _folded(names: list[str]) -> list[str]:
    """Lower-case names when that makes no two alike (the engines that read the
    case fold unquoted names; a name spelled in capitals was read case-blind)."""
    lower = [n.lower() for n in names]
    return lower if len(set(lower)) == len(lower) else names
