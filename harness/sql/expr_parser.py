"""The expression half of the canonical parser: scalar expressions, function
calls with their window clauses, and window specifications.

Precedence is PostgreSQL's: OR < AND < NOT < IS [NOT] NULL < comparison < ||
< + - < * / % < unary minus < `::` (a cast: `-5::bigint` is -(5::bigint)). Literal spellings and the CAST folding rule live in
`harness.sql.literals`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace

from harness.core import functions
from harness.core.depth import MAX_DEPTH
from harness.core.errors import InvalidInput, InvalidQuery, NestedTooDeeply
from harness.core.functions import FunctionKind, FunctionSpec
from harness.core.model import (
    COMPARISONS,
    CURRENT_ROW,
    BinaryOp,
    BinaryOperator,
    Bound,
    BoundKind,
    Case,
    Cast,
    Column,
    Exclusion,
    Exists,
    Expr,
    Frame,
    FrameMode,
    FuncCall,
    InList,
    InSubquery,
    Interval,
    IntervalUnit,
    IsNull,
    Literal,
    NullsOrder,
    NullTreatment,
    Query,
    ScalarSubquery,
    SortKey,
    Star,
    UnaryOp,
    UnaryOperator,
    WindowExpr,
    WindowSpec,
)
from harness.core.types import BOOL, DATE, STRING, TIMESTAMP, SqlType, parse_type_name
from harness.sql.frames import kind_order_problem, offset_problem
from harness.sql.lexer import Cursor, Kind, Token
from harness.sql.literals import fold_cast, number_literal

NUMBERS = (Kind.INTEGER, Kind.DECIMAL, Kind.FLOAT)
_COMPARISONS = {op.value: op for op in COMPARISONS}
_ADDITIVE = {"+": BinaryOperator.ADD, "-": BinaryOperator.SUB}
_MULTIPLICATIVE = {"*": BinaryOperator.MUL, "/": BinaryOperator.DIV, "%": BinaryOperator.MOD,
                   "//": BinaryOperator.INT_DIV}
_EXCLUSIONS = {("no", "others"): Exclusion.NO_OTHERS, ("current", "row"): Exclusion.CURRENT_ROW,
               ("group",): Exclusion.GROUP, ("ties",): Exclusion.TIES}


def at(tok: Token) -> str:
    """A token's position as InvalidQuery's `where`: 'line:column'."""
    return f"{tok.line}:{tok.column}"


class ExprParser:
    def __init__(self, text: str, keep_invalid: bool = False) -> None:
        self.c = Cursor(text)
        # Keep what the standard's syntax rules forbid (a frame from UNBOUNDED
        # FOLLOWING) in the model instead of refusing it: for cases that
        # expect the query to fail (error conformance), where the reference
        # then raises EvaluationError, as engines should.
        self.keep_invalid = keep_invalid
        # How many nested constructs (parenthesised expressions, subqueries,
        # calls in calls, NOT NOT ...) the parser is inside: each costs up to 15
        # Python frames of this recursive descent, so the limit keeps the parser
        # within the stack (`harness.core.depth`).
        self.depth = 0

    # -- nesting -------------------------------------------------------------

    @contextmanager
    def nested(self) -> Iterator[None]:
        """One level deeper while the block reads; NestedTooDeeply past the limit."""
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise NestedTooDeeply(MAX_DEPTH, at(self.c.peek()))
            yield
        finally:
            self.depth -= 1

    def chained(self, links: int) -> int:
        """`links + 1`: one more link of a left-deep chain (`a + b + c`, `x::t::u`),
        read by a loop but a level of the model each; NestedTooDeeply past the limit."""
        if self.depth + links + 1 > MAX_DEPTH:
            raise NestedTooDeeply(MAX_DEPTH, at(self.c.peek()))
        return links + 1

    # -- operators, lowest precedence first -------------------------------

    def expr(self) -> Expr:
        with self.nested():
            return self._or()

    def _or(self) -> Expr:
        left, links = self._and(), 0
        while self.c.accept_word("or"):
            links = self.chained(links)
            left = BinaryOp(BinaryOperator.OR, left, self._and())
        return left

    def _and(self) -> Expr:
        left, links = self._not(), 0
        while self.c.accept_word("and"):
            links = self.chained(links)
            left = BinaryOp(BinaryOperator.AND, left, self._not())
        return left

    def _not(self) -> Expr:
        if self.c.at_word("not", "exists") and self.c.at_op("(", 2):
            # NOT EXISTS is one node, as it is written.
            self.c.advance()
            return self._exists(negated=True)
        if self.c.accept_word("not"):
            with self.nested():
                return UnaryOp(UnaryOperator.NOT, self._not())
        return self._is()

    def _is(self) -> Expr:
        e, links = self._comparison(), 0
        while self.c.accept_word("is"):
            links = self.chained(links)
            negated = self.c.accept_word("not")
            if self.c.accept_word("distinct", "from"):
                op = (BinaryOperator.IS_NOT_DISTINCT_FROM if negated
                      else BinaryOperator.IS_DISTINCT_FROM)
                e = BinaryOp(op, e, self._comparison())
                continue
            self.c.expect_word("null")
            e = IsNull(e, negated)
        return e

    def _comparison(self) -> Expr:
        # Non-associative, as in PostgreSQL: `a = b = c` is an error.
        left = self._in()
        tok = self.c.peek()
        if tok.kind is Kind.OP and tok.value in _COMPARISONS:
            self.c.advance()
            return BinaryOp(_COMPARISONS[tok.value], left, self._in())
        return left

    def _in(self) -> Expr:
        """`x [NOT] IN (SELECT ...)` and `x [NOT] IN (a, b)`: tighter than `=`, as
        in PostgreSQL, so `x IN (1) = TRUE` compares the IN's result."""
        operand = self._concat()
        negated = self.c.at_word("not", "in")
        if not (negated or self.c.at_word("in")):
            return operand
        self.c.accept_word("not")
        self.c.expect_word("in")
        query = self._query_in_parens()
        if query is not None:
            return InSubquery(operand, query, negated)
        self.c.expect_op("(")
        items = self.exprs()
        self.c.expect_op(")")
        return InList(operand, items, negated)

    def _concat(self) -> Expr:
        left, links = self.additive(), 0
        while self.c.accept_op("||"):
            links = self.chained(links)
            left = BinaryOp(BinaryOperator.CONCAT, left, self.additive())
        return left

    def additive(self) -> Expr:
        return self._binary_level(_ADDITIVE, self._multiplicative)

    def _multiplicative(self) -> Expr:
        return self._binary_level(_MULTIPLICATIVE, self._unary)

    def _binary_level(self, ops: dict[str, BinaryOperator], operand: Callable[[], Expr]) -> Expr:
        left, links = operand(), 0
        while (tok := self.c.peek()).kind is Kind.OP and tok.value in ops:
            self.c.advance()
            links = self.chained(links)
            left = BinaryOp(ops[tok.value], left, operand())
        return left

    def _unary(self) -> Expr:
        if not self.c.accept_op("-"):
            return self._postfix()
        tok = self.c.peek()
        # A minus on a number token is part of the literal, unless `::` binds
        # the number first (`-5::bigint` is -(5::bigint), as in PostgreSQL).
        if tok.kind in NUMBERS and not self.c.at_op("::", 1):
            self.c.advance()
            return self._number(tok, "-")
        with self.nested():
            return UnaryOp(UnaryOperator.NEG, self._unary())

    def _postfix(self) -> Expr:
        """A primary with its `::type` casts; `5::bigint` folds as CAST(5 AS BIGINT) does."""
        start = self.c.pos
        tok = self.c.peek()
        e = self._primary()
        bare = _bare_token(tok) if self.c.pos == start + 1 else None
        links = 0
        while self.c.accept_op("::"):
            links = self.chained(links)
            to = self._type(postfix=True)
            folded = fold_cast(bare[0], bare[1], to) if bare else None
            e, bare = folded or Cast(e, to), None
        return e

    # -- primaries ----------------------------------------------------------

    def _primary(self) -> Expr:
        c, tok = self.c, self.c.peek()
        if tok.kind in NUMBERS:
            c.advance()
            return self._number(tok, "")
        if tok.kind is Kind.STRING:
            c.advance()
            return Literal(tok.value, STRING)
        if tok.keyword in _KEYWORD_PRIMARIES:
            return _KEYWORD_PRIMARIES[tok.keyword](self)
        if tok.kind is Kind.WORD and tok.value in _TYPED_STRINGS and (
                c.peek(1).kind is Kind.STRING
                or (tok.value == "interval" and c.peek(1).kind is Kind.INTEGER)):
            # DATE '...' is a literal; `date` alone is a name, as in PostgreSQL.
            return _TYPED_STRINGS[tok.value](self)
        query = self._query_in_parens()
        if query is not None:
            return ScalarSubquery(query)
        if c.at_word("exists") and c.at_op("(", 1):
            return self._exists()  # EXISTS is not reserved: a column may be named so
        if c.accept_op("("):
            e = self.expr()
            c.expect_op(")")
            return e
        if c.at_name():
            return self._call() if c.at_op("(", 1) else self._column()
        if tok.keyword in _KEYWORD_FUNCTIONS and c.at_op("(", 1):
            return self._call()
        raise c.error("expected an expression")

    # -- subqueries -----------------------------------------------------------

    def query(self) -> Query:
        """A whole query; the query parser (`harness.sql.parser.Parser`) gives it."""
        raise self.c.error("subqueries in expressions are not supported")

    def _at_query(self, ahead: int) -> bool:
        return any(self.c.at_word(word, ahead=ahead) for word in ("select", "with", "values"))

    def _parenthesized_query(self) -> Query:
        self.c.expect_op("(")
        query = self.query()
        self.c.expect_op(")")
        return query

    def _query_in_parens(self) -> Query | None:
        """`(query)` when the parentheses hold a query, else None (nothing read).

        A query may itself start with `(` (`((SELECT ...) UNION ALL ...)`), as
        may an expression (`((SELECT 1) + 1)`): after `((` the query is tried
        first, as PostgreSQL's grammar prefers it, and the cursor goes back if
        it is not one."""
        if not self.c.at_op("("):
            return None
        if self._at_query(1):
            return self._parenthesized_query()
        if not self.c.at_op("(", 1):
            return None
        start = self.c.pos
        try:
            return self._parenthesized_query()
        except NestedTooDeeply:
            raise  # as deep read as an expression: no other reading can help
        except InvalidQuery:
            self.c.pos = start
            return None

    def _exists(self, negated: bool = False) -> Exists:
        self.c.expect_word("exists")
        query = self._query_in_parens()
        if query is None:
            raise self.c.error("expected a subquery in parentheses after EXISTS")
        return Exists(query, negated)

    def _number(self, tok: Token, sign: str) -> Literal:
        try:
            return number_literal(tok.kind, sign + tok.text)
        except InvalidQuery as e:
            raise InvalidQuery(str(e), at(tok)) from None

    def _column(self) -> Column:
        name = self.c.name()
        if self.c.accept_op("."):
            return Column(self.c.name("a column name"), name)
        return Column(name)

    def _constant(self) -> Literal:
        word = self.c.advance().value
        return Literal(None, None) if word == "null" else Literal(word == "true", BOOL)

    def _date_or_timestamp(self) -> Literal:
        word = self.c.advance().value
        tok = self.c.advance()
        try:
            if word == "date":
                return Literal(dt.date.fromisoformat(tok.value), DATE)
            value = dt.datetime.fromisoformat(tok.value)
        except ValueError:
            raise self.c.error(f"invalid {word.upper()} literal", tok) from None
        if value.tzinfo is not None:
            raise self.c.error("a TIMESTAMP literal cannot have a time zone", tok)
        return Literal(value, TIMESTAMP)

    def _interval(self) -> Interval:
        """INTERVAL '3' DAY, INTERVAL 3 DAY, INTERVAL '3 days', INTERVAL '3' DAYS."""
        self.c.advance()
        tok = self.c.advance()
        text = tok.text if tok.kind is Kind.INTEGER else tok.value
        match = re.fullmatch(r"\s*([+-]?\d+)\s*([A-Za-z]*)\s*", text)
        if match is None or (tok.kind is Kind.INTEGER and match.group(2)):
            raise self.c.error("expected a whole number, in quotes or not, after INTERVAL", tok)
        unit_text = match.group(2)
        unit_tok = self.c.peek()
        if not unit_text and unit_tok.kind is Kind.WORD:
            unit_text = unit_tok.value
            self.c.advance()
        return Interval(int(match.group(1)), self._interval_unit(unit_text, unit_tok))

    def _interval_unit(self, text: str, tok: Token) -> IntervalUnit:
        word = text.upper()
        for unit in IntervalUnit:
            if word in (unit.value, unit.value + "S"):  # DAYS, as PostgreSQL reads in '2 days'
                return unit
        units = ", ".join(IntervalUnit.__members__)
        raise self.c.error(f"expected an interval unit ({units})", tok)

    def _case(self) -> Case:
        self.c.advance()
        if not self.c.at_word("when"):
            raise self.c.error("expected WHEN (only the searched CASE form is supported)")
        whens = []
        while self.c.accept_word("when"):
            condition = self.expr()
            self.c.expect_word("then")
            whens.append((condition, self.expr()))
        default = self.expr() if self.c.accept_word("else") else None
        self.c.expect_word("end")
        return Case(tuple(whens), default)

    def _cast(self) -> Expr:
        self.c.advance()
        self.c.expect_op("(")
        bare = self._bare_cast_operand()
        operand = self.expr()
        self.c.expect_word("as")
        to = self._type()
        self.c.expect_op(")")
        folded = fold_cast(bare[0], bare[1], to) if bare else None
        return folded or Cast(operand, to)

    def _bare_cast_operand(self) -> tuple[Kind, str] | None:
        """The token of `CAST(<bare> AS ...)` when it has a foldable shape."""
        sign = 1 if self.c.at_op("-") else 0
        tok = self.c.peek(sign)
        if not self.c.at_word("as", ahead=sign + 1):
            return None
        if tok.kind in NUMBERS:
            return tok.kind, "-" * sign + tok.text
        if sign == 0 and tok.kind is Kind.STRING:
            return Kind.STRING, tok.value
        return (Kind.WORD, "null") if sign == 0 and tok.keyword == "null" else None

    def _type(self, postfix: bool = False) -> SqlType:
        start, words = self.c.peek(), []
        while self.c.peek().kind is Kind.WORD:
            words.append(self.c.advance().value)
            # After `::` the words end at the type's name (`x::int AS y`): only
            # DOUBLE PRECISION has two.
            if postfix and not (words == ["double"] and self.c.at_word("precision")):
                break
        text = " ".join(words)
        if self.c.accept_op("("):
            text += "(" + self._integer("a precision")
            if self.c.accept_op(","):
                text += "," + self._integer("a scale")
            self.c.expect_op(")")
            text += ")"
        try:
            return parse_type_name(text)
        except InvalidInput as e:
            raise InvalidQuery(str(e), at(start)) from None

    def _integer(self, what: str) -> str:
        if self.c.peek().kind is not Kind.INTEGER:
            raise self.c.error(f"expected {what}")
        return self.c.advance().text

    # -- function calls -------------------------------------------------------

    def _call(self) -> Expr:
        tok = self.c.peek()
        name = self.c.advance().value if tok.keyword in _KEYWORD_FUNCTIONS else self.c.name()
        spec = self._lookup(name, tok)
        self.c.expect_op("(")
        distinct = self.c.accept_word("distinct")
        args = self._args()
        order_by = self.sort_keys() if self.c.accept_word("order", "by") else ()
        inside = self._null_treatment()
        self.c.expect_op(")")
        within_group = self._within_group()
        from_last = self._from_first_last()
        # In `g(f(x) IGNORE NULLS)` the words are g's (inside form), not f's.
        outside = None if self.c.at_op(")", 2) else self._null_treatment()
        if inside and outside:
            raise self.c.error("IGNORE/RESPECT NULLS is written twice", tok)
        filter_ = self._filter()
        call = FuncCall(spec.name, args, distinct, filter_, order_by, inside or outside, from_last,
                        within_group)
        window = self._over() if self.c.accept_word("over") else None
        try:
            _check_call(spec, call, window is not None)
        except InvalidQuery as e:
            raise InvalidQuery(str(e), at(tok)) from None
        return call if window is None else WindowExpr(call, window)

    def _lookup(self, name: str, tok: Token) -> FunctionSpec:
        try:
            return functions.lookup(functions.canonical_name(name))
        except InvalidQuery as e:
            raise InvalidQuery(str(e), at(tok)) from None

    def _args(self) -> tuple[Expr, ...]:
        if self.c.at_op(")") or self.c.at_word("order", "by"):  # `rank(ORDER BY x)`
            return ()
        if self.c.at_op("*") and self.c.at_op(")", 1):
            self.c.advance()
            return (Star(),)
        args = [self.expr()]
        while self.c.accept_op(","):
            args.append(self.expr())
        return tuple(args)

    def _within_group(self) -> tuple[SortKey, ...]:
        """`WITHIN GROUP (ORDER BY ...)` of an ordered-set aggregate, or ()."""
        if not self.c.accept_word("within", "group"):
            return ()
        self.c.expect_op("(")
        self.c.expect_word("order", "by")
        keys = self.sort_keys()
        self.c.expect_op(")")
        return keys

    def _null_treatment(self) -> NullTreatment | None:
        for treatment in NullTreatment:
            if self.c.accept_word(*treatment.value.lower().split()):
                return treatment
        return None

    def _from_first_last(self) -> bool | None:
        # `FROM` alone starts the FROM clause; only FROM FIRST/LAST belongs here.
        for word, last in (("first", False), ("last", True)):
            if self.c.accept_word("from", word):
                return last
        return None

    def _filter(self) -> Expr | None:
        if not self.c.accept_word("filter"):
            return None
        self.c.expect_op("(")
        self.c.expect_word("where")
        condition = self.expr()
        self.c.expect_op(")")
        return condition

    # -- windows --------------------------------------------------------------

    def _over(self) -> WindowSpec:
        if self.c.at_op("("):
            spec = self.window_spec()
            # `OVER (w)` copies w, where `OVER w` uses it as it is (the standard
            # forbids copying a window that has a frame).
            bare = spec.base is not None and spec == WindowSpec(base=spec.base)
            return replace(spec, parenthesized=True) if bare else spec
        return WindowSpec(base=self.c.name("a window name or '('"))

    def window_spec(self) -> WindowSpec:
        """`( [base] [PARTITION BY ...] [ORDER BY ...] [frame] )`."""
        self.c.expect_op("(")
        base = self.c.name() if self.c.at_name() else None
        partition_by = self.exprs() if self.c.accept_word("partition", "by") else ()
        order_by = self.sort_keys() if self.c.accept_word("order", "by") else ()
        frame = self._frame()
        self.c.expect_op(")")
        return WindowSpec(base, partition_by, order_by, frame)

    def _frame(self) -> Frame | None:
        tok = self.c.peek()
        mode = next((m for m in FrameMode if self.c.accept_word(m.value.lower())), None)
        if mode is None:
            return None
        if self.c.accept_word("between"):
            start = self._bound()
            self.c.expect_word("and")
            end = self._bound()
        else:  # the short form `ROWS 2 PRECEDING` ends at the current row
            start, end = self._bound(), CURRENT_ROW
        problem = kind_order_problem(start.kind, end.kind)
        if problem is not None and not self.keep_invalid:
            raise InvalidQuery(problem, at(tok))
        return Frame(mode, start, end, self._exclusion())

    def _bound(self) -> Bound:
        if self.c.accept_word("unbounded"):
            if self.c.accept_word("preceding"):
                return Bound(BoundKind.UNBOUNDED_PRECEDING)
            self.c.expect_word("following")
            return Bound(BoundKind.UNBOUNDED_FOLLOWING)
        if self.c.accept_word("current", "row"):
            return CURRENT_ROW
        tok = self.c.peek()
        offset = self.additive()
        problem = offset_problem(offset)
        if problem is not None:
            raise InvalidQuery(problem, at(tok))
        if self.c.accept_word("preceding"):
            return Bound(BoundKind.PRECEDING, offset)
        self.c.expect_word("following")
        return Bound(BoundKind.FOLLOWING, offset)

    def _exclusion(self) -> Exclusion | None:
        if not self.c.accept_word("exclude"):
            return None
        for words, exclusion in _EXCLUSIONS.items():
            if self.c.accept_word(*words):
                return exclusion
        raise self.c.error("expected NO OTHERS, CURRENT ROW, GROUP or TIES after EXCLUDE")

    # -- lists ------------------------------------------------------------------

    def exprs(self) -> tuple[Expr, ...]:
        items = [self.expr()]
        while self.c.accept_op(","):
            items.append(self.expr())
        return tuple(items)

    def sort_keys(self) -> tuple[SortKey, ...]:
        keys = [self._sort_key()]
        while self.c.accept_op(","):
            keys.append(self._sort_key())
        return tuple(keys)

    def _sort_key(self) -> SortKey:
        return self.sort_key_options(self.expr())

    def sort_key_options(self, e: Expr) -> SortKey:
        """ASC/DESC and NULLS FIRST/LAST after a sort key's expression."""
        descending = self.c.accept_word("desc")
        if not descending:
            self.c.accept_word("asc")
        nulls = None
        if self.c.accept_word("nulls"):
            nulls = NullsOrder.FIRST if self.c.accept_word("first") else None
            if nulls is None:
                self.c.expect_word("last")
                nulls = NullsOrder.LAST
        return SortKey(e, descending, nulls)


