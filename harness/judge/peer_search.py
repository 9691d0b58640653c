"""The search for an order of tied rows, unit by unit.

When an answer differs from the reference's default evaluation only where
tied rows (peers) were ordered, the comparator looks for a witness order of
the peers under which the reference gives the engine's values. Searched over
the whole query, the orders multiply: three partitions with five tied rows
each are 120^3 orders. But in a row-level query (matched by row id, without
QUALIFY; with LIMIT or OFFSET only under ORDER BY keys that do not depend
on peer order, cut between rows the keys tell apart) the rows returned do
not depend on peer order, and
an order-sensitive column's value in a row depends only on the order of the
peers in that row's partition of each window the column reads. So the
answer is split into units, one column within one partition (of each of its
windows: partitions that one column's rows join, of two windows, are one
unit), and each unit is decided on its own; the orders to try add up
instead of multiplying, and one evaluation of the reference tries an order
of every unit at once.

The rules are the comparator's (see `harness.judge.compare`): each
order-sensitive column may find its own order of the peers (some engines,
SQLite among them, order ties for each expression on its own); the
expressions of one column share one order, as one sort would give them. A
unit is decided by the first of these that reproduces its cells:
- the reference's default order (peers in input order);
- the engine's own order of each window, read from its row_number witness;
- for a column that is exactly `row_number() OVER w`: the order its values
  name (a position each); the only order that can give them, so if it does
  not, no order does;
- every order of the unit's peer groups, while their number is within the
  budget;
- past the budget, SAMPLES random orders of the unit's peer groups (seeded).
A unit none of these decides is a mismatch when its orders were all tried
(or its row_number values named the only one), and inconclusive otherwise.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from harness.core.errors import ReferenceTimeout
from harness.judge.cells import Rows, cell_tolerance, cells_equal, hashable, rows_of, zero_sign_note
from harness.judge.instrument import ROWID, Plan, WindowKey, plain_row_number, sensitive_window_keys
from harness.judge.oracle import Oracle
from reference_impl import Evaluation, PeerOrder

# Random orders tried for units past the budget before they are inconclusive
# (`_Search._sample`): at most SAMPLES, for at most SAMPLE_SECONDS. A wrong
# answer among many ties is always undecided, so each one pays this in full.
SAMPLES = 200
SAMPLE_SECONDS = 1.0


@dataclass(frozen=True)
class Cell:
    """A cell of the answer that differs under the default evaluation."""

    actual_row: int
    column: int
    expected_row: int  # in the default evaluation's rows


@dataclass(frozen=True)
class UnitsVerdict:
    """What the unit-by-unit search decided: `match`, `mismatch` (a unit no
    order reproduces, or a cell no order changes) or `inconclusive`."""

    verdict: str
    cell: Cell | None = None
    notes: tuple[str, ...] = ()
    units: int = 0
    evaluations: int = 0


@dataclass
class _Layout:
    """The peer groups of the default evaluation, as the reference's hook saw them."""

    keys: list[WindowKey]  # by call index
    sizes: list[int]
    group_rowids: list[list[object]]
    group_component: list[int]  # the unit component each group belongs to
    components: list[list[int]]  # call indices, per component
    cell_component: dict[int, dict[object, int]]  # column -> row id -> component
    partitions: list[tuple[WindowKey, int, list[object]]]  # key, component, row ids


class _Recorder:
    """A peer_order hook that keeps input order and records the partitions and groups."""

    def __init__(self) -> None:
        self.partitions: list[tuple[WindowKey, list[object]]] = []
        self.groups: list[tuple[WindowKey, int, list[object]]] = []

    def partition(self, key: WindowKey, rows: Sequence[dict]) -> None:
        self.partitions.append((key, [r.get(ROWID) for r in rows]))

    def __call__(self, key: WindowKey, rows: Sequence[dict]) -> Sequence[int]:
        self.groups.append((key, len(self.partitions) - 1, [r.get(ROWID) for r in rows]))
        return range(len(rows))


