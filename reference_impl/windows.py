"""The window operator: evaluates every window expression of a SELECT over
its input (after FROM, WHERE, GROUP BY and HAVING) and appends one column per
expression.

For each window, by the standard's definitions: partition the rows by the
PARTITION BY values (NULLs form one partition; values not distinct from each
other share one); sort each partition by the ORDER BY keys, stably, so that
peers keep their input order; let the peer_order hook reorder the peer groups
of windows whose value depends on it; then compute each row's value, through
its frame where the function reads one.

Windows that share PARTITION BY and ORDER BY (the `WindowKey`) are sorted
once and share the hook's choice, as one sort in an engine would. Each
window's sort starts from the input order, never from an earlier window's.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cmp_to_key, partial

from harness.core.errors import EvaluationError, HarnessError, InvalidInput, ReferenceGap
from harness.core.functions import (
    ARGUMENT_ORDERED_RANKING,
    FunctionKind,
    FunctionSpec,
    depends_on_peer_order,
    frame_is_whole_partition,
    lookup,
)
from harness.core.model import (
    Column,
    Expr,
    FramedWindowCopy,
    FuncCall,
    Literal,
    Select,
    WindowExpr,
    WindowSpec,
    resolve_window,
)
from harness.core.types import FLOAT64, SqlType
from reference_impl.aggregates import compile_aggregate
from reference_impl.compiled import Compiled, converted
from reference_impl.context import Context
from reference_impl.evaluation import WindowKey
from reference_impl.expressions import compile_expr
from reference_impl.frame_aggregates import each_frame, frames_at_once
from reference_impl.frames import (
    FrameDef,
    OffsetOutOfRange,
    PartitionRuns,
    frame_positions,
    partition_runs,
    resolve_frame,
)
from reference_impl.memo import per_node
from reference_impl.ordering import (
    SortedPartition,
    SortSpec,
    collation_keys,
    compare_keys,
    sort_partition,
    sort_spec,
)
from reference_impl.relation import Field, Relation, Row
from reference_impl.rewrite import Replacement, Rewrite, outer_children
from reference_impl.values import row_key
from reference_impl.window_functions import (
    WINDOW_FUNCTIONS,
    WINDOW_FUNCTIONS_BY_RUNS,
    WindowCall,
    ranked_within_frame,
)


@dataclass(frozen=True)
class WindowPlan:
    written: WindowExpr  # as written in the query
    key: WindowKey  # resolved PARTITION BY and ORDER BY, as written
    func: FuncCall  # rewritten to read the window operator's input
    spec: WindowSpec  # resolved and rewritten
    order_sensitive: bool


@dataclass(frozen=True)
class WindowResult:
    values: list
    type: SqlType | None
    magnitudes: list | None = None


@dataclass(frozen=True)
class SortedWindow:
    partitions: list[SortedPartition]
    specs: list[SortSpec]
    key_types: list[SqlType | None]
    # The frames of each partition as runs, by frame and partition number:
    # the window expressions over one window and one frame find them once.
    runs: dict[tuple, dict[int, PartitionRuns]] = field(default_factory=dict)
    rows: dict[int, list[Row]] = field(default_factory=dict)

    def partition_rows(self, rel: Relation, n: int) -> list[Row]:
        """The rows of the n-th partition, in window order (`rel`: the input)."""
        if n not in self.rows:
            self.rows[n] = list(map(rel.rows.__getitem__, self.partitions[n].rows))
        return self.rows[n]

    def frame_runs(self, frame: FrameDef) -> Callable[[int], PartitionRuns]:
        """`partition_runs(frame, part)` of the n-th partition, as a function of n."""
        # Equal offsets of other types (1 and 1.0) move a RANGE bound by other
        # arithmetic (a float's rounds), so the types are part of the key.
        found = self.runs.setdefault(
            (frame, type(frame.start.offset), type(frame.end.offset)), {}
        )

        def runs_of(n: int) -> PartitionRuns:
            if n not in found:
                found[n] = partition_runs(frame, self.partitions[n])
            return found[n]

        return runs_of


def apply_windows(
    rel: Relation, select: Select, rewrite: Rewrite, ctx: Context
) -> tuple[Relation, Rewrite]:
    """`rel` with a column per window expression, and the rewrite that reads them."""
    plans = _window_plans(select, rewrite)
    if not plans:
        return rel, rewrite
    results: list[WindowResult] = [None] * len(plans)  # type: ignore[list-item]
    for key, same_window in _by_window(plans):
        window = _sort_window(rel, plans[same_window[0]].spec, ctx)
        if any(plans[n].order_sensitive for n in same_window):
            _order_peers(window, key, rel, ctx)
        for n in same_window:
            results[n] = _evaluate(plans[n], window, rel, ctx)
    return _with_columns(rel, results), window_rewrite(select, rewrite)


@dataclass(frozen=True)
class WindowTrace:
    """One window expression as the operator evaluates it (for `explain`): its
    plan, its sorted (and peer-ordered) partitions, its frame, its values by row."""

    plan: WindowPlan
    window: SortedWindow
    frame: FrameDef | None  # None where the offsets are out of range over no rows
    result: WindowResult


def trace_window(rel: Relation, select: Select, rewrite: Rewrite, written: WindowExpr,
                 ctx: Context) -> WindowTrace:
    """`written` (a window expression of `select`) over `rel`, as `apply_windows` finds it."""
    plan = _plan(written, select, rewrite)
    window = _sort_window(rel, plan.spec, ctx)
    if plan.order_sensitive:
        _order_peers(window, plan.key, rel, ctx)
    result = _evaluate(plan, window, rel, ctx)
    frame = resolve_frame(plan.spec.frame, window.specs, window.key_types) if rel.rows else None
    return WindowTrace(plan, window, frame, result)


def window_exprs_in(expr: Expr) -> tuple[WindowExpr, ...]:
    """The window expressions in `expr`, in walk order."""
    return _window_exprs_in(expr)


# The plans depend on the query alone (`rewrite` is the one built for the same
# query by GROUP BY, or the identity), so they are made once per query node.


@per_node
def _window_plans(select: Select, rewrite: Rewrite) -> tuple[WindowPlan, ...]:
    return tuple(_plan(we, select, rewrite) for we in _window_exprs(select))


@per_node
def _by_window(plans: tuple[WindowPlan, ...]) -> tuple[tuple[WindowKey, tuple[int, ...]], ...]:
    """The plans' indexes grouped by window key, in order of first appearance."""
    # Found by equality, not in a dict: hashing a key walks all its expressions.
    groups: list[tuple[WindowKey, list[int]]] = []
    for n, plan in enumerate(plans):
        same = next((members for key, members in groups if key == plan.key), None)
        if same is None:
            groups.append((plan.key, [n]))
        else:
            same.append(n)
    return tuple((key, tuple(members)) for key, members in groups)


