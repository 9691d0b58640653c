"""The query model: typed, immutable dataclasses for the queries the harness expresses.

Everything downstream works on this model: the canonical SQL writer and parser
(`harness.sql`), the dialects that render it for each engine, the reference
implementation that evaluates it, and (later) the generators and the batching
rewrite. Nodes are frozen and hold tuples, so they hash, compare by value, and
can be shared freely.

Conventions:
- `None` in an optional clause means "not written" (the engine default),
  never "whatever": e.g. `SortKey.nulls is None` is the engine's default null
  order and `WindowSpec.frame is None` is the default frame.
- Identifiers are stored as written, case preserved; the writer quotes them
  when they need quoting.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass, replace
from enum import Enum

from harness.core.errors import InvalidQuery
from harness.core.types import INT32, INT64, SqlType

# ---------------------------------------------------------------------------
# Scalar expressions


@dataclass(frozen=True)
class Column:
    """A column reference, optionally qualified by a table name or alias."""

    name: str
    table: str | None = None


@dataclass(frozen=True)
class Literal:
    """A constant. `type` is None only for an untyped NULL.

    Python values by type: bool; int (integer types); float (REAL/DOUBLE,
    including nan/inf/-0.0); Decimal (DECIMAL); str (VARCHAR);
    datetime.date (DATE); datetime.datetime (TIMESTAMP, naive).
    """

    value: object
    type: SqlType | None


class IntervalUnit(Enum):
    YEAR = "YEAR"
    MONTH = "MONTH"
    DAY = "DAY"
    HOUR = "HOUR"
    MINUTE = "MINUTE"
    SECOND = "SECOND"


@dataclass(frozen=True)
class Interval:
    """An interval constant such as INTERVAL '3' DAY (used by RANGE offsets)."""

    count: int
    unit: IntervalUnit


@dataclass(frozen=True)
class Star:
    """`*` in count(*) or the select list (optionally `t.*`)."""

    table: str | None = None


class BinaryOperator(Enum):
    ADD = "+"
    SUB = "-"
    MUL = "*"
    DIV = "/"
    MOD = "%"
    CONCAT = "||"
    EQ = "="
    NE = "<>"
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="
    AND = "AND"
    OR = "OR"
    # `a // b` (DuckDB's): on two integers the quotient truncated toward zero,
    # in their common integer type (-7 // 2 = -3); on other numbers DuckDB
    # divides as `/` on doubles does (7.5 // 2 = 3.75, measured on 2.0.1).
    # Dialects without it raise Unsupported.
    INT_DIV = "//"
    # NULL-safe comparisons: NULL IS NOT DISTINCT FROM NULL is TRUE, never NULL.
    IS_DISTINCT_FROM = "IS DISTINCT FROM"
    IS_NOT_DISTINCT_FROM = "IS NOT DISTINCT FROM"


COMPARISONS = frozenset(
    {BinaryOperator.EQ, BinaryOperator.NE, BinaryOperator.LT,
     BinaryOperator.LE, BinaryOperator.GT, BinaryOperator.GE}
)


@dataclass(frozen=True)
class BinaryOp:
    op: BinaryOperator
    left: Expr
    right: Expr


class UnaryOperator(Enum):
    NOT = "NOT"
    NEG = "-"


@dataclass(frozen=True)
class UnaryOp:
    op: UnaryOperator
    operand: Expr


@dataclass(frozen=True)
class IsNull:
    """`operand IS NULL`, or `IS NOT NULL` when negated."""

    operand: Expr
    negated: bool = False


@dataclass(frozen=True)
class Case:
    """Searched CASE: WHEN cond THEN result ... [ELSE default] END."""

    whens: tuple[tuple[Expr, Expr], ...]
    default: Expr | None = None


@dataclass(frozen=True)
class Cast:
    operand: Expr
    to: SqlType


class NullTreatment(Enum):
    RESPECT = "RESPECT NULLS"
    IGNORE = "IGNORE NULLS"


@dataclass(frozen=True)
class FuncCall:
    """A call of a scalar, aggregate or window function.

    Which of the three it is comes from the function table
    (`harness.core.functions`), not from this node. Aggregate-only clauses:
    `distinct`, `filter`, `order_by` (e.g. string_agg(s, ',' ORDER BY k)).
    Window-only clauses: `null_treatment` (IGNORE/RESPECT NULLS) and
    `from_last` (nth_value FROM FIRST = False / FROM LAST = True).
    """

    name: str  # lower case
    args: tuple[Expr, ...] = ()
    distinct: bool = False
    filter: Expr | None = None
    order_by: tuple[SortKey, ...] = ()
    null_treatment: NullTreatment | None = None
    from_last: bool | None = None
    # `percentile_cont(0.5) WITHIN GROUP (ORDER BY x)`: an ordered-set
    # aggregate's sort keys (the values it reads), apart from `order_by`.
    within_group: tuple[SortKey, ...] = ()


@dataclass(frozen=True)
class WindowExpr:
    """`func OVER window`."""

    func: FuncCall
    window: WindowSpec


@dataclass(frozen=True)
class ScalarSubquery:
    """`(SELECT ...)` as a value: one column, at most one row (NULL when none).

    It may read columns of the query around it (a correlated subquery).
    """

    query: Query


@dataclass(frozen=True)
class InSubquery:
    """`operand [NOT] IN (SELECT ...)`, with the standard's three-valued result."""

    operand: Expr
    query: Query
    negated: bool = False


