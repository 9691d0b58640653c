"""Spark SQL golden files: `inputs/NAME.sql` with `results/NAME.sql.out`.

The results file holds every statement of the input, each as
`-- !query`, its SQL, `-- !query schema`, `struct<name:type,...>`,
`-- !query output`, then the rows (tab-separated, NULL as `NULL`), or for an
error, the exception's class and its JSON message. The SQL and answers are read
from it; the input file gives each statement's line number.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from harness.core.source_files import read_source
from harness.importers.records import Answer, Record, Skip, SourceFile

_MARK = re.compile(r"^-- !query(?: \d+)?(?: (schema|output|analysis))?$")
_EXCEPTION = re.compile(r"^[a-z][\w]*(\.[\w$]+)+(Exception|Error)\w*$")


def results_file(sql: Path) -> Path:
    """`.../inputs/a/NAME.sql` -> `.../results/a/NAME.sql.out`."""
    parts = list(sql.parts)
    at = len(parts) - 1 - parts[::-1].index("inputs") if "inputs" in parts else None
    if at is None:
        return sql.with_name(sql.name + ".out")
    parts[at] = "results"
    return Path(*parts).with_name(sql.name + ".out")


@dataclass(frozen=True)
class _Entry:
    """One `-- !query` record of the results: its SQL, its sections by name, its line there."""

    sql: str
    sections: dict[str, list[str]]
    line: int


def read_spark_golden(path: Path, origin: str, out_stem: Path, engine: str | None = None) -> SourceFile:
    source = SourceFile(path, origin, out_stem, engine or "spark", "spark-golden")
    results = results_file(path)
    if not results.is_file():
        source.skipped.append(Skip(f"no golden results ({results.name} under results/)", 1))
        return source
    inputs = read_source(path).splitlines()
    text = read_source(results)
    entries = _entries(text.splitlines())
    short = _short(text, len(entries))
    if entries and (_cut(entries[-1], text) or (short and not text.endswith("\n\n\n"))):
        cut = entries.pop()
        source.skipped.append(Skip("the golden results end inside this record (a truncated file): "
                                   "it and the statements after it are not read", cut.line, str(results)))
    elif short:  # cut right after a whole record
        source.skipped.append(Skip(f"the golden results end after {len(entries)} of the {short} queries their "
                                   "header counts (a truncated file)", text.count("\n") + 1, str(results)))
    found_at = 0
    for entry in entries:
        line = _line_of(entry.sql, inputs, found_at)
        found_at = line or found_at
        source.records.append(Record(entry.sql, line or found_at or 1, _answer(entry.sections)))
    return source


def _entries(lines: list[str]) -> list[_Entry]:
    """Each `-- !query` entry, in order."""
    entries: list[_Entry] = []
    section = ""
    for no, line in enumerate(lines, start=1):
        m = _MARK.match(line)
        if m and m[1] is None:
            section = "query"
            entries.append(_Entry("", {section: []}, no))
        elif m and entries:
            section = m[1]
            entries[-1].sections[section] = []
        elif entries:
            entries[-1].sections[section].append(line)
    return [_Entry("\n".join(e.sections["query"]).strip(), e.sections, e.line) for e in entries]


def _short(text: str, found: int) -> int:
    """The queries the header (`-- Number of queries: N`, Spark 3.5 on) counts
    when more than `found`, else 0."""
    m = re.search(r"\A(?:--.*\n)*?-- Number of queries: (\d+)\n", text)
    return int(m[1]) if m and int(m[1]) > found else 0


def _cut(last: _Entry, text: str) -> bool:
    """Whether the file ends inside its last record: mid-line, before the record's
    schema or output, inside the schema or an error's JSON. (A cut right after
    a whole row line looks like the record's end: only a header's count of the
    queries tells, `_short`.)"""
    schema = "".join(last.sections.get("schema", [])).strip()
    output = last.sections.get("output")
    if not text.endswith("\n") or output is None or not re.fullmatch(r"struct<.*>", schema, re.DOTALL):
        return True
    if schema == "struct<>" and output and _EXCEPTION.match(output[0].strip()):
        body = "\n".join(output[1:]).strip()
        return body.startswith("{") and not _parses(body)
    return False


def _parses(body: str) -> bool:
    try:
        json.loads(body)
    except json.JSONDecodeError:
        return False
    return True


def _line_of(sql: str, inputs: list[str], start: int) -> int:
    """The input line (1-based) where the statement starts, searching from `start`; 0 if not found."""
    first = _bare(sql.splitlines()[0]) if sql else ""
    for i in range(start, len(inputs)):
        if _bare(inputs[i]) == first:
            return i + 1
    return 0


def _bare(line: str) -> str:
    return line.strip().rstrip(";").rstrip()


def _answer(sections: dict[str, list[str]]) -> Answer | None:
    output = sections.get("output")
    if output is None:
        return None
    while output and not output[-1].strip():
        output = output[:-1]
    schema = "".join(sections.get("schema", [])).strip()
    if schema == "struct<>" and output and _EXCEPTION.match(output[0].strip()):
        return Answer(error=_error(output))
    columns = _columns(schema)
    if not columns:
        return None  # a statement without rows (CREATE, INSERT): nothing recorded
    rows = tuple(tuple(None if v == "NULL" else v for v in line.split("\t")) for line in output)
    if any(len(r) != len(columns) for r in rows):
        return None  # a value holding a tab: the rows cannot be told apart
    return Answer(rows=rows, columns=columns)


def _error(output: list[str]) -> str:
    """`Class: errorClass message` from the exception's class and JSON body."""
    name, body = output[0].strip(), "\n".join(output[1:]).strip()
    try:
        doc = json.loads(body) if body else {}
    except json.JSONDecodeError:
        return f"{name}: {body}".strip(": ")
    parts = [name, str(doc.get("errorClass", ""))]
    params = doc.get("messageParameters")
    if params:
        parts.append(json.dumps(params, sort_keys=True))
    return " ".join(p for p in parts if p)


def _columns(schema: str) -> tuple[str, ...]:
    """The column names of `struct<a:int,b:string>` (names may hold commas and colons in parentheses)."""
    m = re.fullmatch(r"struct<(.*)>", schema, re.DOTALL)
    if not m or not m[1]:
        return ()
    return tuple(_name(field) for field in _top_level(m[1], ","))


def _name(field: str) -> str:
    pieces = _top_level(field, ":")
    return ":".join(pieces[:-1]) if len(pieces) > 1 else field


def _top_level(text: str, sep: str) -> list[str]:
    out, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "(<[":
            depth += 1
        elif c in ")>]":
            depth -= 1
        elif c == sep and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out