@per_node
def window_rewrite(select: Select, rewrite: Rewrite) -> Rewrite:
    """The rewrite that reads the window operator's output: after `rewrite`,
    each window expression becomes its column (see `_with_columns`)."""
    plans = _window_plans(select, rewrite)
    pairs = [(rewrite(plan.written), Column(_window_column(n))) for n, plan in enumerate(plans)]
    return Replacement(pairs, before=rewrite)


def _window_column(n: int) -> str:
    return f"#win{n}"


def _window_exprs(select: Select) -> list[WindowExpr]:
    """The distinct window expressions of the select list, ORDER BY and QUALIFY, in order."""
    found: list[WindowExpr] = []
    exprs = [item.expr for item in select.items] + [k.expr for k in select.order_by]
    for expr in exprs + ([select.qualify] if select.qualify is not None else []):
        for node in _window_exprs_in(expr):
            if node not in found:
                found.append(node)
    return found


@per_node  # per expression: the copies of a query made per case share them
def _window_exprs_in(expr: Expr) -> tuple[WindowExpr, ...]:
    """The window expressions in `expr`, in walk order; none may hold another."""
    found: list[WindowExpr] = []

    def visit(node: object, in_window: bool) -> None:
        if isinstance(node, WindowExpr):
            if in_window:
                raise EvaluationError("window functions cannot be nested")
            found.append(node)
        for child in outer_children(node):
            visit(child, in_window or isinstance(node, WindowExpr))

    visit(expr, False)
    return tuple(found)


def _plan(we: WindowExpr, select: Select, rewrite: Rewrite) -> WindowPlan:
    try:
        resolved = resolve_window(we.window, select.windows)
    except FramedWindowCopy as e:
        # The standard: a window specification naming an existing window
        # copies it, and that window shall have no frame clause.
        raise EvaluationError(str(e)) from None
    rewritten = rewrite(WindowExpr(we.func, resolved))
    assert isinstance(rewritten, WindowExpr)
    return WindowPlan(
        written=we,
        key=(resolved.partition_by, resolved.order_by),
        func=rewritten.func,
        spec=rewritten.window,
        order_sensitive=depends_on_peer_order(we.func, resolved.frame, bool(resolved.order_by)),
    )


