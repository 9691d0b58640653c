"""A `.sql` file as cases: its setup statements build tables, each query is a case.

Statements run in file order over a catalog of tables (those of `--tables`,
then what the file's setup makes). Each query (`SELECT ...`, `WITH ...`)
becomes the case `<file stem>/q<N>`, N counting the file's queries from 1
(those left out too, so a query keeps its id when one above it changes),
holding the tables it reads as the setup left them, judged against the
reference (no expected rows).

A statement that cannot become part of a case is never dropped silently:
- not expressible (`LeftOut`): the model cannot hold it (the canonical
  parser stops at a construct, an unknown statement kind, a type the model
  has no counterpart of, a query the reference cannot evaluate). Reported
  with its file:line:column and the run goes on;
- invalid (`InvalidCase`): it is read but wrong (a table or column that does
  not exist, a value that does not fit its column, a table created twice):
  the file's error, reported as an invalid case file is (exit 2 at the end).
Either way the table it would have made or changed is marked, and every later
statement reading that table is left out too, saying which statement it
depends on: it would otherwise run on other rows than the file means.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import pyarrow as pa

from harness.cases.case import Case
from harness.cases.sqlsetup import (
    CreateTable,
    CreateTableAs,
    DropTable,
    Insert,
    QueryStatement,
    read_statement,
)
from harness.cases.tables import coerce_value
from harness.core.errors import (
    EvaluationError,
    HarnessError,
    InvalidCase,
    InvalidInput,
    InvalidQuery,
    NestedTooDeeply,
    ReferenceGap,
)
from harness.core.model import ColumnDef, Literal, Query, Select, SelectItem, TableSchema, Values
from harness.core.names import model_name_problem, schema_problem
from harness.core.source_files import read_source
from harness.core.types import from_arrow, to_arrow
from harness.sql.constructs import construct_at
from harness.sql.script import Statement, split_statements
from harness.sql.tables import tables_read, target_table

SQL_SUFFIX = ".sql"
# A query's first word (or parenthesis): how a query is counted even when it cannot be read.
_QUERY_START = re.compile(r"\(|(?:select|with|values)\b", re.IGNORECASE)


@dataclass(frozen=True)
class LeftOut:
    """A statement the model cannot express: where the construct is, and why."""

    where: str  # FILE:LINE:COLUMN
    reason: str
    construct: str  # the text from that place to the end of its line
    # The construct there by name (`INTERSECT`, `DISTINCT ON`: harness.sql.constructs);
    # "" when the statement is left out for another's sake or its error has no place.
    construct_name: str = ""

    def __str__(self) -> str:
        shown = self.construct if len(self.construct) <= 60 else self.construct[:57] + "..."
        return (f"{self.where}: not expressible: {self.reason}"
                + (f" [construct: {self.construct_name}]" if self.construct_name else "")
                + (f" [at: {shown}]" if shown else ""))


@dataclass
class SqlFileCases:
    """What the `.sql` files gave: cases, invalid statements, statements left out."""

    cases: list[Case] = field(default_factory=list)
    invalid: list[InvalidInput] = field(default_factory=list)
    left_out: list[LeftOut] = field(default_factory=list)
    statements: int = 0
    files: int = 0

    def as_json(self) -> dict:
        return {"files": self.files, "statements": self.statements, "cases": len(self.cases),
                "not_expressible": [{"where": lo.where, "reason": lo.reason, "construct": lo.construct,
                                     "construct_name": lo.construct_name} for lo in self.left_out],
                "invalid": [str(e) for e in self.invalid]}

    def summary_line(self) -> str:
        return (f"sql files: {self.files} read, {self.statements} statements: {len(self.cases)} queries "
                f"run as cases, {len(self.left_out)} not expressible, {len(self.invalid)} invalid "
                "(each reported on stderr)")


def sql_paths(paths: Iterable[str | Path]) -> tuple[list[Path], list[Path]]:
    """The `.sql` files of `paths` (given, or under a directory given), sorted, and
    the paths left for the case-file reader (directories and the other files)."""
    sql: set[Path] = set()
    others: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file() and path.suffix.lower() == SQL_SUFFIX:
            sql.add(path)
            continue
        if path.is_dir():
            sql.update(p for p in path.rglob("*") if p.suffix.lower() == SQL_SUFFIX and p.is_file())
        others.append(path)
    return sorted(sql), others


@dataclass
class _Table:
    schema: TableSchema
    data: pa.Table


class _Broken(Exception):
    """A statement depends on one left out: it is left out, saying which."""


@dataclass
class _File:
    """One file's reading: its catalog and where each statement is."""

    path: Path
    text: str
    tables: dict[str, _Table]
    out: SqlFileCases
    # Tables a statement left out would have made or changed -> where that statement is.
    broken: dict[str, str] = field(default_factory=dict)
    queries: int = 0

    def where(self, s: Statement, line: int = 1, column: int = 1) -> str:
        at_line, at_column = s.at(line, column)
        return f"{self.path}:{at_line}:{at_column}"

    def construct(self, s: Statement, line: int, column: int) -> str:
        rest = s.text.split("\n")[line - 1][column - 1:] if line <= s.text.count("\n") + 1 else ""
        return rest.strip()


