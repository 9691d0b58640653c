"""Shorthands for building small tables and queries of the model by hand
(in the spirit of `pandas.testing`): used by the reference's own tests, and
handy in a REPL; and the reference with its fast paths off
(`definitions_only`), the oracle of the fast paths' property tests and the
baseline of bench/reference_speed.py. Nothing in the evaluator depends on
this module.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from unittest import mock

import pyarrow as pa

from harness.core import types as T
from harness.core.model import (
    Bound,
    BoundKind,
    Column,
    Exclusion,
    Expr,
    Frame,
    FrameMode,
    FuncCall,
    Interval,
    IntervalUnit,
    Literal,
    NullsOrder,
    NullTreatment,
    Select,
    SelectItem,
    SortKey,
    Source,
    TableRef,
    WindowExpr,
    WindowSpec,
)
from harness.core.types import SqlType, parse_type_name, to_arrow
from reference_impl import aggregates, frames, memo, ordering, relation, values, windows
from reference_impl.aggregates import exact_variance
from reference_impl.api import DEFAULT_PROFILE, Evaluation, PeerOrder, SemanticsProfile, evaluate
from reference_impl.frames import frame_positions


def table(**columns: tuple[str, Sequence[object]]) -> pa.Table:
    """table(id=("bigint", [1, 2]), v=("double", [0.5, None])) -> an Arrow table."""
    arrays = {
        name: pa.array(list(values), type=to_arrow(parse_type_name(type_name)))
        for name, (type_name, values) in columns.items()
    }
    return pa.table(arrays)


def col(name: str, table: str | None = None) -> Column:
    return Column(name, table)


def lit(value: object, type_name: str | None = None) -> Literal:
    """A literal; its type is inferred from the Python value unless named."""
    if type_name is not None:
        return Literal(value, parse_type_name(type_name))
    return Literal(value, _infer_type(value))


def _infer_type(value: object) -> SqlType | None:
    if value is None:
        return None
    if isinstance(value, Decimal):
        exponent = value.as_tuple().exponent
        scale = -exponent if isinstance(exponent, int) and exponent < 0 else 0
        return T.decimal(max(len(value.as_tuple().digits), scale, 1), scale)
    for python_type, sql_type in (
        (bool, T.BOOL),
        (int, T.INT64),
        (float, T.FLOAT64),
        (str, T.STRING),
        (dt.datetime, T.TIMESTAMP),
        (dt.date, T.DATE),
    ):
        if isinstance(value, python_type):
            return sql_type
    raise TypeError(f"no SQL type for {value!r}")


def interval(count: int, unit: str) -> Interval:
    return Interval(count, IntervalUnit[unit.upper()])


def call(name: str, *args: Expr, ignore_nulls: bool | None = None, **clauses: object) -> FuncCall:
    """call("lag", col("v"), lit(1), ignore_nulls=True) and FuncCall's other clauses."""
    if ignore_nulls is not None:
        clauses["null_treatment"] = NullTreatment.IGNORE if ignore_nulls else NullTreatment.RESPECT
    return FuncCall(name, tuple(args), **clauses)  # type: ignore[arg-type]


def asc(expr: Expr, nulls: str | None = None) -> SortKey:
    return SortKey(expr, False, _nulls(nulls))


def desc(expr: Expr, nulls: str | None = None) -> SortKey:
    return SortKey(expr, True, _nulls(nulls))


def _nulls(nulls: str | None) -> NullsOrder | None:
    return None if nulls is None else NullsOrder[nulls.upper()]


def bound(text: str | int | Interval | Expr, kind: str | None = None) -> Bound:
    """bound("unbounded preceding"), bound("current row"), bound(2, "preceding"),
    bound(interval(1, "day"), "following")."""
    if kind is None:
        return Bound(BoundKind[str(text).upper().replace(" ", "_")])
    offset = text if isinstance(text, (Literal, Interval)) else lit(text)
    return Bound(BoundKind[kind.upper()], offset)  # type: ignore[arg-type]


