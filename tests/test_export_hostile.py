"""Exports of untrusted cases: what a case, its data, its finding record and the
engines' messages hold arrives as text, never as markup or a new record.

A bug report (`export --to issue`) is rendered with a CommonMark renderer
(markdown-it-py, GitHub's table and strikethrough extensions on) and checked
for injected elements: no HTML token or element (`<img>`, `<script>`, a
`<!--` comment), no link or image, every section heading present after a
description that opens a comment, and the hostile strings shown as text.
The test-file exports (`.slt`, `.test`) are read back by the importer's
reader: a description or file name holding a line separator starts no record.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest
import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token

from harness.cli.main import main
from harness.core.errors import InvalidInput
from harness.core.text import printable
from harness.findings.export import FORMATS, export_case
from harness.findings.issue import build_issue
from harness.findings.issue_text import to_markdown
from harness.findings.replay import load_one
from harness.findings.show import show
from harness.importers.slt import read_slt

IMG = "<img src=x onerror=alert(1)>"
LINK = "[x](javascript:alert(1))"
SECTIONS = ["Reproduction", "Actual output", "Expected output", "Why the expected value",
            "Other engines", "Proposed regression test"]

# DuckDB's RANGE ... 0 PRECEDING bug (cases/regressions/duckdb_range_zero_preceding_peers.yaml)
# over a table, columns and values that are markup, with a finding record that is too.
HOSTILE_CASE = f"""\
description: |
  <!-- everything after this would be hidden
  # Not a heading
  - not a list
  ===
  {IMG} {LINK} <script>alert(1)</script> http://evil.example www.evil.example
      ``` ~~~ *not emphasis* _nor this_ &lt; $x$
tables:
  "t<b>":
    columns: {{id: bigint, k: bigint, v: bigint, "{IMG}": varchar}}
    rows:
      - [1, 1, -1, "{IMG}"]
      - [2, 1, 0, "a|b\\\\`` ``` <!-- c {LINK} | d"]
sql: |
  SELECT id, "{IMG}", max(v) OVER (ORDER BY k ASC NULLS LAST
                          RANGE BETWEEN UNBOUNDED PRECEDING AND 0 PRECEDING) AS "m<!--"
  FROM "t<b>"
expected:
  columns: [id, "{IMG}", "m<!--"]
  rows:
    - [1, "{IMG}", 0]
    - [2, "a|b\\\\`` ``` <!-- c {LINK} | d", 0]
finding:
  engine: duckdb
  engines:
    "sqlite<script>alert(1)</script>":
      version: "{IMG}"
      verdict: "<!-- hidden"
      answer: {{columns: ["{IMG}"], rows: [["<script>alert(2)</script>"]]}}
    "datafusion{LINK}":
      version: "3 <!--"
      verdict: error
      detail: "<script>alert(3)</script> {LINK}"
"""

# A value holding line breaks (and a blank line, and a line that reads as a
# heading): the report is written, and its reproduction still runs as pasted.
NEWLINE_CASE = HOSTILE_CASE.split("finding:")[0].replace("| d", "\\nd\\n\\n# e |")

# The reference refuses the cast and quotes the value; SQLite returns rows;
# DuckDB and DataFusion fail with messages that quote it too.
ERROR_CASE = f"""\
description: a cast of a string that is markup
tables:
  t:
    columns: {{id: bigint, s: varchar}}
    rows:
      - [1, "#{IMG}<!--{LINK}*y*"]
sql: |
  SELECT id, sum(CAST(s AS BIGINT)) OVER (ORDER BY id) AS m FROM t
