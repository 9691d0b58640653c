"""The reducer's passes on the data: rows, tables, columns and values.

Also what "simpler" means for one value: `simplicity`, a total order on a
column's values, and `simpler_values`, the few candidates strictly below a
value in that order (the frame-offset pass of `reduce_query` uses it too).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Iterable
from dataclasses import replace
from decimal import Context, Decimal, localcontext

import pyarrow as pa

from harness.cases.case import Case
from harness.core.model import Column, ColumnDef, TableRef, TableSchema, walk
from harness.findings.reduce_search import Search, ddmin

MAX_VALUE_TRIES = 4  # candidate values per cell and round, simplest first

# -- passes ---------------------------------------------------------------------------------


def shrink_rows(search: Search) -> None:
    """Delta debugging over each table's rows."""
    for name in list(search.case.tables):
        start = search.case
        table = start.tables[name]
        ddmin(search, table.num_rows,
              lambda kept, start=start, name=name, table=table:
              _with_table(start, name, table.take(pa.array(kept, pa.int64()))))


def drop_unused_tables(search: Search) -> None:
    """Drop the tables the query never names (all at once, else one by one)."""
    named = {n.name.lower() for n in walk(search.case.query) if isinstance(n, TableRef)}
    unused = [name for name in search.case.tables if name.lower() not in named]
    if len(unused) > 1 and search.attempt(_without_tables(search.case, unused)):
        return
    for name in unused:
        search.attempt(_without_tables(search.case, [name]))


def _without_tables(case: Case, names: list[str]) -> Case:
    return replace(case, tables={n: t for n, t in case.tables.items() if n not in names},
                   schemas=tuple(s for s in case.schemas if s.name not in names))


def drop_unused_columns(search: Search) -> None:
    """Drop the table columns the query never names (all at once, else one by
    one; a table keeps one column). `id` is an ordinary column: the harness
    adds its own hidden row id."""
    named = {n.name.lower() for n in walk(search.case.query) if isinstance(n, Column)}
    unused = [(t, c) for t, table in search.case.tables.items()
              for c in table.column_names if c.lower() not in named]
    if len(unused) > 1 and search.attempt(_without_columns(search.case, unused)):
        return
    for one in unused:
        search.attempt(_without_columns(search.case, [one]))


def _without_columns(case: Case, drop: list[tuple[str, str]]) -> Case | None:
    for name in {t for t, _ in drop}:
        gone = {c for t, c in drop if t == name}
        table = case.tables[name]
        kept = [c for c in table.column_names if c not in gone]
        if not kept:
            return None
        schema = next((s for s in case.schemas if s.name == name), None)
        if schema is not None:
            schema = replace(schema, columns=tuple(c for c in schema.columns if c.name not in gone))
        case = _with_table(case, name, table.select(kept), schema)
    return case


def simplify_values(search: Search) -> None:
    """Each column: all NULL, else all zero; then each cell: the simplest of its
    simpler values (see `simplicity`) that still fails."""
    for name in list(search.case.tables):
        for column in search.case.tables[name].column_names:
            _simplify_column(search, name, column)


def _simplify_column(search: Search, name: str, column: str) -> None:
    nullable = _nullable(search.case, name, column)
    fills = [None] if nullable else []
    fills += [z for z in [_zero(search.case, name, column)] if z is not None]
    for fill in fills:
        if search.attempt(_with_cells(search.case, name, column, lambda vs, f=fill: _filled(vs, f))):
            break
    for row in range(search.case.tables[name].num_rows):
        values = search.case.tables[name].column(column).to_pylist()
        arrow = search.case.tables[name].schema.field(column).type
        for value in simpler_values(values[row], arrow, nullable, _simplest(values)):
            cell = _with_cells(search.case, name, column,
                               lambda vs, row=row, value=value: vs[:row] + [value] + vs[row + 1:])
            if search.attempt(cell):
                break


def _filled(values: list[object], fill: object) -> list[object]:
    """Each value made `fill` where that is simpler; a NULL stays NULL. Never a
    less simple value: a zero fill that turned NULLs back into zeros undid
    the cell pass's NULLs, and the two went round until the reduction's time
    was up."""
    return [fill if simplicity(fill) < simplicity(v) else v for v in values]


def _simplest(values: list[object]) -> list[object]:
    """The few simplest distinct non-NULL values of a column."""
    distinct = {simplicity(v): v for v in values if v is not None}
    return [distinct[k] for k in sorted(distinct)[:MAX_VALUE_TRIES]]