def read_sql_files(paths: Iterable[Path], tables: Mapping[str, pa.Table] | None = None) -> SqlFileCases:
    """The cases of each `.sql` file of `paths`, each file over `tables` (--tables) and its own setup."""
    out = SqlFileCases()
    for path in paths:
        out.files += 1
        try:
            text = read_source(path, strict=True)
        except (OSError, UnicodeDecodeError) as e:
            # The reason alone: an OSError's text names the path again.
            reason = e.strerror if isinstance(e, OSError) else f"not UTF-8 ({e.reason} at byte {e.start})"
            out.invalid.append(InvalidCase(f"cannot read it: {reason}", str(path)))
            continue
        base = {name: _Table(_schema_of(name, t, str(path)), t) for name, t in (tables or {}).items()}
        _read_file(_File(path, text, base, out))
    return out


def _read_file(f: _File) -> None:
    try:
        statements = split_statements(f.text, str(f.path))
    except InvalidCase as e:
        f.out.invalid.append(e)
        return
    for s in statements:
        f.out.statements += 1
        _read_one(f, s)


def _read_one(f: _File, s: Statement) -> None:
    is_query = _QUERY_START.match(s.text) is not None
    f.queries += is_query
    try:
        _run(f, s, _named_well(read_statement(s.text)))
    except NestedTooDeeply as e:
        # Past the harness's documented limit, not a construct the model lacks: the file's error.
        line, column = _position(e) or (1, 1)
        f.out.invalid.append(InvalidCase(_message(e), f.where(s, line, column)))
        _mark(f, s, is_query)
    except InvalidQuery as e:
        place = _position(e)
        line, column = place or (1, 1)
        name = construct_at(s.text, line, column) if place else ""
        f.out.left_out.append(LeftOut(f.where(s, line, column), _message(e), f.construct(s, line, column), name))
        _mark(f, s, is_query)
    except _Broken as e:
        f.out.left_out.append(LeftOut(f.where(s), str(e), s.first_line))
        _mark(f, s, is_query)
    except InvalidInput as e:
        f.out.invalid.append(InvalidCase(str(e), f.where(s)))
        _mark(f, s, is_query)


def _named_well(statement: object) -> object:
    """`statement`, unless a name it gives or reads is one the harness refuses (the file's error)."""
    problem = schema_problem(statement.schema) if isinstance(statement, CreateTable) else None
    if (problem := problem or model_name_problem(statement)) is not None:
        raise InvalidCase(problem)
    return statement


def _position(e: InvalidQuery) -> tuple[int, int] | None:
    """The line:column (of the statement) an InvalidQuery names; None when it names none."""
    try:
        line, column = (int(part) for part in (e.where or "").split(":"))
        return line, column
    except ValueError:
        return None


def _message(e: InvalidInput) -> str:
    text = str(e)
    return text[len(e.where) + 2:] if e.where and text.startswith(f"{e.where}: ") else text


