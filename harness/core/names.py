"""The names a user gives (tables, columns, aliases) that the harness can judge honestly.

Refused at load time, naming the name, rather than sent to engines:
- a control character (U+0000 to U+001F, U+007F): the engines refuse or drop
  a NUL (SQLite: "the query contains a null character"; DuckDB and DataFusion
  bind "a\\0b" to no column), so every engine would fail on a query that is
  not wrong, and the others print in a report and a terminal as nothing;
- the prefix `__wh_`, in any case: the harness's own hidden columns (the row
  id `__wh_rowid`, the witnesses `__wh_rn_N`, ...) start with it, and a user
  column of that name makes the instrumented query ambiguous;
- the output columns of a SELECT (its aliases and the columns it names) or a
  derived table's or WITH query's column list whose names differ only in
  case: DuckDB and SQLite compare even quoted names case-insensitively,
  so `(SELECT a AS x, b AS "X") AS s` reads one column twice there (a false
  mismatch on DuckDB and SQLite), and the harness cannot spell it otherwise.

Two columns of one table, or two tables of one case, told apart only by case
are loaded as they are: the reference, PostgreSQL and DataFusion keep them
apart as the standard does, and an engine whose dialect cannot
(`CASE_ONLY_NAMES` in its `unrepresentable`) says `unsupported` for the case
(`Engine.check_tables`), never a false mismatch.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import pyarrow as pa

from harness.core.model import (
    Column,
    CommonTable,
    Literal,
    Select,
    SubqueryRef,
    TableFunctionRef,
    TableSchema,
    walk,
)

HIDDEN_PREFIX = "__wh_"  # every hidden column the harness adds (harness.judge.instrument)
# What a dialect lists in `unrepresentable` when its engine compares names
# case-insensitively: two names of one table told apart only by letter case.
CASE_ONLY_NAMES = "identifier.told-apart-by-case-only"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def name_problem(name: str) -> str | None:
    """Why a table, column or alias name is refused, or None."""
    if (control := _CONTROL.search(name)) is not None:
        return (f"the name {name!r} holds a control character (U+{ord(control.group()):04X}), "
                "which engines refuse or drop")
    if name.casefold().startswith(HIDDEN_PREFIX):
        return f"the name {name!r} starts with {HIDDEN_PREFIX!r}, which the harness keeps for its hidden columns"
    return None


def collision_problem(names: Iterable[str], what: str) -> str | None:
    """Why names that differ only in case are refused (naming both), or None."""
    seen: dict[str, str] = {}
    for name in names:
        other = seen.setdefault(name.casefold(), name)
        if other != name:
            return (f"{what} {other!r} and {name!r} differ only in case, and engines that "
                    "compare names case-insensitively (DuckDB, SQLite) take them for one")
    return None


def schema_problem(schema: TableSchema) -> str | None:
    """Why a table's name or a column's is refused, naming the table and the column, or None
    (names told apart only by case are `case_only_clash`'s)."""
    for name in (schema.name, *(c.name for c in schema.columns)):
        if (problem := name_problem(name)) is not None:
            return f"table {schema.name!r}: {problem}"
    return None


def model_name_problem(node: object) -> str | None:
    """The first refused name a query or statement holds (a column, a table, an
    alias, a column list), or None; string constants are values, not names."""
    for n in walk(node):
        if isinstance(n, Literal):
            continue
        if (problem := _output_collision(n)) is not None:
            return problem
        for value in vars(n).values() if hasattr(n, "__dataclass_fields__") else ():
            for name in value if isinstance(value, tuple) else (value,):
                if isinstance(name, str) and (problem := name_problem(name)) is not None:
                    return problem
    return None


def _output_collision(node: object) -> str | None:
    if isinstance(node, Select):
        names = [item.alias or (item.expr.name if isinstance(item.expr, Column) else None)
                 for item in node.items]
        return collision_problem((n for n in names if n is not None), "output columns")
    if isinstance(node, SubqueryRef | CommonTable | TableFunctionRef):
        return collision_problem(node.columns, "the column list's names")
    return None


def case_only_clash(tables: Mapping[str, pa.Table]) -> str | None:
    """The first two names of one scope of `tables` (their names, or one table's
    columns) told apart only by letter case, said for a message; None when
    every name differs otherwise too."""
    scopes = [("tables", list(tables))]
    scopes += [(f"columns of table {name!r}", t.column_names) for name, t in tables.items()]
    for scope, names in scopes:
        first: dict[str, str] = {}
        for name in names:
            seen = first.setdefault(name.casefold(), name)
            if seen != name:
                return f"{scope} {seen!r} and {name!r} differ only in letter case"
    return None
