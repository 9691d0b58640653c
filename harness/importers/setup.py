"""The setup of one test file, run on the materialising engine as it comes, and
which of it a query depends on.

Each setup statement is run in file order on one engine connection, so a
query's tables are read back exactly as the file's statements left them at
that point (a CREATE TABLE AS, an INSERT ... SELECT or a view carries the
tables it reads along). A statement that failed there makes a setup failure of
the queries that depend on it, and of no other: a query depends on the
statements that wrote the tables it reads, and on what those read, transitively.

A test file is untrusted input: its setup runs on a connection with file access
off (`Engine.deny_file_access`: the engine's own switches), so it can read no
file into a table and write none. A statement refused for that is said at its
own line, whether or not a query depends on it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa

from harness.core.errors import EngineError, FileAccessDenied
from harness.engines.base import Engine
from harness.importers.statements import first_word, names_in
from harness.sql.tables import target_table

# Why a statement of an imported file was refused, the same on every engine.
FILE_ACCESS_OFF = "file access is off for imported files"


class SetupFailed(Exception):
    """A query's tables cannot be materialised; the message says why (counted by it)."""


@dataclass(frozen=True)
class Step:
    line: int
    target: str | None  # the table it creates or changes
    reads: frozenset[str]  # the known tables it names
    error: str | None  # the engine's message when it failed there


class Setup:
    def __init__(self, engine: Engine) -> None:
        engine.deny_file_access()
        self.engine = engine
        self.steps: list[Step] = []
        self.created: set[str] = set()

    def run(self, sql: str, line: int) -> str | None:
        """Run a setup statement; why it was refused for reaching outside the database, or None."""
        refused = None
        try:
            self.engine.run({}, sql)
            error = None
        except FileAccessDenied as e:
            error = refused = f"{FILE_ACCESS_OFF} ({self.engine.name}: {_first_line(e)})"
        except EngineError as e:
            error = _first_line(e)
        self._add(sql, line, error)
        return refused

    def refuse(self, sql: str, line: int) -> str:
        """A statement whose whole job lies outside the database (ATTACH, INSTALL,
        LOAD, ...): not run; why."""
        reason = f"{FILE_ACCESS_OFF} ({first_word(sql).upper()} is not run)"
        self._add(sql, line, reason)
        return reason

    def _add(self, sql: str, line: int, error: str | None) -> None:
        target = target_table(sql)
        reads = frozenset((names_in(sql) & self.created) - {target})
        self.steps.append(Step(line, target, reads, error))
        if target is not None:
            self.created.add(target)

    def failure(self, tables: Iterable[str]) -> str | None:
        """Why the tables cannot be read as the file meant them, or None."""
        needed = set(tables)
        missing = sorted(needed - self.created)
        if missing:
            return f"reads {', '.join(missing)}, which no statement before it creates"
        for step in reversed(self.steps):
            if step.target in needed:
                if step.error is not None:
                    return f"setup statement at line {step.line} failed on {self.engine.name}: {step.error}"
                needed |= step.reads
        return None

    def read_back(self, name: str) -> pa.Table:
        try:
            return self.engine.run({}, f"SELECT * FROM {self.engine.dialect.quote(name)}")
        except EngineError as e:
            raise SetupFailed(f"reading {name} back from {self.engine.name}: {_first_line(e)}") from None

    def reset(self) -> None:
        """Forget the file's tables: the next file starts on an empty database."""
        self.engine.close()
        self.steps, self.created = [], set()


def _first_line(error: EngineError) -> str:
    return error.message.splitlines()[0] if error.message else type(error).__name__
