"""Query model -> SQL text: the one writer, for every dialect.

The writer branches on the Dialect's data (feature table, names, placement of
IGNORE NULLS) and spells through its hooks (quote, type_name, literals); it
never looks at a dialect's name. It never drops or changes a clause: whatever
the model uses that the dialect lacks raises Unsupported(feature), and a model
it cannot spell faithfully raises InvalidQuery.

Spelling rules that keep parse(write(q)) == q for the canonical dialect:
ASC/DESC always written, NULLS FIRST/LAST exactly when the model has it,
frames always in BETWEEN form, `OVER w` when the spec is only a base name,
every compound operand in parentheses, UnaryOp(NEG, x) as `-(x)` and the
operand of a Cast of a Literal in parentheses (see `harness.sql.literals`).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from typing import Any

from harness.core import functions
from harness.core.depth import check_depth
from harness.core.dialect import Dialect, Feature, IgnoreNullsPlacement
from harness.core.errors import InvalidQuery, Unsupported
from harness.core.model import (
    AllColumns,
    BinaryOp,
    BinaryOperator,
    Bound,
    BoundKind,
    Case,
    Cast,
    Column,
    Exists,
    Expr,
    Frame,
    FramedWindowCopy,
    FrameMode,
    FuncCall,
    InList,
    InSubquery,
    Interval,
    IsNull,
    Join,
    JoinKind,
    Literal,
    NamedWindow,
    Query,
    ScalarSubquery,
    Select,
    SelectItem,
    SortKey,
    Source,
    Star,
    SubqueryRef,
    TableFunctionRef,
    TableRef,
    UnaryOp,
    UnaryOperator,
    UnionAll,
    Values,
    WindowExpr,
    WindowSpec,
    With,
    resolve_window,
    walk,
)
from harness.core.table_functions import check_table_function, column_name, table_name
from harness.core.types import TypeKind
from harness.sql.canonical import CANONICAL
from harness.sql.correlation import is_aggregated, outer_references, source_names
from harness.sql.frames import offset_problem, offset_value, starts_after_end
from harness.sql.literals import literal_problem, natural_integer_type

# The alias of a VALUES table that the writer wraps to name its columns
# column1, column2, ... on a dialect whose defaults differ.
VALUES_ALIAS = "__wh_values"
# The WITH query through which a derived table's columns are renamed on a
# dialect without column lists after a derived table's alias.
RENAMED_ALIAS = "__wh_renamed"
_TABLE_FUNCTION_FEATURES = {"generate_series": Feature.GENERATE_SERIES,
                            "range": Feature.RANGE_TABLE_FUNCTION}


def write(query: Query, dialect: Dialect = CANONICAL) -> str:
    """The SQL text of `query` in `dialect`; raises Unsupported for a missing feature,
    NestedTooDeeply for a model deeper than the writer's recursion can hold."""
    check_depth(query)
    return _Writer(dialect).query(query)


def write_expr(expr: Expr, dialect: Dialect = CANONICAL) -> str:
    check_depth(expr)
    return _Writer(dialect).expr(expr)


def _has_tail(q: Query) -> bool:
    if isinstance(q, Values):
        return False
    return bool(q.order_by) or q.limit is not None or q.offset is not None


