"""Metamorphic relations: oracles that need no reference implementation.

A reference can share a blind spot with the engines it judges. A metamorphic
relation instead says that two queries (over the same table, or over a table
derived from it) must give equal answers on the compared rows and columns, and
is checked on ONE engine alone, against itself:

- partition-restriction: restricting the input to one partition (WHERE p = v,
  or p IS NULL) leaves that partition's window values unchanged;
- frame-modes: ROWS, GROUPS and RANGE frames select the same rows when the
  ORDER BY key is unique and the offsets map (GROUPS n = ROWS n; RANGE n*c = ROWS
  n on a derived key that takes consecutive multiples of c);
- desc-mirror: a window over keys sorted one way equals the window over the
  reversed order with the frame mirrored (n PRECEDING <-> n FOLLOWING), for
  order-insensitive aggregates; first_value <-> last_value and lag <-> lead;
- exclude-no-others: EXCLUDE NO OTHERS changes nothing;
- first-value-nth-value: first_value(x) = nth_value(x, 1) over the same window
  (last_value(x) = nth_value(x, 1) FROM LAST likewise);
- value-at-current-row: last_value(x) over a frame ending at CURRENT ROW, and
  first_value(x) over one starting there, is x itself (total order);
- batching: stacking the table with a shuffled copy tagged b = 1 (the original
  rows b = 0) and putting b first in every PARTITION BY leaves the b = 0 rows'
  answers unchanged.

Every query is deterministic, so a tie can never cause a false violation: each
window ORDER BY ends with the unique `id` (aggregates' own ORDER BY too),
except where a single-key RANGE offset forbids it, and there only functions
whose value does not depend on the order of peers are used. Floats are compared
within `harness.cells.float_tolerance` of a magnitude that bounds every frame's
sum of |x| (the whole argument column), since the two sides may sum in
different orders; sums whose order could overflow are not drawn.

Outcomes (`Status`): holds, violated (the answers differ, or one side has rows
the other lacks), unsupported (either side raised Unsupported, or the
reference's ReferenceGap), error (exactly one side failed: the relation says the
queries are equivalent, so this is a finding too), both-error (both sides
failed: nothing was compared; it is not a pass, and the differential oracle,
not this one, judges whether the engine should have run the query).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from enum import Enum
from random import Random

import pyarrow as pa

from harness import types as T
from harness.cases import Case
from harness.cells import Rows, TypeClass, cells_equal, float_tolerance, hashable, rows_of
from harness.dialects.base import Dialect
from harness.dialects.canonical import CANONICAL
from harness.engines.base import Engine
from harness.errors import EngineError, EvaluationError, HarnessError, ReferenceGap, Unsupported
from harness.functions import FUNCTIONS, FunctionKind, FunctionSpec, is_order_sensitive
from harness.model import (
    CURRENT_ROW,
    UNBOUNDED_FOLLOWING,
    BinaryOp,
    BinaryOperator,
    Bound,
    BoundKind,
    Column,
    ColumnDef,
    Exclusion,
    Expr,
    Frame,
    FrameMode,
    FuncCall,
    IsNull,
    Literal,
    NullsOrder,
    NullTreatment,
    Query,
    Select,
    SelectItem,
    SortKey,
    Star,
    SubqueryRef,
    TableRef,
    TableSchema,
    WindowExpr,
    WindowSpec,
    resolve_window,
)
from harness.sql.literals import natural_integer_type
from harness.sql.writer import write
from harness.types import SqlType, TypeKind

ID = "id"  # the unique row key every relation aligns rows on
ATTEMPTS = 40  # draws of one expression pair before settling for one that does not render
MAX_EXPRESSIONS = 3  # window expressions per query
ASC_LAST = NullsOrder.LAST
# Sums whose |terms| add up past these may overflow in one order and not in
# another, so they are not drawn (integers: 64 bits; floats: squares too).
_INT_LIMIT = 2**62
_FLOAT_LIMIT = 1e150

# -- checks and outcomes ------------------------------------------------------------


@dataclass(frozen=True)
class FloatScale:
    """What a float column was computed from: `magnitude` bounds the sum of |terms|
    of any frame; `root` for the square root of such a sum (stddev)."""

    magnitude: float = 0.0
    root: bool = False


@dataclass(frozen=True, eq=False)
class Check:
    """Two queries that must agree: rows aligned on `key`, `columns` compared by
    name. `right_filter` (column, value): compare only those right rows."""

    relation: str
    left: Case
    right: Case
    columns: tuple[str, ...]
    key: str = ID
    right_filter: tuple[str, object] | None = None
    scales: Mapping[str, FloatScale] = field(default_factory=dict)


class Status(Enum):
    HOLDS = "holds"
    VIOLATED = "violated"
    UNSUPPORTED = "unsupported"
    ERROR = "error"  # one side failed, the other ran
    BOTH_ERROR = "both-error"  # nothing compared; never a pass


@dataclass(frozen=True)
class Difference:
    key: object  # the row's key; None for a column-level difference
    column: str
    left: object
    right: object


@dataclass(frozen=True)
class MetamorphicOutcome:
    relation: str
    engine: str
    status: Status
    detail: str
    left_sql: str
    right_sql: str
    differences: tuple[Difference, ...] = ()


def check(chk: Check, engine: Engine) -> MetamorphicOutcome:
    """Run both sides of `chk` on `engine` and judge them against each other."""
    left, right = _run(engine, chk.left), _run(engine, chk.right)

    def out(status: Status, detail: str, diffs: Sequence[Difference] = ()) -> MetamorphicOutcome:
        return MetamorphicOutcome(chk.relation, engine.name, status, detail, left.sql, right.sql, tuple(diffs))

    if left.unsupported or right.unsupported:
        return out(Status.UNSUPPORTED, "; ".join(s.failure for s in (left, right) if s.unsupported))
    if left.failure and right.failure:
        return out(Status.BOTH_ERROR, f"left: {left.failure}; right: {right.failure}")
    if left.failure or right.failure:
        side = "left" if left.failure else "right"
        return out(Status.ERROR, f"only the {side} side failed: {left.failure or right.failure}")
    assert left.answer is not None and right.answer is not None
    diffs = compare(chk, left.answer, right.answer)
    if not diffs:
        return out(Status.HOLDS, f"{left.answer.num_rows} rows agree")
    return out(Status.VIOLATED, _describe(diffs), diffs)


@dataclass
class _Side:
    sql: str
    answer: pa.Table | None = None
    failure: str = ""
    unsupported: bool = False


def _run(engine: Engine, case: Case) -> _Side:
    side = _Side(case.sql)
    try:
        side.sql = engine.render(case.query)
        side.answer = engine.run(case.tables, side.sql)
    except (Unsupported, ReferenceGap) as e:
        side.failure, side.unsupported = str(e), True
    except (EngineError, EvaluationError) as e:
        side.failure = str(e)
    return side


def compare(chk: Check, left: pa.Table, right: pa.Table) -> list[Difference]:
    """The differences between two answers: column types by class, missing or
    extra rows, then cell by cell (see `cell_equal`)."""
    lrows, rrows = rows_of(left), rows_of(right)
    diffs = [d for c in chk.columns if (d := _class_difference(c, lrows, rrows)) is not None]
    by_left = _by_key(lrows, chk.key, None, diffs)
    by_right = _by_key(rrows, chk.key, chk.right_filter, diffs)
    for hashed in sorted(set(by_left) | set(by_right), key=repr):
        lrow, rrow = by_left.get(hashed), by_right.get(hashed)
        key = (lrow or rrow)[lrows.names.index(chk.key) if lrow else rrows.names.index(chk.key)]  # type: ignore[index]
        if lrow is None or rrow is None:
            diffs.append(Difference(key, "(row)", lrow is not None, rrow is not None))
            continue
        for c in chk.columns:
            a, b = lrow[lrows.names.index(c)], rrow[rrows.names.index(c)]
            single = lrows.single[lrows.names.index(c)] or rrows.single[rrows.names.index(c)]
            if not cell_equal(a, b, chk.scales.get(c, FloatScale()), single):
                diffs.append(Difference(key, c, a, b))
    return diffs


def cell_equal(a: object, b: object, scale: FloatScale, single: bool) -> bool:
    """`cells_equal` with a tolerance from the larger value and the scale."""
    numbers = [abs(float(v)) for v in (a, b)
               if isinstance(v, (int, float, Decimal)) and not isinstance(v, bool)]
    size = max((v for v in numbers if math.isfinite(v)), default=0.0)
    tol = float_tolerance(size, scale.magnitude, single)
    if scale.root:  # |sqrt(x) - sqrt(y)| <= sqrt(|x - y|)
        tol = max(tol, math.sqrt(float_tolerance(0.0, scale.magnitude, single)))
    return cells_equal(a, b, tol)


def _class_difference(column: str, left: Rows, right: Rows) -> Difference | None:
    for rows in (left, right):
        if column not in rows.names:
            raise HarnessError(f"metamorphic check: column {column!r} missing from {rows.names}")
    a, b = left.classes[left.names.index(column)], right.classes[right.names.index(column)]
    if a != b and TypeClass.NULL not in (a, b):
        return Difference(None, column, a.value, b.value)
    return None


def _by_key(rows: Rows, key: str, only: tuple[str, object] | None, diffs: list[Difference]) -> dict:
    at = rows.names.index(key)
    keep = None if only is None else (rows.names.index(only[0]), hashable(only[1]))
    out: dict[object, tuple] = {}
    for row in rows.rows:
        if keep is not None and hashable(row[keep[0]]) != keep[1]:
            continue
        k = hashable(row[at])
        if k in out:
            diffs.append(Difference(row[at], "(duplicate key)", out[k], row))
        out[k] = row
    return out


def _describe(diffs: list[Difference], shown: int = 5) -> str:
    parts = [f"{ID}={d.key} {d.column}: left {d.left!r}, right {d.right!r}" for d in diffs[:shown]]
    more = f" (+{len(diffs) - shown} more)" if len(diffs) > shown else ""
    return f"{len(diffs)} difference(s): " + "; ".join(parts) + more


# -- relations ------------------------------------------------------------------------


@dataclass(frozen=True)
class Subject:
    """What a relation draws from: one table with a unique `id`, the case's
    (deterministic) window expressions and WHERE over it, the dialect the
    queries must render in, and the random stream."""

    case: Case
    schema: TableSchema
    table: pa.Table
    dialect: Dialect
    rng: Random
    base: tuple[WindowExpr, ...] = ()
    where: Expr | None = None


@dataclass(frozen=True)
class Relation:
    name: str
    description: str
    draw: Callable[[Subject], Check | None]

    def derive(self, case: Case, rng: Random, dialect: Dialect = CANONICAL) -> Check | None:
        """A check of this relation on `case`'s table, preferring queries that
        render in `dialect`; None when the relation does not apply."""
        subject = subject_of(case, rng, dialect)
        return None if subject is None else self.draw(subject)


def check_all(case: Case, engine: Engine, rng: Random) -> list[MetamorphicOutcome]:
    """Every relation that applies to `case`, checked on `engine`."""
    outcomes = []
    for relation in RELATIONS:
        chk = relation.derive(case, Random(f"{rng.random()}/{relation.name}"), engine.dialect)
        if chk is not None:
            outcomes.append(check(chk, engine))
    return outcomes


def subject_of(case: Case, rng: Random, dialect: Dialect) -> Subject | None:
    """The table the case's query reads (else the first) if it has a unique `id`."""
    source = case.query.source if isinstance(case.query, Select) else None
    names = [source.name] if isinstance(source, TableRef) else []
    for schema in sorted(case.schemas, key=lambda s: s.name not in names):
        table = case.tables.get(schema.name)
        if table is not None and _has_unique_id(schema, table):
            base, where = _case_windows(case, schema)
            return Subject(case, schema, table, dialect, rng, base, where)
    return None