def _sort_window(rel: Relation, spec: WindowSpec, ctx: Context) -> SortedWindow:
    partition_fns = [compile_expr(e, rel).fn for e in spec.partition_by]
    order = [compile_expr(k.expr, rel) for k in spec.order_by]
    specs = [sort_spec(k, ctx.profile) for k in spec.order_by]
    partitions: dict[tuple, list[int]] = {}
    for index, row in enumerate(rel.rows):
        key = row_key(tuple([f(row) for f in partition_fns]))
        partitions.setdefault(key, []).append(index)
    # The ORDER BY values, partition by partition; their collation keys (the
    # sort's fast path) are made for all partitions at once.
    fns = [k.fn for k in order]
    keys = [tuple([f(rel.rows[r]) for f in fns]) for rows in partitions.values() for r in rows]
    collated = collation_keys(keys, specs)
    sorted_parts, start = [], 0
    for rows in partitions.values():
        stop = start + len(rows)
        part_collated = None if collated is None else collated[start:stop]
        sorted_parts.append(sort_partition(rows, keys[start:stop], specs, part_collated))
        start = stop
    return SortedWindow(sorted_parts, specs, [k.type for k in order])


def _order_peers(window: SortedWindow, key: WindowKey, rel: Relation, ctx: Context) -> None:
    """Record every tied peer group and let the hook order it.

    Calls come partition by partition (in order of first appearance in the
    input), peer group by peer group in window order: an order fixed before
    any permutation is applied, so a caller can address a group by call index.
    A hook with a `partition` method is also told, before a partition's
    groups, every row of each partition that has a tied group (the groups
    that follow are that partition's): what a caller needs to search each
    partition on its own.
    """
    tell = getattr(ctx.peer_order, "partition", None)
    for part in window.partitions:
        if tell is not None and any(end - start >= 2 for start, end in part.groups):
            tell(key, [rel.row_mapping(rel.rows[r]) for r in part.rows])
        for group, (start, end) in enumerate(part.groups):
            if end - start < 2:
                continue
            ctx.peer_groups.append((key, end - start))
            if ctx.peer_order is None:
                continue
            rows = [rel.row_mapping(rel.rows[r]) for r in part.rows[start:end]]
            permutation = list(ctx.peer_order(key, rows))
            if sorted(permutation) != list(range(end - start)):
                raise InvalidInput(f"peer_order returned {permutation}, not a permutation")
            part.reorder_group(group, permutation)


def _evaluate(plan: WindowPlan, window: SortedWindow, rel: Relation, ctx: Context) -> WindowResult:
    """One window expression's values (and magnitudes, for aggregates), by row index."""
    try:
        frame = resolve_frame(plan.spec.frame, window.specs, window.key_types)
    except OffsetOutOfRange:
        if rel.rows:
            raise
        frame = resolve_frame(None, window.specs, window.key_types)  # no row has a frame
    kind = lookup(plan.func.name).kind
    if kind is FunctionKind.AGGREGATE:
        return _evaluate_aggregate(plan, window, frame, rel, ctx)
    if kind is FunctionKind.WINDOW and plan.func.order_by and plan.func.name in ARGUMENT_ORDERED_RANKING:
        return _evaluate_ranked_within_frame(plan, window, frame, rel, ctx)
    if kind is FunctionKind.WINDOW:
        return _evaluate_window_function(plan, window, frame, rel)
    raise EvaluationError(f"{plan.func.name}() is not a window or aggregate function")


def _evaluate_aggregate(
    plan: WindowPlan, window: SortedWindow, frame: FrameDef, rel: Relation, ctx: Context
) -> WindowResult:
    agg = compile_aggregate(plan.func, rel, ctx.profile)
    values: list = [None] * len(rel.rows)
    # Only float results have magnitudes (see `_with_columns`).
    floats = agg.result_type is not None and agg.result_type.is_float
    magnitudes: list | None = [None] * len(rel.rows) if floats else None
    runs_of = window.frame_runs(frame)
    for n, part in enumerate(window.partitions):
        rows = window.partition_rows(rel, n)
        try:
            runs = runs_of(n)
        except HarnessError:
            agg.prepare_rows(rows)  # the definition prepares the rows first: their error comes first
            raise
        columns = frames_at_once(agg, rows, runs)
        if columns is None:
            columns = each_frame(agg, agg.prepare_rows(rows), runs)
        # Each row's value into its place (the loop in C).
        deque(map(values.__setitem__, part.rows, columns[0]), maxlen=0)
        if magnitudes is not None:
            deque(map(magnitudes.__setitem__, part.rows, columns[1]), maxlen=0)
    return WindowResult(values, agg.result_type, magnitudes)


