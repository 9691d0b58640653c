"""Which tables a statement reads, and which one it writes.

`tables_read` reads a parsed query (the model), so a name in a string, a
comment or a column is never taken for a table. `target_table` reads the
statement's first words instead: it must also name the table of a statement
the model cannot hold (an UPDATE, a CREATE INDEX's table is not one, a
dialect's CREATE TABLE the parser stops in), so that the statements after it
know which table they cannot trust; `run FILE.sql` marks it, `import` tracks
which setup statements a query depends on by it.
"""

from __future__ import annotations

import re

from harness.core.model import CommonTable, Query, TableRef, walk
from harness.sql.script import strip_comments


def tables_read(query: Query, known: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """The tables `query` reads: every table it names, but a WITH query's name
    (unless a table of `known` has that name: the WITH query may read it)."""
    nodes = list(walk(query))
    defined = {n.name for n in nodes if isinstance(n, CommonTable)}
    return {n.name for n in nodes if isinstance(n, TableRef)} - (defined - set(known))


NAME = r'(?:"(?:[^"]|"")+"|`[^`]+`|[^\W\d][\w$]*)'
_QUALIFIED = rf"({NAME}(?:\s*\.\s*{NAME})*)"
_TARGETS = [re.compile(p + r"\s*" + _QUALIFIED, re.IGNORECASE) for p in (
    r"^\s*create\s+(?:or\s+replace\s+)?(?:(?:global\s+|local\s+)?(?:temp|temporary)\s+|unlogged\s+)?"
    r"(?:table|view|materialized\s+view)\s+(?:if\s+not\s+exists\s+)?",
    r"^\s*(?:insert|replace)\s+(?:or\s+\w+\s+)?(?:into|overwrite\s+(?:table\s+)?)",
    r"^\s*update\s+(?:only\s+)?",
    r"^\s*delete\s+from\s+(?:only\s+)?",
    r"^\s*alter\s+(?:table|view)\s+(?:if\s+exists\s+)?(?:only\s+)?",
    r"^\s*drop\s+(?:table|view|materialized\s+view)\s+(?:if\s+exists\s+)?",
    r"^\s*truncate\s+(?:table\s+)?(?:only\s+)?",
    r"^\s*copy\s+",
)]


def target_table(sql: str) -> str | None:
    """The table (or view) a statement creates, changes or drops, its name folded
    as the engines fold it (`fold_name`), without a schema; None when the
    statement names none (a query, CREATE INDEX, CREATE FUNCTION, ...)."""
    text = strip_comments(sql)
    for pattern in _TARGETS:
        if m := pattern.match(text):
            return fold_name(re.split(r"\s*\.\s*(?=[^.]*$)", m[1])[-1])
    return None


def fold_name(name: str) -> str:
    """A name as written to the name it stands for: a quoted one ("..." or `...`)
    as it is, an unquoted one in lower case (ASCII letters only, as PostgreSQL
    and the canonical lexer fold)."""
    if name[:1] in '"`':
        return name[1:-1].replace(name[0] * 2, name[0])
    return "".join(c.lower() if c.isascii() else c for c in name)