class _Writer:
    def __init__(self, dialect: Dialect) -> None:
        self.d = dialect
        # The WINDOW clause of the SELECT being written, to resolve `OVER w`.
        self.windows: tuple[NamedWindow, ...] = ()
        # Where the expression being written stands, for the dialects that take
        # subqueries in some places only: the FROM names of each SELECT around
        # it (innermost last), inside a condition clause (WHERE, HAVING, ON),
        # inside a window function or window definition.
        self.scopes: list[frozenset[str]] = []
        self.in_condition = False
        self.in_window = False

    def require(self, feature: Feature) -> None:
        if not self.d.supports(feature):
            raise Unsupported(feature.value)

    def quote(self, name: str) -> str:
        return self.d.quote(name)

    # -- queries -------------------------------------------------------------

    def query(self, q: Query) -> str:
        if isinstance(q, Select):
            return self.select(q)
        if isinstance(q, UnionAll):
            return self.union(q)
        if isinstance(q, Values):
            return self.values(q)
        return self.with_(q)

    def values(self, v: Values, named: bool = False) -> str:
        """`VALUES (..), (..)`; on a dialect whose default column names are not
        column1, column2, ... (and where no column list renames them: `named`),
        wrapped so that they are."""
        self.require(Feature.VALUES)
        if not v.rows or any(len(r) != len(v.rows[0]) for r in v.rows) or not v.rows[0]:
            raise InvalidQuery("VALUES needs rows of one length, at least one value each")
        rows = ", ".join("(" + ", ".join(self.expr(e) for e in row) + ")" for row in v.rows)
        text = f"VALUES {rows}"
        if named or not self.d.explicit_source_columns:
            return text
        columns = ", ".join(f"column{i + 1}" for i in range(len(v.rows[0])))
        return f"SELECT * FROM ({text}) AS {self.quote(VALUES_ALIAS)}({columns})"

    def select(self, s: Select) -> str:
        if not s.items:
            raise InvalidQuery("a SELECT needs at least one item")
        outer, self.windows = self.windows, s.windows
        self.scopes.append(source_names(s.source))
        lines = [("SELECT DISTINCT " if s.distinct else "SELECT ")
                 + ", ".join(self.item(i) for i in s.items)]
        if s.source is not None:
            lines.append("FROM " + self.source(s.source))
        if s.where is not None:
            lines.append("WHERE " + self.condition(s.where))
        if s.group_by:
            lines.append("GROUP BY " + self.group_by(s.group_by))
        if s.having is not None:
            lines.append("HAVING " + self.condition(s.having))
        if s.windows:
            self.require(Feature.NAMED_WINDOW)
            lines.append("WINDOW " + ", ".join(
                f"{self.quote(w.name)} AS ({self.windowed(self.spec, w.spec)})"
                for w in s.windows))
        if s.qualify is not None:
            # Not a `condition`: whether an engine takes IN/EXISTS in QUALIFY is
            # not measured, so there it counts as a value (the stricter feature).
            self.require(Feature.QUALIFY)
            lines.append("QUALIFY " + self.expr(s.qualify))
        lines += self.tail(s)
        self.windows = outer
        self.scopes.pop()
        return "\n".join(lines)

    def condition(self, e: Expr) -> str:
        """A WHERE, HAVING or ON condition."""
        outer, self.in_condition = self.in_condition, True
        text = self.expr(e)
        self.in_condition = outer
        return text

    def windowed(self, write_one: Callable[[Any], str], node: object) -> str:
        """A window function or definition: subqueries inside it are in a window."""
        outer, self.in_window = self.in_window, True
        text = write_one(node)
        self.in_window = outer
        return text

    def item(self, item: SelectItem) -> str:
        text = self.expr(item.expr)
        return text if item.alias is None else f"{text} AS {self.quote(item.alias)}"

    def group_by(self, keys: tuple[Expr, ...]) -> str:
        if AllColumns() not in keys:
            return ", ".join(self.expr(e) for e in keys)
        if len(keys) != 1:
            raise InvalidQuery("GROUP BY ALL takes no other key")
        self.require(Feature.GROUP_BY_ALL)
        return "ALL"

    def query_order_by(self, keys: tuple[SortKey, ...]) -> str:
        """A query's ORDER BY keys: a list, or ALL with its direction and null order."""
        if not any(isinstance(k.expr, AllColumns) for k in keys):
            return self.sort_keys(keys)
        if len(keys) != 1:
            raise InvalidQuery("ORDER BY ALL takes no other key")
        self.require(Feature.ORDER_BY_ALL)
        return self.sort_key(keys[0], "ALL")

    def tail(self, q: Select | UnionAll) -> list[str]:
        lines = []
        if q.order_by:
            lines.append("ORDER BY " + self.query_order_by(q.order_by))
        if q.limit is not None:
            lines.append(f"LIMIT {q.limit}")
        if q.offset is not None:
            self.require(Feature.LIMIT_OFFSET)
            lines.append(f"OFFSET {q.offset}")
        return lines

    def union(self, u: UnionAll) -> str:
        # A chain reads left to right, so only a left UNION ALL may go bare;
        # ORDER BY/LIMIT inside an operand and WITH always need parentheses.
        left_bare = isinstance(u.left, (Select, UnionAll, Values)) and not _has_tail(u.left)
        right_bare = isinstance(u.right, (Select, Values)) and not _has_tail(u.right)
        left, right = self.query(u.left), self.query(u.right)
        outer, self.windows = self.windows, ()  # no WINDOW clause is in scope here
        lines = [left if left_bare else f"({left})", "UNION ALL",
                 right if right_bare else f"({right})", *self.tail(u)]
        self.windows = outer
        return "\n".join(lines)

    def with_(self, w: With) -> str:
        if not w.ctes:
            raise InvalidQuery("a WITH needs at least one query")
        ctes = ", ".join(self.cte(c.name, c.columns, c.query) for c in w.ctes)
        body = self.query(w.body)
        return f"WITH {ctes}\n" + (f"({body})" if isinstance(w.body, With) else body)

    def cte(self, name: str, columns: tuple[str, ...], query: Query) -> str:
        if columns:
            self.require(Feature.COLUMN_ALIASES)
        return f"{self.quote(name)}{self.column_list(columns)} AS ({self.renamed_query(query, columns)})"

    def renamed_query(self, query: Query, columns: tuple[str, ...]) -> str:
        """A query whose columns a column list renames (VALUES then needs no wrapping)."""
        if isinstance(query, Values):
            return self.values(query, named=bool(columns))
        return self.query(query)

    def column_list(self, columns: tuple[str, ...]) -> str:
        return "(" + ", ".join(self.quote(c) for c in columns) + ")" if columns else ""

    # -- sources -------------------------------------------------------------

    def source(self, src: Source) -> str:
        if isinstance(src, TableRef):
            name = self.quote(src.name)
            return name if src.alias is None else f"{name} AS {self.quote(src.alias)}"
        if isinstance(src, SubqueryRef):
            return self.derived_table(src)
        if isinstance(src, TableFunctionRef):
            return self.table_function(src)
        return self.join(src)

    def derived_table(self, src: SubqueryRef) -> str:
        if src.alias is None:
            if src.columns:
                raise InvalidQuery("a column list needs a table alias before it")
            self.require(Feature.SUBQUERY_WITHOUT_ALIAS)
            return f"({self.query(src.query)})"
        alias = self.quote(src.alias)
        if not src.columns:
            return f"({self.query(src.query)}) AS {alias}"
        self.require(Feature.COLUMN_ALIASES)
        if self.d.derived_column_lists:
            return f"({self.renamed_query(src.query, src.columns)}) AS {alias}{self.column_list(src.columns)}"
        # The same table through a WITH query's column list, which the dialect has.
        inner = self.cte(RENAMED_ALIAS, src.columns, src.query)
        return f"(WITH {inner} SELECT * FROM {self.quote(RENAMED_ALIAS)}) AS {alias}"

    def table_function(self, src: TableFunctionRef) -> str:
        check_table_function(src)
        self.require(_TABLE_FUNCTION_FEATURES[src.name])
        text = f"{src.name}({', '.join(self.expr(a) for a in src.args)})"
        if self.d.explicit_source_columns:
            # The engine names the column otherwise (`value`, `id`): say which.
            return f"{text} AS {self.quote(table_name(src))}({self.quote(column_name(src))})"
        if src.alias is None:
            return text
        return f"{text} AS {self.quote(src.alias)}{self.column_list(src.columns)}"

    def join(self, j: Join) -> str:
        if j.kind is JoinKind.FULL:
            self.require(Feature.FULL_JOIN)
        if (j.on is None) != (j.kind is JoinKind.CROSS):
            needs = "needs" if j.on is None else "takes no"
            raise InvalidQuery(f"a {j.kind.value} JOIN {needs} ON")
        right = self.source(j.right)
        # Joins associate to the left, so a join on the right needs parentheses.
        right = f"({right})" if isinstance(j.right, Join) else right
        text = f"{self.source(j.left)} {j.kind.value} JOIN {right}"
        return text if j.on is None else f"{text} ON {self.condition(j.on)}"

    # -- expressions -----------------------------------------------------------

    def expr(self, e: Expr) -> str:
        write_one = _EXPRS.get(type(e))
        if write_one is None:
            raise InvalidQuery(f"not an expression of the model: {e!r}")
        return write_one(self, e)

    def operand(self, e: Expr) -> str:
        """An operand of an operator: parenthesised unless it cannot be split."""
        text = self.expr(e)
        compound = isinstance(e, _COMPOUND) or text.startswith("-")
        return f"({text})" if compound else text

    def column(self, c: Column) -> str:
        name = self.quote(c.name)
        return name if c.table is None else f"{self.quote(c.table)}.{name}"

    def star(self, s: Star) -> str:
        return "*" if s.table is None else f"{self.quote(s.table)}.*"

    def binary(self, b: BinaryOp) -> str:
        if b.op is BinaryOperator.INT_DIV:
            self.require(Feature.INT_DIV_OPERATOR)
        return f"{self.operand(b.left)} {b.op.value} {self.operand(b.right)}"

    def unary(self, u: UnaryOp) -> str:
        if u.op is UnaryOperator.NOT:
            return f"NOT {self.operand(u.operand)}"
        return f"-({self.expr(u.operand)})"  # never `-5`, which is the literal -5

    def is_null(self, e: IsNull) -> str:
        return f"{self.operand(e.operand)} IS {'NOT ' if e.negated else ''}NULL"

    # -- subqueries and IN lists -------------------------------------------------

    def scalar_subquery(self, e: ScalarSubquery) -> str:
        self.require(Feature.SCALAR_SUBQUERY)
        if outer_references(e.query) and not is_aggregated(e.query):
            self.require(Feature.CORRELATED_SCALAR_UNAGGREGATED)
        return self.subquery(e.query)

    def in_subquery(self, e: InSubquery) -> str:
        self.require(Feature.IN_SUBQUERY)
        self.check_predicate_place()
        operand = self.operand(e.operand)
        return f"{operand} {'NOT ' if e.negated else ''}IN {self.subquery(e.query)}"

    def exists(self, e: Exists) -> str:
        self.require(Feature.EXISTS_SUBQUERY)
        self.check_predicate_place()
        return f"{'NOT ' if e.negated else ''}EXISTS {self.subquery(e.query)}"

    def check_predicate_place(self) -> None:
        if not self.in_condition:
            self.require(Feature.SUBQUERY_PREDICATE_AS_VALUE)

    def subquery(self, q: Query) -> str:
        """`(query)` in an expression, with the correlation checks of the place."""
        outer = outer_references(q)
        if outer:
            self.require(Feature.CORRELATED_SUBQUERY)
            if self.in_window:
                self.require(Feature.CORRELATED_SUBQUERY_IN_WINDOW)
            if self.scopes and not outer <= self.scopes[-1]:
                self.require(Feature.CORRELATION_BEYOND_PARENT)
        place = self.in_condition, self.in_window
        self.in_condition = self.in_window = False  # the subquery's own clauses
        text = self.query(q)
        self.in_condition, self.in_window = place
        return f"({text})"

    def in_list(self, e: InList) -> str:
        if not e.items:
            raise InvalidQuery("an IN list needs at least one item")
        if len(e.items) == 1 and isinstance(e.items[0], ScalarSubquery):
            # `x IN ((SELECT ...))` reads back as `x IN (SELECT ...)`, as in PostgreSQL.
            raise InvalidQuery("an IN list of one scalar subquery cannot be written apart "
                               "from IN (SELECT ...)")
        items = ", ".join(self.expr(i) for i in e.items)
        return f"{self.operand(e.operand)} {'NOT ' if e.negated else ''}IN ({items})"

    def case(self, c: Case) -> str:
        if not c.whens:
            raise InvalidQuery("CASE needs at least one WHEN")
        parts = [f"WHEN {self.expr(w)} THEN {self.expr(t)}" for w, t in c.whens]
        if c.default is not None:
            parts.append(f"ELSE {self.expr(c.default)}")
        return f"CASE {' '.join(parts)} END"

    def cast(self, c: Cast) -> str:
        operand = self.expr(c.operand)
        if isinstance(c.operand, Literal):  # parentheses keep it from folding on reading
            operand = f"({operand})"
        return f"CAST({operand} AS {self.d.type_name(c.to)})"

    def interval(self, i: Interval) -> str:
        self.require(Feature.INTERVAL_LITERAL)
        return self.d.interval_literal(i.count, i.unit.value)

    def literal(self, lit: Literal) -> str:
        problem = literal_problem(lit)
        if problem is not None:
            raise InvalidQuery(problem)
        v, t = lit.value, lit.type
        if v is None:
            return "NULL" if t is None else f"CAST(NULL AS {self.d.type_name(t)})"
        assert t is not None
        if t.is_integer:
            text = self.d.integer_literal(v, t)
            # Only the type a bare integer is read as can go without a CAST.
            natural = natural_integer_type(v) == t
            return text if natural else f"CAST({text} AS {self.d.type_name(t)})"
        if t.is_float and not math.isfinite(v):
            self.require(Feature.NAN_LITERAL)
        return _LITERALS[t.kind](self.d, v, t)

    # -- calls and windows -------------------------------------------------------

    def call(self, f: FuncCall, in_window: bool = False) -> str:
        self.check_call(f, in_window)
        inner = ("DISTINCT " if f.distinct else "") + ", ".join(self.expr(a) for a in f.args)
        if f.order_by:
            inner += (" " if inner else "") + "ORDER BY " + self.sort_keys(f.order_by)
        nulls = f.null_treatment.value if f.null_treatment is not None else ""
        inside = self.d.ignore_nulls_placement is IgnoreNullsPlacement.INSIDE
        if nulls and inside:
            inner += " " + nulls
        text = f"{self.d.function_name(f.name)}({inner})"
        if f.within_group:
            text += f" WITHIN GROUP (ORDER BY {self.sort_keys(f.within_group)})"
        if f.from_last is not None:
            text += " FROM LAST" if f.from_last else " FROM FIRST"
        if nulls and not inside:
            text += " " + nulls
        if f.filter is not None:
            text += f" FILTER (WHERE {self.expr(f.filter)})"
        return text

    def check_call(self, f: FuncCall, in_window: bool) -> None:
        functions.lookup(f.name)  # an unknown name is an invalid model
        ranking_order = bool(f.order_by) and f.name in functions.ARGUMENT_ORDERED_RANKING
        wanted = [
            (ranking_order, Feature.RANKING_ORDER_BY),
            (bool(f.order_by) and not ranking_order, Feature.ORDERED_AGGREGATE),
            (f.null_treatment is not None, Feature.IGNORE_NULLS),
            (f.from_last is not None, Feature.NTH_VALUE_FROM_LAST),
            (in_window and f.distinct, Feature.DISTINCT_WINDOW_AGGREGATE),
            (in_window and f.filter is not None, Feature.FILTER_WINDOW_AGGREGATE),
            # The finer feature first: under OVER, the refusal names it.
            (in_window and bool(f.within_group), Feature.WITHIN_GROUP_WINDOW),
            (bool(f.within_group), Feature.WITHIN_GROUP),
        ]
        if f.name in ("lag", "lead"):
            wanted += _offset_argument_features(f.args)
        for used, feature in wanted:
            if used:
                self.require(feature)
        # After the clauses: a dialect without WITHIN GROUP has no percentile_cont
        # either, and the clause is the finer reason.
        if f.name in self.d.missing_functions:
            raise Unsupported(f"function.{f.name}")

    def window_expr(self, w: WindowExpr) -> str:
        # The frame may come from a named window, so look at the resolved one.
        # `OVER (w)` of a framed w is meant to fail: the engine must refuse it.
        with contextlib.suppress(FramedWindowCopy):
            self.check_resolved_window(w.func.name, resolve_window(w.window, self.windows),
                                       reads_frame=bool(w.func.order_by))
        call = self.windowed(lambda f: self.call(f, in_window=True), w.func)
        spec = w.window
        if spec.base is not None and spec == WindowSpec(base=spec.base):
            self.require(Feature.NAMED_WINDOW)
            return f"{call} OVER {self.quote(spec.base)}"
        return f"{call} OVER ({self.windowed(self.spec, spec)})"

    def check_resolved_window(self, name: str, resolved: WindowSpec, reads_frame: bool = False) -> None:
        # A ranking function with an ORDER BY of its own reads its frame.
        ranking = not functions.lookup(name).uses_frame and not reads_frame
        if ranking and resolved.frame is not None and not self.d.supports(Feature.FRAME_ON_RANKING):
            raise Unsupported(Feature.FRAME_ON_RANKING.value)
        self.check_window_limits(name, resolved)
        if resolved.frame is not None and resolved.frame.mode is FrameMode.RANGE and not resolved.order_by:
            self.require(Feature.RANGE_WITHOUT_ORDER_BY)

    def check_window_limits(self, name: str, resolved: WindowSpec) -> None:
        """Per-function limits of a dialect: an ORDER BY it insists on or
        refuses, a moving frame start it cannot compute."""
        if name in self.d.needs_order_by and not resolved.order_by:
            raise Unsupported(f"window.{name}-without-order-by")
        ordered = bool(resolved.order_by) or resolved.frame is not None
        if name in self.d.unordered_window_only and ordered:
            raise Unsupported(f"window.{name}-with-order-by")
        frame = resolved.frame
        moving = frame is not None and frame.start.kind is not BoundKind.UNBOUNDED_PRECEDING
        if name in self.d.no_moving_frame_start and moving:
            raise Unsupported(f"window.{name}-moving-frame")

    def spec(self, spec: WindowSpec) -> str:
        parts = []
        if spec.base is not None:  # `(w ...)`: a bare `OVER w` does not come here
            self.require(Feature.NAMED_WINDOW)
            self.require(Feature.NAMED_WINDOW_REFINEMENT)
            parts.append(self.quote(spec.base))
        if spec.partition_by:
            parts.append("PARTITION BY " + ", ".join(self.expr(e) for e in spec.partition_by))
        if spec.order_by:
            parts.append("ORDER BY " + self.sort_keys(spec.order_by))
        if spec.frame is not None:
            parts.append(self.frame(spec.frame))
        return " ".join(parts)

    def frame(self, f: Frame) -> str:
        if f.mode is FrameMode.GROUPS:
            self.require(Feature.GROUPS_FRAME)
        # A frame the syntax rules forbid (from UNBOUNDED FOLLOWING) is written
        # as it is: such a query is meant to fail (error conformance), and the
        # engine, not the writer, must refuse it.
        if starts_after_end(f):
            self.require(Feature.FRAME_START_AFTER_END)
        offsets = (offset_value(f.start.offset), offset_value(f.end.offset))
        if all(isinstance(o, Interval) for o in offsets) and offsets[0].unit != offsets[1].unit:
            self.require(Feature.RANGE_MIXED_INTERVAL_UNITS)
        if f.mode is not FrameMode.RANGE and f.start.kind is BoundKind.FOLLOWING \
                and f.end.kind is BoundKind.FOLLOWING and _huge(offsets[1]):
            self.require(Feature.FOLLOWING_FRAME_TO_HUGE_OFFSET)
        start, end = self.bound(f.start, f.mode), self.bound(f.end, f.mode)
        text = f"{f.mode.value} BETWEEN {start} AND {end}"
        if f.exclusion is not None:
            self.require(Feature.EXCLUDE)
            text += f" EXCLUDE {f.exclusion.value}"
        return text

    def bound(self, b: Bound, mode: FrameMode) -> str:
        takes_offset = b.kind.value in ("PRECEDING", "FOLLOWING")
        if takes_offset != (b.offset is not None):
            needs = "needs an" if takes_offset else "takes no"
            raise InvalidQuery(f"a {b.kind.value} bound {needs} offset")
        if b.offset is None:
            return b.kind.value
        problem = offset_problem(b.offset)
        if problem is not None:
            raise InvalidQuery(problem)
        has_interval = any(isinstance(node, Interval) for node in walk(b.offset))
        if not isinstance(b.offset, (Literal, Interval)):  # the narrowest feature first
            if has_interval:
                self.require(Feature.FRAME_OFFSET_INTERVAL_EXPRESSION)
            self.require(Feature.FRAME_OFFSET_EXPRESSION)
        if mode is FrameMode.RANGE:
            self.require(Feature.RANGE_OFFSET)
        elif _beyond_int(offset_value(b.offset)):
            self.require(Feature.OFFSET_BEYOND_INT)
        if has_interval:
            self.require(Feature.RANGE_INTERVAL)
        text = self.expr(b.offset)  # checks the literal, and the features it needs
        if isinstance(b.offset, Literal):  # some engines take only bare numbers here
            spelled = self.d.frame_offset_literal(b.offset.value, b.offset.type)
            text = text if spelled is None else spelled
        return f"{text} {b.kind.value}"

    def sort_keys(self, keys: tuple[SortKey, ...]) -> str:
        return ", ".join(self.sort_key(k) for k in keys)

    def sort_key(self, k: SortKey, expr_text: str | None = None) -> str:
        text = expr_text if expr_text is not None else self.expr(k.expr)
        text = f"{text} {'DESC' if k.descending else 'ASC'}"
        if k.nulls is not None:
            self.require(Feature.NULLS_ORDER)
            text += " " + k.nulls.value
        return text