def search_units(
    rows: Rows,
    plan: Plan,
    oracle: Oracle,
    user: Sequence[int],
    witness: PeerOrder | None,
    budget: int,
) -> UnitsVerdict | None:
    """Decide the answer unit by unit, or None where the query's shape does not
    split into units (the whole-query search then decides)."""
    if plan.rowid_column is None:
        return None
    hidden = [k.column for k in plan.order_keys or () if k.column not in user]
    if not plain_columns(plan.query, hidden):
        return None  # a hidden ORDER BY key over a window: its values may depend on peer order
    cut = plan.limit is not None or plan.offset is not None
    if cut and (not plan.order_keys or any(k.column in plan.sensitive_columns for k in plan.order_keys)):
        return None  # which rows LIMIT keeps may depend on the order of peers
    keys_of = sensitive_window_keys(plan.query)
    if keys_of is None:
        return None
    default = oracle.evaluate()
    layout = _layout(oracle, keys_of, default)
    if layout is None:
        return None
    # A hidden ORDER BY key (no window in it) is checked as the user's columns are.
    judged = [*user, *(c for c in dict.fromkeys(hidden))]
    search = _Search(rows, plan, judged, keys_of, layout, rows_of(default.table, default.magnitudes))
    kept = _kept_rowids(search.default, plan) if cut else None
    if cut and kept is None:
        return None  # LIMIT or OFFSET cuts through rows tied on the ORDER BY keys
    if not search.same_rows(kept):
        # Rows missing, extra or twice: the rows returned do not depend on peer
        # order here, so under every order (the whole-answer comparison says which).
        return UnitsVerdict("mismatch", units=len(search.pending))
    fixed = search.fixed_difference()
    if fixed is not None:
        return UnitsVerdict("mismatch", fixed, units=len(search.pending))
    return search.run(oracle, witness, budget)


def _kept_rowids(default: Rows, plan: Plan) -> set[object] | None:
    """The row ids LIMIT and OFFSET keep of the reference's sorted answer, when
    no cut goes through rows tied on the ORDER BY keys; None when one does.
    The keys do not depend on peer order (the caller checks), so then no order
    of peers keeps other rows, and the rows kept split into units as a
    row-level answer does: each unit is judged on the rows the engine returned."""
    keys = plan.order_keys or ()
    low = plan.offset or 0
    high = math.inf if plan.limit is None else low + plan.limit
    rid = plan.rowid_column
    kept: set[object] = set()
    runs = itertools.groupby(default.rows, key=lambda r: tuple(hashable(r[k.column]) for k in keys))
    start = 0
    for _, run in runs:
        members = list(run)
        inside = max(0, min(start + len(members), high) - max(start, low))
        if 0 < inside < len(members):
            return None
        if inside:
            kept.update(r[rid] for r in members)
        start += len(members)
    return kept


def plain_columns(query: object, columns: Sequence[int]) -> bool:
    """Whether these select-list columns hold no window expression."""
    from harness.core.model import Select, window_exprs

    if not columns:
        return True
    return isinstance(query, Select) and all(
        c < len(query.items) and not window_exprs(query.items[c].expr) for c in columns)


