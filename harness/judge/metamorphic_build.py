"""Building a metamorphic check from drawn pairs of expressions (left side,
right side, float scale): the two SELECTs, the side cases that hold them, and
`collect`, which keeps the pairs whose queries render in the engine's dialect.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pyarrow as pa

from harness.cases.case import Case
from harness.core.dialect import Dialect
from harness.core.errors import Unsupported
from harness.core.model import (
    BinaryOp,
    BinaryOperator,
    Column,
    Expr,
    Query,
    Select,
    SelectItem,
    SubqueryRef,
    TableRef,
    TableSchema,
    WindowExpr,
)
from harness.judge.metamorphic_check import ID, Check, FloatScale
from harness.judge.metamorphic_draw import ID_KEY, Subject, column_values, is_finite_number
from harness.sql.writer import write

ATTEMPTS = 40  # draws of one expression pair before settling for one that does not render
MAX_EXPRESSIONS = 3  # window expressions per query


Pair = tuple[Expr, Expr, FloatScale]


def scale_of(s: Subject, expr: Expr) -> FloatScale:
    """The float scale of a window aggregate's value (see FloatScale)."""
    if not isinstance(expr, WindowExpr) or not expr.func.args or not isinstance(expr.func.args[0], Column):
        return FloatScale()
    name, column = expr.func.name, expr.func.args[0].name
    values = [float(v) for v in column_values(s, column) if is_finite_number(v)]
    if name in ("sum", "avg"):
        return FloatScale(sum(abs(v) for v in values))
    if name.startswith(("var", "stddev")):
        return FloatScale(sum(v * v for v in values), root=name.startswith("stddev"))
    return FloatScale()


def column_alias(s: Subject, i: int) -> str:
    return fresh_name(s.schema, f"mr{i}")


def fresh_name(schema: TableSchema, stem: str) -> str:
    taken = {c.name.casefold() for c in schema.columns}
    return next(n for n in (stem, *(f"{stem}_{i}" for i in range(99))) if n.casefold() not in taken)


def select(s: Subject, exprs: Sequence[Expr], where: Expr | None = None, *,
           extra: Sequence[str] = (), source: TableRef | SubqueryRef | None = None) -> Select:
    """SELECT id, <extra columns>, <exprs AS mr1..> FROM t [WHERE] ORDER BY id."""
    items = (SelectItem(Column(ID)), *(SelectItem(Column(c)) for c in extra),
             *(SelectItem(e, column_alias(s, i + 1)) for i, e in enumerate(exprs)))
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
        return make_check(s, relation, pairs, side(s, "left", left), side(s, "right", right))
    return build


def make_check(s: Subject, relation: str, pairs: Sequence[Pair], left: Case, right: Case, **kw) -> Check:
    columns = tuple(column_alias(s, i + 1) for i in range(len(pairs)))
    scales = {c: p[2] for c, p in zip(columns, pairs, strict=True)}
    return Check(relation, left, right, columns, scales=scales, **kw)


def same(s: Subject, expr: WindowExpr | None) -> Pair | None:
    return None if expr is None else (expr, expr, scale_of(s, expr))


def conj(a: Expr | None, b: Expr) -> Expr:
    return b if a is None else BinaryOp(BinaryOperator.AND, a, b)