def _evaluate_window_function(
    plan: WindowPlan, window: SortedWindow, frame: FrameDef, rel: Relation
) -> WindowResult:
    call, spec = plan.func, lookup(plan.func.name)
    _check_clauses(call, spec)
    args = [compile_expr(a, rel) for a in call.args]
    result_type = spec.result(tuple(a.type for a in args))
    if call.name in ("lag", "lead") and len(args) == 3:
        # The default stands in for the value, so it takes the value's type.
        args[2] = Compiled(converted(args[2], result_type), result_type)
    function = WINDOW_FUNCTIONS[call.name]
    by_runs = WINDOW_FUNCTIONS_BY_RUNS.get(call.name)
    runs_of = window.frame_runs(frame)
    values: list = [None] * len(rel.rows)
    for n, part in enumerate(window.partitions):
        rows = window.partition_rows(rel, n)
        arg_values = _argument_values(args, call.args, rows)
        runs = _runs_or_none(runs_of, n) if by_runs is not None else None
        frame_of = partial(frame_positions, frame, part)
        w = WindowCall(call, part, arg_values, frame_of, result_type, runs)
        row_value = function if runs is None else by_runs
        for i, r in enumerate(part.rows):
            values[r] = row_value(w, i)  # type: ignore[misc]
    return WindowResult(values, result_type)


def _argument_values(args: list[Compiled], exprs: tuple[Expr, ...], rows: list[Row]) -> list[list]:
    """Each argument's value in each row; a literal's computed once (lag's
    default `0`, cast to the value's type, was a million casts at scale)."""
    return [[a.fn(rows[0])] * len(rows) if isinstance(e, Literal) and rows else list(map(a.fn, rows))
            for a, e in zip(args, exprs, strict=True)]


def _evaluate_ranked_within_frame(
    plan: WindowPlan, window: SortedWindow, frame: FrameDef, rel: Relation, ctx: Context
) -> WindowResult:
    """`rank(ORDER BY x) OVER (...)` and its kin: each row ranked among the rows
    of its frame by the function's own keys (`ranked_within_frame`). Where the
    frame leaves the current row out (an offset, EXCLUDE), the extension does
    not say where the row ranks: a gap."""
    call, spec = plan.func, lookup(plan.func.name)
    _check_clauses(replace(call, order_by=()), spec)
    keys = [compile_expr(k.expr, rel) for k in call.order_by]
    specs = [sort_spec(k, ctx.profile) for k in call.order_by]
    args = [compile_expr(a, rel) for a in call.args]
    result_type = spec.result(tuple(a.type for a in args))
    values: list = [None] * len(rel.rows)
    whole = frame_is_whole_partition(plan.spec.frame) or (plan.spec.frame is None and not plan.spec.order_by)
    for n, part in enumerate(window.partitions):
        rows = window.partition_rows(rel, n)
        key_values = [tuple([k.fn(row) for k in keys]) for row in rows]
        arg_values = _argument_values(args, call.args, rows)
        if whole:  # every frame is the partition: one sort ranks all its rows
            for i, (before, peers) in _ranks_in_partition(key_values, specs).items():
                values[part.rows[i]] = ranked_within_frame(call.name, [a[i] for a in arg_values], before,
                                                           peers, len(rows))
            continue
        runs = _runs_or_none(window.frame_runs(frame), n)
        counted = _ranked_in_runs(key_values, specs, runs) if runs is not None else None
        for i, r in enumerate(part.rows):
            if counted is not None:
                inside, before, peers, size = counted[i]
            else:  # the definition, row by row (it raises where finding the frame does)
                positions = frame_positions(frame, part, i)
                order = [compare_keys(key_values[p], key_values[i], specs) for p in positions]
                inside, before, peers, size = i in positions, order.count(-1), order.count(0), len(positions)
            if not inside:
                raise ReferenceGap(f"{call.name}() with an ORDER BY of its own, over a frame without "
                                   "the current row: where the row ranks is not defined")
            values[r] = ranked_within_frame(call.name, [a[i] for a in arg_values], before, peers, size)
    return WindowResult(values, result_type)


