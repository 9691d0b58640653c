"""Split a SQL script into statements, as psql does: at a `;` outside quotes,
comments and parentheses, and a psql meta-command (`\\set`, `\\pset`) as a line of
its own. Also what kind of statement each is, read from its first words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum


@dataclass(frozen=True)
class Piece:
    """One statement of a script: its text (without the `;`), its first and last line."""

    sql: str
    line: int
    end_line: int
    meta: bool = False  # a psql backslash command


def split_script(text: str) -> list[Piece]:
    pieces: list[Piece] = []
    scanner = _Scanner(text)
    while (piece := scanner.next()) is not None:
        pieces.append(piece)
    return pieces


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0

    def line_at(self, i: int) -> int:
        return self.text.count("\n", 0, i) + 1

    def next(self) -> Piece | None:
        self._skip_space_and_comments()
        if self.i >= len(self.text):
            return None
        start = self.i
        if self.text[start] == "\\":
            end = self.text.find("\n", start)
            end = len(self.text) if end < 0 else end
            self.i = end
            return Piece(self.text[start:end].strip(), self.line_at(start), self.line_at(start), meta=True)
        end = self._statement_end()
        sql = self.text[start:end].strip()
        return Piece(sql, self.line_at(start), self.line_at(max(start, end - 1)))

    def _skip_space_and_comments(self) -> None:
        while self.i < len(self.text):
            if self.text[self.i].isspace():
                self.i += 1
            elif self.text.startswith("--", self.i):
                self.i = self._line_end(self.i)
            elif self.text.startswith("/*", self.i):
                self.i = self._block_comment_end(self.i)
            else:
                return

    def _statement_end(self) -> int:
        """Index of the statement's `;` (or the end); leaves `i` after it."""
        depth = 0
        t = self.text
        while self.i < len(t):
            c = t[self.i]
            if c in "'\"`":
                self.i = _quote_end(t, self.i)
            elif t.startswith("--", self.i):
                self.i = self._line_end(self.i)
            elif t.startswith("/*", self.i):
                self.i = self._block_comment_end(self.i)
            elif c == "$" and (tag := _DOLLAR.match(t, self.i)):
                close = t.find(tag[0], tag.end())
                self.i = len(t) if close < 0 else close + len(tag[0])
            elif c == "(":
                depth, self.i = depth + 1, self.i + 1
            elif c == ")":
                depth, self.i = max(0, depth - 1), self.i + 1
            elif c == ";" and depth == 0:
                self.i += 1
                return self.i - 1
            else:
                self.i += 1
        return len(t)

    def _line_end(self, i: int) -> int:
        end = self.text.find("\n", i)
        return len(self.text) if end < 0 else end

    def _block_comment_end(self, i: int) -> int:
        depth, i = 1, i + 2  # PostgreSQL's block comments nest
        while i < len(self.text) and depth:
            if self.text.startswith("/*", i):
                depth, i = depth + 1, i + 2
            elif self.text.startswith("*/", i):
                depth, i = depth - 1, i + 2
            else:
                i += 1
        return i


_DOLLAR = re.compile(r"\$[A-Za-z_]*\$")


def _quote_end(text: str, i: int) -> int:
    """The index after the quoted text starting at `i` (a doubled quote stays inside)."""
    q = text[i]
    i += 1
    while i < len(text):
        if text[i] == q:
            if text.startswith(q, i + 1):
                i += 2
                continue
            return i + 1
        i += 1
    return i


# -- kinds -----------------------------------------------------------------------------------


class Kind(Enum):
    QUERY = "query"  # reads, changes nothing: a candidate window query
    SETUP = "setup"  # creates or changes a table
    SETTING = "setting"  # changes the session (SET, PRAGMA, RESET)
    OTHER = "other"  # everything else (transactions, EXPLAIN, ...): not imported, changes no table


_QUERY_WORDS = {"select", "with", "values", "from", "(", "table"}
_SETUP_WORDS = {"create", "insert", "update", "delete", "alter", "drop", "copy", "truncate", "replace"}
_SETTING_WORDS = {"set", "pragma", "reset"}


def kind_of(sql: str) -> Kind:
    word = first_word(sql)
    if word in _QUERY_WORDS:
        return Kind.QUERY
    if word in _SETUP_WORDS:
        return Kind.SETUP
    return Kind.SETTING if word in _SETTING_WORDS else Kind.OTHER


def first_word(sql: str) -> str:
    text = strip_comments(sql).lstrip()
    if text.startswith("("):
        return "("
    m = re.match(r"[A-Za-z_]+", text)
    return m[0].lower() if m else ""


def strip_comments(sql: str) -> str:
    """The SQL with its comments blanked and its string literals emptied (so the
    words left are keywords and names)."""
    out: list[str] = []
    i = 0
    while i < len(sql):
        if sql.startswith("--", i):
            end = sql.find("\n", i)
            i = len(sql) if end < 0 else end
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = len(sql) if end < 0 else end + 2
            out.append(" ")
        elif sql[i] == "'":
            i = _quote_end(sql, i)
            out.append("''")
        else:
            out.append(sql[i])
            i += 1
    return "".join(out)


_NAME = r'(?:"(?:[^"]|"")+"|`[^`]+`|[A-Za-z_][A-Za-z0-9_$]*)'
_QUALIFIED = rf"({_NAME}(?:\s*\.\s*{_NAME})*)"
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
    """The table (or view) a setup statement creates or changes, its name folded
    as the engines fold it (unquoted: lower case), without a schema; None when
    the statement names none (CREATE INDEX, CREATE FUNCTION, ...)."""
    text = strip_comments(sql)
    for pattern in _TARGETS:
        m = pattern.match(text)
        if m:
            return fold(re.split(r"\s*\.\s*(?=[^.]*$)", m[1])[-1])
    return None


def fold(name: str) -> str:
    if name[:1] in '"`':
        return name[1:-1].replace(name[0] * 2, name[0])
    return name.lower()


def names_in(sql: str) -> set[str]:
    """Every name the SQL spells (folded): the tables it may read are among them."""
    return {fold(n) for n in re.findall(_NAME, strip_comments(sql))}