_KEYWORD_PRIMARIES = {
    "true": ExprParser._constant,
    "false": ExprParser._constant,
    "null": ExprParser._constant,
    "case": ExprParser._case,
    "cast": ExprParser._cast,
}
# Reserved words that are also function names when a '(' follows (NULLS
# FIRST/LAST makes `first` and `last` keywords).
_KEYWORD_FUNCTIONS = frozenset({"first", "last"})
_TYPED_STRINGS = {
    "date": ExprParser._date_or_timestamp,
    "timestamp": ExprParser._date_or_timestamp,
    "interval": ExprParser._interval,
}


def _bare_token(tok: Token) -> tuple[Kind, str] | None:
    """A token `fold_cast` may fold when `::` follows it: a number, a string, NULL."""
    if tok.kind in NUMBERS:
        return tok.kind, tok.text
    if tok.kind is Kind.STRING:
        return Kind.STRING, tok.value
    return (Kind.WORD, "null") if tok.keyword == "null" else None


def _check_call(spec: FunctionSpec, call: FuncCall, windowed: bool) -> None:
    """Reject clauses the function cannot take (names the function)."""
    spec.check_arity(len(call.args))
    name = f"{spec.name}()"
    if Star() in call.args and not (spec.star and len(call.args) == 1 and not call.distinct):
        raise InvalidQuery(f"{name} does not take *")
    if spec.kind is FunctionKind.WINDOW and not windowed:
        raise InvalidQuery(f"{name} is a window function and needs OVER")
    if spec.kind is FunctionKind.SCALAR and windowed:
        raise InvalidQuery(f"{name} is not a window or aggregate function and cannot take OVER")
    ranking_order = bool(call.order_by) and spec.name in functions.ARGUMENT_ORDERED_RANKING
    aggregate_only = call.distinct or call.filter is not None or (call.order_by and not ranking_order)
    if aggregate_only and spec.kind is not FunctionKind.AGGREGATE:
        raise InvalidQuery(f"DISTINCT, FILTER and ORDER BY are for aggregates, not {name}")
    if ranking_order and not windowed:
        raise InvalidQuery(f"ORDER BY inside {name} needs OVER")
    if call.null_treatment is not None and not spec.ignore_nulls:
        raise InvalidQuery(f"{name} does not take IGNORE/RESPECT NULLS")
    if call.from_last is not None and not spec.from_last:
        raise InvalidQuery(f"{name} does not take FROM FIRST/LAST")
    if (call.null_treatment is not None or call.from_last is not None) and not windowed:
        raise InvalidQuery(f"IGNORE/RESPECT NULLS and FROM FIRST/LAST on {name} need OVER")
    _check_within_group(spec, call)


def _check_within_group(spec: FunctionSpec, call: FuncCall) -> None:
    name = f"{spec.name}()"
    if spec.within_group and not call.within_group:
        raise InvalidQuery(f"{name} is an ordered-set aggregate and needs WITHIN GROUP (ORDER BY ...)")
    if call.within_group and not spec.takes_within_group:
        raise InvalidQuery(f"{name} takes no WITHIN GROUP")
    if spec.within_group_optional and len(call.args) != (0 if call.within_group else spec.max_args):
        raise InvalidQuery(f"{name} takes {spec.max_args} argument(s), or none with WITHIN GROUP")
    if call.within_group and (len(call.within_group) != 1 or call.distinct or call.order_by):
        raise InvalidQuery(f"{name} takes one WITHIN GROUP key, and no DISTINCT or ORDER BY")
