"""Tokens of canonical SQL, and a cursor over them with positioned errors.

The words of the grammar that could be mistaken for a name (`RESERVED`) are
keywords when unquoted, never names. Every other word is a name, except where
the grammar expects a fixed word in a fixed place (DATE/TIMESTAMP/INTERVAL
before a string, the unit after INTERVAL '3', NO OTHERS and TIES after EXCLUDE,
PRECISION in DOUBLE PRECISION), which the parser matches by spelling. The
writer quotes every word of `harness.core.dialect.KEYWORDS`, a superset of
RESERVED (a test checks it), so whatever it writes reads back as a name.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from enum import Enum

from harness.core.errors import InvalidQuery

_RESERVED_WORDS = """all and as asc between by case cast cross desc distinct else end exclude
false filter first following from full group groups having ignore inner is join last left limit
not null nulls offset on or order outer over partition preceding range respect right rows select
then true unbounded union when where window with"""
RESERVED = frozenset(_RESERVED_WORDS.split())
# QUALIFY ends a FROM clause as WHERE does (DuckDB, Spark and DataFusion reserve it).
RESERVED |= {"qualify"}


class Kind(Enum):
    WORD = "word"  # unquoted name or keyword; `value` is folded to lower case
    QUOTED = "quoted"  # "quoted name"; `value` keeps its case
    STRING = "string"  # 'text'; `value` is the text
    INTEGER = "integer"  # 42
    DECIMAL = "decimal"  # 1.50, .5, 5.
    FLOAT = "float"  # 1.5E0: E notation is a double, as in PostgreSQL
    OP = "op"  # punctuation and operators
    END = "end"


@dataclass(frozen=True)
class Token:
    kind: Kind
    text: str  # as written, for error messages
    value: str
    line: int
    column: int

    @property
    def keyword(self) -> str | None:
        """The reserved word this token is, if it is one."""
        if self.kind is Kind.WORD and self.value in RESERVED:
            return self.value
        return None

    def describe(self) -> str:
        return "end of input" if self.kind is Kind.END else repr(self.text)


_OPERATORS = ("<>", "!=", "<=", ">=", "||", "//", "::", "=", "<", ">", "+", "-", "*", "/", "%",
              "(", ")", ",", ".", ";")
_NUMBER = re.compile(r"(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_WORD = re.compile(r"[^\W\d][\w$]*")
_SPACE = re.compile(r"\s+|--[^\n]*|/\*.*?\*/", re.DOTALL)


def _fold(word: str) -> str:
    # PostgreSQL folds only ASCII letters of unquoted names.
    return "".join(c.lower() if c.isascii() else c for c in word)


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def where(self, pos: int) -> tuple[int, int]:
        """1-based line and column of a character offset."""
        line = bisect.bisect_right(self.line_starts, pos)
        return line, pos - self.line_starts[line - 1] + 1

    def error(self, pos: int, message: str) -> InvalidQuery:
        line, column = self.where(pos)
        return InvalidQuery(message, f"{line}:{column}")

    def token(self, kind: Kind, start: int, end: int, value: str) -> Token:
        line, column = self.where(start)
        self.pos = end
        return Token(kind, self.text[start:end], value, line, column)

    def quoted(self, quote: str, kind: Kind) -> Token:
        """A '...' or "..." token; a doubled quote stands for one quote."""
        start, i = self.pos, self.pos + 1
        while True:
            i = self.text.find(quote, i)
            if i < 0:
                raise self.error(start, f"unterminated {kind.value} starting with {quote}")
            if self.text.startswith(quote * 2, i):
                i += 2
                continue
            body = self.text[start + 1 : i].replace(quote * 2, quote)
            return self.token(kind, start, i + 1, body)

    def next(self) -> Token:
        text, start = self.text, self.pos
        c = text[start]
        if c == "'":
            return self.quoted("'", Kind.STRING)
        if c == '"':
            tok = self.quoted('"', Kind.QUOTED)
            if not tok.value:
                raise self.error(start, "zero-length quoted name")
            return tok
        if m := _NUMBER.match(text, start):
            if m.end() < len(text) and (text[m.end()].isalpha() or text[m.end()] == "_"):
                # `1L`, `2D`, `10Y`: Spark reads a typed literal, PostgreSQL refuses it
                # ("trailing junk after numeric literal") and DuckDB takes `L` as an alias:
                # no one meaning to keep, so the query is not expressible as written.
                junk = _WORD.match(text, m.end())
                raise self.error(start, f"a number with a suffix, {text[start:junk.end() if junk else m.end()]!r}: "
                                 "engines read it differently (a typed literal, an alias, an error); "
                                 "write CAST(... AS type), or put a space before an alias")
            kind = Kind.FLOAT if m.group(2) else Kind.DECIMAL if "." in m.group(1) else Kind.INTEGER
            return self.token(kind, start, m.end(), m.group(0))
        if m := _WORD.match(text, start):
            return self.token(Kind.WORD, start, m.end(), _fold(m.group(0)))
        for op in _OPERATORS:
            if text.startswith(op, start):
                return self.token(Kind.OP, start, start + len(op), "<>" if op == "!=" else op)
        raise self.error(start, f"unexpected character {c!r}")

    def tokens(self) -> list[Token]:
        out: list[Token] = []
        while True:
            if m := _SPACE.match(self.text, self.pos):
                self.pos = m.end()
                continue
            if self.pos >= len(self.text):
                line, column = self.where(self.pos)
                out.append(Token(Kind.END, "", "", line, column))
                return out
            out.append(self.next())


def tokenize(text: str) -> list[Token]:
    return _Lexer(text).tokens()


class Cursor:
    """A position in a token list, with the small vocabulary the parser speaks."""

    def __init__(self, text: str) -> None:
        self.tokens = tokenize(text)
        self.pos = 0

    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def advance(self) -> Token:
        tok = self.peek()
        self.pos = min(self.pos + 1, len(self.tokens) - 1)
        return tok

    def error(self, message: str, tok: Token | None = None) -> InvalidQuery:
        tok = tok or self.peek()
        return InvalidQuery(f"{message}, got {tok.describe()}", f"{tok.line}:{tok.column}")

    def at_word(self, *words: str, ahead: int = 0) -> bool:
        """Do the next tokens spell `words` (unquoted, any case)?"""
        for i, word in enumerate(words):
            tok = self.peek(ahead + i)
            if tok.kind is not Kind.WORD or tok.value != word:
                return False
        return True

    def accept_word(self, *words: str) -> bool:
        if not self.at_word(*words):
            return False
        self.pos += len(words)
        return True

    def expect_word(self, *words: str) -> None:
        if not self.accept_word(*words):
            raise self.error(f"expected {' '.join(words).upper()}")

    def at_op(self, op: str, ahead: int = 0) -> bool:
        tok = self.peek(ahead)
        return tok.kind is Kind.OP and tok.value == op

    def accept_op(self, op: str) -> bool:
        if not self.at_op(op):
            return False
        self.advance()
        return True

    def expect_op(self, op: str) -> None:
        if not self.accept_op(op):
            raise self.error(f"expected {op!r}")

    def at_name(self, ahead: int = 0) -> bool:
        tok = self.peek(ahead)
        return tok.kind is Kind.QUOTED or (tok.kind is Kind.WORD and tok.keyword is None)

    def name(self, what: str = "a name") -> str:
        if not self.at_name():
            hint = " (quote a reserved word to use it as a name)" if self.peek().keyword else ""
            raise self.error(f"expected {what}{hint}")
        return self.advance().value

    def matching_paren(self) -> int:
        """Offset (from here) of the ')' that closes the '(' at the cursor."""
        depth = 0
        for i in range(len(self.tokens) - self.pos):
            tok = self.peek(i)
            if tok.kind is Kind.OP and tok.value in "()":
                depth += 1 if tok.value == "(" else -1
                if depth == 0:
                    return i
        raise self.error("unbalanced '('")
