"""Canonical SQL: read text into the query model, and write the model as SQL.

`parse`/`parse_expr` read canonical SQL (standard SQL as PostgreSQL reads it);
`write`/`write_expr` write the model for any dialect (canonical by default).
parse(write(q)) == q holds for every valid model query (tests/test_sql_roundtrip.py).
"""

from __future__ import annotations

from harness.sql.parser import parse, parse_expr
from harness.sql.writer import write, write_expr

__all__ = ["parse", "parse_expr", "write", "write_expr"]