def _has_unique_id(schema: TableSchema, table: pa.Table) -> bool:
    if ID not in table.column_names or not any(c.name == ID and c.type.is_integer for c in schema.columns):
        return False
    ids = table.column(ID).to_pylist()
    return None not in ids and len(set(ids)) == len(ids)


def _case_windows(case: Case, schema: TableSchema) -> tuple[tuple[WindowExpr, ...], Expr | None]:
    """The case's top-level window expressions, inlined and made deterministic,
    and its WHERE, when the query is a plain scan of this table."""
    q = case.query
    plain = (isinstance(q, Select) and q.source == TableRef(schema.name) and not q.group_by
             and q.having is None and not q.distinct)
    if not plain:
        return (), None
    assert isinstance(q, Select)
    found = []
    for item in q.items:
        if isinstance(item.expr, WindowExpr):
            inlined = replace(item.expr, window=resolve_window(item.expr.window, q.windows))
            made = deterministic(inlined)
            if made is not None:
                found.append(made)
    return tuple(found), q.where


# -- determinism -------------------------------------------------------------------


ID_KEY = SortKey(Column(ID), False, ASC_LAST)


def total(keys: tuple[SortKey, ...]) -> tuple[SortKey, ...]:
    """The keys with `id` appended unless already among them: no two rows tie."""
    return keys if any(k.expr == Column(ID) for k in keys) else (*keys, ID_KEY)


