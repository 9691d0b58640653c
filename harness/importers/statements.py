"""What kind of statement a test file's record is, read from its first words,
and the names a setup statement spells.

Scripts are cut into statements by `harness.sql.script` (psql's meta-commands
included); which table a statement writes is `harness.sql.tables.target_table`.
"""

from __future__ import annotations

import re
from enum import Enum

from harness.sql.script import strip_comments
from harness.sql.tables import NAME, fold_name


class Kind(Enum):
    QUERY = "query"  # reads, changes nothing: a candidate window query
    SETUP = "setup"  # creates or changes a table
    SETTING = "setting"  # changes the session (SET, PRAGMA, RESET)
    EXTERNAL = "external"  # reaches outside the database (ATTACH, INSTALL, LOAD, ...): never run
    OTHER = "other"  # everything else (transactions, EXPLAIN, ...): not imported, changes no table


_QUERY_WORDS = {"select", "with", "values", "from", "(", "table"}
_SETUP_WORDS = {"create", "insert", "update", "delete", "alter", "drop", "copy", "truncate", "replace"}
_SETTING_WORDS = {"set", "pragma", "reset"}
# Statements whose whole job is a file, a database or an extension outside the one
# the setup runs in (DuckDB's and PostgreSQL's spellings; FORCE INSTALL too). Not
# run even on a connection with file access off, which would refuse most of them:
# refused by kind, the reason is the same on every engine.
_EXTERNAL_WORDS = {"attach", "detach", "install", "force", "load", "import", "export"}


def kind_of(sql: str) -> Kind:
    word = first_word(sql)
    if word in _QUERY_WORDS:
        return Kind.QUERY
    if word in _SETUP_WORDS:
        return Kind.SETUP
    if word in _EXTERNAL_WORDS:
        return Kind.EXTERNAL
    return Kind.SETTING if word in _SETTING_WORDS else Kind.OTHER


def first_word(sql: str) -> str:
    text = strip_comments(sql).lstrip()
    if text.startswith("("):
        return "("
    m = re.match(r"[A-Za-z_]+", text)
    return m[0].lower() if m else ""


def names_in(sql: str) -> set[str]:
    """Every name the SQL spells (folded): the tables it may read are among them.

    Read from the text, not the model (`harness.sql.tables.tables_read`): a setup
    statement is run as the suite wrote it, in the engine's own dialect (an
    UPDATE, a view, a COPY), which the canonical parser mostly cannot read; a
    name too many only makes a query depend on one more statement."""
    return {fold_name(n) for n in re.findall(NAME, strip_comments(sql))}
