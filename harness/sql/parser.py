"""Canonical SQL text -> query model, by hand-written recursive descent.

Why not sqlglot: its parser normalises what the text leaves unwritten (it turns
an ORDER BY key without NULLS FIRST/LAST into an explicit one, which is exactly
the "engine default" the model must keep apart) and it has no FROM FIRST/LAST
for nth_value, so parse(write(q)) == q cannot hold through it.

The grammar is standard SQL as PostgreSQL reads it, limited to what the model
holds. Unwritten clauses stay unwritten (no NULLS -> None, no frame -> None);
unquoted names are folded to lower case, quoted ones kept as written. This
module reads queries and sources; `expr_parser` reads expressions and windows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial

from harness.core.depth import MAX_DEPTH, check_depth
from harness.core.errors import InvalidQuery, NestedTooDeeply
from harness.core.model import (
    AllColumns,
    CommonTable,
    Expr,
    FramedWindowCopy,
    Join,
    JoinKind,
    NamedWindow,
    Query,
    Select,
    SelectItem,
    SortKey,
    Source,
    Star,
    SubqueryRef,
    TableFunctionRef,
    TableRef,
    UnionAll,
    Values,
    WindowSpec,
    With,
    resolve_window,
    window_exprs,
)
from harness.core.table_functions import TABLE_FUNCTIONS, check_table_function
from harness.sql.expr_parser import ExprParser, at
from harness.sql.lexer import Kind, Token

_Tail = tuple[tuple[SortKey, ...], int | None, int | None]


class Parser(ExprParser):
    def __init__(self, text: str, keep_invalid: bool = False) -> None:
        super().__init__(text, keep_invalid)
        # Checks of a whole SELECT (its windows resolve) wait until the text is
        # read: a token the parser cannot read must be reported at that token,
        # not as the window it kept the parser from reaching.
        self.deferred: list[Callable[[], None]] = []

    def check_later(self, check: Callable[[], None]) -> None:
        self.deferred.append(check)

    def run_deferred(self) -> None:
        for check in self.deferred:
            check()

    def finish(self, *models: object) -> None:
        """The checks of the whole text once read: the deferred ones, and the depth
        of the models it became (a long chain mixed with nesting can pass the
        parser's own count), said at the text's first token. The depth first: the
        deferred checks recurse over the model."""
        for model in models:
            check_depth(model, MAX_DEPTH, at(self.c.tokens[0]))
        self.run_deferred()

    # -- queries -----------------------------------------------------------

    def query(self) -> Query:
        with self.nested():
            return self._query()

    def _query(self) -> Query:
        if self.c.at_word("with"):
            return self._with()
        return self._tail(self._union_chain())

    def _with(self) -> With:
        self.c.expect_word("with")
        ctes: list[CommonTable] = []
        while True:
            tok = self.c.peek()
            cte = self._cte()
            if cte.name in {c.name for c in ctes}:
                raise InvalidQuery(f"WITH query {cte.name!r} is defined twice", at(tok))
            ctes.append(cte)
            if not self.c.accept_op(","):
                return With(tuple(ctes), self._tail(self._union_chain()))

    def _cte(self) -> CommonTable:
        name = self.c.name("a name for the WITH query")
        columns = self._column_list()
        self.c.expect_word("as")
        self.c.expect_op("(")
        query = self.query()
        self.c.expect_op(")")
        return CommonTable(name, query, columns)

    def _column_list(self) -> tuple[str, ...]:
        """`(a, b, ...)` after a WITH query's or a derived table's name, if written."""
        if not self.c.accept_op("("):
            return ()
        names = [self.c.name("a column name")]
        while self.c.accept_op(","):
            names.append(self.c.name("a column name"))
        self.c.expect_op(")")
        return tuple(names)

    def _union_chain(self) -> Query:
        left, links = self._operand(), 0
        while self.c.accept_word("union"):
            links = self.chained(links)
            if not self.c.accept_word("all"):
                raise self.c.error("expected ALL (only UNION ALL is supported)")
            left = UnionAll(left, self._operand())
        return left

    def _operand(self) -> Query:
        if self.c.accept_op("("):
            q = self.query()
            self.c.expect_op(")")
            return q
        if self.c.at_word("select"):
            return self._select()
        if self.c.at_word("values"):
            return self._values()
        raise self.c.error("expected SELECT, VALUES or '('")

    def _values(self) -> Values:
        """`VALUES (a, b), (c, d)`: rows of one length."""
        self.c.expect_word("values")
        rows: list[tuple[Expr, ...]] = []
        while True:
            tok = self.c.peek()
            self.c.expect_op("(")
            row = self.exprs()
            self.c.expect_op(")")
            if rows and len(row) != len(rows[0]):
                raise InvalidQuery(
                    f"VALUES rows must have one length: {len(rows[0])} and {len(row)}", at(tok))
            rows.append(row)
            if not self.c.accept_op(","):
                return Values(tuple(rows))

    def _tail(self, q: Query) -> Query:
        """ORDER BY / LIMIT / OFFSET after a query: they apply to all of it."""
        tok = self.c.peek()
        order_by = self._order_by() if self.c.accept_word("order", "by") else ()
        limit = offset = None
        for _ in range(2):  # PostgreSQL takes LIMIT and OFFSET in either order
            if limit is None and self.c.accept_word("limit"):
                limit = self._count()
            elif offset is None and self.c.accept_word("offset"):
                offset = self._count()
        if not order_by and limit is None and offset is None:
            return q
        return self._attach(q, (order_by, limit, offset), tok)

    def _attach(self, q: Query, tail: _Tail, tok: Token) -> Query:
        if isinstance(q, With):
            return replace(q, body=self._attach(q.body, tail, tok))
        if isinstance(q, Values):
            raise InvalidQuery(
                "ORDER BY/LIMIT/OFFSET after VALUES is not supported; write it over "
                "SELECT * FROM (VALUES ...) AS v", at(tok))
        if q.order_by or q.limit is not None or q.offset is not None:
            raise InvalidQuery(
                "this query already has ORDER BY/LIMIT/OFFSET inside its parentheses; "
                "write the outer one over a subquery in FROM", at(tok))
        q = replace(q, order_by=tail[0], limit=tail[1], offset=tail[2])
        if isinstance(q, Select):
            self.check_later(partial(_check_windows, q, tok, self.keep_invalid))
        return q

    def _order_by(self) -> tuple[SortKey, ...]:
        """The keys after a query's ORDER BY: `ALL [ASC|DESC] [NULLS ...]` or a list."""
        if not self.c.at_word("all"):
            return self.sort_keys()
        self.c.advance()
        return (self.sort_key_options(AllColumns()),)

    def _count(self) -> int:
        if self.c.peek().kind is not Kind.INTEGER:
            raise self.c.error("expected a whole number")
        return int(self.c.advance().text)

    # -- SELECT --------------------------------------------------------------

    def _select(self) -> Select:
        tok = self.c.peek()
        self.c.expect_word("select")
        distinct = self.c.accept_word("distinct")
        items = [self._item()]
        while self.c.accept_op(","):
            items.append(self._item())
        source = self._from() if self.c.accept_word("from") else None
        where = self.expr() if self.c.accept_word("where") else None
        group_by = self._group_by() if self.c.accept_word("group", "by") else ()
        having = self.expr() if self.c.accept_word("having") else None
        windows = self._window_clause() if self.c.accept_word("window") else ()
        # QUALIFY after WINDOW, as DuckDB's grammar has it (Spark takes either order).
        qualify = self.expr() if self.c.accept_word("qualify") else None
        select = Select(tuple(items), source, where, group_by, having, windows, distinct=distinct,
                        qualify=qualify)
        self.check_later(partial(_check_windows, select, tok, self.keep_invalid))
        return select

    def _group_by(self) -> tuple[Expr, ...]:
        return (AllColumns(),) if self.c.accept_word("all") else self.exprs()

    def _item(self) -> SelectItem:
        if self.c.accept_op("*"):
            return SelectItem(Star())
        if self.c.at_name() and self.c.at_op(".", 1) and self.c.at_op("*", 2):
            table = self.c.name()
            self.c.advance()  # .
            self.c.advance()  # *
            return SelectItem(Star(table))
        return SelectItem(self.expr(), self._alias())

    def _alias(self) -> str | None:
        if self.c.accept_word("as"):
            return self.c.name("an alias")
        return self.c.name() if self.c.at_name() else None

    def _window_clause(self) -> tuple[NamedWindow, ...]:
        windows: list[NamedWindow] = []
        while True:
            tok = self.c.peek()
            name = self.c.name("a window name")
            self.c.expect_word("as")
            spec = self.window_spec()
            defined = {w.name for w in windows}
            if name in defined:
                raise InvalidQuery(f"window {name!r} is defined twice", at(tok))
            if spec.base is not None and spec.base not in defined:
                # Only earlier windows may be refined; this also rules out cycles.
                raise InvalidQuery(f"window {spec.base!r} is not defined before {name!r}", at(tok))
            windows.append(NamedWindow(name, spec))
            if not self.c.accept_op(","):
                return tuple(windows)

    # -- FROM ------------------------------------------------------------------

    def _from(self) -> Source:
        # A comma binds more loosely than JOIN: `a, b JOIN c ON x` is a, (b JOIN c).
        source, links = self._joined(), 0
        while self.c.accept_op(","):
            links = self.chained(links)
            source = Join(JoinKind.CROSS, source, self._joined())
        return source

    def _joined(self) -> Source:
        source, links = self._source(), 0
        while (kind := self._join_kind()) is not None:
            links = self.chained(links)
            right = self._source()
            on: Expr | None = None
            if kind is not JoinKind.CROSS:
                self.c.expect_word("on")
                on = self.expr()
            source = Join(kind, source, right, on)
        return source

    def _join_kind(self) -> JoinKind | None:
        if self.c.accept_word("join"):
            return JoinKind.INNER
        for kind in JoinKind:
            if self.c.accept_word(kind.value.lower()):
                if kind in (JoinKind.LEFT, JoinKind.RIGHT, JoinKind.FULL):
                    self.c.accept_word("outer")
                self.c.expect_word("join")
                return kind
        return None

    def _source(self) -> Source:
        if self._at_table_function():
            return self._table_function()
        if not self.c.at_op("("):
            name = self.c.name("a table name")
            return TableRef(name, self._alias())
        # `(` opens a derived table (a query, with or without an alias) or a
        # parenthesised join. An alias after the `)` or a query's first word
        # inside settles it; `((` is tried as a query first, then as a join.
        after = self.c.peek(self.c.matching_paren() + 1)
        inner = self.c.peek(1)
        if after.keyword == "as" or after.kind is Kind.QUOTED or (
                after.kind is Kind.WORD and after.keyword is None) or (
                inner.kind is Kind.WORD and inner.value in ("select", "with", "values")):
            return self._derived_table()
        if self.c.at_op("(", 1):
            return self._query_or_join()
        return self._parenthesised_join()

    def _derived_table(self) -> SubqueryRef:
        self.c.expect_op("(")
        query = self.query()
        self.c.expect_op(")")
        alias, columns = self._alias_and_columns()
        return SubqueryRef(query, alias, columns)

    def _parenthesised_join(self) -> Source:
        with self.nested():
            self.c.expect_op("(")
            source = self._from()
            self.c.expect_op(")")
            return source

    def _query_or_join(self) -> Source:
        start = self.c.pos
        try:
            return self._derived_table()
        except NestedTooDeeply:
            raise  # as deep read as a join: no other reading can help
        except InvalidQuery as as_query:
            reached, self.c.pos = self.c.pos, start
            try:
                return self._parenthesised_join()
            except NestedTooDeeply:
                raise
            except InvalidQuery:
                if reached > self.c.pos:  # report the reading that got further
                    raise as_query from None
                raise

    def _alias_and_columns(self) -> tuple[str | None, tuple[str, ...]]:
        alias = self._alias()
        columns = self._column_list() if alias is not None else ()
        return alias, columns

    def _at_table_function(self) -> bool:
        tok = self.c.peek()
        return tok.kind is Kind.WORD and tok.value in TABLE_FUNCTIONS and self.c.at_op("(", 1)

    def _table_function(self) -> TableFunctionRef:
        tok = self.c.advance()
        self.c.expect_op("(")
        args = () if self.c.at_op(")") else self.exprs()
        self.c.expect_op(")")
        alias, columns = self._alias_and_columns()
        ref = TableFunctionRef(tok.value, args, alias, columns)
        try:
            check_table_function(ref)
        except InvalidQuery as e:
            raise InvalidQuery(str(e), at(tok)) from None
        return ref


def _check_windows(select: Select, tok: Token, keep_invalid: bool) -> None:
    """Every window this SELECT defines or uses must resolve by the refinement
    rules. A copy of a framed window is invalid by definition, and kept for a
    query meant to fail (`keep_invalid`)."""
    # A definition is resolved through its name, as a use of it would be.
    specs = [WindowSpec(base=w.name) for w in select.windows]
    for spec in [*specs, *(e.window for e in window_exprs(select))]:
        try:
            resolve_window(spec, select.windows)
        except FramedWindowCopy as e:
            if not keep_invalid:
                raise InvalidQuery(str(e), at(tok)) from None
        except InvalidQuery as e:
            raise InvalidQuery(str(e), at(tok)) from None


def _finish(p: Parser) -> None:
    p.c.accept_op(";")
    if p.c.peek().kind is not Kind.END:
        raise p.c.error("expected the end of the query")


def parse(text: str, keep_invalid: bool = False) -> Query:
    """Read a canonical SQL query into the model; InvalidQuery says where it fails.

    `keep_invalid` reads a frame the standard's syntax rules forbid (it starts
    at UNBOUNDED FOLLOWING, or after its end by bound kind) into the model, for
    a query that is meant to fail.
    """
    p = Parser(text, keep_invalid)
    q = p.query()
    _finish(p)
    p.finish(q)
    return q


def parse_expr(text: str) -> Expr:
    """Read one canonical SQL expression into the model."""
    p = Parser(text)
    e = p.expr()
    _finish(p)
    p.finish(e)
    return e