@dataclass(frozen=True)
class InList:
    """`operand [NOT] IN (a, b, ...)`: a chain of `=` joined by OR."""

    operand: Expr
    items: tuple[Expr, ...]
    negated: bool = False


@dataclass(frozen=True)
class Exists:
    """`[NOT] EXISTS (SELECT ...)`: TRUE when the subquery has a row."""

    query: Query
    negated: bool = False


@dataclass(frozen=True)
class AllColumns:
    """`ALL` as the one key of `GROUP BY ALL` or `ORDER BY ALL`.

    GROUP BY ALL groups by every select item that holds no aggregate; ORDER BY
    ALL (a SortKey whose expr is AllColumns) sorts by every output column, left
    to right, in the key's direction and null order. Never an expression
    elsewhere.
    """


Expr = (
    Column | Literal | Interval | Star | BinaryOp | UnaryOp | IsNull | Case | Cast | FuncCall
    | WindowExpr | ScalarSubquery | InSubquery | InList | Exists | AllColumns
)
SUBQUERY_EXPRS = (ScalarSubquery, InSubquery, Exists)

# ---------------------------------------------------------------------------
# Windows


class NullsOrder(Enum):
    FIRST = "NULLS FIRST"
    LAST = "NULLS LAST"


@dataclass(frozen=True)
class SortKey:
    """One ORDER BY key. `nulls is None` means the engine's default null order."""

    expr: Expr
    descending: bool = False
    nulls: NullsOrder | None = None


class FrameMode(Enum):
    ROWS = "ROWS"
    RANGE = "RANGE"
    GROUPS = "GROUPS"


class BoundKind(Enum):
    UNBOUNDED_PRECEDING = "UNBOUNDED PRECEDING"
    PRECEDING = "PRECEDING"
    CURRENT_ROW = "CURRENT ROW"
    FOLLOWING = "FOLLOWING"
    UNBOUNDED_FOLLOWING = "UNBOUNDED FOLLOWING"


@dataclass(frozen=True)
class Bound:
    """A frame bound; `offset` is set exactly for PRECEDING and FOLLOWING.

    The offset is a constant expression: a Literal (integer, decimal or
    float), an Interval, or an expression over constants only (`1 + 1`,
    `INTERVAL '1' DAY * 2`); never a column or a subquery.
    """

    kind: BoundKind
    offset: Expr | None = None


UNBOUNDED_PRECEDING = Bound(BoundKind.UNBOUNDED_PRECEDING)
CURRENT_ROW = Bound(BoundKind.CURRENT_ROW)
UNBOUNDED_FOLLOWING = Bound(BoundKind.UNBOUNDED_FOLLOWING)


def preceding(offset: Expr) -> Bound:
    return Bound(BoundKind.PRECEDING, offset)


def following(offset: Expr) -> Bound:
    return Bound(BoundKind.FOLLOWING, offset)


class Exclusion(Enum):
    NO_OTHERS = "NO OTHERS"
    CURRENT_ROW = "CURRENT ROW"
    GROUP = "GROUP"
    TIES = "TIES"


@dataclass(frozen=True)
class Frame:
    """A frame clause. Always stored in BETWEEN form (the short form `ROWS 2
    PRECEDING` is read as BETWEEN 2 PRECEDING AND CURRENT ROW).

    `exclusion is None` means no EXCLUDE clause was written, which is distinct
    from an explicit EXCLUDE NO OTHERS (a dialect without EXCLUDE raises
    Unsupported for the latter, since it cannot write it).
    """

    mode: FrameMode
    start: Bound
    end: Bound
    exclusion: Exclusion | None = None


