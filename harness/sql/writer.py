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

import math
from collections.abc import Callable
from typing import Any

from harness import functions
from harness.dialects.base import Dialect, Feature, IgnoreNullsPlacement
from harness.dialects.canonical import CANONICAL
from harness.errors import InvalidQuery, Unsupported
from harness.model import (
    BinaryOp,
    BinaryOperator,
    Bound,
    BoundKind,
    Case,
    Cast,
    Column,
    Expr,
    Frame,
    FrameMode,
    FuncCall,
    Interval,
    IsNull,
    Join,
    JoinKind,
    Literal,
    NamedWindow,
    Query,
    Select,
    SelectItem,
    SortKey,
    Source,
    Star,
    SubqueryRef,
    TableRef,
    UnaryOp,
    UnaryOperator,
    UnionAll,
    WindowExpr,
    WindowSpec,
    With,
    resolve_window,
)
from harness.sql.frames import starts_after_end
from harness.sql.literals import literal_problem, natural_integer_type
from harness.types import TypeKind


def write(query: Query, dialect: Dialect = CANONICAL) -> str:
    """The SQL text of `query` in `dialect`; raises Unsupported for a missing feature."""
    return _Writer(dialect).query(query)


def write_expr(expr: Expr, dialect: Dialect = CANONICAL) -> str:
    return _Writer(dialect).expr(expr)


def _has_tail(q: Select | UnionAll) -> bool:
    return bool(q.order_by) or q.limit is not None or q.offset is not None


