"""The construct a query stops the canonical parser at, named from its text.

The parser's messages say what it expected (`expected the end of the query,
got 'SELECT'`); a count of what a suite uses that the model cannot express
wants the construct instead (`INTERSECT`). It is read from the tokens at the
error's place: a known construct of several words that starts there or just
before (the parser often stops one word into it: at `ON` of `DISTINCT ON`, at
the `SELECT` after an `INTERSECT` it took for an alias), a number with a
suffix glued to it (`1L`, Spark's typed literals), else the keywords there.
"""

from __future__ import annotations

import re

from harness.core.errors import InvalidQuery
from harness.sql.lexer import RESERVED, Kind, Token, tokenize

_JOINS = ("join", "left join", "right join", "full join", "inner join", "left outer join",
          "right outer join", "full outer join", "cross join")
# Constructs of dialects the model lacks, by their words (what the parser may stop in).
CONSTRUCTS = tuple(tuple(c.split()) for c in (
    "distinct on", "union", "union distinct", "intersect", "intersect all", "intersect distinct",
    "except", "except all", "except distinct", "minus", "lateral", "grouping sets", "rollup", "cube",
    "pivot", "unpivot", "tablesample", "using", "ilike", "similar to", "within group", "fetch first",
    "fetch next", "top", "group by all", "order by all", "asof join", "positional join", "semi join",
    "anti join", "left semi join", "left anti join", "natural", *(f"natural {j}" for j in _JOINS),
    "qualify", "interval",
))
_NUMBERS = (Kind.INTEGER, Kind.DECIMAL, Kind.FLOAT)
_RAW_WORD = re.compile(r"[^\s(),;]+")


def construct_at(text: str, line: int, column: int) -> str:
    """The construct at `line`:`column` (1-based) of `text`, upper-cased; "the end
    of the statement" when the place is past its last token."""
    try:
        tokens = tokenize(text)
    except InvalidQuery:
        # A character the canonical lexer has no token for (a backtick, `$1`): the word there.
        return _raw_word(text, line, column)
    i = next((k for k, t in enumerate(tokens) if (t.line, t.column) >= (line, column)), len(tokens) - 1)
    if tokens[i].kind is Kind.END:
        return "the end of the statement"
    return _known(tokens, i) or _glued(tokens, i) or _keywords(tokens, i)


def _known(tokens: list[Token], i: int) -> str | None:
    """The longest known construct starting just before `i` (ending there or reaching
    past it), or starting at `i`."""
    for start in (i - 1, i):
        if start < 0:
            continue
        words = [t.value if t.kind is Kind.WORD else None for t in tokens[start:start + 4]]
        found = [c for c in CONSTRUCTS if tuple(words[:len(c)]) == c]
        if found:
            return " ".join(max(found, key=len)).upper()
    return None


def _glued(tokens: list[Token], i: int) -> str | None:
    """A number and the word right after it, nothing between (`1L`, `2.5BD`), at `i`
    or just before it (the parser takes `1L AS x` for 1 named L, and stops at AS)."""
    for j in (i, i - 1):
        prev, tok = tokens[j - 1] if j > 0 else None, tokens[j]
        if prev is not None and prev.kind in _NUMBERS and tok.kind is Kind.WORD and (
                prev.line, prev.column + len(prev.text)) == (tok.line, tok.column):
            return (prev.text + tok.text).upper()
    return None


def _keywords(tokens: list[Token], i: int) -> str:
    """The reserved words from `i` on (`ORDER BY`), or the one token there."""
    words = []
    for tok in tokens[i:i + 3]:
        if tok.kind is not Kind.WORD or tok.value not in RESERVED:
            break
        words.append(tok.text.upper())
    return " ".join(words) or (tokens[i].text.upper() if tokens[i].kind is Kind.WORD else tokens[i].text)


def _raw_word(text: str, line: int, column: int) -> str:
    lines = text.split("\n")
    rest = lines[line - 1][column - 1:] if 0 < line <= len(lines) else ""
    m = _RAW_WORD.match(rest)
    return m[0].upper() if m else rest[:1] or "the end of the statement"