def _mark(f: _File, s: Statement, is_query: bool) -> None:
    if not is_query and (name := target_table(s.text)) is not None:
        # A table already left out keeps the first statement that left it out: the cause.
        f.broken.setdefault(name, f.where(s))
        f.tables.pop(name, None)


def _run(f: _File, s: Statement, statement: object) -> None:
    if isinstance(statement, QueryStatement):
        f.out.cases.append(_query_case(f, s, statement.query))
    elif isinstance(statement, CreateTable):
        _create(f, statement.schema.name, statement.or_replace, statement.if_not_exists,
                lambda: _Table(statement.schema, _empty(statement.schema)))
    elif isinstance(statement, CreateTableAs):
        _create(f, statement.name, statement.or_replace, statement.if_not_exists,
                lambda: _materialised(f, statement.name, statement.query))
    elif isinstance(statement, Insert):
        _insert(f, s, statement)
    elif isinstance(statement, DropTable):
        _drop(f, statement)


def _create(f: _File, name: str, or_replace: bool, if_not_exists: bool, make) -> None:
    if name in f.tables and not or_replace:
        if if_not_exists:
            return
        raise InvalidCase(f"table {name!r} exists already (DROP it first, or CREATE OR REPLACE)")
    f.tables[name] = make()
    f.broken.pop(name, None)


def _drop(f: _File, statement: DropTable) -> None:
    for name in statement.names:
        if name not in f.tables and name not in f.broken and not statement.if_exists:
            raise InvalidCase(f"no table {name!r} to drop")
        f.tables.pop(name, None)
        f.broken.pop(name, None)


def _reads(f: _File, query: Query) -> dict[str, _Table]:
    """The tables `query` reads, each as the setup left it; _Broken when one
    depends on a statement left out, InvalidCase when one does not exist."""
    names = sorted(tables_read(query, set(f.tables)))
    for name in names:
        if name in f.broken:
            raise _Broken(f"reads table {name!r}, which the statement at {f.broken[name]} left out "
                          "(reported above)")
        if name not in f.tables:
            raise InvalidCase(f"no table {name!r} (none of the statements above, nor --tables, makes it)")
    return {name: f.tables[name] for name in names}


def _query_case(f: _File, s: Statement, query: Query) -> Case:
    read = _reads(f, query)
    tables = {name: t.data.combine_chunks() for name, t in read.items()}
    _check_names(query, tables)
    return Case(id=f"{f.path.stem}/q{f.queries}", description=s.comment or s.first_line, tags=(),
                schemas=tuple(t.schema for t in read.values()), tables=tables, sql=s.text + "\n",
                query=query, path=f.path, origin=f.where(s))


def _check_names(query: Query, tables: dict[str, pa.Table]) -> None:
    """As a YAML case's: every column the query names exists (the reference over
    the tables' columns without rows); an error the reference finds only in
    the rows, or a gap of its own, is judged when the case runs."""
    from reference_impl import evaluate

    try:
        evaluate(query, {name: table.slice(0, 0) for name, table in tables.items()})
    except InvalidQuery as e:
        raise InvalidCase(_message(e)) from None
    except HarnessError:
        pass


def _evaluate(query: Query, tables: Mapping[str, pa.Table]) -> pa.Table:
    """The reference's answer to a setup statement's query: a gap of the reference
    is InvalidQuery (the harness cannot make the table), an error the query has by
    definition or a name it gets wrong is InvalidCase (the file's error)."""
    from reference_impl import evaluate

    try:
        return evaluate(query, tables).table
    except ReferenceGap as e:
        raise InvalidQuery(f"the reference cannot evaluate it: {e}") from None
    except (InvalidQuery, EvaluationError) as e:
        raise InvalidCase(str(e)) from None


def _materialised(f: _File, name: str, query: Query) -> _Table:
    data = _evaluate(query, {n: t.data for n, t in _reads(f, query).items()})
    return _Table(_schema_of(name, data, "CREATE TABLE AS"), data)