@dataclass(frozen=True)
class WindowSpec:
    """An OVER clause or a named window definition.

    `base` names a window of the WINDOW clause that this one refines (`OVER w`
    is WindowSpec(base="w")). `frame is None` is the default frame.

    `OVER w` and `OVER (w)` differ: the first uses w as it is, the second
    copies w into a new window, which the standard forbids when w has a frame.
    `parenthesized` is True exactly for `(w)` with nothing else inside; a spec
    with clauses of its own is always written in parentheses.
    """

    base: str | None = None
    partition_by: tuple[Expr, ...] = ()
    order_by: tuple[SortKey, ...] = ()
    frame: Frame | None = None
    parenthesized: bool = False


@dataclass(frozen=True)
class NamedWindow:
    name: str
    spec: WindowSpec


# ---------------------------------------------------------------------------
# Queries


@dataclass(frozen=True)
class SelectItem:
    expr: Expr
    alias: str | None = None


@dataclass(frozen=True)
class TableRef:
    name: str
    alias: str | None = None


@dataclass(frozen=True)
class SubqueryRef:
    """A derived table: `(query) [AS] alias [(col, ...)]`.

    `alias is None` is a derived table written without an alias, which some
    dialects allow. `columns` renames the query's output columns.
    """

    query: Query
    alias: str | None
    columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class TableFunctionRef:
    """A set-returning function as a table: `generate_series(1, 5) AS g(x)`.

    generate_series(start, stop[, step]) includes stop; range(start, stop[,
    step]) stops before it. The one output column is named by `columns`, else
    by the alias (PostgreSQL's and DuckDB's rule: `generate_series(1, 3) AS g`
    has the column g), else by the function's name (harness.core.table_functions).
    """

    name: str  # lower case
    args: tuple[Expr, ...]
    alias: str | None = None
    columns: tuple[str, ...] = ()


class JoinKind(Enum):
    INNER = "INNER"
    LEFT = "LEFT"
    RIGHT = "RIGHT"
    FULL = "FULL"
    CROSS = "CROSS"


@dataclass(frozen=True)
class Join:
    kind: JoinKind
    left: Source
    right: Source
    on: Expr | None = None  # None exactly for CROSS


Source = TableRef | SubqueryRef | TableFunctionRef | Join


@dataclass(frozen=True)
class Select:
    items: tuple[SelectItem, ...]
    source: Source | None = None
    where: Expr | None = None
    group_by: tuple[Expr, ...] = ()
    having: Expr | None = None
    windows: tuple[NamedWindow, ...] = ()
    order_by: tuple[SortKey, ...] = ()
    limit: int | None = None
    offset: int | None = None
    distinct: bool = False
    # QUALIFY: a condition over the window functions' results, applied after
    # them (and before DISTINCT), as WHERE is before them.
    qualify: Expr | None = None


@dataclass(frozen=True)
class Values:
    """`VALUES (a, b), (c, d)` as a query; its columns are column1, column2, ...
    unless renamed where it is used (`AS v(x, y)`, `WITH v(x, y) AS`)."""

    rows: tuple[tuple[Expr, ...], ...]


@dataclass(frozen=True)
class UnionAll:
    """`left UNION ALL right` with optional ORDER BY / LIMIT over the result."""

    left: Query
    right: Query
    order_by: tuple[SortKey, ...] = ()
    limit: int | None = None
    offset: int | None = None


@dataclass(frozen=True)
class CommonTable:
    """`name [(col, ...)] AS (query)`; `columns` renames the query's output."""

    name: str
    query: Query
    columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class With:
    ctes: tuple[CommonTable, ...]
    body: Query


Query = Select | UnionAll | With | Values

# ---------------------------------------------------------------------------
# Tables and cases


@dataclass(frozen=True)
class ColumnDef:
    name: str
    type: SqlType
    nullable: bool = True


@dataclass(frozen=True)
class TableSchema:
    name: str
    columns: tuple[ColumnDef, ...]

    def column(self, name: str) -> ColumnDef:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)


# ---------------------------------------------------------------------------
# Helpers over the model


def children(node: object) -> tuple[object, ...]:
    """The direct sub-nodes of any model node (expressions, specs, queries)."""
    out: list[object] = []
    for f in getattr(node, "__dataclass_fields__", {}):
        value = getattr(node, f)
        if isinstance(value, tuple):
            for v in value:
                if isinstance(v, tuple):  # CASE's (when, then) pairs
                    out.extend(v)
                else:
                    out.append(v)
        elif hasattr(value, "__dataclass_fields__"):
            out.append(value)
    return tuple(out)


def walk(node: object):
    """All nodes below and including `node`, depth first, parents before children."""
    yield node
    for child in children(node):
        yield from walk(child)