class _Writer:
    def __init__(self, dialect: Dialect) -> None:
        self.d = dialect
        # The WINDOW clause of the SELECT being written, to resolve `OVER w`.
        self.windows: tuple[NamedWindow, ...] = ()

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
        return self.with_(q)

    def select(self, s: Select) -> str:
        if not s.items:
            raise InvalidQuery("a SELECT needs at least one item")
        outer, self.windows = self.windows, s.windows
        lines = [("SELECT DISTINCT " if s.distinct else "SELECT ")
                 + ", ".join(self.item(i) for i in s.items)]
        if s.source is not None:
            lines.append("FROM " + self.source(s.source))
        if s.where is not None:
            lines.append("WHERE " + self.expr(s.where))
        if s.group_by:
            lines.append("GROUP BY " + ", ".join(self.expr(e) for e in s.group_by))
        if s.having is not None:
            lines.append("HAVING " + self.expr(s.having))
        if s.windows:
            self.require(Feature.NAMED_WINDOW)
            lines.append("WINDOW " + ", ".join(
                f"{self.quote(w.name)} AS ({self.spec(w.spec)})" for w in s.windows))
        lines += self.tail(s)
        self.windows = outer
        return "\n".join(lines)

    def item(self, item: SelectItem) -> str:
        text = self.expr(item.expr)
        return text if item.alias is None else f"{text} AS {self.quote(item.alias)}"

    def tail(self, q: Select | UnionAll) -> list[str]:
        lines = []
        if q.order_by:
            lines.append("ORDER BY " + self.sort_keys(q.order_by))
        if q.limit is not None:
            lines.append(f"LIMIT {q.limit}")
        if q.offset is not None:
            self.require(Feature.LIMIT_OFFSET)
            lines.append(f"OFFSET {q.offset}")
        return lines

    def union(self, u: UnionAll) -> str:
        # A chain reads left to right, so only a left UNION ALL may go bare;
        # ORDER BY/LIMIT inside an operand and WITH always need parentheses.
        left_bare = isinstance(u.left, (Select, UnionAll)) and not _has_tail(u.left)
        right_bare = isinstance(u.right, Select) and not _has_tail(u.right)
        left, right = self.query(u.left), self.query(u.right)
        outer, self.windows = self.windows, ()  # no WINDOW clause is in scope here
        lines = [left if left_bare else f"({left})", "UNION ALL",
                 right if right_bare else f"({right})", *self.tail(u)]
        self.windows = outer
        return "\n".join(lines)

    def with_(self, w: With) -> str:
        if not w.ctes:
            raise InvalidQuery("a WITH needs at least one query")
        ctes = ", ".join(f"{self.quote(c.name)} AS ({self.query(c.query)})" for c in w.ctes)
        body = self.query(w.body)
        return f"WITH {ctes}\n" + (f"({body})" if isinstance(w.body, With) else body)

    # -- sources -------------------------------------------------------------

    def source(self, src: Source) -> str:
        if isinstance(src, TableRef):
            name = self.quote(src.name)
            return name if src.alias is None else f"{name} AS {self.quote(src.alias)}"
        if isinstance(src, SubqueryRef):
            return f"({self.query(src.query)}) AS {self.quote(src.alias)}"
        return self.join(src)

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
        return text if j.on is None else f"{text} ON {self.expr(j.on)}"

    # -- expressions -----------------------------------------------------------

    def expr(self, e: Expr) -> str:
        write_one = _EXPRS.get(type(e))
        if write_one is None:
            raise InvalidQuery(f"not an expression of the model: {e!r}")
        return write_one(self, e)

    def operand(self, e: Expr) -> str:
        """An operand of an operator: parenthesised unless it cannot be split."""
        text = self.expr(e)
        compound = isinstance(e, (BinaryOp, UnaryOp, IsNull)) or text.startswith("-")
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
            inner += " ORDER BY " + self.sort_keys(f.order_by)
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
        wanted = [
            (bool(f.order_by), Feature.ORDERED_AGGREGATE),
            (f.null_treatment is not None, Feature.IGNORE_NULLS),
            (f.from_last is not None, Feature.NTH_VALUE_FROM_LAST),
            (in_window and f.distinct, Feature.DISTINCT_WINDOW_AGGREGATE),
            (in_window and f.filter is not None, Feature.FILTER_WINDOW_AGGREGATE),
            # The finer feature first: under OVER, the refusal names it.
            (in_window and bool(f.within_group), Feature.WITHIN_GROUP_WINDOW),
            (bool(f.within_group), Feature.WITHIN_GROUP),
        ]
        for used, feature in wanted:
            if used:
                self.require(feature)
        # After the clauses: a dialect without WITHIN GROUP has no percentile_cont
        # either, and the clause is the finer reason.
        if f.name in self.d.missing_functions:
            raise Unsupported(f"function.{f.name}")

    def window_expr(self, w: WindowExpr) -> str:
        ranking = not functions.lookup(w.func.name).uses_frame
        # The frame may come from a named window, so look at the resolved one.
        resolved = resolve_window(w.window, self.windows)
        if ranking and resolved.frame is not None and not self.d.supports(Feature.FRAME_ON_RANKING):
            raise Unsupported(Feature.FRAME_ON_RANKING.value)
        self.check_window_limits(w.func.name, resolved)
        if resolved.frame is not None and resolved.frame.mode is FrameMode.RANGE and not resolved.order_by:
            self.require(Feature.RANGE_WITHOUT_ORDER_BY)
        call = self.call(w.func, in_window=True)
        spec = w.window
        if spec.base is not None and spec == WindowSpec(base=spec.base):
            self.require(Feature.NAMED_WINDOW)
            return f"{call} OVER {self.quote(spec.base)}"
        return f"{call} OVER ({self.spec(spec)})"

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
        offsets = (f.start.offset, f.end.offset)
        if all(isinstance(o, Interval) for o in offsets) and offsets[0].unit != offsets[1].unit:
            self.require(Feature.RANGE_MIXED_INTERVAL_UNITS)
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
        if not isinstance(b.offset, (Literal, Interval)):
            raise InvalidQuery("a frame offset must be a Literal or an Interval")
        if mode is FrameMode.RANGE:
            self.require(Feature.RANGE_OFFSET)
        if isinstance(b.offset, Interval):
            self.require(Feature.RANGE_INTERVAL)
        text = self.expr(b.offset)  # checks the literal, and the features it needs
        if isinstance(b.offset, Literal):  # some engines take only bare numbers here
            spelled = self.d.frame_offset_literal(b.offset.value, b.offset.type)
            text = text if spelled is None else spelled
        return f"{text} {b.kind.value}"

    def sort_keys(self, keys: tuple[SortKey, ...]) -> str:
        return ", ".join(self.sort_key(k) for k in keys)

    def sort_key(self, k: SortKey) -> str:
        text = f"{self.expr(k.expr)} {'DESC' if k.descending else 'ASC'}"
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
}

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
