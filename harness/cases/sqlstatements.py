"""A `.sql` file cut into its statements, each with its place in the file.

Statements end at a `;` outside a string ('...', quotes doubled inside), a
quoted name ("..."), a `--` comment or a `/* */` comment; the text after the
last `;` is a statement too when it holds more than comments. The comment
right above a statement (nothing but white space between them) is kept as
its description.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from harness.core.errors import InvalidCase

# What may sit between statements: white space and comments (an unterminated
# `/*` is left for `_statement_end`, which says where it starts).
_GAP = re.compile(r"(?:\s+|--[^\n]*|/\*.*?\*/)*", re.DOTALL)
_COMMENT = re.compile(r"--([^\n]*)|/\*(.*?)\*/", re.DOTALL)


@dataclass(frozen=True)
class Statement:
    text: str  # from its first character to before its `;`
    line: int  # 1-based, of its first character in the file
    column: int
    comment: str  # the comment right above it, its markers taken off ("" when none)

    def at(self, line: int = 1, column: int = 1) -> tuple[int, int]:
        """The file's line and column of the statement's own `line`:`column`."""
        return self.line + line - 1, (self.column + column - 1 if line == 1 else column)

    @property
    def first_line(self) -> str:
        return self.text.split("\n", 1)[0].strip()


def split_statements(text: str, where: str) -> list[Statement]:
    """The statements of a file's `text`, in order; InvalidCase (at `where`:line:column)
    for a string, quoted name or comment that never ends."""
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    statements, pos = [], 0
    while pos < len(text):
        gap = _GAP.match(text, pos)
        start = gap.end()
        if start >= len(text):
            break
        end = _statement_end(text, start, line_starts, where)
        body = text[start:end].rstrip()
        if body:
            line, column = _where(line_starts, start)
            statements.append(Statement(body, line, column, _last_comment(text[pos:start], pos > 0)))
        pos = end + 1
    return statements


def _statement_end(text: str, pos: int, line_starts: list[int], where: str) -> int:
    """The offset of the `;` ending the statement that starts at `pos` (len(text) if none)."""
    while pos < len(text):
        c = text[pos]
        if c == ";":
            return pos
        if c in "'\"":
            pos = _quoted_end(text, pos, line_starts, where)
        elif text.startswith(("--", "/*"), pos):
            pos = _comment_end(text, pos, line_starts, where)
        else:
            pos += 1
    return pos


def _quoted_end(text: str, start: int, line_starts: list[int], where: str) -> int:
    quote, pos = text[start], start + 1
    while True:
        pos = text.find(quote, pos)
        if pos < 0:
            what = "string" if quote == "'" else "quoted name"
            raise _unterminated(f"{what} starting with {quote}", start, line_starts, where)
        if not text.startswith(quote * 2, pos):
            return pos + 1
        pos += 2


def _comment_end(text: str, start: int, line_starts: list[int], where: str) -> int:
    if text.startswith("--", start):
        end = text.find("\n", start)
        return len(text) if end < 0 else end + 1
    end = text.find("*/", start + 2)
    if end < 0:
        raise _unterminated("comment /*", start, line_starts, where)
    return end + 2


def _unterminated(what: str, start: int, line_starts: list[int], where: str) -> InvalidCase:
    line, column = _where(line_starts, start)
    return InvalidCase(f"unterminated {what}", f"{where}:{line}:{column}")


def _where(line_starts: list[int], pos: int) -> tuple[int, int]:
    line = bisect.bisect_right(line_starts, pos)
    return line, pos - line_starts[line - 1] + 1


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
