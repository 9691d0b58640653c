"""A case as a script to paste into an engine's own client (duckdb, sqlite3,
datafusion-cli, psql, spark-sql): its tables made with the engine's column
types, then the query as the engine's dialect writes it, bare (no row ids,
no witness columns: the query the user wrote). A string value may hold a
line feed (a string literal can span lines in every client); not a carriage
return, which Markdown reads as a line break, so the report's pasted script
would hold another value.

Tables are CREATE TABLE + INSERT, or, for a dialect with `tables_as_views`,
temporary views over VALUES, each column cast to its type (a VALUES column
takes its literals' type).
"""

from __future__ import annotations

from harness.cases.case import Case
from harness.core.dialect import Dialect
from harness.core.errors import InvalidInput, Unsupported
from harness.core.model import TableSchema
from harness.findings.export_expect import case_location
from harness.findings.export_file import literal_rows, table_statements
from harness.sql import write


def reproduction(case: Case, dialect: Dialect) -> list[str]:
    """The statements, each ending in a semicolon: the tables, then the query."""
    try:
        query = write(case.query, dialect).strip()
    except Unsupported as e:
        raise InvalidInput(f"{dialect.name} cannot express this query ({e.feature})",
                           case_location(case)) from None
    if dialect.tables_as_views:
        tables = [_view(case, schema, dialect) for schema in case.schemas]
    else:
        tables = table_statements(case, dialect, insert_rows=True, line_breaks=True)
    statements = [statement + ";" for statement in (*tables, query)]
    if any("\r" in s for s in statements):
        raise InvalidInput("a value or name holds a carriage return, which Markdown reads as a line "
                           "break: the reproduction would not run as pasted", case_location(case))
    return statements


def _view(case: Case, schema: TableSchema, dialect: Dialect) -> str:
    names = [dialect.quote(c.name) for c in schema.columns]
    cast = ", ".join(f"CAST({n} AS {dialect.declared_type(c.type)}) AS {n}"
                     for n, c in zip(names, schema.columns, strict=True))
    rows = literal_rows(case, schema, dialect, line_breaks=True)
    empty = not rows
    if empty:  # one row of NULLs, filtered out: the view's columns keep their types
        rows = [["NULL"] * len(names)]
    values = ",\n".join("  (" + ", ".join(r) + ")" for r in rows)
    table = dialect.quote(schema.name)
    where = "\nWHERE false" if empty else ""
    return (f"CREATE OR REPLACE TEMPORARY VIEW {table} AS\nSELECT {cast}\nFROM VALUES\n{values}\n"
            f"  AS {table}({', '.join(names)}){where}")