error: invalid
"""

_MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])
_INJECTED = {"html_block", "html_inline", "link_open", "image", "code_block"}


def tokens(markdown: str) -> list[Token]:
    def walk(ts: list[Token]):  # type: ignore[no-untyped-def]
        for t in ts:
            yield t
            yield from walk(t.children or [])

    return list(walk(_MARKDOWN.parse(markdown)))


def assert_no_injection(markdown: str) -> list[Token]:
    found = tokens(markdown)
    assert not [t.type for t in found if t.type in _INJECTED]
    html = _MARKDOWN.render(markdown)
    for element in ("<img", "<script", "<!--", "<a ", "<b>", "<em>", "<h1>Not", "<s>", "<del>"):
        assert element not in html, element
    headings = [t for i, t in enumerate(found) if i and found[i - 1].type == "heading_open"]
    levels = [found[i - 1].tag for i, t in enumerate(found) if i and found[i - 1].type == "heading_open"]
    assert levels.count("h1") == 1  # the title; `# Not a heading` is not one
    titles = [h.content for h, level in zip(headings, levels, strict=True) if level == "h2"]
    assert [next((s for s in SECTIONS if t.startswith(s)), t) for t in titles] == SECTIONS
    return found


def write(tmp_path: Path, text: str, name: str = "hostile.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def table_cells(found: list[Token], after: str) -> list[list[str]]:
    """The body cells of the first table after the heading starting `after`, as rendered text."""
    start = next(i for i, t in enumerate(found) if t.type == "inline" and t.content.startswith(after))
    rows: list[list[str]] = []
    for i in range(start, len(found)):
        t = found[i]
        if t.type == "table_close":
            return rows
        if t.type == "tr_open" and found[i - 1].type == "tbody_open" or t.type == "tr_open" and rows:
            rows.append([])
        if t.type == "inline" and found[i - 1].type == "td_open":
            rows[-1].append("".join(c.content for c in t.children or []))
    raise AssertionError(f"no table after {after!r}")


def test_a_hostile_case_and_finding_record_render_as_text(tmp_path: Path, engines) -> None:
    path = write(tmp_path, HOSTILE_CASE, "h<!--x.yaml")
    markdown = to_markdown(build_issue(load_one(str(path)), engines.get("duckdb"), source=str(path)))
    found = assert_no_injection(markdown)
    text = "".join(t.content for t in found if t.type == "text")
    assert "<!-- everything after this would be hidden" in text and "# Not a heading" in text
    assert IMG in text and LINK in text and "sqlite<script>alert(1)</script>" in text
    assert "<script>alert(3)</script>" in "".join(t.content for t in found if t.type == "fence")
    assert table_cells(found, "Actual output")[1][1] == show("a|b\\`` ``` <!-- c " + LINK + " | d")


def test_a_value_with_a_line_break_is_exported_and_its_reproduction_runs(tmp_path: Path, engines) -> None:
    path = write(tmp_path, NEWLINE_CASE)
    assert main(["export", str(path), "--to", "issue", "--engine", "duckdb",
                 "--out", str(tmp_path / "issue.md")]) == 0
    markdown = (tmp_path / "issue.md").read_text(encoding="utf-8")
    found = assert_no_injection(markdown)
    script = next(t.content for t in found if t.type == "fence" and t.info == "sql")
    con = duckdb.connect(":memory:")
    statements = [s for s in re.split(r";\n", script) if s.strip()]
    for statement in statements[:-1]:
        con.execute(statement)
    rows = con.execute(statements[-1]).fetchall()
    printed = table_cells(found, "Actual output")
    assert sorted(printed) == sorted([printable(show(v), keep="") for v in row] for row in rows)
    assert any("\n" in v for row in rows for v in row if isinstance(v, str))


def test_a_value_with_a_carriage_return_is_refused_by_name(tmp_path: Path, capsys) -> None:
    # Markdown reads CR as a line break: pasted, the script would insert another value.
    path = write(tmp_path, NEWLINE_CASE.replace("\\nd", "\\rd"))
    assert main(["export", str(path), "--to", "issue", "--engine", "duckdb"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "carriage return" in err and "Traceback" not in err


def test_engine_messages_quoting_markup_render_as_text(tmp_path: Path, engines) -> None:
    path = write(tmp_path, ERROR_CASE)
    issue = build_issue(load_one(str(path)), engines.get("sqlite"),
                        [engines.get("duckdb"), engines.get("datafusion")], source=str(path))
    markdown = to_markdown(issue)
    found = assert_no_injection(markdown)
    title = next(t for i, t in enumerate(found) if i and found[i - 1].tag == "h1")
    shown = "".join(c.content for c in title.children or [])
    assert f"#{IMG}<!--{LINK}*y*" in shown
    messages = [t.content for t in found if t.type == "fence" and t.info == "text"]
    assert sum(IMG in m for m in messages) == 3  # the reference's, DuckDB's and DataFusion's


@pytest.mark.parametrize("fmt", ["slt", "duckdb-test"])
@pytest.mark.parametrize("separator", ["\n", "\r", "\x0c", "\x0b", "\x1e", "\x85", "\u2028", "\u2029"])
def test_a_line_separator_in_a_description_or_file_name_starts_no_record(tmp_path: Path, fmt: str,
                                                                      separator: str) -> None:
    injected = separator.join(["x", "statement error", "SELECT 1", ""])
    text = Path("cases/regressions/duckdb_range_zero_preceding_peers.yaml").read_text(encoding="utf-8")
    description = text.splitlines()[0]
    case_file = write(tmp_path, text.replace(description, "description: " + repr(injected).replace("'", '"')),
                      "a" + injected.replace("\r", "") + ".yaml")
    case = load_one(str(case_file))
    assert case.description == injected
    out = tmp_path / ("t" + FORMATS[fmt].suffix)
    out.write_text(export_case(case, FORMATS[fmt], source=str(case_file)), encoding="utf-8")
    records = read_slt(out, str(out), out.with_suffix("")).records
    # the tables' statements and the query (for slt, then its DROP TABLE): no `statement error`
    assert len(records) == (3 if fmt == "slt" else 4)
    assert not [r for r in records if r.sql.strip() == "SELECT 1" or (r.answer and r.answer.error is not None)]


@pytest.mark.parametrize("fmt", ["slt", "duckdb-test"])
# A name holding a line break never loads (a control character: tests/test_names.py);
# a string literal may hold one.
@pytest.mark.parametrize(("column", "literal"), [("s", "'z\n\nw'")])
def test_a_line_break_in_a_literal_of_the_query_is_refused_for_a_test_file(
        tmp_path: Path, engines, fmt: str, column: str, literal: str) -> None:
    """A blank line ends a record: the export dropped it, and the test then ran
    another query than the case's. The bug report carries it, as pasted."""
    sql = (f"SELECT id, s AS {column}, max(v) OVER (ORDER BY k ASC NULLS LAST RANGE BETWEEN "
           f"UNBOUNDED PRECEDING AND 0 PRECEDING) AS m FROM t WHERE s <> {literal}")
    case_file = write(tmp_path, yaml.safe_dump({
        "description": "a line break inside the query (DuckDB's RANGE ... 0 PRECEDING bug)",
        "tables": {"t": {"columns": {"id": "bigint", "k": "bigint", "v": "bigint", "s": "varchar"},
                         "rows": [[1, 1, -1, "x"], [2, 1, 0, "y"]]}},
        "sql": sql,
        "expected": {"columns": ["id", column.strip('"'), "m"], "rows": [[1, "x", 0], [2, "y", 0]]},
    }, sort_keys=False))
    case = load_one(str(case_file))
    with pytest.raises(InvalidInput, match="holds a line break"):
        export_case(case, FORMATS[fmt], source=str(case_file))
    markdown = to_markdown(build_issue(case, engines.get("duckdb"), source=str(case_file)))
    assert f"{column}, max(v)" in next(t.content for t in tokens(markdown) if t.info == "sql")
