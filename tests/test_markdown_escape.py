"""`harness.core.markdown`: whatever the text, the Markdown renders as that text.

Each function's output is rendered with a CommonMark renderer (markdown-it-py,
with GitHub's table and strikethrough extensions) and read back: the rendered
text equals the input (hidden characters and line breaks as `printable`'s
visible escapes), and no token but text, a code span or a fence appears.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples
from markdown_it import MarkdownIt
from markdown_it.token import Token

from harness.core.markdown import cell, code, fenced, inline, paragraph
from harness.core.text import printable

_MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])

HOSTILE = [
    "<!-- the rest is hidden", "<img src=x onerror=alert(1)>", "<script>alert(1)</script>",
    "[x](javascript:alert(1))", "![i](http://e/x.png)", "<http://evil>", "&lt;b&gt; &amp; &#60;",
    "# heading", "- list", "1. list", "3) list", "+ list", "===", "---", "***", "> quote",
    "    indented", "```", "~~~", "`code`", "``", "*em* _em_ __strong__ ~~del~~", "a | b",
    "\\", "trailing backslash\\", "x  ", "$math$", "http://evil.example", "WWW.evil.example",
    "row_number", "_a_", "a\nb", "a\r\nb", "line\u2028sep", "\x1b[31mred", "\u202eevil", "\x00",
    "[ref]: http://evil", "<details><summary>x</summary>", "  padded  ", "", " ", "|", "-1",
]
TEXT = st.one_of(st.sampled_from(HOSTILE),
                 st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30),
                 st.lists(st.sampled_from(HOSTILE), max_size=4).map("".join))


def _walk(tokens: list[Token]) -> list[Token]:
    out = []
    for t in tokens:
        out += [t, *_walk(t.children or [])]
    return out


def _inline_tokens(markdown: str) -> list[Token]:
    """The leaf tokens of a document's inline content."""
    return [t for t in _walk(_MARKDOWN.parse(markdown)) if t.type not in _BLOCKS and t.type != "inline"]


_BLOCKS = {"paragraph_open", "paragraph_close", "table_open", "table_close", "thead_open",
           "thead_close", "tbody_open", "tbody_close", "tr_open", "tr_close", "th_open",
           "th_close", "td_open", "td_close", "heading_open", "heading_close"}


def _shown(text: str) -> str:
    return printable(text, keep="")


@settings(max_examples=examples(300), deadline=None)
@given(TEXT)
def test_inline_renders_as_the_text(text: str) -> None:
    leaves = _inline_tokens("# " + inline(text))
    assert {t.type for t in leaves} <= {"text"}
    # A heading drops the white space at its edges (markdown-it: any Unicode space).
    assert "".join(t.content for t in leaves) == _shown(text).strip()


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=3))
def test_a_table_of_cells_renders_cell_by_cell(texts: list[str]) -> None:
    header = "| " + " | ".join(cell(f"h{i}") for i in range(len(texts))) + " |"
    markdown = "\n".join([header, "|" + "---|" * len(texts), "| " + " | ".join(cell(t) for t in texts) + " |"])
    tokens = _walk(_MARKDOWN.parse(markdown))
    cells = [tokens[i + 1] for i, t in enumerate(tokens) if t.type == "td_open"]
    assert ["".join(c.content for c in t.children or []) for t in cells] == [_shown(t) for t in texts]
    assert {t.type for t in _inline_tokens(markdown)} <= {"text"}


@settings(max_examples=examples(300), deadline=None)
@given(TEXT)
def test_a_code_span_holds_the_text(text: str) -> None:
    leaves = _inline_tokens("x " + code(text) + " y")
    spans = [t for t in leaves if t.type == "code_inline"]
    assert len(spans) == 1 and {t.type for t in leaves} <= {"text", "code_inline"}
    assert spans[0].content == (_shown(text) or " ")


@settings(max_examples=examples(300), deadline=None)
@given(TEXT)
def test_a_fenced_block_holds_the_text_unchanged(text: str) -> None:
    # CommonMark reads CR as a line break and NUL as U+FFFD: the report refuses those in SQL.
    text = text.replace("\r", "").replace("\x00", "")
    tokens = _MARKDOWN.parse("\n".join(["before", *fenced(text, "sql"), "after"]))
    fences = [t for t in tokens if t.type == "fence"]
    assert len(fences) == 1 and fences[0].info == "sql" and fences[0].content == text + "\n"
    assert tokens[-2].content == "after"  # the block closed where it should


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=5).map("\n".join))
def test_a_paragraph_is_only_paragraphs_of_text(text: str) -> None:
    tokens = _walk(_MARKDOWN.parse(paragraph(text)))
    assert {t.type for t in tokens} <= {"paragraph_open", "paragraph_close", "inline", "text", "softbreak"}