def _layout(oracle: Oracle, keys_of: dict[int, frozenset[WindowKey]], default: Evaluation) -> _Layout | None:
    recorder = _Recorder()
    oracle.evaluate(recorder)
    if [(k, len(r)) for k, _, r in recorder.groups] != [(k, n) for k, n in default.peer_groups]:
        return None
    wanted = set().union(*keys_of.values()) if keys_of else set()
    if any(k not in wanted for k, _, _ in recorder.groups):
        return None  # a window the select list does not show (a subquery's): not split here
    if any(p < 0 or None in r for _, p, r in recorder.groups):
        return None
    parent = list(range(len(recorder.partitions)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    part_of: dict[WindowKey, dict[object, int]] = {}
    for p, (key, rowids) in enumerate(recorder.partitions):
        mine = part_of.setdefault(key, {})
        if None in rowids or any(r in mine for r in rowids) or len(set(rowids)) != len(rowids):
            return None  # a row in two partitions of one window: not a row-level window
        mine.update(dict.fromkeys(rowids, p))
    all_rowids = {rid for _, rowids in recorder.partitions for rid in rowids}
    for keys in keys_of.values():
        if len(keys) < 2:
            continue
        for rid in all_rowids:
            nodes = [part_of[k][rid] for k in keys if rid in part_of.get(k, {})]
            for n in nodes[1:]:
                parent[find(n)] = find(nodes[0])
    roots: dict[int, int] = {}
    component_of_partition = [roots.setdefault(find(p), len(roots)) for p in range(len(parent))]
    components: list[list[int]] = [[] for _ in roots]
    group_component = []
    for i, (_, p, _) in enumerate(recorder.groups):
        group_component.append(component_of_partition[p])
        components[component_of_partition[p]].append(i)
    cell_component: dict[int, dict[object, int]] = {}
    for column, keys in keys_of.items():
        cells: dict[object, int] = {}
        for key in keys:
            for rid, p in part_of.get(key, {}).items():
                cells[rid] = component_of_partition[p]
        cell_component[column] = cells
    return _Layout(
        keys=[k for k, _, _ in recorder.groups],
        sizes=[len(r) for _, _, r in recorder.groups],
        group_rowids=[r for _, _, r in recorder.groups],
        group_component=group_component,
        components=components,
        cell_component=cell_component,
        partitions=[(k, component_of_partition[p], r) for p, (k, r) in enumerate(recorder.partitions)],
    )


@dataclass
class _Search:
    rows: Rows
    plan: Plan
    user: Sequence[int]
    keys_of: dict[int, frozenset[WindowKey]]
    layout: _Layout
    default: Rows
    notes: list[str] = field(default_factory=list)
    # (column, component) -> the engine's row indexes of its cells
    pending: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    decided_by: dict[tuple[int, int], int] = field(default_factory=dict)  # unit -> candidate number
    complete: set[tuple[int, int]] = field(default_factory=set)  # every order tried for these
    evaluations: int = 0

    def __post_init__(self) -> None:
        rid = self.plan.rowid_column
        self._default_index = {r[rid]: e for e, r in enumerate(self.default.rows)}
        for a, row in enumerate(self.rows.rows):
            for column, cells in self.layout.cell_component.items():
                if column in self.user and row[rid] in cells:
                    self.pending.setdefault((column, cells[row[rid]]), []).append(a)

    def same_rows(self, kept: set[object] | None = None) -> bool:
        """Whether the engine returned the reference's rows (those `kept` under LIMIT), once each."""
        rid = self.plan.rowid_column
        ids = [r[rid] for r in self.rows.rows]
        return len(set(ids)) == len(ids) and set(ids) == (set(self._default_index) if kept is None else kept)

    def fixed_difference(self) -> Cell | None:
        """The first cell that no order of peers changes and that differs."""
        rid = self.plan.rowid_column
        for a, row in enumerate(self.rows.rows):
            e = self._default_index[row[rid]]
            for c in self.user:
                if row[rid] in self.layout.cell_component.get(c, {}):
                    continue  # a unit's cell: searched
                if not self._equal(a, c, self.default, e):
                    return Cell(a, c, e)
        return None

    def _equal(self, a: int, c: int, expected: Rows, e: int, notes: list[str] | None = None) -> bool:
        av, ev = self.rows.rows[a][c], expected.rows[e][c]
        single = self.rows.single[c] or expected.single[c]
        if not cells_equal(av, ev, cell_tolerance(expected, c, e, single)):
            return False
        note = zero_sign_note(av, ev)
        if note:
            (self.notes if notes is None else notes).append(note)
        return True

    def _try(self, evaluation: Evaluation, number: int, only: set[tuple[int, int]] | None = None) -> None:
        expected = rows_of(evaluation.table, evaluation.magnitudes)
        rid = self.plan.rowid_column
        index = {r[rid]: e for e, r in enumerate(expected.rows)}
        for unit, cells in list(self.pending.items()):
            if only is not None and unit not in only:
                continue
            column, notes = unit[0], []
            if all(self._equal(a, column, expected, index[self.rows.rows[a][rid]], notes) for a in cells):
                self.decided_by[unit] = number
                del self.pending[unit]
                self.notes += [n for n in dict.fromkeys(notes) if n not in self.notes]  # the order that matched

    def run(self, oracle: Oracle, witness: PeerOrder | None, budget: int) -> UnitsVerdict:
        units = len(self.pending)
        candidates = itertools.count()
        self._try(oracle.evaluate(), next(candidates))
        if self.pending and witness is not None:
            self._count(oracle.evaluate(witness), next(candidates))
        for column, key in self._row_number_columns():
            mine = {u for u in self.pending if u[0] == column}
            if mine:
                self._count(oracle.evaluate(self._named_by(column, key)), next(candidates), mine)
            self.complete |= mine  # the only order that gives these values was tried
        self._enumerate(oracle, budget, candidates)
        self._sample(oracle, candidates)
        if not self.pending:
            return UnitsVerdict("match", notes=self._match_notes(), units=units, evaluations=self.evaluations)
        proven = [u for u in self.pending if u in self.complete]
        if not proven:
            proven = self._unpickable(oracle)
        unit = min(proven or self.pending)
        return UnitsVerdict("mismatch" if proven else "inconclusive", self._shown(unit),
                            units=units, evaluations=self.evaluations)

    def _count(self, evaluation: Evaluation, number: int, only: set | None = None) -> None:
        self.evaluations += 1
        self._try(evaluation, number, only)

    def _row_number_columns(self) -> list[tuple[int, WindowKey]]:
        found = []
        for column, keys in self.keys_of.items():
            key = plain_row_number(self.plan.query, column)
            if key is not None and keys == {key}:
                found.append((column, key))
        return found

    def _named_by(self, column: int, key: WindowKey) -> PeerOrder:
        """Order each peer group of `key` by the engine's row_number values."""
        rid = self.plan.rowid_column
        position = {r[rid]: r[column] for r in self.rows.rows}

        def order(k: WindowKey, group: Sequence[dict]) -> Sequence[int]:
            if k != key:
                return range(len(group))
            return sorted(range(len(group)), key=lambda i: _position_key(position.get(group[i].get(ROWID)), i))

        return order

    def _enumerate(self, oracle: Oracle, budget: int, candidates: Iterator[int]) -> None:
        """Every order of each unit's peer groups, one order of every unit per evaluation."""
        iterators: dict[int, Iterator[tuple[tuple[int, ...], ...]]] = {}
        for comp in {u[1] for u in self.pending}:
            groups = self.layout.components[comp]
            if _orders(self.layout.sizes[g] for g in groups) <= budget:
                product = itertools.product(*(itertools.permutations(range(self.layout.sizes[g])) for g in groups))
                next(product)  # input order: the default evaluation, tried first
                iterators[comp] = product
        identity = [tuple(range(s)) for s in self.layout.sizes]
        while self.pending and iterators:
            perms = list(identity)
            for comp, product in list(iterators.items()):
                picked = next(product, None)
                if picked is None:
                    del iterators[comp]
                    self.complete |= {u for u in self.pending if u[1] == comp}
                    continue
                for g, perm in zip(self.layout.components[comp], picked, strict=True):
                    perms[g] = perm
            if not iterators:
                break
            waiting = {u for u in self.pending if u[1] in iterators}
            self._count(oracle.evaluate_permuted(tuple(perms)), next(candidates), waiting)
            for comp in list(iterators):
                if not any(u[1] == comp for u in self.pending):
                    del iterators[comp]
        for comp in iterators:  # ended with the last order tried
            self.complete |= {u for u in self.pending if u[1] == comp}

    def _sample(self, oracle: Oracle, candidates: Iterator[int]) -> None:
        """Random orders of the units whose orders were too many to try them all:
        any order that reproduces a unit's cells is a witness (a pass), and a
        tie group of 30 often has many. Seeded, so a rerun tries the same
        orders; ends at SAMPLES evaluations, after SAMPLE_SECONDS or at the
        search's time limit."""
        waiting = {u for u in self.pending if u not in self.complete}
        if not waiting:
            return
        rng = random.Random(0)
        identity = [tuple(range(s)) for s in self.layout.sizes]
        stop = time.monotonic() + SAMPLE_SECONDS
        for _ in range(SAMPLES):
            waiting &= set(self.pending)
            if not waiting or time.monotonic() > stop:
                return
            perms = list(identity)
            for comp in {u[1] for u in waiting}:
                for g in self.layout.components[comp]:
                    perms[g] = tuple(rng.sample(range(self.layout.sizes[g]), self.layout.sizes[g]))
            try:
                evaluation = oracle.evaluate_permuted(tuple(perms))
            except ReferenceTimeout:
                return  # the search's time is up: what is still pending stays undecided
            self._count(evaluation, next(candidates), waiting)

    def _match_notes(self) -> tuple[str, ...]:
        self.notes = list(dict.fromkeys(self.notes))
        candidates = set(self.decided_by.values())
        if candidates == {0}:
            return (*self.notes,)
        if len(candidates) == 1:
            return (*self.notes, "matched under another order of tied rows")
        return (*self.notes, "each order-sensitive expression matched under its own order of tied rows "
                             "(searched partition by partition)")

    def _unpickable(self, oracle: Oracle) -> list[tuple[int, int]]:
        """Units of a column that picks one row's value (lag, first_value, min...)
        where a cell holds a value no row of its partition has: no order gives it."""
        found = self._null_unlike_every_order()
        if found:
            return found
        pickers = {}
        for column, keys in self.keys_of.items():
            if any(u[0] == column for u in self.pending) and len(keys) == 1:
                args = picked_arguments(self.plan.query, column)
                between = args is None
                if between:
                    args = averaged_argument(self.plan.query, column)
                if args is not None:
                    pickers[column] = (next(iter(keys)), args, between)
        if not pickers:
            return []
        values = _argument_values(oracle, self.plan, [a for _, args, _ in pickers.values() for a in args])
        if values is None:
            return []
        self.evaluations += 1
        rid = self.plan.rowid_column
        members: dict[tuple, list[object]] = defaultdict(list)
        for k, comp, rowids in self.layout.partitions:
            members[(k, comp)].extend(rowids)
        found, offset = [], 0
        for column, (key, args, between) in pickers.items():
            mine = values[offset:offset + len(args)]
            offset += len(args)
            for unit, cells in self.pending.items():
                if unit[0] != column:
                    continue
                seen = [mine[0].get(m) for m in dict.fromkeys(members[(key, unit[1])])]
                own = mine[1:]  # lag and lead's default: the row's own
                bounds = _bounds(seen) if between else None
                picked = None if between else _Picked(seen)
                for a in cells:
                    value = self.rows.rows[a][column]
                    if between:
                        impossible = _outside(value, bounds)
                    else:
                        impossible = value is not None and not picked.has(value) and not any(
                            cells_equal(value, v, _loose(v)) for v in (d.get(self.rows.rows[a][rid]) for d in own))
                    if impossible:
                        self.pending[unit] = [a, *(x for x in cells if x != a)]
                        found.append(unit)
                        break
        return found

    def _null_unlike_every_order(self) -> list[tuple[int, int]]:
        """first_value, last_value and nth_value IGNORE NULLS over a frame of whole
        peer groups (RANGE, GROUPS) are NULL when the frame has too few non-NULL
        values: which rows the frame holds does not depend on the order of
        peers, so neither does that. A cell NULL where the default order's is
        not (or the other way round) is one no order gives."""
        rid = self.plan.rowid_column
        found = []
        for unit, cells in self.pending.items():
            if not null_fixed(self.plan.query, unit[0]):
                continue
            for a in cells:
                e = self._default_index[self.rows.rows[a][rid]]
                if (self.rows.rows[a][unit[0]] is None) != (self.default.rows[e][unit[0]] is None):
                    self.pending[unit] = [a, *(x for x in cells if x != a)]
                    found.append(unit)
                    break
        return found

    def _shown(self, unit: tuple[int, int]) -> Cell:
        rid = self.plan.rowid_column
        column, cells = unit[0], self.pending[unit]
        for a in cells:
            e = self._default_index[self.rows.rows[a][rid]]
            if not self._equal(a, column, self.default, e, []):
                return Cell(a, column, e)
        a = cells[0]
        return Cell(a, column, self._default_index[self.rows.rows[a][rid]])


# Functions whose value is one row's argument (or NULL): `picked_arguments`.
PICKERS = frozenset({"lag", "lead", "first_value", "last_value", "nth_value", "min", "max",
                     "first", "last", "any_value", "mode"})


def picked_arguments(query: object, column: int) -> list | None:
    """For a user column that is exactly a picking window function, the
    expressions whose values it may return: its argument, then lag and
    lead's default (the row's own); else None."""
    from harness.core.model import Select, WindowExpr

    if not isinstance(query, Select) or column >= len(query.items):
        return None
    expr = query.items[column].expr
    if not isinstance(expr, WindowExpr) or expr.func.name not in PICKERS or not expr.func.args:
        return None
    args = [expr.func.args[0]]
    if expr.func.name in ("lag", "lead") and len(expr.func.args) == 3:
        args.append(expr.func.args[2])
    return args


# Functions whose value lies between the least and the greatest of the values
# they read (or is NULL): `averaged_argument`.
AVERAGES = frozenset({"avg", "median"})


def averaged_argument(query: object, column: int) -> list | None:
    """For a user column that is exactly avg(x) or median(x) over a window,
    [x]: its value lies between the least and the greatest x of the
    partition, under every order of peers and whatever the frame; else None."""
    from harness.core.model import Select, WindowExpr

    if not isinstance(query, Select) or column >= len(query.items):
        return None
    expr = query.items[column].expr
    if not isinstance(expr, WindowExpr) or expr.func.name not in AVERAGES or len(expr.func.args) != 1:
        return None
    return [expr.func.args[0]]


class _Picked:
    """The values of a partition, to ask whether a picked value is one of them
    (up to a float's rounding) without comparing it with each."""

    def __init__(self, seen: list) -> None:
        self.exact = {hashable(v) for v in seen}
        self.floats = sorted(float(v) for v in seen if isinstance(v, float) and math.isfinite(v))

    def has(self, value: object) -> bool:
        if hashable(value) in self.exact:
            return True
        if not isinstance(value, (int, float, Decimal)) or isinstance(value, bool):
            return False
        if not math.isfinite(value):
            return False
        x = float(value)
        slack = _loose(x) + _loose(max(abs(self.floats[0]), abs(self.floats[-1]))) if self.floats else 0.0
        near = itertools.takewhile(lambda v: v <= x + slack,
                                   itertools.islice(self.floats, bisect.bisect_left(self.floats, x - slack), None))
        return any(cells_equal(value, v, _loose(v)) for v in near)


def _finite_number(v: object) -> bool:
    return isinstance(v, (int, float, Decimal)) and not isinstance(v, bool) and math.isfinite(v)


def _bounds(seen: list) -> tuple[float, float] | None:
    """The least and the greatest finite value of a partition, widened by their
    rounding (a frame holding an infinity or NaN averages to one of those,
    never to another finite number); None without finite values."""
    numbers = [float(v) for v in seen if _finite_number(v)]
    if not numbers:
        return None
    low, high = min(numbers), max(numbers)
    slack = _loose(max(abs(low), abs(high)))
    return low - slack, high + slack


def _outside(value: object, bounds: tuple[float, float] | None) -> bool:
    """Whether a finite number lies outside the partition's bounds: no frame's mean is there."""
    return bounds is not None and _finite_number(value) and not bounds[0] <= float(value) <= bounds[1]


def null_fixed(query: object, column: int) -> bool:
    """Whether a user column is exactly first_value, last_value or nth_value
    IGNORE NULLS over a RANGE or GROUPS frame (see `_null_unlike_every_order`)."""
    from harness.core.model import FrameMode, NullTreatment, Select, WindowExpr, resolve_window

    if not isinstance(query, Select) or column >= len(query.items):
        return False
    expr = query.items[column].expr
    if not isinstance(expr, WindowExpr) or expr.func.null_treatment is not NullTreatment.IGNORE:
        return False
    if expr.func.name not in ("first_value", "last_value", "nth_value"):
        return False
    frame = resolve_window(expr.window, query.windows, lenient=True).frame
    return frame is None or frame.mode in (FrameMode.RANGE, FrameMode.GROUPS)


def _argument_values(oracle: Oracle, plan: Plan, args: list) -> list[dict[object, object]] | None:
    """Each expression's value per row id, from the reference over the same rows."""
    from dataclasses import replace

    from harness.core.errors import HarnessError
    from harness.core.model import Column, SelectItem

    query = plan.query
    items = (SelectItem(Column(ROWID), ROWID), *(SelectItem(a, f"__wh_arg_{i}") for i, a in enumerate(args)))
    try:
        table = Oracle(replace(query, items=items, order_by=()), oracle.tables, oracle.profile).evaluate().table
    except HarnessError:
        return None
    ids = table.column(0).to_pylist()
    return [dict(zip(ids, table.column(i + 1).to_pylist(), strict=True)) for i in range(len(args))]


def _loose(expected: object) -> float:
    """A picked value is one row's value, cast at most: only its rounding."""
    if isinstance(expected, float) and math.isfinite(expected):
        return 16 * 2.0**-23 * abs(expected)  # float32 rounding at most
    return 0.0


def _position_key(value: object, i: int) -> tuple:
    return (not isinstance(value, int), value if isinstance(value, int) else 0, i)


def _orders(sizes: Iterator[int] | Sequence[int]) -> float:
    """The number of orders of groups of these sizes, as soon as it is past any budget: inf."""
    count = 1
    for s in sizes:
        count *= math.factorial(min(s, 13))
        if s > 12 or count > 10**9:
            return math.inf
    return count

