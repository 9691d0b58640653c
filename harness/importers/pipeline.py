"""Import test files: read each (its format's reader), keep its window queries
with the tables they read (materialised on an engine by the file's own setup),
and write one case per query; count everything read, kept and left out."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from harness.core.errors import InvalidInput
from harness.core.model import Query, WindowExpr, walk
from harness.engines.base import Engine
from harness.importers import pg_regress, slt, spark_golden
from harness.importers.materialise import as_case_table
from harness.importers.records import Record, SourceFile
from harness.importers.settings import Settings
from harness.importers.setup import Setup, SetupFailed
from harness.importers.statements import Kind, first_word, kind_of
from harness.importers.write import answer_error, case_document, write_case
from harness.sql import parse
from harness.sql.constructs import construct_at
from harness.sql.script import strip_comments
from harness.sql.tables import tables_read

Reader = Callable[[Path, str, Path, str | None], SourceFile]


@dataclass(frozen=True)
class Format:
    read: Reader
    is_test_file: Callable[[Path], bool]  # which files of a directory it reads


FORMATS: dict[str, Format] = {
    "slt": Format(slt.read_slt, lambda p: p.suffix in slt.SUFFIXES),
    "pg-regress": Format(pg_regress.read_pg_regress, lambda p: p.suffix == ".sql" and p.parent.name == "sql"),
    "spark-golden": Format(spark_golden.read_spark_golden, lambda p: p.suffix == ".sql" and "inputs" in p.parts),
}
_OVER = re.compile(r"\bover\b", re.IGNORECASE)
_TRANSACTION = {"begin", "commit", "rollback", "start", "end", "abort"}


@dataclass
class ImportCounts:
    """What an import read and kept. Each reason counter counts queries (or
    records, for `skipped`; and for `setup_failures`, the setup statements
    refused because file access is off, besides the queries) by reason, `not_expressible` by construct
    (`INTERSECT`, `DISTINCT ON`); `first` names where each first came up,
    `reasons` the reason a construct was first not expressible for."""

    materialised_on: str = ""
    files: int = 0
    records: int = 0
    window_queries: int = 0
    imported: int = 0
    not_expressible: Counter[str] = field(default_factory=Counter)
    setup_failures: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    first: dict[str, str] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    written: list[Path] = field(default_factory=list)

    def note(self, counter: Counter[str], reason: str, where: str) -> None:
        counter[reason] += 1
        self.first.setdefault(reason, where)

    def note_construct(self, construct: str, reason: str, where: str) -> None:
        self.note(self.not_expressible, construct, where)
        self.reasons.setdefault(construct, reason)

    def as_json(self) -> dict:
        def grouped(counter: Counter[str]) -> list[dict]:
            return [{"reason": r, "count": n, "first": self.first.get(r)} for r, n in counter.most_common()]
        constructs = [{"construct": c, "reason": self.reasons[c], "count": n, "first": self.first.get(c)}
                      for c, n in self.not_expressible.most_common()]
        return {"materialised_on": self.materialised_on, "files": self.files, "records": self.records,
                "window_queries": self.window_queries, "imported": self.imported,
                "not_expressible": constructs,
                "setup_failures": grouped(self.setup_failures), "skipped": grouped(self.skipped),
                "cases": [str(p) for p in self.written]}


def import_paths(paths: Iterable[str], fmt: str, out: Path, engine: Engine,
                 source_engine: str | None = None) -> ImportCounts:
    """Import the test files under `paths` (files or directories) into cases under `out`.
    InvalidInput for an unknown format or a path that does not exist."""
    if fmt not in FORMATS:
        raise InvalidInput(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})", "--format")
    setup = Setup(engine)  # before the engine starts: one that cannot turn file access off never does
    counts = ImportCounts(materialised_on=f"{engine.name} {engine.version()}")
    for path, origin, stem in list(test_files(paths, FORMATS[fmt])):
        source = FORMATS[fmt].read(path, origin, stem, source_engine)
        _FileImport(source, setup, out, counts).run()
    return counts


def test_files(paths: Iterable[str], fmt: Format) -> Iterator[tuple[Path, str, Path]]:
    """(file, its name as given, where its cases go under --out) for each test file."""
    for raw in paths:
        root = Path(raw)
        if root.is_file():
            yield root, str(root), Path(root.stem)
        elif root.is_dir():
            for f in sorted(p for p in root.rglob("*") if p.is_file() and fmt.is_test_file(p)):
                yield f, str(f), f.relative_to(root).with_suffix("")
        else:
            raise InvalidInput(f"no such file or directory: {raw}")


class _FileImport:
    def __init__(self, source: SourceFile, setup: Setup, out: Path, counts: ImportCounts) -> None:
        self.source, self.setup, self.out, self.counts = source, setup, out, counts
        self.settings = Settings()
        self.names: set[str] = set()

    def run(self) -> None:
        self.setup.reset()
        self.counts.files += 1
        self.counts.records += len(self.source.records) + len(self.source.skipped)
        for skip in self.source.skipped:
            self.counts.note(self.counts.skipped, skip.reason, f"{skip.file}:{skip.line}" if skip.file else self._where(skip.line))
        for record in self.source.records:
            self._record(record)

    def _where(self, line: int, column: int | None = None) -> str:
        return f"{self.source.origin}:{line}" + (f":{column}" if column else "")

    def _record(self, record: Record) -> None:
        kind = kind_of(record.sql)
        if kind is Kind.QUERY:
            self._query(record)
        elif kind is Kind.SETTING:
            self.settings.apply(record.sql)
        elif answer_error(record.answer):
            return  # a statement the source expects to fail changed nothing there: not run
        elif kind is Kind.EXTERNAL:
            self._refused(self.setup.refuse(record.sql, record.line), record)
        elif kind is Kind.SETUP or first_word(record.sql) in _TRANSACTION:
            self._refused(self.setup.run(record.sql, record.line), record)

    def _refused(self, reason: str | None, record: Record) -> None:
        """A setup statement refused for reaching outside the database: a setup
        failure at its own line, even when no query reads what it made."""
        if reason is not None:
            self.counts.note(self.counts.setup_failures, reason, self._where(record.line))

    def _query(self, record: Record) -> None:
        if not _OVER.search(strip_comments(record.sql)):
            return
        try:
            query = parse(record.sql)
        except InvalidInput as e:
            self.counts.window_queries += 1
            self._not_expressible(e, record)
            return
        if not any(isinstance(n, WindowExpr) for n in walk(query)):
            return  # OVER as a name, not a window
        self.counts.window_queries += 1
        why = self._why_not(record)
        if why is not None:
            self.counts.note(self.counts.skipped, why, self._where(record.line))
            return
        self._import(record, query)

    def _why_not(self, record: Record) -> str | None:
        if record.answer is None:
            return "window query without a recorded answer"
        if self.settings.changed:
            return f"window query after the session setting {self.settings.changed[0]}"
        return None

    def _not_expressible(self, e: InvalidInput, record: Record) -> None:
        """Counted by the construct at the parser's place; by the reason when the
        error names no place (nothing in the text to name)."""
        reason, line, column = str(e), record.first_sql_line, None
        construct = reason
        if e.where and re.fullmatch(r"\d+:\d+", e.where):
            reason = construct = reason[len(e.where) + 2:]
            at_line, column = (int(x) for x in e.where.split(":"))
            construct = construct_at(record.sql, at_line, column)
            line += at_line - 1
        self.counts.note_construct(construct, reason, self._where(line, column))

    def _import(self, record: Record, query: Query) -> None:
        names = tables_read(query)
        failure = self.setup.failure(names)
        try:
            if failure is not None:
                raise SetupFailed(failure)
            tables = {n: as_case_table(n, self.setup.read_back(n)) for n in sorted(names)}
        except SetupFailed as e:
            self.counts.note(self.counts.setup_failures, _without_line(str(e)), self._where(record.line))
            return
        path = self._case_path(record)
        try:
            write_case(case_document(self.source, record, query, tables), path)
        except InvalidInput as e:
            reason = "the case loader refuses it: " + str(e).removeprefix(f"{path}: ")
            self.counts.note_construct(reason, reason, self._where(record.line))
            return
        self.counts.imported += 1
        self.counts.written.append(path)

    def _case_path(self, record: Record) -> Path:
        """`<out>/<the file's path>/l<line>.yaml`; a loop's later iterations add `_2`, `_3`, ..."""
        name, n = f"l{record.line}", 1
        while name in self.names:
            n += 1
            name = f"l{record.line}_{n}"
        self.names.add(name)
        return self.out / self.source.out_stem / f"{name}.yaml"


def _without_line(reason: str) -> str:
    """A setup failure's reason without its line, so alike failures count together."""
    return re.sub(r"setup statement at line \d+ failed", "a setup statement failed", reason)