def _range_offsets(frame: Frame | None) -> bool:
    return frame is not None and frame.mode is FrameMode.RANGE and any(
        b.offset is not None for b in (frame.start, frame.end))


def deterministic(expr: WindowExpr) -> WindowExpr | None:
    """`expr` with a total window order (and a total aggregate ORDER BY), so
    its value cannot depend on how peers are ordered; None where that cannot
    be done (a single-key RANGE offset frame over an order-sensitive function)."""
    call, spec = expr.func, expr.window
    if call.order_by:
        call = replace(call, order_by=total(call.order_by))
    frame_order = FUNCTIONS[call.name].ordered_aggregate and not call.order_by
    sensitive = FUNCTIONS[call.name].order_sensitive or frame_order
    if _range_offsets(spec.frame):
        return None if sensitive else replace(expr, func=call)
    if spec.order_by or sensitive or is_order_sensitive(call, spec.frame, False):
        spec = replace(spec, order_by=total(spec.order_by))
    return WindowExpr(call, spec)


def is_total(spec: WindowSpec) -> bool:
    return any(k.expr == Column(ID) for k in spec.order_by)


# -- drawing calls and windows ------------------------------------------------------------


def integer(n: int) -> Literal:
    return Literal(n, natural_integer_type(n))


def literal(value: object, t: SqlType) -> Literal:
    return integer(value) if t.is_integer and value is not None else Literal(value, t)  # type: ignore[arg-type]


def _values(s: Subject, column: str) -> list[object]:
    return [v for v in s.table.column(column).to_pylist() if v is not None]


def _pick(s: Subject, fits: Callable[[SqlType], bool], values_only: bool = True) -> ColumnDef | None:
    """A column whose type fits; value columns before `id`."""
    found = [c for c in s.schema.columns if fits(c.type)]
    values = [c for c in found if c.name != ID]
    pool = values if values and (values_only or s.rng.random() < 0.9) else found
    return s.rng.choice(pool) if pool else None


def predicate(s: Subject) -> Expr:
    """`c IS [NOT] NULL`, or `c <op> v` with a value v of the table."""
    column = _pick(s, lambda t: t.kind is not TypeKind.LIST, values_only=False)
    assert column is not None  # `id` at least
    values = _values(s, column.name)
    if not values or s.rng.random() < 0.3:
        return IsNull(Column(column.name), negated=s.rng.random() < 0.5)
    op = s.rng.choice([BinaryOperator.EQ, BinaryOperator.NE, BinaryOperator.LT, BinaryOperator.GE])
    return BinaryOp(op, Column(column.name), literal(s.rng.choice(values), column.type))


def _orderable(t: SqlType) -> bool:
    return t.kind not in (TypeKind.LIST, TypeKind.BOOL)


def _args(s: Subject, name: str) -> tuple[Expr, ...] | None:
    """Arguments of fitting types for `name`, or None when no column fits."""
    any_type = lambda t: t.kind is not TypeKind.LIST  # noqa: E731
    rng = s.rng
    if name in ("row_number", "rank", "dense_rank", "percent_rank", "cume_dist"):
        return ()
    if name == "ntile":
        return (integer(rng.randint(1, 4)),)
    fits = {"sum": _summable, "avg": _summable, "min": _orderable, "max": _orderable,
            "string_agg": lambda t: t.kind is TypeKind.STRING}.get(name, any_type)
    if name.startswith(("var", "stddev")):
        fits = _summable
    if name in ("bool_and", "bool_or"):
        column = _pick(s, lambda t: t.kind is TypeKind.BOOL)
        return (Column(column.name),) if column and rng.random() < 0.5 else (predicate(s),)
    if name == "count" and rng.random() < 0.3:
        return (Star(),)
    column = _pick(s, fits, values_only=False)
    if column is None or (fits is _summable and not _sums_safely(s, column)):
        return None
    args: list[Expr] = [Column(column.name)]
    if name == "nth_value":
        args.append(integer(rng.randint(1, 3)))
    elif name == "string_agg":
        args.append(Literal(rng.choice((",", "")), T.STRING))
    elif name in ("lag", "lead") and rng.random() < 0.6:
        args.append(integer(rng.randint(0, 3)))
        values = _values(s, column.name)
        if values and rng.random() < 0.5:
            args.append(literal(rng.choice(values), column.type))
    return tuple(args)


