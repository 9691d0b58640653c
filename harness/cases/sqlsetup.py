"""One statement of a `.sql` file read into what it does: a query, or a setup
statement (CREATE TABLE, CREATE TABLE AS, INSERT, DROP TABLE).

The reading is the canonical parser's (`harness.sql`), extended by the few
setup statements; whatever it cannot read is an InvalidQuery at the
statement's own line:column, as the parser reports a query. Which tables a
statement reads and writes is `harness.sql.tables`'s to say.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.core.errors import InvalidInput, InvalidQuery
from harness.core.model import ColumnDef, Query, TableSchema, children
from harness.core.types import SqlType, parse_type_name
from harness.sql.expr_parser import at
from harness.sql.lexer import Kind
from harness.sql.parser import Parser

# Column constraints that change nothing a query can see once the rows obey them.
_NULLABILITY = ("null", "not")
# Words after a column's type that begin a constraint this reader does not take.
_CONSTRAINTS = {"primary", "unique", "default", "check", "references", "constraint", "collate",
                "generated", "auto_increment", "autoincrement", "identity"}
# Strings whose length limit changes nothing the reader's values can hold (a value
# too long for it would be the file's error on an engine, as here: none is checked).
_STRING_TYPES = {"varchar", "character varying", "string", "text"}
KINDS = "CREATE TABLE, CREATE TABLE AS, INSERT INTO ... VALUES / SELECT, DROP TABLE and queries"


@dataclass(frozen=True)
class CreateTable:
    schema: TableSchema
    or_replace: bool = False
    if_not_exists: bool = False


@dataclass(frozen=True)
class CreateTableAs:
    name: str
    query: Query
    or_replace: bool = False
    if_not_exists: bool = False


@dataclass(frozen=True)
class Insert:
    name: str
    columns: tuple[str, ...] | None  # None: every column, in order
    source: Query  # VALUES or a query


@dataclass(frozen=True)
class DropTable:
    names: tuple[str, ...]
    if_exists: bool = False


@dataclass(frozen=True)
class QueryStatement:
    query: Query


Statement = CreateTable | CreateTableAs | Insert | DropTable | QueryStatement


def read_statement(text: str) -> Statement:
    """`text` (one statement, without its `;`) read; InvalidQuery at line:column
    (of `text`) for what the model cannot express, an unknown kind included."""
    p = Parser(text)
    first = p.c.peek()
    if first.kind is Kind.WORD and first.value in ("select", "with", "values") or p.c.at_op("("):
        statement: Statement = QueryStatement(p.query())
    elif p.c.at_word("create"):
        statement = _create(p)
    elif p.c.at_word("insert"):
        statement = _insert(p)
    elif p.c.at_word("drop"):
        statement = _drop(p)
    else:
        raise _unknown_kind(p)
    if p.c.peek().kind is not Kind.END:
        raise p.c.error("expected the end of the statement")
    p.finish(*children(statement))  # the statement's node is no level of its query
    return statement


def _unknown_kind(p: Parser) -> InvalidQuery:
    tokens = p.c.tokens
    words = [t.text.upper() for t in tokens[:2] if t.kind is Kind.WORD]
    kind = " ".join(words[:2] if words[:1] in (["CREATE"], ["ALTER"], ["DROP"]) else words[:1])
    return InvalidQuery(f"{kind or tokens[0].describe()} is not a statement the harness reads "
                        f"(it reads {KINDS})", at(tokens[0]))


def _create(p: Parser) -> CreateTable | CreateTableAs:
    p.c.expect_word("create")
    or_replace = p.c.accept_word("or", "replace")
    p.c.accept_word("temporary") or p.c.accept_word("temp")
    if not p.c.at_word("table"):
        raise _unknown_kind(p)
    p.c.advance()
    if_not_exists = p.c.accept_word("if", "not", "exists")
    name = _table_name(p)
    if p.c.accept_word("as"):
        return CreateTableAs(name, p.query(), or_replace, if_not_exists)
    return CreateTable(_columns(p, name), or_replace, if_not_exists)


def _table_name(p: Parser) -> str:
    name = p.c.name("a table name")
    if p.c.at_op("."):
        raise p.c.error("a table name with a schema is not read (name the table alone)")
    return name


def _columns(p: Parser, table: str) -> TableSchema:
    p.c.expect_op("(")
    columns = [_column(p)]
    while p.c.accept_op(","):
        columns.append(_column(p))
    p.c.expect_op(")")
    names = [c.name for c in columns]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InvalidQuery(f"column {repeated[0]!r} is named twice", at(p.c.tokens[0]))
    return TableSchema(table, tuple(columns))


def _column(p: Parser) -> ColumnDef:
    if p.c.at_word("primary") or p.c.at_word("unique") or p.c.at_word("constraint"):
        raise p.c.error("a table constraint is not read (the harness's tables have none)")
    name = p.c.name("a column name")
    column_type = _column_type(p)
    nullable = True
    while not (p.c.at_op(",") or p.c.at_op(")")):
        tok = p.c.peek()
        if tok.kind is Kind.END:
            raise p.c.error("expected ',' or ')'")
        if p.c.accept_word("not", "null"):
            nullable = False
        elif not p.c.accept_word("null"):
            raise InvalidQuery(f"column constraint {tok.text.upper()} is not read (only NULL and NOT NULL)",
                               at(tok))
    return ColumnDef(name, column_type, nullable)


def _column_type(p: Parser) -> SqlType:
    start, words = p.c.peek(), []
    while p.c.peek().kind is Kind.WORD and p.c.peek().keyword is None and p.c.peek().value not in _CONSTRAINTS:
        words.append(p.c.advance().value)
    if not words:
        raise p.c.error("expected a column type")
    text = " ".join(words)
    if p.c.at_op("("):
        close = p.c.matching_paren()
        inside = "".join(p.c.peek(i).text for i in range(1, close))
        p.c.pos += close + 1
        # A string's length limit: every value the file can give is kept as written.
        text = text if text in _STRING_TYPES else f"{text}({inside})"
    try:
        return parse_type_name(text)
    except InvalidInput as e:
        raise InvalidQuery(str(e), at(start)) from None


def _insert(p: Parser) -> Insert:
    p.c.expect_word("insert")
    p.c.expect_word("into")
    name = _table_name(p)
    columns = None
    if p.c.at_op("(") and not (p.c.peek(1).kind is Kind.WORD and p.c.peek(1).value in ("select", "with")):
        p.c.advance()
        columns = [p.c.name("a column name")]
        while p.c.accept_op(","):
            columns.append(p.c.name("a column name"))
        p.c.expect_op(")")
    return Insert(name, None if columns is None else tuple(columns), p.query())


def _drop(p: Parser) -> DropTable:
    p.c.expect_word("drop")
    if not p.c.accept_word("table"):
        raise _unknown_kind(p)
    if_exists = p.c.accept_word("if", "exists")
    names = [_table_name(p)]
    while p.c.accept_op(","):
        names.append(_table_name(p))
    return DropTable(tuple(names), if_exists)
