"""Case files: load, validate and represent a conformance case.

The format is documented in cases/README.md. Every error names the file and
the field, so a user can fix a malformed case without reading this code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import pyarrow as pa

from harness.cases.source_answer import check_source_answer
from harness.cases.tables import coerce_value, load_tables, rows_sink
from harness.cases.tables import require as _require
from harness.cases.yamldoc import read_yaml
from harness.core.errors import HarnessError, InvalidCase, InvalidInput, InvalidQuery
from harness.core.model import Query, TableSchema
from harness.core.names import model_name_problem

__all__ = ["Case", "Expected", "ListedCase", "case_from_doc", "case_id", "coerce_value", "discover",
           "list_cases", "load_case", "load_cases"]

CASE_SUFFIXES = (".yaml", ".yml")
C = TypeVar("C", "Case", "ListedCase")
_KNOWN_FIELDS = {
    "description", "tags", "tables", "sql", "expected", "error", "profile", "id", "finding",
    "source_answer",
}


@dataclass(frozen=True)
class Expected:
    columns: tuple[str, ...]
    rows: tuple[tuple[object, ...], ...]


@dataclass(frozen=True, eq=False)
class Case:
    id: str
    description: str
    tags: tuple[str, ...]
    schemas: tuple[TableSchema, ...]
    tables: dict[str, pa.Table]
    sql: str
    query: Query
    expected: Expected | None = None
    # Why the query is invalid by definition (under the case's profile), for
    # cases that expect an error instead of rows.
    error: str | None = None
    profile: str | None = None
    path: Path | None = field(default=None, compare=False)
    # Where a generated case came from (seeds, versions, each engine's SQL and
    # answer): a record for people, never read by a verdict. A case with one
    # may omit `expected`: the reference is then the oracle.
    finding: dict | None = field(default=None, compare=False)
    # The answer an engine's own test suite recorded (cases/README.md), as read:
    # judged beside the engines' verdicts, never as the expected rows. A case
    # with one may omit `expected`: the reference is then the oracle.
    source_answer: dict | None = field(default=None, compare=False)
    # Where a case read from a `.sql` file came from (FILE:LINE:COLUMN of its
    # query, `harness.cases.sqlfile`): such a case has neither `expected` nor a
    # finding record, and the reference is its oracle. A YAML case has none.
    origin: str | None = field(default=None, compare=False)


def discover(paths: Iterable[str | Path]) -> list[Path]:
    """Case files under the given files and directories, sorted, without duplicates."""
    found: set[Path] = set()
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found.update(f for f in p.rglob("*") if f.suffix in CASE_SUFFIXES and f.is_file())
        elif p.is_file():
            found.add(p)
        else:
            raise InvalidInput(f"no such case file or directory: {p}")
    return sorted(found)


def case_id(path: Path, roots: Iterable[Path]) -> str:
    """The path under the nearest enclosing `cases` folder, else under the given
    root, without its suffix: the same case has the same id however it is run."""
    resolved = path.resolve()
    corpus = next((p for p in resolved.parents if p.name == "cases"), None)
    if corpus is not None:
        return resolved.relative_to(corpus).with_suffix("").as_posix()
    for root in roots:
        root = root.resolve()
        base = root if root.is_dir() else root.parent
        if resolved.is_relative_to(base):
            return resolved.relative_to(base).with_suffix("").as_posix()
    return path.stem


def load_case(path: Path, case_id_: str | None = None) -> Case:
    """Read and validate one case file (a table's rows go into Arrow as they are read)."""
    return case_from_doc(read_yaml(path, InvalidCase, sinks=rows_sink(str(path))), path, case_id_)


def case_from_doc(doc: object, path: Path, case_id_: str | None = None) -> Case:
    """Validate a case file's document, already read from `path`, into a Case."""
    where = str(path)
    _check_fields(doc, where)
    return _build_case(doc, where, path, case_id_ or str(doc.get("id") or path.stem))


def _check_fields(doc: object, where: str) -> None:
    if not isinstance(doc, dict):
        raise InvalidCase("a case file must be a YAML mapping", where)
    unknown = set(doc) - _KNOWN_FIELDS
    if unknown:
        raise InvalidCase(f"unknown field(s) {sorted(unknown, key=str)}", where)


@dataclass(frozen=True)
class ListedCase:
    """What the corpus listing shows of a case: its id and description."""

    id: str
    description: str
    path: Path


def list_case(path: Path, case_id_: str) -> ListedCase:
    """A case file's id and description, reading nothing else: its other fields'
    values are left unparsed and unchecked (`load_case` checks them)."""
    doc = read_yaml(path, InvalidCase, only={"description"})
    where = str(path)
    _check_fields(doc, where)
    return ListedCase(case_id_, _require(doc, "description", str, where), path)


def _build_case(doc: dict, where: str, path: Path, cid: str) -> Case:
    from harness.sql import parse

    schemas, tables = load_tables(_require(doc, "tables", dict, where), where)
    sql = _require(doc, "sql", str, where)
    # A case that expects an error (its own, or its source's) may hold a frame the
    # syntax rules forbid, or a name that does not resolve: the very error expected.
    source = doc.get("source_answer")
    expects_error = doc.get("error") is not None or (isinstance(source, dict) and "error" in source)
    try:
        query = parse(sql, keep_invalid=expects_error)
    except InvalidInput as e:
        raise InvalidCase(str(e), f"{where}: sql") from None
    if (problem := model_name_problem(query)) is not None:
        raise InvalidCase(problem, f"{where}: sql")
    error = doc.get("error")
    if not expects_error:
        _check_names(query, tables, where)
    expected = _load_expected(doc.get("expected"), where)
    if error is not None and (not isinstance(error, str) or expected is not None):
        raise InvalidCase("must be a string saying why the query fails, without `expected`", f"{where}: error")
    finding = doc.get("finding")
    if finding is not None and not isinstance(finding, dict):
        raise InvalidCase("must be a mapping (the record of a generated case)", f"{where}: finding")
    source_answer = check_source_answer(doc.get("source_answer"), where)
    if error is None and expected is None and finding is None and source_answer is None:
        raise InvalidCase("missing (or give `error` for a query that must fail)", f"{where}: expected")
    tags = doc.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise InvalidCase("must be a list of strings", f"{where}: tags")
    return Case(
        id=cid,
        description=_require(doc, "description", str, where),
        tags=tuple(tags),
        schemas=schemas,
        tables=tables,
        sql=sql,
        query=query,
        expected=expected,
        error=error,
        profile=_profile_name(doc.get("profile"), where),
        path=path,
        finding=finding,
        source_answer=source_answer,
    )


def _check_names(query: Query, tables: dict[str, pa.Table], where: str) -> None:
    """Every table and column the query names exists: the reference resolves the names
    over empty tables of the case's columns (no rows, so it costs nothing), and a typo
    is this file's error, said now, rather than a failure in the middle of a run."""
    from reference_impl import evaluate

    try:
        evaluate(query, {name: table.slice(0, 0) for name, table in tables.items()})
    except InvalidQuery as e:
        raise InvalidCase(str(e), f"{where}: sql") from None
    except HarnessError:
        pass  # invalid by definition, or a gap in the reference: judged when the case runs


def _profile_name(raw: object, where: str) -> str | None:
    if raw is None:
        return None
    from harness.engines.registry import engine_names

    known = ["standard", *engine_names()]
    if raw not in known:
        raise InvalidCase(f"unknown profile {raw!r} (known: {', '.join(known)})", f"{where}: profile")
    return str(raw)


def _load_expected(raw: object, where: str) -> Expected | None:
    if raw is None:
        return None
    at = f"{where}: expected"
    if not isinstance(raw, dict):
        raise InvalidCase("must be a mapping with columns and rows", at)
    columns = _require(raw, "columns", list, at)
    rows = _require(raw, "rows", list, at)
    for i, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != len(columns):
            raise InvalidCase(f"must be a list of {len(columns)} values", f"{at}.rows[{i}]")
    return Expected(tuple(str(c) for c in columns), tuple(tuple(r) for r in rows))


def load_cases(paths: Iterable[str | Path]) -> tuple[list[Case], list[InvalidInput]]:
    """Load every case under `paths`; malformed files are returned as errors, not raised."""
    return _each_case(paths, load_case)


def list_cases(paths: Iterable[str | Path]) -> tuple[list[ListedCase], list[InvalidInput]]:
    """`load_cases` for a listing: each case's id and description only."""
    return _each_case(paths, list_case)


def _each_case(paths: Iterable[str | Path], read: Callable[[Path, str], C]) -> tuple[list[C], list[InvalidInput]]:
    roots = [Path(p) for p in paths]
    cases, errors = [], []
    for path in discover(roots):
        try:
            cases.append(read(path, case_id(path, roots)))
        except InvalidInput as e:
            errors.append(e)
    seen: dict[str, Path | None] = {}
    for c in cases:
        if c.id in seen:
            errors.append(InvalidCase(f"duplicate case id {c.id!r} (also {seen[c.id]})", str(c.path)))
        seen[c.id] = c.path
    return cases, errors