def _summable(t: SqlType) -> bool:
    return t.is_numeric


def _sums_safely(s: Subject, column: ColumnDef) -> bool:
    """Whether any order of summing the column (and its squares) stays in range."""
    linear = sum(abs(float(v)) for v in _values(s, column.name) if _finite(v))
    t = column.type
    if t.is_integer:
        return linear < _INT_LIMIT
    if t.kind is TypeKind.DECIMAL:
        return linear < 10.0 ** (37 - (t.scale or 0))
    return linear < _FLOAT_LIMIT


def _finite(v: object) -> bool:
    return isinstance(v, (int, float, Decimal)) and not isinstance(v, bool) and math.isfinite(float(v))


_CALLABLE = tuple(s for s in FUNCTIONS.values() if s.kind in (FunctionKind.WINDOW, FunctionKind.AGGREGATE))


def random_call(s: Subject, fits: Callable[[FunctionSpec], bool] = lambda spec: True) -> FuncCall | None:
    """A call of a window function or aggregate that `fits`, with the clauses it
    takes (IGNORE/RESPECT NULLS, DISTINCT, FILTER) sometimes."""
    pool = [spec for spec in _CALLABLE if fits(spec)]
    spec = s.rng.choice(pool)
    args = _args(s, spec.name)
    if args is None:
        return None
    call = FuncCall(spec.name, args)
    if spec.ignore_nulls and s.rng.random() < 0.3:
        call = replace(call, null_treatment=s.rng.choice(list(NullTreatment)))
    if spec.kind is FunctionKind.AGGREGATE and args != (Star(),) and s.rng.random() < 0.15:
        call = replace(call, distinct=True)
    if spec.kind is FunctionKind.AGGREGATE and s.rng.random() < 0.15:
        call = replace(call, filter=predicate(s))
    return call


def random_keys(s: Subject, count: int) -> tuple[SortKey, ...]:
    columns = [c for c in s.schema.columns if _orderable(c.type) or c.type.kind is TypeKind.BOOL]
    picked = s.rng.sample(columns, min(count, len(columns)))
    return tuple(SortKey(Column(c.name), s.rng.random() < 0.5, s.rng.choice(list(NullsOrder)))
                 for c in picked)


def random_partition(s: Subject, most: int = 2) -> tuple[Expr, ...]:
    columns = [c for c in s.schema.columns if c.name != ID and c.type.kind is not TypeKind.LIST]
    count = min(len(columns), most, s.rng.choice((0, 1, 1, 2)))
    return tuple(Column(c.name) for c in s.rng.sample(columns, count))


_ORDER = {kind: i for i, kind in enumerate(BoundKind)}
_STARTS = (BoundKind.UNBOUNDED_PRECEDING, BoundKind.PRECEDING, BoundKind.CURRENT_ROW, BoundKind.FOLLOWING)
_ENDS = (BoundKind.PRECEDING, BoundKind.CURRENT_ROW, BoundKind.FOLLOWING, BoundKind.UNBOUNDED_FOLLOWING)
_WITH_OFFSET = (BoundKind.PRECEDING, BoundKind.FOLLOWING)


def bound_kinds(rng: Random, offsets: bool, start: BoundKind | None = None,
                end: BoundKind | None = None) -> tuple[BoundKind, BoundKind]:
    """A start and end kind in order (start not after end by kind)."""
    ok = [k for k in BoundKind if offsets or k not in _WITH_OFFSET]
    first = start or rng.choice([k for k in _STARTS if k in ok and (end is None or _ORDER[k] <= _ORDER[end])])
    last = end or rng.choice([k for k in _ENDS if k in ok and _ORDER[k] >= _ORDER[first]])
    return first, last


def random_frame(s: Subject, order_by: tuple[SortKey, ...]) -> Frame:
    """ROWS/GROUPS with offsets 0-3; RANGE with offsets only over one numeric key."""
    modes = [FrameMode.ROWS, FrameMode.RANGE] + ([FrameMode.GROUPS] if order_by else [])
    mode = s.rng.choice(modes)
    key_type = _single_numeric_key(s, order_by)
    offsets = mode is not FrameMode.RANGE or key_type is not None
    first, last = bound_kinds(s.rng, offsets)

    def bound(kind: BoundKind) -> Bound:
        if kind not in _WITH_OFFSET:
            return Bound(kind)
        n = s.rng.randint(0, 3)
        if mode is FrameMode.RANGE and key_type is not None and key_type.is_float:
            return Bound(kind, Literal(n / 2, key_type))
        if mode is FrameMode.RANGE and key_type is not None and key_type.kind is TypeKind.DECIMAL:
            return Bound(kind, Literal(Decimal(n).scaleb(-(key_type.scale or 0)), key_type))
        return Bound(kind, integer(n))

    exclusion = s.rng.choice([None, *Exclusion]) if s.rng.random() < 0.3 else None
    return Frame(mode, bound(first), bound(last), exclusion)


def _single_numeric_key(s: Subject, order_by: tuple[SortKey, ...]) -> SqlType | None:
    if len(order_by) != 1 or not isinstance(order_by[0].expr, Column):
        return None
    t = s.schema.column(order_by[0].expr.name).type
    return t if t.is_numeric else None