def window_exprs(node: object) -> list[WindowExpr]:
    """Every window expression in `node`, without descending into subqueries."""
    found: list[WindowExpr] = []

    def visit(n: object) -> None:
        if isinstance(n, WindowExpr):
            found.append(n)
        if isinstance(n, (SubqueryRef, Select, UnionAll, With, Values, *SUBQUERY_EXPRS)) and (
                n is not node):
            return
        for c in children(n):
            visit(c)

    visit(node)
    return found


class FramedWindowCopy(InvalidQuery):
    """A window that copies or refines a window with a frame (`OVER (w)`,
    `OVER (w ORDER BY x)`, `WINDOW w2 AS (w)`): invalid by the standard's
    syntax rules, not a malformed model. Kept apart so that a query meant to
    fail can still be read and written, and the reference can refuse it."""


def resolve_window(
    spec: WindowSpec, named: tuple[NamedWindow, ...], _seen: frozenset[str] = frozenset(),
    *, lenient: bool = False,
) -> WindowSpec:
    """Inline the named windows a spec refines, following the standard's rules.

    A refining window may add ORDER BY only if its base has none, and may not
    add PARTITION BY; the frame comes from the refining window, or else the base.
    A definition of the WINDOW clause that names another window (`w2 AS (w)`)
    always copies it, as `OVER (w)` does (its `parenthesized` is not used).

    `lenient`: resolve a copy of a framed window as if copying were allowed
    (the copy keeps the frame), for analysing a query meant to fail (its
    features, its instrumentation); never for evaluating it.
    """
    if spec.base is None:
        return spec
    by_name = {w.name: w.spec for w in named}
    if spec.base not in by_name:
        raise InvalidQuery(f"window {spec.base!r} is not defined in the WINDOW clause")
    if spec.base in _seen:
        raise InvalidQuery(f"window {spec.base!r} refers to itself")
    definition = by_name[spec.base]
    if definition.base is not None:
        definition = replace(definition, parenthesized=True)
    base = resolve_window(definition, named, _seen | {spec.base}, lenient=lenient)
    if spec.partition_by:
        raise InvalidQuery(f"a window refining {spec.base!r} cannot add PARTITION BY")
    if spec.order_by and base.order_by:
        raise InvalidQuery(f"a window refining {spec.base!r} cannot override its ORDER BY")
    copies = spec.order_by or spec.frame is not None or spec.parenthesized
    if base.frame is not None and copies and not lenient:
        # `OVER w` uses w as it is; `OVER (w)` copies it, and a framed window
        # cannot be copied (the standard's syntax rule; PostgreSQL agrees).
        raise FramedWindowCopy(f"window {spec.base!r} has a frame and cannot be copied or refined")
    return WindowSpec(
        base=None,
        partition_by=base.partition_by,
        order_by=spec.order_by or base.order_by,
        frame=spec.frame if spec.frame is not None else base.frame,
    )


def key_position(expr: object) -> int | None:
    """The select-list position (1-based) that a top-level ORDER BY or GROUP BY
    key names, or None when the key is an expression.

    As in PostgreSQL, only a bare integer literal is a position: the type a
    bare integer token is read as (INTEGER, else BIGINT), which the writer
    spells without a CAST. `CAST(1 AS SMALLINT)` and `1 + 0` are constants.
    Inside OVER, an integer is always a constant.
    """
    if not isinstance(expr, Literal) or type(expr.value) is not int:
        return None
    natural = INT32 if -(2 ** 31) <= expr.value < 2 ** 31 else INT64
    return expr.value if expr.type == natural else None


def rewrite(root: object, fn: Callable[[object], object | None]) -> object:
    """`root` with every node for which fn gives a replacement replaced (not
    descended into); other nodes are rebuilt only when something below changed.
    Nodes are visited in `harness.core.model.walk` order."""

    def visit(node: object) -> object:
        new = fn(node)
        if new is not None:
            return new
        if isinstance(node, tuple):
            items = tuple(visit(v) for v in node)
            return node if all(a is b for a, b in zip(items, node, strict=True)) else items
        if is_dataclass(node) and not isinstance(node, type):
            changes = {}
            for f in fields(node):
                old = getattr(node, f.name)
                if (value := visit(old)) is not old:
                    changes[f.name] = value
            return replace(node, **changes) if changes else node
        return node

    return visit(root)


def replace_nth(root: object, kind: type | tuple[type, ...], n: int, new: object) -> object:
    """`root` with its n-th node of `kind` (in walk order) replaced by `new`."""
    seen = itertools.count()
    return rewrite(root, lambda node: new if isinstance(node, kind) and next(seen) == n else None)