def _ranked_in_runs(keys: list[tuple], specs: list[SortSpec], runs: PartitionRuns,
                    ) -> list[tuple[bool, int, int, int]]:
    """For each position i of a partition, from its frame's runs: whether the frame
    holds i, how many of its rows sort before i by `keys`, how many tie with i
    (itself included), and the frame's size. The same counts as comparing i with
    each row of its frame, in O(n log n) instead of O(n * frame): each key is
    ranked once (its sorted position), and the rows of a run ranked below a bound
    are counted offline, queries in order of their bound, with a Fenwick tree
    over positions that holds the rows ranked below it."""
    ranked = _ranks_in_partition(keys, specs)
    ranks = [ranked[p][0] for p in range(len(keys))]
    queries: list[tuple[int, int, int]] = []  # (start, end, bound): rows in start..end-1 ranked below bound
    for i in range(len(keys)):
        for start, end in runs[i]:
            queries += [(start, end, ranks[i]), (start, end, ranks[i] + 1)]
    below = _counts_below(ranks, queries)
    out, q = [], 0
    for i in range(len(keys)):
        before = peers = size = 0
        inside = False
        for start, end in runs[i]:
            before += below[q]
            peers += below[q + 1] - below[q]
            size += end - start
            inside = inside or start <= i < end
            q += 2
        out.append((inside, before, peers, size))
    return out


def _counts_below(ranks: list[int], queries: list[tuple[int, int, int]]) -> list[int]:
    """For each (start, end, bound): how many positions p in start..end-1 have
    ranks[p] < bound."""
    n = len(ranks)
    tree = [0] * (n + 1)  # a Fenwick tree over positions 1..n

    def prefix(p: int) -> int:  # how many inserted positions are below p (0-based, exclusive)
        total = 0
        while p > 0:
            total += tree[p]
            p -= p & -p
        return total

    by_rank = sorted(range(n), key=ranks.__getitem__)
    answers = [0] * len(queries)
    inserted = 0
    for q in sorted(range(len(queries)), key=lambda q: queries[q][2]):
        start, end, bound = queries[q]
        while inserted < n and ranks[by_rank[inserted]] < bound:
            p = by_rank[inserted] + 1
            while p <= n:
                tree[p] += 1
                p += p & -p
            inserted += 1
        answers[q] = prefix(end) - prefix(start)
    return answers


def _ranks_in_partition(keys: list[tuple], specs: list[SortSpec]) -> dict[int, tuple[int, int]]:
    """For each position: how many rows sort before it by `keys`, and how many
    tie with it (itself included)."""
    order = sorted(range(len(keys)), key=cmp_to_key(lambda a, b: compare_keys(keys[a], keys[b], specs)))
    out: dict[int, tuple[int, int]] = {}
    start = 0
    while start < len(order):
        end = start + 1
        while end < len(order) and compare_keys(keys[order[end]], keys[order[start]], specs) == 0:
            end += 1
        for p in order[start:end]:
            out[p] = (start, end - start)
        start = end
    return out


def _runs_or_none(runs_of: Callable[[int], PartitionRuns], n: int) -> PartitionRuns | None:
    """The n-th partition's frames as runs, or None where finding them raises:
    the definition then finds each row's frame as it reads it, and raises where it does."""
    try:
        return runs_of(n)
    except HarnessError:
        return None


def _check_clauses(call: FuncCall, spec: FunctionSpec) -> None:
    spec.check_arity(len(call.args))
    if call.distinct or call.filter is not None or call.order_by:
        raise EvaluationError(f"{call.name}() takes no DISTINCT, FILTER or ORDER BY")
    if call.null_treatment is not None and not spec.ignore_nulls:
        raise EvaluationError(f"{call.name}() takes no IGNORE/RESPECT NULLS")
    if call.from_last is not None and not spec.from_last:
        raise EvaluationError(f"{call.name}() takes no FROM FIRST/LAST")


def _with_columns(rel: Relation, results: list[WindowResult]) -> Relation:
    """Append the window columns (and magnitude columns of float aggregates)."""
    fields, columns = list(rel.fields), []
    for n, result in enumerate(results):
        column = Field(_window_column(n), result.type, hidden=True)
        fields.append(column)
        columns.append(result.values)
        if result.magnitudes is not None and result.type is not None and result.type.is_float:
            fields.append(
                Field(f"#win{n}.magnitude", FLOAT64, hidden=True, magnitude_of=column.uid)
            )
            columns.append(result.magnitudes)
    rows = [row + added for row, added in zip(rel.rows, zip(*columns, strict=True), strict=True)]
    return Relation(tuple(fields), rows)