def random_window_expr(s: Subject, fits: Callable[[FunctionSpec], bool] = lambda spec: True) -> WindowExpr | None:
    """A deterministic window expression whose function `fits`: one of the
    case's half the time (when one fits), else a fresh one."""
    mine = [e for e in s.base if fits(FUNCTIONS[e.func.name])]
    if mine and s.rng.random() < 0.5:
        return s.rng.choice(mine)
    call = random_call(s, fits)
    if call is None:
        return None
    order_by = random_keys(s, s.rng.choice((0, 1, 1, 2, 3)))
    frame = random_frame(s, order_by) if s.rng.random() < 0.6 else None
    return deterministic(WindowExpr(call, WindowSpec(None, random_partition(s), order_by, frame)))


# -- building checks -------------------------------------------------------------------------

Pair = tuple[Expr, Expr, FloatScale]


def scale_of(s: Subject, expr: Expr) -> FloatScale:
    """The float scale of a window aggregate's value (see FloatScale)."""
    if not isinstance(expr, WindowExpr) or not expr.func.args or not isinstance(expr.func.args[0], Column):
        return FloatScale()
    name, values = expr.func.name, [float(v) for v in _values(s, expr.func.args[0].name) if _finite(v)]
    if name in ("sum", "avg"):
        return FloatScale(sum(abs(v) for v in values))
    if name.startswith(("var", "stddev")):
        return FloatScale(sum(v * v for v in values), root=name.startswith("stddev"))
    return FloatScale()


def _alias(s: Subject, i: int) -> str:
    return fresh_name(s.schema, f"mr{i}")


def fresh_name(schema: TableSchema, stem: str) -> str:
    taken = {c.name.casefold() for c in schema.columns}
    return next(n for n in (stem, *(f"{stem}_{i}" for i in range(99))) if n.casefold() not in taken)


def select(s: Subject, exprs: Sequence[Expr], where: Expr | None = None, *,
           extra: Sequence[str] = (), source: TableRef | SubqueryRef | None = None) -> Select:
    """SELECT id, <extra columns>, <exprs AS mr1..> FROM t [WHERE] ORDER BY id."""
    items = (SelectItem(Column(ID)), *(SelectItem(Column(c)) for c in extra),
             *(SelectItem(e, _alias(s, i + 1)) for i, e in enumerate(exprs)))
    return Select(items, source or TableRef(s.schema.name), where, order_by=(ID_KEY,))


def side(s: Subject, label: str, query: Query, schema: TableSchema | None = None,
         table: pa.Table | None = None) -> Case:
    schema = schema or s.schema
    return Case(id=f"{s.case.id}/{label}", description=f"metamorphic {label} side of {s.case.id}",
                tags=("metamorphic",), schemas=(schema,),
                tables={schema.name: s.table if table is None else table},
                sql=write(query), query=query)


def renders(chk: Check, dialect: Dialect) -> bool:
    try:
        write(chk.left.query, dialect)
        write(chk.right.query, dialect)
    except Unsupported:
        return False
    return True


Build = Callable[[Sequence[Pair]], Check]


def collect(s: Subject, draw: Callable[[], Pair | None], build: Build) -> Check | None:
    """A check of 1-3 drawn pairs that render in the dialect (a pair is tried
    alone first); the last pair drawn when none renders (an unsupported check),
    None when nothing could be drawn."""
    want, kept, last = s.rng.randint(1, MAX_EXPRESSIONS), [], None
    for _ in range(ATTEMPTS):
        pair = draw()
        if pair is None:
            continue
        last = pair
        if renders(build([pair]), s.dialect):
            kept.append(pair)
            if len(kept) == want:
                break
    if last is None:
        return None
    return build(kept or [last])


def same_table(s: Subject, relation: str, where: Expr | None = None) -> Build:
    """Both sides: SELECT id, <left or right exprs> FROM t [WHERE]."""
    def build(pairs: Sequence[Pair]) -> Check:
        left = select(s, [p[0] for p in pairs], where)
        right = select(s, [p[1] for p in pairs], where)
        return _check(s, relation, pairs, side(s, "left", left), side(s, "right", right))
    return build


def _check(s: Subject, relation: str, pairs: Sequence[Pair], left: Case, right: Case, **kw) -> Check:
    columns = tuple(_alias(s, i + 1) for i in range(len(pairs)))
    scales = {c: p[2] for c, p in zip(columns, pairs, strict=True)}
    return Check(relation, left, right, columns, scales=scales, **kw)


def same(s: Subject, expr: WindowExpr | None) -> Pair | None:
    return None if expr is None else (expr, expr, scale_of(s, expr))


def conj(a: Expr | None, b: Expr) -> Expr:
    return b if a is None else BinaryOp(BinaryOperator.AND, a, b)


# -- a. partition restriction -------------------------------------------------------------


def partition_restriction(s: Subject) -> Check | None:
    """Left: every window partitioned by p (first), filtered to p = v outside (a
    subquery); right: the same windows over the rows WHERE p = v. v is a value
    of p in the table (not NaN), or NULL (then p IS NULL)."""
    columns = [c for c in s.schema.columns if c.name != ID and c.type.kind is not TypeKind.LIST]
    if s.table.num_rows == 0 or not columns:
        return None
    p = s.rng.choice(columns)
    v = s.rng.choice(s.table.column(p.name).to_pylist())
    if isinstance(v, float) and math.isnan(v):
        return None
    pred = IsNull(Column(p.name)) if v is None else BinaryOp(BinaryOperator.EQ, Column(p.name), literal(v, p.type))

    def draw() -> Pair | None:
        e = random_window_expr(s)
        if e is None:
            return None
        if Column(p.name) not in e.window.partition_by:
            e = replace(e, window=replace(e.window, partition_by=(Column(p.name), *e.window.partition_by)))
        return same(s, e)

    def build(pairs: Sequence[Pair]) -> Check:
        exprs = [q[0] for q in pairs]
        inner = replace(select(s, exprs, s.where, extra=[p.name]), order_by=())
        outer = select(s, [Column(_alias(s, i + 1)) for i in range(len(exprs))], pred,
                       source=SubqueryRef(inner, fresh_name(s.schema, "mr_sub")))
        right = select(s, exprs, conj(s.where, pred))
        return _check(s, "partition-restriction", pairs, side(s, "left", outer), side(s, "right", right))

    return collect(s, draw, build)


