"""PostgreSQL regression tests: `sql/NAME.sql` with `expected/NAME.out`.

pg_regress runs psql with `-a -q`: the output echoes every input line as it was
read, and after a statement's last line prints its result (a header, a
`---+---` rule, rows, `(N rows)`) or its error (`ERROR:  ...` and context
lines); a statement that succeeds without rows prints nothing. So the .sql's
lines are found in order in the .out, and what lies between them is the output
of the statement that ended just before.
"""

from __future__ import annotations

import re
from pathlib import Path

from harness.core.errors import InvalidCase
from harness.core.source_files import read_source
from harness.importers.records import Answer, Record, Skip, SourceFile
from harness.sql.script import split_statements

_RULE = re.compile(r"^-+(\+-+)*$")
_COUNT = re.compile(r"^\((\d+) rows?\)$")
_CONTEXT = ("LINE ", "DETAIL:", "HINT:", "CONTEXT:", "QUERY:", "ERROR:", "PL/pgSQL")


def expected_file(sql: Path) -> Path:
    return sql.parent.parent / "expected" / (sql.stem + ".out")


def read_pg_regress(path: Path, origin: str, out_stem: Path, engine: str | None = None) -> SourceFile:
    source = SourceFile(path, origin, out_stem, engine or "postgres", "pg-regress")
    expected = expected_file(path)
    if not expected.is_file():
        source.skipped.append(Skip(f"no expected output ({expected.name} beside sql/)", 1))
        return source
    script = read_source(path)
    output = read_source(expected).splitlines()
    blocks = _output_blocks(script.splitlines(), output, source)
    try:
        statements = split_statements(script, origin, psql=True)
    except InvalidCase as e:  # an unterminated quote or comment: no statement of it can be told apart
        line = int(str(e.where).split(":")[-2])
        source.skipped.append(Skip(f"the script cannot be cut into statements: {_message(e)}", line))
        return source
    null = ""  # psql prints NULL as nothing, unless `\pset null` says otherwise
    for s in statements:
        if s.meta:
            null = _null_display(s.text, null)
            continue
        answer = _answer(blocks.get(s.end_line, []), null)
        source.records.append(Record(s.text, s.line, answer))
        blocks.pop(s.end_line, None)  # a second statement on the line has no output of its own here
    return source


def _message(e: InvalidCase) -> str:
    return str(e).removeprefix(f"{e.where}: ")


def _output_blocks(script: list[str], output: list[str], source: SourceFile) -> dict[int, list[str]]:
    """The output lines printed after each line of the script (by 1-based line number)."""
    blocks: dict[int, list[str]] = {}
    j, last = 0, 0
    for no, line in enumerate(script, start=1):
        if not line.strip():
            continue  # psql does not echo blank lines
        k = next((k for k in range(j, len(output)) if output[k].rstrip() == line.rstrip()), None)
        if k is None:
            source.skipped.append(Skip("expected output that does not echo the .sql from here on", no))
            return blocks
        if k > j and last:
            blocks.setdefault(last, []).extend(output[j:k])
        j, last = k + 1, no
    blocks.setdefault(last, []).extend(output[j:])
    return blocks


def _null_display(meta: str, current: str) -> str:
    m = re.match(r"\\pset\s+null\s+(?:'((?:[^']|'')*)'|(\S+))", meta)
    if not m:
        return current
    return m[1].replace("''", "'") if m[1] is not None else m[2]


def _answer(lines: list[str], null: str) -> Answer | None:
    for i, line in enumerate(lines):
        if line.startswith("ERROR:"):
            return Answer(error=line[len("ERROR:"):].strip())
        if i + 1 < len(lines) and _RULE.match(lines[i + 1].strip()) and lines[i + 1].strip():
            return _table(lines[i:], null)
    return None


def _table(lines: list[str], null: str) -> Answer | None:
    header, rule = lines[0], lines[1]
    spans = _spans(rule)
    rows: list[tuple[str | None, ...]] = []
    for line in lines[2:]:
        count = _COUNT.match(line.strip())
        if count:
            if int(count[1]) != len(rows):
                return None  # values psql wrapped over lines: not read
            break
        rows.append(tuple(_cell(line, span, null) for span in spans))
    columns = tuple(header[a:b].strip() for a, b in spans)
    return Answer(rows=tuple(rows), columns=columns)


def _spans(rule: str) -> list[tuple[int, int]]:
    """Each column's [start, end) in the aligned lines, from the `---+---` rule."""
    spans, start = [], 0
    for segment in rule.rstrip().split("+"):
        spans.append((start, start + len(segment)))
        start += len(segment) + 1
    return spans


def _cell(line: str, span: tuple[int, int], null: str) -> str | None:
    text = line[span[0]:span[1]].strip()
    return None if text == null else text
