"""A case's own names checked before anything runs: none may hold a NUL or
start like the harness's hidden columns (`harness.core.names`), which would
otherwise meet the row id or a witness the harness adds and stop the run, or
reach engines that cannot name them."""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa

from harness.core.errors import InvalidCase
from harness.core.names import name_problem
from harness.sql.lexer import Kind, Token, tokenize


def check_table_names(tables: Mapping[str, pa.Table], where: str | None = None) -> None:
    """InvalidCase naming the table (and column) whose name cannot be a user's."""
    for table, data in tables.items():
        if problem := name_problem(table):
            raise InvalidCase(f"table name {table!r} {problem}", where)
        for column in data.column_names:
            if problem := name_problem(column):
                raise InvalidCase(f"table {table!r}: column name {column!r} {problem}", where)


def bad_name(sql: str) -> tuple[Token, str] | None:
    """The first name the SQL text writes (a column, an alias, a table) that
    cannot be a user's, with why; None when there is none."""
    for token in tokenize(sql):
        if token.kind in (Kind.WORD, Kind.QUOTED) and (problem := name_problem(token.value)):
            return token, f"the name {token.value!r} {problem}"
    return None