# -- b. frame modes ------------------------------------------------------------------------


# How a ROWS offset n maps to a RANGE offset: (n, outer) -> offset, None when
# it does not map. `outer`: a bound that widens the frame as its offset grows
# (start PRECEDING, end FOLLOWING); the others narrow it.
OffsetMap = Callable[[int, bool], "Expr | None"]


@dataclass(frozen=True)
class OrderPlan:
    """A unique window order: its keys, the table that holds them, and how ROWS
    offsets map to RANGE offsets."""

    partition_by: tuple[Expr, ...]
    order_by: tuple[SortKey, ...]
    range_offset: OffsetMap
    schema: TableSchema
    table: pa.Table


def _outer(kind: BoundKind, is_start: bool) -> bool:
    return (kind is BoundKind.PRECEDING) == is_start


def _by_id(s: Subject) -> OrderPlan:
    """ORDER BY id: unique but not consecutive, so RANGE maps only offset 0."""
    key = SortKey(Column(ID), s.rng.random() < 0.5, s.rng.choice(list(NullsOrder)))
    return OrderPlan(random_partition(s), (key,), lambda n, outer: integer(0) if n == 0 else None,
                     s.schema, s.table)


def _compound(s: Subject) -> OrderPlan:
    """ORDER BY v, id: unique, several keys, so no RANGE offsets at all."""
    keys = total(random_keys(s, s.rng.randint(1, 2)))
    return OrderPlan(random_partition(s), keys, lambda n, outer: None, s.schema, s.table)


def _consecutive(s: Subject) -> OrderPlan:
    """A derived key that takes the values c, 2c, 3c, ... in each partition (in
    a random order): ROWS n = RANGE n*c + slack on an outer bound (the row n*c
    away is in, the one (n+1)*c away is out), and RANGE max(n*c - slack, 0)
    on an inner one (the row n*c away is in, the one (n-1)*c away is out)."""
    exact = [c for c in s.schema.columns if c.name != ID and not c.type.is_float
             and c.type.kind is not TypeKind.LIST]
    parts = tuple(Column(c.name) for c in s.rng.sample(exact, min(len(exact), s.rng.randint(0, 1))))
    floats = s.rng.random() < 0.4
    step: float = s.rng.choice((0.5, 1.0, 2.5)) if floats else s.rng.choice((1, 2, 5))
    # Any slack below one step reaches no further row (binary-exact for the floats).
    slack = s.rng.choice((0.0, step / 2)) if floats else s.rng.randint(0, int(step) - 1)
    name = fresh_name(s.schema, "mr_key")
    groups: dict[tuple, list[int]] = {}
    for i, row in enumerate(zip(*(s.table.column(c.name).to_pylist() for c in parts), strict=True)
                            if parts else ((),) * s.table.num_rows):
        groups.setdefault(tuple(hashable(v) for v in row), []).append(i)
    keys: list[object] = [None] * s.table.num_rows
    for members in groups.values():
        for rank, i in enumerate(s.rng.sample(members, len(members)), start=1):
            keys[i] = rank * step
    t = T.FLOAT64 if floats else T.INT64
    table = s.table.append_column(name, pa.array(keys, type=pa.float64() if floats else pa.int64()))
    schema = TableSchema(s.schema.name, (*s.schema.columns, ColumnDef(name, t, nullable=False)))
    key = SortKey(Column(name), s.rng.random() < 0.5, s.rng.choice(list(NullsOrder)))
    def offset(n: int, outer: bool) -> Expr:
        return literal(n * step + slack if outer else max(n * step - slack, 0 * step), t)

    return OrderPlan(parts, (key,), offset, schema, table)


def frame_modes(s: Subject) -> Check | None:
    """Left: f() OVER (PARTITION BY P ORDER BY <unique> ROWS BETWEEN ...); right:
    the same over GROUPS, or RANGE with the offsets mapped."""
    plan = s.rng.choice((_by_id, _compound, _consecutive))(s)
    mode = s.rng.choice((FrameMode.GROUPS, FrameMode.RANGE))
    mapped: OffsetMap = (lambda n, outer: integer(n)) if mode is FrameMode.GROUPS else plan.range_offset
    sub = replace(s, schema=plan.schema, table=plan.table, base=())

    def draw() -> Pair | None:
        call = _frame_call(s)
        if call is None:
            return None
        ns = [n for n in range(4) if mapped(n, True) is not None and mapped(n, False) is not None]
        first, last = bound_kinds(s.rng, bool(ns))
        offsets = [s.rng.choice(ns) if ns else 0 for _ in range(2)]
        exclusion = s.rng.choice([None, *Exclusion]) if s.rng.random() < 0.3 else None

        def frame(m: FrameMode, f: OffsetMap) -> Frame:
            def make(kind: BoundKind, n: int, is_start: bool) -> Bound:
                return Bound(kind, f(n, _outer(kind, is_start))) if kind in _WITH_OFFSET else Bound(kind)
            return Frame(m, make(first, offsets[0], True), make(last, offsets[1], False), exclusion)

        spec = WindowSpec(None, plan.partition_by, plan.order_by)
        left = WindowExpr(call, replace(spec, frame=frame(FrameMode.ROWS, lambda n, outer: integer(n))))
        right = WindowExpr(call, replace(spec, frame=frame(mode, mapped)))
        return left, right, scale_of(s, left)

    def build(pairs: Sequence[Pair]) -> Check:
        left, right = select(sub, [p[0] for p in pairs]), select(sub, [p[1] for p in pairs])
        return _check(sub, "frame-modes", pairs, side(sub, "left", left, plan.schema, plan.table),
                      side(sub, "right", right, plan.schema, plan.table))

    return collect(s, draw, build)


