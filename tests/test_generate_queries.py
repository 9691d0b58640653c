"""The case generator (`harness.generate.cases` and the modules it assembles).

What is checked: a seed (and its picks) replays the same case; the canonical
SQL round-trips; the reference evaluates every generated case (no gap, few
queries invalid by definition); over a few thousand seeds every function,
frame mode, bound kind, exclusion and query shape appears, and the swarm
switches each construct off in a good share of queries; steering picks one of
the drawn candidates and the picks replay; Hypothesis can drive the
generators and shrinks what they draw.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis_profiles import examples

from harness.cases.coverage import coverage, expression_keys, summary
from harness.core.errors import EvaluationError, InvalidInput, ReferenceGap
from harness.core.functions import FUNCTIONS, FunctionKind
from harness.core.model import (
    BoundKind,
    Column,
    Exclusion,
    FrameMode,
    Interval,
    Join,
    Literal,
    NamedWindow,
    Select,
    SubqueryRef,
    TableSchema,
    WindowExpr,
    WindowSpec,
    resolve_window,
    walk,
    window_exprs,
)
from harness.core.types import SqlType, TypeKind
from harness.generate.calls import ARGUMENTS, UNDRAWN
from harness.generate.cases import GeneratedCase, drawn_cases, generate_case, generated_cases
from harness.generate.swarm import Swarm
from harness.generate.windows import CANDIDATES
from harness.judge.instrument import instrument, with_rowid
from harness.judge.oracle import Oracle
from harness.sql import parse
from harness.sql.frames import offset_value, starts_after_end

SEEDS = 3000  # seeds "43/0".."43/2999" (seed-tuned: RANGE offsets of INTERVAL HOUR are rare)


@cache
def corpus(count: int = SEEDS) -> tuple[GeneratedCase, ...]:
    return tuple(generate_case(f"43/{i}", invalid_share=0.0) for i in range(count))


def same_tables(a: GeneratedCase, b: GeneratedCase) -> bool:
    """Equal schemas and values, NaN equal to NaN (repr spells each value exactly)."""
    ta, tb = a.case.tables, b.case.tables
    return ta.keys() == tb.keys() and all(
        ta[n].schema == tb[n].schema and repr(ta[n].to_pylist()) == repr(tb[n].to_pylist()) for n in ta)


# -- replay ----------------------------------------------------------------------------


def test_a_seed_replays_the_same_case() -> None:
    for i in range(30):
        first, again = generate_case(f"7/{i}"), generate_case(f"7/{i}")
        assert first.case.sql == again.case.sql and first.case.query == again.case.query
        assert same_tables(first, again) and first.picks == again.picks


class LastCandidate:
    def __init__(self) -> None:
        self.seen: list[int] = []

    def begin_query(self) -> None:
        pass

    def pick(self, candidates: Sequence[WindowExpr], windows: tuple[NamedWindow, ...],
             schemas: tuple[TableSchema, ...]) -> int:
        self.seen.append(len(candidates))
        for c in candidates:
            resolve_window(c.window, windows)  # every candidate resolves in `windows`
        return len(candidates) - 1


def test_the_picks_replay_a_steered_case_without_the_steer() -> None:
    for i in range(40):
        steer = LastCandidate()
        steered = generate_case(f"8/{i}", steer=steer)
        assert steered.picks == (CANDIDATES - 1,) * len(steered.picks) == (CANDIDATES - 1,) * len(steer.seen)
        assert set(steer.seen) == {CANDIDATES}
        replayed = generate_case(f"8/{i}", picks=steered.picks)
        assert replayed.case.sql == steered.case.sql and same_tables(replayed, steered)


def test_steering_keeps_the_data_and_changes_the_choices() -> None:
    """The rows do not depend on the choices (the columns a query reads do)."""
    changed = 0
    for i in range(40):
        plain, steered = generate_case(f"9/{i}"), generate_case(f"9/{i}", steer=LastCandidate())
        a, b = plain.case.tables["t"], steered.case.tables["t"]
        common = [name for name in a.column_names if name in b.column_names]
        assert repr(a.select(common).to_pylist()) == repr(b.select(common).to_pylist())
        assert plain.picks == (0,) * len(plain.picks)
        changed += plain.case.sql != steered.case.sql
    assert changed > 30


def test_a_pick_out_of_range_is_a_named_error() -> None:
    with pytest.raises(InvalidInput, match="pick"):
        generate_case("1/1", picks=[CANDIDATES])
    with pytest.raises(InvalidInput, match="preset"):
        generate_case("1/1", data="no such preset")


def test_the_tie_heavy_preset_draws_small_domains() -> None:
    g = generate_case("3/3", data="tie-heavy")
    assert all(k.domain <= 3 for k in g.knobs.values())


# -- validity ----------------------------------------------------------------------------


def test_the_canonical_sql_round_trips() -> None:
    for g in corpus()[:500]:
        assert parse(g.case.sql, keep_invalid=g.case.error is not None) == g.case.query, g.seed


def test_every_window_function_and_aggregate_has_an_argument_builder() -> None:
    assert {s.name for s in FUNCTIONS.values() if s.kind is not FunctionKind.SCALAR} == set(ARGUMENTS)


# Invalid by definition on purpose, not by a generator's mistake: sums of
# extreme values overflow their type under the standard profile.
_EXPECTED_ERRORS = re.compile(r"out of range|overflow", re.IGNORECASE)


def test_the_reference_evaluates_every_case_and_few_are_invalid() -> None:
    """As the runner does it: the instrumented query over tables with row ids."""
    invalid: Counter[str] = Counter()
    for g in corpus()[:500]:
        plan = instrument(g.case.query, g.case.schemas)
        tables = with_rowid(g.case.tables) if plan.rowid_column is not None else g.case.tables
        try:
            Oracle(plan.unlimited, tables).evaluate()
        except ReferenceGap as e:
            pytest.fail(f"{g.seed}: the reference cannot evaluate {g.case.sql}: {e}")
        except EvaluationError as e:
            if g.case.error is not None:  # made invalid on purpose (tests/test_error_conformance.py)
                continue
            assert _EXPECTED_ERRORS.search(str(e)), f"{g.seed}: {e}\n{g.case.sql}"
            invalid[str(e)] += 1
        else:
            assert g.case.error is None, f"{g.seed}: made invalid, but the reference answers: {g.case.sql}"
    print(f"invalid by definition: {sum(invalid.values())} of 500: {dict(invalid)}")
    assert sum(invalid.values()) <= 10


def test_windows_over_plain_tables_are_judged_row_by_row() -> None:
    """The plain-table shape is what the instrumenter gives a row id and witnesses
    (unless a top-N filter wraps it in a derived table)."""
    for g in corpus()[:300]:
        if g.shape == "table" and not isinstance(g.case.query.source, SubqueryRef):
            assert instrument(g.case.query, g.case.schemas).rowid_column is not None, g.case.sql


# -- what appears ---------------------------------------------------------------------------


def _features(g: GeneratedCase) -> set[str]:
    found = {f"shape:{g.shape}"}
    for node in walk(g.case.query):
        if isinstance(node, Select):
            found |= _select_features(node, g)
        elif isinstance(node, Join):
            found.add(f"join:{node.kind.value}")
        elif isinstance(node, SubqueryRef):
            found.add("subquery")
    return found


def _select_features(s: Select, g: GeneratedCase) -> set[str]:
    found = {name for name, on in (("limit", s.limit is not None), ("offset", s.offset is not None),
                                   ("where", s.where is not None), ("having", s.having is not None),
                                   ("group-by", bool(s.group_by)), ("top-order-by", bool(s.order_by)),
                                   ("named-window", bool(s.windows))) if on}
    found |= {"named-refines-named" for w in s.windows if w.spec.base is not None}
    for w in window_exprs(s):
        found |= _window_features(w, s, g)
    return found


def _window_features(w: WindowExpr, s: Select, g: GeneratedCase) -> set[str]:
    f = w.func
    found = {f"function:{f.name}"}
    found |= {name for name, on in (("distinct", f.distinct), ("filter", f.filter is not None),
                                    ("aggregate-order-by", bool(f.order_by)),
                                    (f"nulls:{f.null_treatment}", f.null_treatment is not None),
                                    (f"from-last:{f.from_last}", f.from_last is not None)) if on}
    if w.window.base is not None and w.window != WindowSpec(base=w.window.base):
        found.add("refines-in-over")
    spec = resolve_window(w.window, s.windows)
    found |= {"sort:default-nulls" if k.nulls is None else "sort:explicit-nulls" for k in spec.order_by}
    frame = spec.frame
    if frame is None:
        return found | {"frame:default"}
    found |= {f"mode:{frame.mode.value}", f"start:{frame.start.kind.value}", f"end:{frame.end.kind.value}",
              f"exclusion:{frame.exclusion.value if frame.exclusion else None}"}
    if starts_after_end(frame):
        found.add("empty-frame")
    for bound in (frame.start, frame.end):
        found |= _offset_features(bound.offset, frame.mode)
    return found


def _offset_features(offset: object, mode: FrameMode) -> set[str]:
    if isinstance(offset, Interval):
        return {f"range-offset:interval-{offset.unit.value}"}
    if not isinstance(offset, Literal):
        return set()
    found = {f"range-offset:{offset.type.kind.value}"} if mode is FrameMode.RANGE and offset.type else set()
    if mode is not FrameMode.RANGE and offset.value == 0:
        found.add("count-offset:0")
    if mode is not FrameMode.RANGE and isinstance(offset.value, int) and offset.value >= 50:
        found.add("count-offset:beyond-any-partition")
    return found


def test_every_construct_appears() -> None:
    seen: Counter[str] = Counter()
    for g in corpus():
        seen.update(_features(g))
    window_functions = {s.name for s in FUNCTIONS.values() if s.kind is not FunctionKind.SCALAR}
    wanted = {f"function:{name}" for name in window_functions - UNDRAWN}
    wanted |= {f"mode:{m.value}" for m in FrameMode}
    wanted |= {f"start:{k.value}" for k in BoundKind if k is not BoundKind.UNBOUNDED_FOLLOWING}
    wanted |= {f"end:{k.value}" for k in BoundKind if k is not BoundKind.UNBOUNDED_PRECEDING}
    wanted |= {f"exclusion:{e.value}" for e in Exclusion} | {"exclusion:None", "frame:default"}
    wanted |= {"shape:table", "shape:join", "shape:group-by", "shape:subquery", "join:INNER", "join:LEFT"}
    wanted |= {"limit", "offset", "where", "having", "group-by", "top-order-by", "named-window",
               "named-refines-named", "refines-in-over", "distinct", "filter", "aggregate-order-by",
               "nulls:NullTreatment.IGNORE", "nulls:NullTreatment.RESPECT", "from-last:True",
               "from-last:False", "sort:default-nulls", "sort:explicit-nulls", "empty-frame",
               "count-offset:0", "count-offset:beyond-any-partition"}
    wanted |= {f"range-offset:{kind}" for kind in ("int32", "decimal", "float64", "float32")}
    wanted |= {"range-offset:interval-DAY", "range-offset:interval-MONTH", "range-offset:interval-HOUR"}
    assert wanted - set(seen) == set(), sorted(seen.items())


def test_the_swarm_switches_each_construct_off_in_a_good_share() -> None:
    off = Counter(s for g in corpus() for s in set(Swarm) - g.swarm)
    for flag in Swarm:
        assert 0.1 <= off[flag] / SEEDS <= 0.6, (flag, off[flag])


def test_most_queries_mostly_write_the_null_order() -> None:
    sorts = Counter(k.nulls is None for g in corpus()[:500] for n in walk(g.case.query)
                    if isinstance(n, WindowExpr) for k in n.window.order_by)
    assert sorts[False] > 3 * sorts[True] > 0


def test_frame_offsets_fit_the_mode_and_the_key() -> None:
    """ROWS/GROUPS offsets are non-negative integers; a RANGE offset comes with
    exactly one ORDER BY key of a number, date, timestamp or interval type, and
    has the key's class (a number for numbers, an interval for datetimes and
    intervals)."""
    for g in corpus()[:1500]:
        for node in walk(g.case.query):
            if isinstance(node, Select):
                for w in window_exprs(node):
                    _check_offsets(resolve_window(w.window, node.windows), g)


def _check_offsets(spec: WindowSpec, g: GeneratedCase) -> None:
    frame = spec.frame
    offsets = [b.offset for b in (frame.start, frame.end) if b.offset is not None] if frame else []
    for offset in offsets:
        # An offset may be written as a constant expression (Swarm.OFFSET_EXPRESSIONS):
        # its value is what must fit.
        value = offset_value(offset)
        if frame.mode is not FrameMode.RANGE:  # type: ignore[union-attr]
            assert type(value) is int and value >= 0, g.seed
            continue
        assert len(spec.order_by) == 1, g.seed
        key = _key_type(spec.order_by[0].expr, g)
        if key is None:  # an aggregate or an inner window's column: typed by the reference
            continue
        if key.kind in (TypeKind.DATE, TypeKind.TIMESTAMP):
            assert isinstance(value, Interval), g.seed
        elif key.kind is TypeKind.INTERVAL:  # day-time units only over a day-time key
            assert isinstance(value, Interval) and value.unit.value not in ("MONTH", "YEAR"), g.seed
        else:
            assert key.is_numeric and not isinstance(value, Interval) and value >= 0, g.seed
            if isinstance(offset, Literal):
                assert offset.type is not None and offset.type.kind is key.kind or key.is_integer, \
                    g.seed


def _key_type(expr: object, g: GeneratedCase) -> SqlType | None:
    if not isinstance(expr, Column):
        return None
    found = {c.type for s in g.case.schemas if expr.table in (None, s.name) for c in s.columns
             if c.name == expr.name}
    return found.pop() if len(found) == 1 else None


class LeastCovered:
    """Prefers the candidate whose rarest grid cell has been seen least."""

    def __init__(self) -> None:
        self.seen: Counter[tuple[str, ...]] = Counter()

    def begin_query(self) -> None:
        pass

    def pick(self, candidates: Sequence[WindowExpr], windows: tuple[NamedWindow, ...],
             schemas: tuple[TableSchema, ...]) -> int:
        keys = [expression_keys(c, resolve_window(c.window, windows), schemas) for c in candidates]
        best = min(range(len(candidates)), key=lambda i: min((self.seen[k] for k in keys[i]), default=0))
        self.seen.update(keys[best])
        return best


def test_steering_towards_rare_cells_covers_more_of_the_grid() -> None:
    plain = [generate_case(f"5/{i}").case for i in range(400)]
    steer = LeastCovered()
    steered = [generate_case(f"5/{i}", steer=steer).case for i in range(400)]
    before, after = summary(coverage(plain))["covered"], summary(coverage(steered))["covered"]
    assert after > before * 1.15, (before, after)


# -- Hypothesis ---------------------------------------------------------------------------------


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn_cases())
def test_hypothesis_drives_the_generators(g: GeneratedCase) -> None:
    assert parse(g.case.sql) == g.case.query
    assert {s.name for s in g.case.schemas} == set(g.case.tables)


@settings(max_examples=examples(10), deadline=None)
@given(generated_cases())
def test_a_drawn_seed_is_a_replayable_case(g: GeneratedCase) -> None:
    assert generate_case(g.seed).case.sql == g.case.sql


def test_every_aggregate_with_a_rounded_double_result_is_inexact() -> None:
    # An ORDER BY over such a column groups rows by equal values, which an
    # engine's own rounding breaks (DuckDB's covar_pop 50.83950617283951 against
    # the exact 50.839506172839506 read as a missing row): the generator must
    # not order by it. Exact results (count, min over integers, ...) stay exact.
    from harness.core import types as T
    from harness.core.model import Column, FuncCall
    from harness.generate.context import Scope, is_exact

    scope = Scope((), (), ())
    for spec in FUNCTIONS.values():
        if spec.kind is not FunctionKind.AGGREGATE or spec.name in UNDRAWN:
            continue
        args = tuple([T.INT64] * max(spec.min_args, 1))
        try:
            result = spec.result(args)
        except Exception:  # a type rule that refuses BIGINT arguments: not such a function
            continue
        if result is not None and result.is_float and spec.name not in ("percentile_disc", "quantile_disc"):
            call = FuncCall(spec.name, tuple(Column("x") for _ in args))
            assert not is_exact(call, scope), spec.name
