"""The reference's derivation of one cell of a query's answer (`window-harness
explain`): the steps by which the window operator reaches the value, as typed
data, each with a short sentence and perhaps a small table.

The steps are read from the reference's own evaluation (the same partitions,
sort, peer order and frames as `evaluate`), not recomputed beside it: the
partition, the sort with its peer groups, the frame bounds of this row (the
offsets counted for ROWS, the key arithmetic for RANGE, the group counts for
GROUPS), the rows EXCLUDE and FILTER remove, the NULLs skipped, DISTINCT's
set, and the function's computation (exact, then the result type's value).

A row is named by its place in the answer (1-based, the query's ORDER BY then
the input order: the order `evaluate` gives) or by its input row (`#N`: the
N-th row of the table, as the case lists it, when the query reads one table
through the row-id column the caller names; else the N-th row of the window
operator's input).

Expressions are spelled by the caller's `spell` (the SQL writer sits above
this package).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from harness.core.errors import EvaluationError, InvalidQuery
from harness.core.functions import lookup
from harness.core.model import Select, Star, WindowExpr, resolve_window
from harness.core.semantics import SemanticsProfile
from reference_impl.context import Context
from reference_impl.evaluation import DEFAULT_PROFILE, PeerOrder
from reference_impl.explain_frame import exclude_step, frame_step
from reference_impl.explain_steps import (
    SmallTable,
    Step,
    function_steps,
    partition_step,
    show,
    sort_step,
)
from reference_impl.expressions import compile_expr
from reference_impl.frames import frame_extent, frame_positions
from reference_impl.profile import using_profile
from reference_impl.query import run_query, trace_answer, window_input
from reference_impl.relation import Relation
from reference_impl.subqueries import running
from reference_impl.windows import WindowTrace, apply_windows, trace_window, window_exprs_in

__all__ = ["CellAt", "CellDerivation", "SmallTable", "Step", "explain_cell"]


@dataclass(frozen=True)
class CellAt:
    """A cell: its output column (0-based) and its row, 1-based: a row of the
    answer, or (`by_input`) an input row."""

    column: int
    row: int
    by_input: bool = False


@dataclass(frozen=True)
class CellDerivation:
    column: str  # the output column's name
    expression: str  # the window expression, spelled
    answer_row: int | None  # 1-based place in the answer; None: QUALIFY or LIMIT leaves it out
    input_row: int  # 1-based (see the module's docstring)
    value: object  # the cell's value
    window_value: object  # the window function's value (the cell's, unless the column computes on it)
    result_type: str
    steps: tuple[Step, ...] = field(default_factory=tuple)


def explain_cell(query: object, tables: Mapping[str, pa.Table], at: CellAt, *,
                 spell: Callable[[object], str] = repr, profile: SemanticsProfile = DEFAULT_PROFILE,
                 peer_order: PeerOrder | None = None, rowid: str | None = None) -> CellDerivation:
    """The derivation of the cell `at` of `query`'s answer over `tables`."""
    if not isinstance(query, Select):
        raise InvalidQuery("explain takes a SELECT (not a WITH, UNION ALL or VALUES query)")
    ctx = Context(tables=tables, profile=profile, peer_order=peer_order)
    with using_profile(profile), running(ctx, run_query):
        return _derive(query, ctx, at, spell, rowid)


def _derive(query: Select, ctx: Context, at: CellAt, spell: Callable[[object], str],
            rowid: str | None) -> CellDerivation:
    select, rel, rewrite = window_input(query, ctx)
    written = _window_of(select, at.column)
    windowed, out_rewrite = apply_windows(rel, select, rewrite, ctx)
    trace = trace_answer(select, windowed, out_rewrite, ctx)
    ids = _input_ids(rel, rowid)
    k = _row_index(at, trace.answer, ids, select.distinct)
    wt = trace_window(rel, select, rewrite, written, ctx)
    steps = _steps(wt, rel, k, ids, spell, rowid)
    answer_row = trace.answer.index(k) + 1 if k in trace.answer else None
    type_ = wt.result.type
    resolved = WindowExpr(written.func, resolve_window(written.window, select.windows))
    return CellDerivation(trace.names[at.column], spell(resolved), answer_row, ids[k] + 1,
                          trace.cells[k][at.column], wt.result.values[k],
                          str(type_) if type_ is not None else "NULL", tuple(steps))