def _frame_call(s: Subject) -> FuncCall | None:
    """A call that reads the frame, the case's own sometimes; ORDER BY made total."""
    mine = [e.func for e in s.base if FUNCTIONS[e.func.name].uses_frame]
    call = s.rng.choice(mine) if mine and s.rng.random() < 0.5 else random_call(s, lambda f: f.uses_frame)
    if call is not None and call.order_by:
        call = replace(call, order_by=total(call.order_by))
    return call


# -- c. DESC mirrors ASC ----------------------------------------------------------------------

_SWAPPED = {"first_value": "last_value", "last_value": "first_value", "lag": "lead", "lead": "lag"}
_MIRROR = {BoundKind.UNBOUNDED_PRECEDING: BoundKind.UNBOUNDED_FOLLOWING, BoundKind.PRECEDING: BoundKind.FOLLOWING,
           BoundKind.CURRENT_ROW: BoundKind.CURRENT_ROW, BoundKind.FOLLOWING: BoundKind.PRECEDING,
           BoundKind.UNBOUNDED_FOLLOWING: BoundKind.UNBOUNDED_PRECEDING}


def mirrored_call(call: FuncCall) -> FuncCall | None:
    """The call that reads the reversed order as `call` reads this one, or None."""
    spec = FUNCTIONS[call.name]
    if call.name in _SWAPPED:
        return replace(call, name=_SWAPPED[call.name])
    if call.name == "nth_value":
        return replace(call, from_last=not call.from_last)
    frame_order = spec.ordered_aggregate and not call.order_by
    return call if spec.kind is FunctionKind.AGGREGATE and not frame_order else None


def _explicit(key: SortKey, dialect: Dialect) -> SortKey:
    if key.nulls is not None:
        return key
    first = dialect.default_null_ordering.nulls_first(key.descending)
    return replace(key, nulls=NullsOrder.FIRST if first else NullsOrder.LAST)


def reversed_key(key: SortKey) -> SortKey:
    flip = NullsOrder.LAST if key.nulls is NullsOrder.FIRST else NullsOrder.FIRST
    return SortKey(key.expr, not key.descending, flip)


def mirrored_frame(frame: Frame | None) -> Frame:
    """The frame that selects the same rows in the reversed order."""
    if frame is None:  # the default with ORDER BY: RANGE UNBOUNDED PRECEDING .. CURRENT ROW
        return Frame(FrameMode.RANGE, CURRENT_ROW, UNBOUNDED_FOLLOWING)
    flip = lambda b: Bound(_MIRROR[b.kind], b.offset)  # noqa: E731
    return Frame(frame.mode, flip(frame.end), flip(frame.start), frame.exclusion)


def _nan_key(s: Subject, spec: WindowSpec) -> bool:
    """Whether a key holds NaN, where the standard does not say what RANGE n takes."""
    names = [k.expr.name for k in spec.order_by if isinstance(k.expr, Column)]
    return any(isinstance(v, float) and math.isnan(v) for n in names for v in _values(s, n))


def desc_mirror(s: Subject) -> Check | None:
    """Left: f() OVER (P ORDER BY keys frame); right: g() OVER (P ORDER BY the
    keys reversed (ASC <-> DESC, NULLS FIRST <-> LAST) mirrored frame), g the
    mirror of f (itself for order-insensitive aggregates)."""
    def draw() -> Pair | None:
        e = random_window_expr(s, lambda f: f.uses_frame or f.name in _SWAPPED)
        if e is None or not e.window.order_by or (g := mirrored_call(e.func)) is None:
            return None
        if not is_total(e.window) and (g is not e.func or _nan_key(s, e.window)):
            return None  # first_value etc. need a total order; RANGE offsets a key without NaN
        keys = tuple(_explicit(k, s.dialect) for k in e.window.order_by)
        left = replace(e, window=replace(e.window, order_by=keys))
        frame = mirrored_frame(e.window.frame) if FUNCTIONS[g.name].uses_frame else e.window.frame
        mirrored = replace(e.window, order_by=tuple(reversed_key(k) for k in keys), frame=frame)
        return left, WindowExpr(g, mirrored), scale_of(s, left)

    return collect(s, draw, same_table(s, "desc-mirror", s.where))


# -- d. EXCLUDE NO OTHERS ----------------------------------------------------------------------


def exclude_no_others(s: Subject) -> Check | None:
    """Left: f() OVER (... frame) without EXCLUDE; right: the same frame with
    EXCLUDE NO OTHERS."""
    def draw() -> Pair | None:
        e = random_window_expr(s)
        if e is None:
            return None
        frame = e.window.frame
        if frame is None:
            frame = random_frame(s, e.window.order_by)
            candidate = deterministic(replace(e, window=replace(e.window, frame=frame)))
            if candidate is None:
                return None
            e = candidate
        if frame.exclusion not in (None, Exclusion.NO_OTHERS):
            return None
        left = replace(e, window=replace(e.window, frame=replace(frame, exclusion=None)))
        right = replace(e, window=replace(e.window, frame=replace(frame, exclusion=Exclusion.NO_OTHERS)))
        return left, right, scale_of(s, left)

    return collect(s, draw, same_table(s, "exclude-no-others", s.where))


