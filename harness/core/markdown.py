"""Text from input made safe inside Markdown (CommonMark, with GitHub's tables,
strikethrough and extended autolinks): a bug report quotes case descriptions,
names, values and engine messages, and any of them may hold `<!--` (which
hides the rest of the page), `<img ...>`, `[x](javascript:...)` or a line that
starts a heading or a list.

- `inline`: one line of prose (a title, a list item, a sentence): every
  character with Markdown meaning is backslash-escaped, hidden characters and
  line breaks become visible escapes (`printable`), so it renders as the text.
- `paragraph`: several lines of prose, each `inline`, kept as lines.
- `cell`: a table cell: `inline`, and its edge spaces kept.
- `code`: an inline code span no backtick run inside can close.
- `fenced`: a fenced block no line inside can close (SQL that must run as
  pasted: its text is never changed).

No function here writes raw HTML, so nothing a reader renders is markup.
"""

from __future__ import annotations

import re

from harness.core.text import printable

# Escaped wherever they are: each can open markup in running text (code spans,
# emphasis, links and images, HTML and autolinks, entities, table cells,
# strikethrough, a heading's closing #s, GitHub's $math$). Backslash escapes
# work on any ASCII punctuation, so an escape is always read back as the
# character.
_ALWAYS = re.compile(r"[\\`*\[\]<>&|~#$]")
# GitHub links a bare `http://`, `ftp://` or `www.` by itself; the escape
# breaks the pattern and renders as the same text (measured with cmark-gfm).
_AUTOLINK = re.compile(r":(?=//)|(?<=www)\.", re.IGNORECASE)
# An underscore run opens or closes emphasis unless a letter or digit is on
# both sides of it (CommonMark's flanking rules): `row_number` stays as it is.
_UNDERSCORES = re.compile(r"_+")
# What starts a block when it begins a line: a list item (`-`, `+`, `1.`,
# `1)`), a setext heading's underline (`===`, `---`); the rest is in _ALWAYS.
_LINE_START = re.compile(r"^([-+=])|^(\d+)([.)])")


def inline(text: str) -> str:
    """`text` as Markdown that renders as exactly that text, on one line."""
    text = printable(text, keep="")
    text = _ALWAYS.sub(lambda m: "\\" + m.group(), text)
    text = _AUTOLINK.sub(lambda m: "\\" + m.group(), text)
    return _UNDERSCORES.sub(_escape_underscores, text)


def _escape_underscores(m: re.Match[str]) -> str:
    before, after = m.string[m.start() - 1:m.start()], m.string[m.end():m.end() + 1]
    inert = before.isalnum() and after.isalnum()
    return m.group() if inert else "\\_" * len(m.group())


def paragraph(text: str) -> str:
    """Lines of prose (a case's description): each line `inline`, its leading
    spaces dropped (four would start a code block) and a list marker or a
    heading's underline at its start escaped; blank lines kept, one."""
    lines = [_LINE_START.sub(_escape_start, inline(line.strip()))
             for line in re.split(r"\r\n|\r|\n", text.strip())]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines))


def _escape_start(m: re.Match[str]) -> str:
    return "\\" + m.group(1) if m.group(1) else m.group(2) + "\\" + m.group(3)


def cell(text: str) -> str:
    """A table cell that renders as `text`: a `|` cannot end it, and the white
    space at its edges (which a table trims) is written as character references."""
    escaped = inline(text)
    core = escaped.strip()
    head = len(escaped) - len(escaped.lstrip())
    tail = len(escaped) - len(escaped.rstrip()) if core else 0
    return _references(escaped[:head]) + core + _references(escaped[len(escaped) - tail:])


def _references(spaces: str) -> str:
    return "".join(f"&#{ord(c)};" for c in spaces)


def code(text: str) -> str:
    """An inline code span of `text` (hidden characters and line breaks as
    visible escapes): its backtick delimiters are longer than any run inside."""
    text = printable(text, keep="") or " "
    ticks = "`" * (_longest_backticks(text) + 1)
    # One space each side when the text starts or ends with a backtick or a space:
    # the span drops it again (unless the text is all spaces, which it keeps).
    pad = " " if text.strip(" ") and (text[0] in "` " or text[-1] in "` ") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fenced(text: str, info: str = "") -> list[str]:
    """The lines of a fenced code block holding `text` unchanged: the fence is
    longer than any backtick run in `text`, so no line of it closes the block."""
    fence = "`" * max(3, _longest_backticks(text) + 1)
    return [fence + info, *text.split("\n"), fence]


def _longest_backticks(text: str) -> int:
    return max((len(m) for m in re.findall(r"`+", text)), default=0)