def _window_of(select: Select, column: int) -> WindowExpr:
    if isinstance(select.items[0].expr, Star) or any(isinstance(i.expr, Star) for i in select.items):
        raise InvalidQuery("explain needs the select list written out (no *)")
    if not 0 <= column < len(select.items):
        raise InvalidQuery(f"column {column + 1} is not in the select list ({len(select.items)} columns)")
    found = window_exprs_in(select.items[column].expr)
    if not found:
        raise InvalidQuery(f"column {column + 1} holds no window function")
    return found[0]


def _input_ids(rel: Relation, rowid: str | None) -> list[int]:
    """Each window input row's 0-based input row: its row id, or its index."""
    index = next((i for i, f in enumerate(rel.fields) if rowid is not None and f.name == rowid), None)
    if index is None:
        return list(range(len(rel.rows)))
    return [row[index] for row in rel.rows]  # type: ignore[misc]


def _row_index(at: CellAt, answer: list[int], ids: list[int], distinct: bool) -> int:
    """The window input row of the cell (an index into the window operator's rows)."""
    if at.by_input:
        if at.row - 1 not in ids:
            raise InvalidQuery(f"input row #{at.row} is not among the window's {len(ids)} input rows")
        return ids.index(at.row - 1)
    if distinct:
        raise InvalidQuery("with SELECT DISTINCT, name the row by its input row (#N)")
    if not 1 <= at.row <= len(answer):
        raise InvalidQuery(f"row {at.row} is not in the answer ({len(answer)} rows)")
    return answer[at.row - 1]


def _steps(wt: WindowTrace, rel: Relation, k: int, ids: list[int],
           spell: Callable[[object], str], rowid: str | None) -> list[Step]:
    n, part = next((n, p) for n, p in enumerate(wt.window.partitions) if k in p.rows)
    i = part.rows.index(k)
    shown = [j for j in rel.visible() if rel.fields[j].name != rowid]
    names = tuple(rel.fields[j].name for j in shown)
    inputs = [ids[r] + 1 for r in part.rows]
    spec = wt.plan.spec
    rows = wt.window.partition_rows(rel, n)
    key_values = [compile_expr(e, rel).fn(rel.rows[k]) for e in spec.partition_by]
    steps = [partition_step([spell(e) for e in spec.partition_by], key_values, rel, names, shown, part,
                            inputs),
             sort_step([_key_label(key, s, spell) for key, s in zip(spec.order_by, wt.window.specs,
                                                                    strict=True)],
                       part, inputs, i)]
    positions = None
    if wt.frame is not None and lookup(wt.plan.func.name).uses_frame:
        extent = frame_extent(wt.frame, part, i)
        steps.append(frame_step(wt.frame, spec.frame, part, i, extent, spell))
        positions = frame_positions(wt.frame, part, i)
        if wt.frame.exclusion is not None:
            steps.append(exclude_step(wt.frame.exclusion, extent, positions, inputs))
    args = [_argument_values(a, rel, rows) for a in wt.plan.func.args]
    filt = None if wt.plan.func.filter is None else _argument_values(wt.plan.func.filter, rel, rows)
    steps += function_steps(wt.plan.func, spell, args, filt, positions, part, i, inputs,
                            wt.result.values[k], wt.result.type)
    return steps


def _key_label(key: object, spec: object, spell: Callable[[object], str]) -> str:
    direction = "DESC" if getattr(spec, "descending", False) else "ASC"
    nulls = "NULLS FIRST" if getattr(spec, "nulls_first", False) else "NULLS LAST"
    return f"{spell(key.expr)} {direction} {nulls}"  # type: ignore[attr-defined]


def _argument_values(expr: object, rel: Relation, rows: Sequence[tuple]) -> list[object] | None:
    """An argument's value at each position of the partition; None for `*`."""
    if isinstance(expr, Star):
        return None
    try:
        fn = compile_expr(expr, rel).fn  # type: ignore[arg-type]
    except EvaluationError:
        return None
    return [fn(row) for row in rows]


def value_text(value: object) -> str:
    return show(value)
