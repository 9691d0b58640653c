"""A bug report (`issue.Issue`) as Markdown, in the order engines' trackers ask
for: title, versions, reproduction, actual and expected output, why the
expected value, other engines, proposed regression test.

Cells are printed as `show` prints them (NULL, NaN, Infinity, -0.0 spelled
out). Every piece of text that came from outside (the case, its data, the
finding record, the engines' messages and versions) goes through
`harness.core.markdown`: escaped prose and cells, fenced blocks for SQL and
messages, and no raw HTML, so a `<!--` or an `<img>` in a value renders as
text. The actual output's table is what a test reads back to check the report
against the engine (tests/test_export_issue.py).
"""

from __future__ import annotations

import io
import sys
from collections.abc import Sequence

from harness.core.markdown import cell, code, fenced, inline, paragraph
from harness.core.text import printable
from harness.findings.explain_text import write_text
from harness.findings.issue import Issue, OtherAnswer, Outcome
from harness.findings.show import show

ACTUAL_HEADING = "## Actual output"
REPRODUCTION_HEADING = "## Reproduction"
DERIVATION_HEADING = "### The reference's derivation, step by step"


def to_markdown(issue: Issue) -> str:
    parts = [f"# {inline(issue.title)}", "", *_versions(issue), "", paragraph(issue.case.description), "",
             *_reproduction(issue), *_outputs(issue), *_why(issue), *_others(issue), *_tests(issue)]
    return "\n".join(parts).rstrip("\n") + "\n"


def _versions(issue: Issue) -> list[str]:
    python = ".".join(str(n) for n in sys.version_info[:3])
    return [f"- **{inline(issue.product)}**: {inline(issue.version)}",
            f"- **Found by**: window-harness {issue.harness_version} (Python {python}), "
            f"case {code(issue.case.id)}, a differential test against a reference implementation "
            "of the SQL standard's window functions"]


def _reproduction(issue: Issue) -> list[str]:
    sql = "\n\n".join(issue.statements)
    return [REPRODUCTION_HEADING, "", f"Runs as pasted in {inline(issue.client)}:", "", *fenced(sql, "sql"), ""]


def _outputs(issue: Issue) -> list[str]:
    lines = [f"{ACTUAL_HEADING} ({inline(issue.product)} {inline(issue.version)}, run now)", "",
             *outcome_lines(issue.actual), ""]
    lines += ["## Expected output", ""]
    note = "The SQL standard's answer, as window-harness's reference implementation derives it"
    if issue.expected_profile is not None:
        note += (f", under {inline(issue.product)}'s documented by-design choices (its {code(issue.expected_profile)} "
                 "semantics profile: default null order, division and overflow rules)")
    if not issue.ordered and issue.expected.answer is not None:
        note += "; the query's ORDER BY does not fix the order of every row, so any row order is correct"
    lines += [note + ".", "", *outcome_lines(issue.expected), ""]
    return lines


def outcome_lines(outcome: Outcome) -> list[str]:
    if outcome.answer is None:
        return fenced(printable(f"ERROR: {outcome.error}"), "text")
    return markdown_table(outcome.answer.columns, [[show(v) for v in row] for row in outcome.answer.rows])


def markdown_table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    if not rows:
        return ["(no rows)"]
    return ["| " + " | ".join(cell(c) for c in columns) + " |",
            "|" + "|".join("---" for _ in columns) + "|",
            *("| " + " | ".join(cell(c) for c in row) + " |" for row in rows)]


def _why(issue: Issue) -> list[str]:
    lines = ["## Why the expected value", ""]
    first = issue.first
    if first is not None:
        lines += [f"The first differing cell: column {code(first.column)}, row {first.answer_row} of the expected "
                  f"output: {inline(issue.product)} gives {inline(show(first.engine))}, "
                  f"the standard {inline(show(first.reference))}.", ""]
    e = issue.explanation
    if e is None:
        return [*lines, f"(No derivation: {inline(issue.explanation_gap)}.)", ""]
    view = e.engine
    product = inline(issue.product)
    if view is not None and view.first is not None:
        lines += [f"The first step at which the derivation would have to differ to give {product}'s value: "
                  f"**[{inline(view.first.step)}]** {product}'s value equals {inline(view.first.sentence)}.",
                  ""]
    text = io.StringIO()
    write_text(e, text)
    # A heading, not <details>: the report holds no raw HTML at all.
    return [*lines, DERIVATION_HEADING, "", *fenced(printable(text.getvalue().rstrip()), "text"), ""]


def _others(issue: Issue) -> list[str]:
    lines = [f"## Other engines ({inline(issue.others_source)})", ""]
    if not issue.others:
        return [*lines, "(none)", ""]
    for other in issue.others:
        lines += [*_other(other), ""]
    return lines


def _other(other: OtherAnswer) -> list[str]:
    version = f" {inline(other.version)}" if other.version else ""
    return [f"- **{inline(other.engine)}**{version}: {inline(other.verdict)}", "",
            *("  " + line for line in outcome_lines(other.outcome))]


def _tests(issue: Issue) -> list[str]:
    lines = ["## Proposed regression test", ""]
    product = inline(issue.product)
    if not issue.tests:
        return [*lines, f"(window-harness exports no test format of {product}'s own; the reproduction "
                        "and the expected output above are the test.)", ""]
    for test in issue.tests:
        if test.text is None:
            lines += [f"(Not exported as {test.format}: {inline(test.note)}.)", ""]
        else:
            lines += [f"For {product}'s own test suite ({test.format}), expecting the standard's answer:",
                      "", *fenced(test.text.rstrip(), ""), ""]
    return lines