_EXPRS: dict[type, Callable[[_Writer, Any], str]] = {
    Column: _Writer.column,
    Literal: _Writer.literal,
    Interval: _Writer.interval,
    Star: _Writer.star,
    BinaryOp: _Writer.binary,
    UnaryOp: _Writer.unary,
    IsNull: _Writer.is_null,
    Case: _Writer.case,
    Cast: _Writer.cast,
    FuncCall: _Writer.call,
    WindowExpr: _Writer.window_expr,
    ScalarSubquery: _Writer.scalar_subquery,
    InSubquery: _Writer.in_subquery,
    Exists: _Writer.exists,
    InList: _Writer.in_list,
}

# Operands written in parentheses: they could otherwise be split or re-read.
_COMPOUND = (BinaryOp, UnaryOp, IsNull, InSubquery, InList, Exists)

# Spelling of non-NULL literals by type, through the dialect's hooks.
_LITERALS: dict[TypeKind, Callable[[Dialect, Any, Any], str]] = {
    TypeKind.BOOL: lambda d, v, t: "TRUE" if v else "FALSE",
    TypeKind.FLOAT32: lambda d, v, t: d.float_literal(v, t),
    TypeKind.FLOAT64: lambda d, v, t: d.float_literal(v, t),
    TypeKind.DECIMAL: lambda d, v, t: d.decimal_literal(v, t),
    TypeKind.STRING: lambda d, v, t: d.string_literal(v),
    TypeKind.DATE: lambda d, v, t: d.date_literal(v),
    TypeKind.TIMESTAMP: lambda d, v, t: d.timestamp_literal(v),
}