def _nullable(case: Case, name: str, column: str) -> bool:
    schema = next((s for s in case.schemas if s.name == name), None)
    defs: tuple[ColumnDef, ...] = schema.columns if schema is not None else ()
    return next((c.nullable for c in defs if c.name == column), True)


def _zero(case: Case, name: str, column: str) -> object:
    values = [v for v in case.tables[name].column(column).to_pylist() if v is not None]
    return _zero_like(values[0]) if values else None


def _with_cells(case: Case, name: str, column: str, change: Callable[[list], list]) -> Case | None:
    """The case with a column's cells changed, or None when nothing changed
    (or the new values do not fit the column's Arrow type)."""
    table = case.tables[name]
    i = table.column_names.index(column)
    old = table.column(i).combine_chunks()
    try:
        new = pa.array(change(old.to_pylist()), old.type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError):
        return None
    if new.equals(old):
        return None
    return _with_table(case, name, table.set_column(i, table.field(i), new))


def _with_table(case: Case, name: str, table: pa.Table, schema: TableSchema | None = None) -> Case:
    schemas = case.schemas if schema is None else tuple(
        schema if s.name == name else s for s in case.schemas)
    return replace(case, tables={**case.tables, name: table}, schemas=schemas)


# -- values: what "simpler" means ------------------------------------------------------------

_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1)


def simplicity(v: object) -> tuple:
    """A total order on one column's values, smallest simplest: NULL; then
    fewer decimals, smaller magnitude, positive (numbers; special floats
    last); shorter (strings); nearer the epoch (dates); false before true.
    Values of unknown types are only ever made NULL."""
    if v is None:
        return (0,)
    if isinstance(v, bool):
        return (1, 0, 0, int(v), 0)
    if isinstance(v, (int, float, Decimal)):
        if isinstance(v, float) and not math.isfinite(v):
            return (1, 1, 0, 0 if math.isnan(v) else 1, v < 0)
        return (1, 0, _decimals(v), abs(v), math.copysign(1, v) < 0)
    if isinstance(v, str):
        return (1, 0, 0, len(v), v)
    if isinstance(v, dt.datetime):
        v = v.replace(tzinfo=None)
        return (1, 0, 0, abs(v - _EPOCH), v < _EPOCH)
    if isinstance(v, dt.date):
        return (1, 0, 0, abs(v - _EPOCH_DATE), v < _EPOCH_DATE)
    return (2,)


def _decimals(v: int | float | Decimal) -> int:
    if isinstance(v, int):
        return 0
    exponent = Decimal(repr(v) if isinstance(v, float) else v).normalize().as_tuple().exponent
    return max(0, -int(exponent))


def _zero_like(v: object) -> object:
    zeros = ((bool, False), (int, 0), (float, 0.0), (Decimal, Decimal(0)), (str, ""),
             (dt.datetime, _EPOCH), (dt.date, _EPOCH_DATE))
    return next((z for t, z in zeros if isinstance(v, t)), None)


def _smaller_forms(v: object) -> list[object]:
    """Rounder or smaller forms of one value (halving goes towards zero)."""
    if isinstance(v, bool) or v is None:
        return []
    if isinstance(v, int):
        return [abs(v) // 2 * (1 if v > 0 else -1)]
    if isinstance(v, float) and math.isfinite(v):
        halved = [float(int(v / 2))] if v == int(v) else []
        return [float(round(v)), round(v, 1), *halved]
    if isinstance(v, Decimal):
        whole = int(v)
        halved = [Decimal(abs(whole) // 2 * (1 if whole > 0 else -1))] if v == whole else []
        with localcontext(Context(prec=80)):  # DECIMAL(38, s) needs more than the default 28 digits
            return [v.quantize(Decimal(1)), v.quantize(Decimal("0.1")), *halved]
    if isinstance(v, str):
        return [v[:1], v[: len(v) // 2]]
    return []


def simpler_values(v: object, arrow: pa.DataType, nullable: bool,
                   present: Iterable[object] = ()) -> list[object]:
    """At most MAX_VALUE_TRIES values strictly simpler than `v`, simplest first,
    as they read back from the column's Arrow type (a float32 may not hold the
    rounder double): NULL, zero, rounder or smaller forms, values of `present`."""
    if v is None:
        return []
    candidates = [None] if nullable else []
    candidates += [_zero_like(v), *_smaller_forms(v), *present]
    mine, out = simplicity(v), {}
    for c in candidates:
        try:
            c = pa.array([c], arrow).to_pylist()[0]
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError):
            continue
        if (c is not None or nullable) and simplicity(c) < mine:
            out.setdefault(simplicity(c), c)
    return [out[k] for k in sorted(out)[:MAX_VALUE_TRIES]]