def _schema_of(name: str, table: pa.Table, where: str) -> TableSchema:
    names = table.column_names
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InvalidCase(f"table {name!r} would have two columns {repeated[0]!r} (give them aliases)", where)
    try:
        schema = TableSchema(name, tuple(ColumnDef(c.name, from_arrow(c.type)) for c in table.schema))
    except InvalidInput as e:
        raise InvalidQuery(f"table {name!r}: {e}") from None
    if (problem := schema_problem(schema)) is not None:
        raise InvalidCase(problem, where)
    return schema


def _empty(schema: TableSchema) -> pa.Table:
    return pa.schema([(c.name, to_arrow(c.type)) for c in schema.columns]).empty_table()


def _insert(f: _File, s: Statement, statement: Insert) -> None:
    if statement.name in f.broken:
        raise _Broken(f"inserts into table {statement.name!r}, which the statement at "
                      f"{f.broken[statement.name]} left out (reported above)")
    if statement.name not in f.tables:
        raise InvalidCase(f"no table {statement.name!r} to insert into (CREATE TABLE it first)")
    table = f.tables[statement.name]
    columns = _insert_columns(table.schema, statement.columns)
    rows = _source_rows(f, statement.source)
    width = len(columns)
    for i, row in enumerate(rows):
        if len(row) != width:
            raise InvalidCase(f"row {i + 1} has {len(row)} values, the columns {width}")
    new = _arrow_rows(table.schema, columns, rows)
    table.data = pa.concat_tables([table.data, new])


def _insert_columns(schema: TableSchema, named: tuple[str, ...] | None) -> list[str]:
    known = [c.name for c in schema.columns]
    if named is None:
        return known
    for name in named:
        if name not in known:
            raise InvalidCase(f"table {schema.name!r} has no column {name!r} (it has {', '.join(known)})")
    if len(set(named)) != len(named):
        raise InvalidCase("a column is named twice in the INSERT's column list")
    return list(named)


def _source_rows(f: _File, source: Query) -> list[tuple[object, ...]]:
    if isinstance(source, Values):
        return [tuple(_constant(e) for e in row) for row in source.rows]
    data = _evaluate(source, {n: t.data for n, t in _reads(f, source).items()})
    return [tuple(row.values()) for row in data.to_pylist()]


def _constant(expr: object) -> object:
    """A VALUES item's value: a literal as it is, any other expression (a CAST,
    an arithmetic) as the reference computes it over no table."""
    if isinstance(expr, Literal):
        return expr.value
    return _evaluate(Select((SelectItem(expr),)), {}).column(0)[0].as_py()


def _arrow_rows(schema: TableSchema, columns: list[str], rows: list[tuple[object, ...]]) -> pa.Table:
    """The inserted rows as a table of `schema`: a column the INSERT does not name is NULL."""
    arrays = []
    for column in schema.columns:
        j = columns.index(column.name) if column.name in columns else None
        values = [None if j is None else _column_value(row[j], column, i) for i, row in enumerate(rows)]
        if not column.nullable and None in values:
            raise InvalidCase(f"column {column.name!r} is NOT NULL; row {values.index(None) + 1} gives it NULL")
        arrays.append(pa.array(values, type=to_arrow(column.type)))
    return pa.Table.from_arrays(arrays, names=[c.name for c in schema.columns])


def _column_value(value: object, column: ColumnDef, row: int) -> object:
    """`value` as `column`'s value: an exact number converts to another numeric type
    when it fits exactly (and to a float), a string to a date or a timestamp as
    PostgreSQL's unknown-typed literals do; anything else is the file's error."""
    t, where = column.type, f"row {row + 1}, column {column.name!r}"
    if isinstance(value, Decimal) and t.is_integer:
        if value != value.to_integral_value():
            raise InvalidCase(f"{value} is not a whole number: it does not fit {t}", where)
        value = int(value)
    if isinstance(value, Decimal | int) and not isinstance(value, bool) and t.is_float:
        value = float(value)
    if isinstance(value, dt.datetime) and t.kind.value == "date":
        raise InvalidCase(f"{value} is a timestamp; the column is a DATE", where)
    return coerce_value(value, t, where)