# The largest INTEGER: some engines take no larger ROWS/GROUPS or lag/lead offset.
_MAX_INT = 2**31 - 1


def _beyond_int(value: object) -> bool:
    return type(value) is int and value > _MAX_INT


def _huge(value: object) -> bool:
    return type(value) is int and value >= _MAX_INT


def _reads_rows(expr: Expr) -> bool:
    """Does `expr` read a row (a column, a subquery), so it is no constant?"""
    return any(isinstance(n, (Column, Star, ScalarSubquery, InSubquery, Exists, WindowExpr))
               for n in walk(expr))


def _offset_argument_features(args: tuple[Expr, ...]) -> list[tuple[bool, Feature]]:
    """What lag/lead(value, offset, default) asks of a dialect beyond the
    standard's constant offset: an offset or a default per row, a NULL
    offset, an offset past the largest INTEGER."""
    offset = args[1] if len(args) > 1 else None
    default = args[2] if len(args) > 2 else None
    per_row = offset is not None and _reads_rows(offset)
    value = None if offset is None or per_row else offset_value(offset)
    return [
        (per_row, Feature.LAG_ROW_OFFSET),
        (offset is not None and not per_row and value is None, Feature.LAG_NULL_OFFSET),
        (_beyond_int(value), Feature.OFFSET_BEYOND_INT),
        (default is not None and _reads_rows(default), Feature.LAG_ROW_DEFAULT),
    ]