# -- e. first_value = nth_value(x, 1) ------------------------------------------------------------


def _total_window(s: Subject) -> WindowSpec | None:
    """A window with a total order: one of the case's, or a fresh one."""
    e = random_window_expr(s)
    if e is None or _range_offsets(e.window.frame):
        return None
    return replace(e.window, order_by=total(e.window.order_by))


def first_value_nth_value(s: Subject) -> Check | None:
    """Left: first_value(x) [nulls] OVER w; right: nth_value(x, 1) [nulls] OVER w
    (or last_value and nth_value(x, 1) FROM LAST), w with a total order."""
    def draw() -> Pair | None:
        window, column = _total_window(s), _pick(s, lambda t: True, values_only=False)
        if window is None or column is None:
            return None
        nulls = s.rng.choice((None, None, *NullTreatment))
        last = s.rng.random() < 0.3
        value = FuncCall("last_value" if last else "first_value", (Column(column.name),), null_treatment=nulls)
        nth = FuncCall("nth_value", (Column(column.name), integer(1)), null_treatment=nulls,
                       from_last=True if last else None)
        return WindowExpr(value, window), WindowExpr(nth, window), FloatScale()

    return collect(s, draw, same_table(s, "first-value-nth-value", s.where))


def value_at_current_row(s: Subject) -> Check | None:
    """Left: last_value(x) OVER (P ORDER BY <total> <mode> BETWEEN s AND CURRENT
    ROW), or first_value(x) over BETWEEN CURRENT ROW AND e; right: x."""
    def draw() -> Pair | None:
        window, column = _total_window(s), _pick(s, lambda t: True, values_only=False)
        if window is None or column is None:
            return None
        last = s.rng.random() < 0.5
        mode = s.rng.choice(list(FrameMode))
        offsets = mode is not FrameMode.RANGE or len(window.order_by) == 1
        first, end = (bound_kinds(s.rng, offsets, end=BoundKind.CURRENT_ROW) if last
                      else bound_kinds(s.rng, offsets, start=BoundKind.CURRENT_ROW))
        make = lambda k: Bound(k, integer(s.rng.randint(0, 3))) if k in _WITH_OFFSET else Bound(k)  # noqa: E731
        exclusion = s.rng.choice((None, None, Exclusion.NO_OTHERS, Exclusion.TIES))
        frame = Frame(mode, make(first), make(end), exclusion)
        call = FuncCall("last_value" if last else "first_value", (Column(column.name),),
                        null_treatment=s.rng.choice((None, NullTreatment.RESPECT)))
        return WindowExpr(call, replace(window, frame=frame)), Column(column.name), FloatScale()

    return collect(s, draw, same_table(s, "value-at-current-row", s.where))


# -- f. batching --------------------------------------------------------------------------------


def _stacked(s: Subject, batch: str) -> tuple[TableSchema, pa.Table]:
    """The table (b = 0) and a copy with each value column shuffled on its own
    (b = 1), rows interleaved at random."""
    n = s.table.num_rows
    copy = s.table
    for i, name in enumerate(s.table.column_names):
        if name != ID:
            order = s.rng.sample(range(n), n)
            copy = copy.set_column(i, name, s.table.column(name).take(pa.array(order, pa.int64())))
    both = pa.concat_tables([s.table.append_column(batch, pa.array([0] * n, pa.int64())),
                             copy.append_column(batch, pa.array([1] * n, pa.int64()))])
    both = both.take(pa.array(s.rng.sample(range(2 * n), 2 * n), pa.int64()))
    schema = TableSchema(s.schema.name, (*s.schema.columns, ColumnDef(batch, T.INT64, nullable=False)))
    return schema, both


def batched(expr: WindowExpr, batch: str) -> WindowExpr:
    spec = expr.window
    return replace(expr, window=replace(spec, partition_by=(Column(batch), *spec.partition_by)))


def batching(s: Subject) -> Check | None:
    """Left: the query over t; right: the query over t stacked with a shuffled
    copy, `b` first in every PARTITION BY; the right's b = 0 rows compared."""
    batch = fresh_name(s.schema, "mr_batch")
    schema, stacked = _stacked(s, batch)
    pool = list(s.base)

    def draw() -> Pair | None:
        e = pool.pop(0) if pool else random_window_expr(s)
        return None if e is None else (e, batched(e, batch), scale_of(s, e))

    def build(pairs: Sequence[Pair]) -> Check:
        left = select(s, [p[0] for p in pairs], s.where)
        right = select(s, [p[1] for p in pairs], s.where, extra=[batch])
        return _check(s, "batching", pairs, side(s, "left", left),
                      side(s, "right", right, schema, stacked), right_filter=(batch, 0))

    return collect(s, draw, build)


RELATIONS: tuple[Relation, ...] = (
    Relation("partition-restriction", "restricting the input to one partition leaves its results unchanged",
             partition_restriction),
    Relation("frame-modes", "ROWS, GROUPS and RANGE agree on a unique key when the offsets map", frame_modes),
    Relation("desc-mirror", "a window over the reversed order with the frame mirrored gives the same values",
             desc_mirror),
    Relation("exclude-no-others", "EXCLUDE NO OTHERS equals no EXCLUDE", exclude_no_others),
    Relation("first-value-nth-value", "first_value(x) equals nth_value(x, 1) over the same window",
             first_value_nth_value),
    Relation("value-at-current-row", "last_value(x) over a frame ending at the current row is x",
             value_at_current_row),
    Relation("batching", "a window over a batched input equals the unbatched one", batching),
)


def relation(name: str) -> Relation:
    return next(r for r in RELATIONS if r.name == name)
