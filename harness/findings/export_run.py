"""Run an exported test file (`export --to slt|duckdb-test`) on an engine, record
by record, as the format's own runner judges it.

No sqllogictest runner installs from the package registries the project can
reach (DataFusion's is a Rust crate, `datafusion-sqllogictest`; no Python
package of the name exists), so this is a small runner of the record grammar.
The file is read by the importer's reader (`harness.importers.slt`, the one
reader of that grammar: loops, `onlyif`/`skipif`, sort modes, both row
layouts), each record is run in file order on one connection of the engine
(`Engine.run`: DataFusion's or DuckDB's Python library through the harness's
adapter), and its result is printed by the format's own cell rules
(`export_formats`: DataFusion's normalisation, DuckDB's VARCHAR casts) and
compared as the runners compare:

- `statement ok` must run, `statement error` must fail;
- a query's type letters must be the engine's (every column `I` for DuckDB,
  which has deprecated them); its rows, sorted by the sort mode (`rowsort`:
  row by row; `valuesort`: every value), must be the expected lines; in a
  format with `approximate_numbers` (DuckDB's runner casts numeric cells and
  compares them approximately) floats a few units apart in the last place
  agree.

A record the reader could not read (a hashed result, a row that does not
split) is a failure of the file: a test that cannot run has not passed.

`through_model`: each query's SQL is parsed and rendered by the engine's
adapter before it runs, so a deliberately faulty engine's planted bug (a
rewrite of the model) acts on it; otherwise the text runs as written.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from harness.core.errors import EngineError, Unsupported
from harness.engines.base import Engine
from harness.findings.export_formats import TestFormat
from harness.importers.records import Answer, Record, Skip
from harness.importers.slt import cell_value, read_slt

Row = tuple[str | None, ...]


@dataclass(frozen=True)
class RecordRun:
    """One record run: its line and what differs from the file (None: it passed)."""

    line: int
    kind: str  # statement | query
    problem: str | None = None

    @property
    def passed(self) -> bool:
        return self.problem is None


@dataclass(frozen=True)
class FileRun:
    path: Path
    engine: str
    records: tuple[RecordRun, ...]
    unread: tuple[Skip, ...] = ()  # records the reader could not read

    @property
    def passed(self) -> bool:
        return bool(self.records) and not self.unread and all(r.passed for r in self.records)

    @property
    def failures(self) -> list[str]:
        return ([f"line {s.line}: not read ({s.reason})" for s in self.unread]
                + [f"line {r.line}: {r.problem}" for r in self.records if r.problem is not None])


def run_test_file(path: Path, fmt: TestFormat, engine: Engine, through_model: bool = False) -> FileRun:
    """Every record of the file at `path` run on `engine` (started and closed by the caller)."""
    source = read_slt(path, str(path), path.with_suffix(""), engine=fmt.engine)
    runner = _Runner(fmt, engine, through_model)
    records = tuple(runner.run(record) for record in source.records)
    return FileRun(path, engine.name, records, tuple(source.skipped))


@dataclass
class _Runner:
    fmt: TestFormat
    engine: Engine
    through_model: bool

    def run(self, record: Record) -> RecordRun:
        answer = record.answer
        kind = "statement" if answer is None or answer.rows is None and answer.types is None else "query"
        try:
            table = self._execute(record.sql)
        except (EngineError, Unsupported) as e:
            failed = answer is not None and answer.error is not None
            return RecordRun(record.line, kind, None if failed else f"failed: {_first_line(e)}")
        if answer is not None and answer.error is not None:
            return RecordRun(record.line, kind, "ran, where the file expects an error")
        if answer is None:
            return RecordRun(record.line, kind)
        return RecordRun(record.line, kind, self._compare(answer, table))

    def _execute(self, sql: str) -> pa.Table:
        text = sql.strip().rstrip(";")
        if self.through_model and text.upper().startswith(("SELECT", "WITH")):
            from harness.sql.parser import parse

            text = self.engine.render(parse(text))
        return self.engine.run({}, text)

    def _compare(self, answer: Answer, table: pa.Table) -> str | None:
        types = [f.type for f in table.schema]
        letters = "".join(self.fmt.letter(t) for t in types)
        if answer.types is not None and answer.types != letters:
            return f"type letters: the file's {answer.types}, the engine's {letters}"
        got = [tuple(cell_value(self.fmt.cell(v, t)) for v, t in zip(row.values(), types, strict=True))
               for row in table.to_pylist()]
        want = list(answer.rows or ())
        got, want = _sorted(got, answer.sort), _sorted(want, answer.sort)
        numeric = [pa.types.is_floating(t) or pa.types.is_decimal(t) for t in types]
        if len(got) != len(want) or not all(self._same(g, w, numeric) for g, w in zip(got, want, strict=True)):
            return f"rows: the file's {_lines(want)}, the engine's {_lines(got)}"
        return None

    def _same(self, got: Row, want: Row, numeric: list[bool]) -> bool:
        if got == want:
            return True
        if not self.fmt.approximate_numbers or len(got) != len(want) or len(got) != len(numeric):
            return False
        return all(g == w or (n and _close(g, w)) for g, w, n in zip(got, want, numeric, strict=True))


def _sorted(rows: list[Row], mode: str | None) -> list[Row]:
    if mode == "rowsort":
        return sorted(rows, key=lambda r: [_text(v).encode() for v in r])
    if mode == "valuesort":
        values = sorted((_text(v) for r in rows for v in r), key=str.encode)
        return [(v,) for v in values]
    return rows


def _text(value: str | None) -> str:
    return "NULL" if value is None else value


def _lines(rows: list[Row]) -> list[str]:
    return [" ".join(_text(v) for v in r) for r in rows]


def _close(a: str | None, b: str | None) -> bool:
    try:
        x, y = float(_text(a)), float(_text(b))
    except ValueError:
        return False
    return math.isclose(x, y, rel_tol=1e-14, abs_tol=1e-300)


def _first_line(error: Exception) -> str:
    text = getattr(error, "message", None) or str(error) or type(error).__name__
    return text.strip().splitlines()[0] if text.strip() else type(error).__name__
