"""A SQL script cut into its statements, each with its place in the file.

The one splitter of the harness: `run FILE.sql` (harness.cases.sqlfile) and
`import` (pg-regress's psql scripts) both cut scripts here.

Statements end at a `;` outside a string ('...', quotes doubled inside), a
quoted name ("..."), a dollar-quoted string ($$...$$, $tag$...$tag$), a `--`
comment or a `/* */` comment; the text after the last `;` is a statement too
when it holds more than comments. The comment right above a statement
(nothing but white space between them) is kept as its description. A string,
quoted name, dollar quote or comment that never ends is an InvalidCase naming
the file, line and column where it starts.

`psql=True` reads a script as psql does: a line starting with a backslash is
a meta-command (`\\pset null ...`), a statement of its own (`meta`) ending at
the end of its line; a `;` inside parentheses does not end a statement (psql
counts them, for CREATE RULE's bodies); block comments nest (PostgreSQL's do).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from harness.core.errors import InvalidCase

_COMMENT = re.compile(r"--([^\n]*)|/\*(.*?)\*/", re.DOTALL)
# A dollar quote's opening tag; it cannot follow a name's character (`a$b$` is a name).
_DOLLAR = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$")


@dataclass(frozen=True)
class Statement:
    text: str  # from its first character to before its `;`
    line: int  # 1-based, of its first character in the file
    column: int
    comment: str = ""  # the comment right above it, its markers taken off ("" when none)
    end_line: int = 0  # the line of its `;` (of its last character when it has none)
    meta: bool = False  # a psql meta-command (`\pset ...`; psql=True only)

    def at(self, line: int = 1, column: int = 1) -> tuple[int, int]:
        """The file's line and column of the statement's own `line`:`column`."""
        return self.line + line - 1, (self.column + column - 1 if line == 1 else column)

    @property
    def first_line(self) -> str:
        return self.text.split("\n", 1)[0].strip()


def split_statements(text: str, where: str, *, psql: bool = False) -> list[Statement]:
    """The statements of a file's `text`, in order; InvalidCase (at `where`:line:column)
    for a string, quoted name, dollar quote or comment that never ends."""
    return _Splitter(text, where, psql).statements()


class _Splitter:
    def __init__(self, text: str, where: str, psql: bool) -> None:
        self.text, self.where, self.psql = text, where, psql
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def statements(self) -> list[Statement]:
        out: list[Statement] = []
        pos = 0
        while (start := self._gap_end(pos)) < len(self.text):
            meta = self.psql and self.text[start] == "\\"
            end = self._line_end(start) if meta else self._statement_end(start)
            body = self.text[start:end].rstrip()
            if body:
                line, column = self.where_is(start)
                end_line = self.where_is(end if end < len(self.text) else start + len(body) - 1)[0]
                comment = _last_comment(self.text[pos:start], pos > 0)
                out.append(Statement(body, line, column, comment, end_line, meta))
            pos = end if meta else end + 1
        return out

    def where_is(self, pos: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.line_starts, pos)
        return line, pos - self.line_starts[line - 1] + 1

    def _gap_end(self, pos: int) -> int:
        """The offset of the first character after `pos` that is neither white space nor comment."""
        text = self.text
        while pos < len(text):
            if text[pos].isspace():
                pos += 1
            elif text.startswith(("--", "/*"), pos):
                pos = self._comment_end(pos)
            else:
                break
        return pos

    def _statement_end(self, pos: int) -> int:
        """The offset of the `;` ending the statement that starts at `pos` (len(text) if none)."""
        text, depth = self.text, 0
        while pos < len(text):
            c = text[pos]
            if c == ";" and depth == 0:
                return pos
            if c in "'\"":
                pos = self._quoted_end(pos)
            elif text.startswith(("--", "/*"), pos):
                pos = self._comment_end(pos)
            elif c == "$" and (tag := self._dollar_tag(pos)):
                pos = self._dollar_end(pos, tag)
            else:
                if self.psql and c in "()":
                    depth = depth + 1 if c == "(" else max(0, depth - 1)
                pos += 1
        return pos

    def _line_end(self, pos: int) -> int:
        end = self.text.find("\n", pos)
        return len(self.text) if end < 0 else end

    def _quoted_end(self, start: int) -> int:
        text, quote, pos = self.text, self.text[start], start + 1
        while True:
            pos = text.find(quote, pos)
            if pos < 0:
                what = "string" if quote == "'" else "quoted name"
                raise self._unterminated(f"{what} starting with {quote}", start)
            if not text.startswith(quote * 2, pos):
                return pos + 1
            pos += 2

    def _dollar_tag(self, pos: int) -> str | None:
        before = self.text[pos - 1] if pos else " "
        if before.isalnum() or before in "_$":
            return None
        m = _DOLLAR.match(self.text, pos)
        return m[0] if m else None

    def _dollar_end(self, start: int, tag: str) -> int:
        close = self.text.find(tag, start + len(tag))
        if close < 0:
            raise self._unterminated(f"dollar-quoted string starting with {tag}", start)
        return close + len(tag)

    def _comment_end(self, start: int) -> int:
        if self.text.startswith("--", start):
            end = self.text.find("\n", start)
            return len(self.text) if end < 0 else end + 1
        if not self.psql:
            end = self.text.find("*/", start + 2)
            if end < 0:
                raise self._unterminated("comment /*", start)
            return end + 2
        depth, pos = 1, start + 2
        while depth:
            opens, closes = self.text.find("/*", pos), self.text.find("*/", pos)
            if closes < 0:
                raise self._unterminated("comment /*", start)
            depth, pos = (depth + 1, opens + 2) if 0 <= opens < closes else (depth - 1, closes + 2)
        return pos

    def _unterminated(self, what: str, start: int) -> InvalidCase:
        line, column = self.where_is(start)
        return InvalidCase(f"unterminated {what}", f"{self.where}:{line}:{column}")


def _last_comment(gap: str, after_statement: bool) -> str:
    """The comment lines that end `gap` with no blank line after them: the
    consecutive `--` lines, or one `/* */` block, right above the statement.
    A comment on the line of the statement before (`gap` begins after its `;`)
    is that statement's, not this one's."""
    comments = list(_COMMENT.finditer(gap))
    kept: list[str] = []
    end = len(gap)
    for m in reversed(comments):
        between = gap[m.end():end]
        if between.strip() or between.count("\n") > 1:  # a blank line parts them
            break
        if after_statement and "\n" not in gap[:m.start()]:
            break
        kept.insert(0, (m.group(1) if m.group(1) is not None else m.group(2)).strip())
        end = m.start()
        if m.group(2) is not None:
            break
    return " ".join(k for k in kept if k)


def strip_comments(sql: str) -> str:
    """The SQL with its comments blanked and its string literals emptied, so the
    words left are keywords and names (what a statement's first words are read
    from). A quoted name ("..." or `...`) is kept whole: a `'` or `--` inside
    it (`"it's"`) starts nothing."""
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
        elif sql[i] in "'\"`":
            end = _closing_quote(sql, i)
            out.append("''" if sql[i] == "'" else sql[i:end])
            i = end
        else:
            out.append(sql[i])
            i += 1
    return "".join(out)


def _closing_quote(sql: str, start: int) -> int:
    """Just past the quote that closes the one at `start` (a doubled quote is one
    character of the text); the end of the SQL when none does."""
    quote = sql[start]
    end = sql.find(quote, start + 1)
    while end >= 0 and sql.startswith(quote * 2, end):
        end = sql.find(quote, end + 2)
    return len(sql) if end < 0 else end + 1
