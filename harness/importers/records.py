"""What a source format's reader gives: the records of one test file, in order.

A reader never runs anything and never judges SQL: it says what the file holds
(a statement run for its effect, a query with its recorded answer, a record it
skipped and why). Which statements are setup and which queries are window
queries is decided once, in `pipeline`, for every format alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Answer:
    """What the source recorded for a statement: rows (each value the text the
    source printed, None for NULL) or an error (its message or pattern, maybe "")."""

    rows: tuple[tuple[str | None, ...], ...] | None = None
    error: str | None = None
    # slt's sort mode; None: decided from the query (nosort under ORDER BY, else rowsort).
    sort: str | None = None
    columns: tuple[str, ...] | None = None
    types: str | None = None  # slt's type letters (I, R, T, ...)

    def doc(self) -> dict:
        """The `source_answer` fields this answer fills (cases/README.md)."""
        out: dict = {}
        if self.columns is not None:
            out["columns"] = list(self.columns)
        if self.types is not None:
            out["types"] = list(self.types)
        if self.error is not None:
            out["error"] = self.error
        else:
            out["rows"] = [list(r) for r in self.rows or ()]
        return out


@dataclass(frozen=True)
class Record:
    """One statement of a test file: its SQL, the line it starts on, and what the
    source expects of it. `answer` None: a statement run for its effect only
    (`statement ok`, a psql statement that printed nothing)."""

    sql: str
    line: int
    answer: Answer | None = None
    sql_line: int | None = None  # the line the SQL starts on, when not `line` (slt: the next)

    @property
    def first_sql_line(self) -> int:
        return self.sql_line if self.sql_line is not None else self.line


@dataclass(frozen=True)
class Skip:
    """A record (or directive) not imported, and why: counted by reason."""

    reason: str
    line: int
    file: str | None = None  # the file `line` is in, when not the source's own (Spark's .sql.out)


@dataclass
class SourceFile:
    """A test file as its reader saw it."""

    path: Path  # the file the SQL was read from
    origin: str  # how `source_answer.origin` names it (as given on the command line)
    out_stem: Path  # where its cases go under --out, without suffix (mirrors the source)
    engine: str  # the engine whose suite recorded the answers
    format: str
    records: list[Record] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    description: str | None = None  # the file's own (DuckDB's `# name:` / `# description:`)