def frame(mode: str, start: Bound, end: Bound, exclude: str | None = None) -> Frame:
    exclusion = None if exclude is None else Exclusion[exclude.upper().replace(" ", "_")]
    return Frame(FrameMode[mode.upper()], start, end, exclusion)


def over(
    func: FuncCall,
    partition: Sequence[Expr] = (),
    order: Sequence[SortKey] = (),
    frame: Frame | None = None,
) -> WindowExpr:
    return WindowExpr(
        func, WindowSpec(partition_by=tuple(partition), order_by=tuple(order), frame=frame)
    )


def select(
    *items: Expr | tuple[Expr, str], source: Source | str | None = "t", **clauses: object
) -> Select:
    """select(col("id"), (over(...), "w"), where=..., order_by=[asc(col("id"))])."""
    select_items = tuple(
        SelectItem(*item) if isinstance(item, tuple) else SelectItem(item) for item in items
    )
    if isinstance(source, str):
        source = TableRef(source)
    for key in ("order_by", "group_by", "windows"):
        if key in clauses:
            clauses[key] = tuple(clauses[key])  # type: ignore[arg-type]
    return Select(items=select_items, source=source, **clauses)  # type: ignore[arg-type]


def run(
    query: Select,
    tables: Mapping[str, pa.Table] | pa.Table,
    *,
    profile: SemanticsProfile = DEFAULT_PROFILE,
    peer_order: PeerOrder | None = None,
) -> Evaluation:
    """Evaluate on the reference; a bare table is named "t"."""
    if isinstance(tables, pa.Table):
        tables = {"t": tables}
    return evaluate(query, tables, profile=profile, peer_order=peer_order)


def window_values(expr: WindowExpr, data: pa.Table, **kwargs: object) -> list:
    """The values of one window expression over table "t", one per input row in input order."""
    return run(select((expr, "w")), data, **kwargs).table.column("w").to_pylist()  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# The reference by its definitions (the property tests' oracle for the fast
# paths, and bench/reference_speed.py's baseline)


def runs_of(positions: list[int]) -> tuple[tuple[int, int], ...]:
    """Positions in increasing order as runs of consecutive ones."""
    runs: list[tuple[int, int]] = []
    for p in positions:
        if runs and runs[-1][1] == p:
            runs[-1] = (runs[-1][0], p + 1)
        else:
            runs.append((p, p + 1))
    return tuple(runs)


@contextlib.contextmanager
def definitions_only() -> Iterator[None]:
    """The reference with its fast paths off: comparisons, sorts, peers,
    frames, window aggregates and value functions, min/max and variance by
    their definitions, nothing remembered."""

    def per_row_runs(frame, part):
        return [runs_of(frame_positions(frame, part, i)) for i in range(part.size)]

    patches = [
        mock.patch.object(values, "_PLAINLY_ORDERED", frozenset()),
        mock.patch.object(values, "_NUMBERS_BUT_NAN", frozenset()),
        mock.patch.object(values, "_OWN_GROUP_KEY", frozenset()),
        mock.patch.object(ordering, "collation_keys", lambda keys, specs: None),
        mock.patch.object(windows, "collation_keys", lambda keys, specs: None),
        mock.patch.object(frames, "_range_edge_by_collation", lambda *args: None),
        mock.patch.object(windows, "partition_runs", per_row_runs),
        mock.patch.object(windows, "frames_at_once", lambda *args: None),
        mock.patch.object(windows, "WINDOW_FUNCTIONS_BY_RUNS", {}),
        mock.patch.object(aggregates, "scaled_variance", exact_variance),
        mock.patch.object(memo, "_memo_of", lambda node: {}),
        mock.patch.object(relation, "KEPT_SCAN_ROWS", -1),
    ]
    with contextlib.ExitStack() as stack:
        for p in patches:
            stack.enter_context(p)
        yield
