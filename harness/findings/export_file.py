"""The text of an exported test file: an opening, a header comment, the
tables, and one query record whose expected block is the reference's answer.

The header says where the case came from, how to reproduce it, and what the
finding record says the engine returned. Rows are in the reference's order
when the query's ORDER BY fixes the order of every row; otherwise the record
says `rowsort` and the rows are sorted as both runners sort them (row by row,
cell strings compared bytewise). An ambiguous answer (see `export_expect`) is
refused unless asked for.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.cases.case import Case
from harness.core.dialect import Dialect
from harness.core.errors import InvalidInput, Unsupported
from harness.core.model import Literal, TableSchema, walk
from harness.findings.export_expect import Expectation, case_location, expectation, loose
from harness.findings.export_formats import TestFormat, comment
from harness.findings.replay import replay_command
from harness.findings.show import show
from harness.judge.cells import rows_of
from harness.sql import write, write_expr


def export_case(case: Case, fmt: TestFormat, source: str | None = None, file_name: str | None = None,
                allow_ambiguous: bool = False, build: Build | None = None) -> str:
    """The test file's text; InvalidInput when the case cannot become a sound test.
    `build`: the engine build the test is for (an ENGINE@LABEL of another Python):
    its dialect, as its release speaks it, writes the SQL and gives the by-design
    choices the expected rows follow; its finding record is the one quoted."""
    from harness.engines.registry import get_dialect

    dialect = build.dialect if build is not None else get_dialect(fmt.engine)
    try:
        sql = _one_record(write(case.query, dialect))
    except Unsupported as e:
        raise InvalidInput(f"{fmt.engine} cannot express this query ({e.feature})",
                           case_location(case)) from None
    broken = _line_broken_text(case)
    if broken is not None:
        raise InvalidInput(f"the name or string {broken!r} holds a line break, which a test file's "
                           "record cannot carry (a blank line would end it)", case_location(case))
    expected = expectation(case, dialect.semantics)
    if expected.ambiguous and not allow_ambiguous:
        raise InvalidInput(f"no single expected answer: {expected.ambiguous} "
                           "(reduce the case, or pass --allow-ambiguous)", case_location(case))
    name = file_name or "test_wh_" + case.id.replace("/", "_") + fmt.suffix
    lines = [*fmt.opening(case, name), *_header(case, fmt, dialect, expected, source, build), ""]
    for statement in (*fmt.preamble, *table_statements(case, dialect, fmt.insert_rows)):
        lines += ["statement ok", statement + ";", ""]
    lines += _query_record(sql, expected, fmt)
    if fmt.drop_tables:
        for schema in case.schemas:
            lines += ["", "statement ok", f"DROP TABLE {dialect.quote(schema.name)};"]
    return "\n".join(lines).rstrip("\n") + "\n"


def _line_broken_text(case: Case) -> str | None:
    """A table or column name, or a name or string literal of the query, that
    holds a line break (the rows' values are checked as they are written)."""
    names = [n for schema in case.schemas for n in (schema.name, *(c.name for c in schema.columns))]
    for node in walk(case.query):
        fields = getattr(node, "__dataclass_fields__", {})
        names += [node] if isinstance(node, str) else [getattr(node, f) for f in fields]
    return next((n for n in names if isinstance(n, str) and ("\n" in n or "\r" in n)), None)


def _one_record(sql: str) -> str:
    # A blank line ends a record in both formats.
    return "\n".join(line.rstrip() for line in sql.strip().splitlines() if line.strip())


def _header(case: Case, fmt: TestFormat, dialect: Dialect, expected: Expectation,
            source: str | None, build: Build | None) -> list[str]:
    from harness.judge.runner import profile_named

    source = source or (str(case.path) if case.path else case.id)
    engine = build.name if build is not None else fmt.engine
    pythons = {build.name: build.python} if build is not None else {}
    lines = [comment(f"# Exported by window-harness from case {case.id} ({source})."),
             comment(f"# {case.description}"),
             f"# Reproduce: {replay_command(source, [engine], pythons)}"]
    if build is not None:
        lines.append(comment(f"# For {build.name} {build.version}: its release's dialect and "
                             "by-design choices"))
    if expected.error is not None:
        lines.append(comment(f"# The query must fail, being invalid by definition: {expected.error}"))
    else:
        lines.append("# Expected rows: the window-harness reference implementation's answer, "
                     "derived from the SQL standard's definitions")
        standard = expectation(case, profile_named(case.profile))
        if _values(standard) != _values(expected):
            lines.append(f"#   under {fmt.engine}'s documented by-design choices (the "
                         f"{dialect.semantics.name} semantics profile); the standard's defaults "
                         "give another answer here")
        if not expected.ordered:
            lines.append("#   (rowsort: the query's ORDER BY does not fix the order of every row)")
    if expected.ambiguous:
        lines.append(f"# WARNING: {expected.ambiguous}; a correct engine may give another answer")
    return lines + _finding_lines(case.finding, engine)


@dataclass(frozen=True)
class Build:
    """An engine build a test is exported for: ENGINE@LABEL run by another Python."""

    name: str  # `duckdb@old`
    python: str  # its interpreter (--engine-python)
    version: str
    dialect: Dialect  # narrowed to `version` (`Dialect.at`)


def _values(e: Expectation) -> object:
    return e.error if e.table is None else [[loose(v) for v in r] for r in rows_of(e.table).rows]


def _finding_lines(finding: dict | None, engine: str) -> list[str]:
    """What the finding record says: the engine at fault, and this engine's answer."""
    if not finding:
        return []
    lines = []
    at_fault = finding.get("engine")
    if isinstance(at_fault, str) and at_fault != engine:
        lines.append(comment(f"# The finding is about {at_fault}: {finding.get('verdict', '?')}"
                             + (f": {finding['detail']}" if finding.get("detail") else "")))
    record = finding_record(finding, engine)
    if record is None:
        return lines
    version = f" {record['version']}" if record.get("version") else ""
    detail = f": {record['detail']}" if record.get("detail") else ""
    lines.append(comment(f"# In the finding, {engine}{version} gave {record.get('verdict', '?')}{detail}"))
    answer = record.get("answer", record.get("rows"))
    rows = answer.get("rows") if isinstance(answer, dict) else answer
    if isinstance(rows, list) and rows:
        lines.append(f"#   {engine} returned:")
        lines += [comment(f"#     {' '.join(show(v) for v in row)}") for row in rows[:20]
                  if isinstance(row, list)]
        if len(rows) > 20:
            lines.append(f"#     ... ({len(rows)} rows)")
    return lines


def finding_record(finding: dict | None, engine: str) -> dict | None:
    """The part of a finding record about `engine`: `engines: {NAME: {...}}`,
    or the record itself when it says `engine: NAME`."""
    if not finding:
        return None
    engines = finding.get("engines")
    if isinstance(engines, dict) and isinstance(engines.get(engine), dict):
        return engines[engine]
    return finding if finding.get("engine") == engine else None


def table_statements(case: Case, dialect: Dialect, insert_rows: bool = True,
                     line_breaks: bool = False) -> list[str]:
    """The case's tables in `dialect`: CREATE TABLE, then INSERT (`insert_rows`)
    or CREATE TABLE ... AS VALUES; no semicolons. `line_breaks`: a string value
    may hold one (a script for a client; a test file's record cannot)."""
    out = []
    for schema in case.schemas:
        name = dialect.quote(schema.name)
        columns = ", ".join(f"{dialect.quote(c.name)} {dialect.declared_type(c.type)}" for c in schema.columns)
        rows = ["  (" + ", ".join(values) + ")" for values in literal_rows(case, schema, dialect, line_breaks)]
        create = f"CREATE TABLE {name} ({columns})"
        if not rows:
            out.append(create)
        elif insert_rows:
            out += [create, f"INSERT INTO {name} VALUES\n" + ",\n".join(rows)]
        else:
            out.append(f"{create} AS VALUES\n" + ",\n".join(rows))
    return out


def literal_rows(case: Case, schema: TableSchema, dialect: Dialect,
                 line_breaks: bool = False) -> list[list[str]]:
    """Each row of the table `schema` names, as literals of `dialect`."""
    return [[_literal(v, c.type, dialect, case, line_breaks)
             for v, c in zip(row.values(), schema.columns, strict=True)]
            for row in case.tables[schema.name].to_pylist()]


def _literal(v: object, t, dialect: Dialect, case: Case, line_breaks: bool) -> str:
    if not line_breaks and isinstance(v, str) and ("\n" in v or "\r" in v):
        raise InvalidInput("a string holding a line break cannot go into a test file",
                           case_location(case))
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)  # the declared column type does the cast
    try:
        return write_expr(Literal(v, t), dialect)
    except (InvalidInput, Unsupported) as e:
        raise InvalidInput(f"cannot write the value {v!r} as a literal: {e}",
                           case_location(case)) from None


def _query_record(sql: str, expected: Expectation, fmt: TestFormat) -> list[str]:
    if expected.table is None:
        return ["statement error", sql + ";"]
    table = expected.table
    types = [f.type for f in table.schema]
    rows = [[fmt.cell(v, t) for v, t in zip(row.values(), types, strict=True)] for row in table.to_pylist()]
    if any(c in fmt.forbidden for row in rows for cell in row for c in cell):
        raise InvalidInput(f"an expected value holds one of {fmt.forbidden!r}, "
                           f"which the {fmt.name} format cannot carry in a cell")
    if not expected.ordered:
        rows.sort(key=lambda r: [c.encode() for c in r])
    letters = "".join(fmt.letter(t) for t in types)
    head = f"query {letters}" + ("" if expected.ordered else " rowsort")
    return [head, sql + ";", "----", *(fmt.separator.join(r) for r in rows)]
