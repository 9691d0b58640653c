"""The reference's fast paths against the plain definitions they stand for.

Each fast path sits next to its definition in `reference_impl` (sorting by
collation keys next to `compare_keys`, RANGE bounds by bisecting collation
keys next to the search through `compare`, the frames of a whole partition
as runs next to `frame_positions`, integer variance next to Fraction
variance, the query analyses remembered per node next to their computation).
Here each is checked against its definition on random values, and the whole
reference with every fast path on against the reference with them all off,
on generated cases. The window aggregates and value functions over runs have
their own module (test_reference_frame_speed.py).

Values shrink towards small integers and short strings, lists towards
fewer rows, sort keys towards one ASC NULLS LAST key.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import math
from decimal import Decimal
from fractions import Fraction
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from harness.core import types as T
from harness.core.errors import EvaluationError, HarnessError
from harness.core.model import (
    SUBQUERY_EXPRS,
    Bound,
    BoundKind,
    Column,
    Exclusion,
    Frame,
    FrameMode,
    Interval,
    IntervalUnit,
    Literal,
    Select,
    UnionAll,
    Values,
    WindowExpr,
    With,
    walk,
)
from harness.core.semantics import STANDARD
from harness.engines.duckdb.dialect import DUCKDB
from harness.engines.spark.dialect import SPARK
from harness.generate.cases import Limits, generate_case
from harness.judge.instrument import instrument, with_rowid
from reference_impl import (
    frames,
    memo,
    numeric,
    values,
    windows,
)
from reference_impl.aggregates import exact_variance, scaled_variance
from reference_impl.api import Evaluation
from reference_impl.frames import frame_positions, partition_runs, resolve_frame, run_positions
from reference_impl.ordering import (
    SortSpec,
    collation_keys,
    compare_keys,
    sort_order,
    sort_order_by_collation,
    sort_order_by_comparison,
    sort_partition,
)
from reference_impl.query import evaluate_query
from reference_impl.rewrite import Replacement, identity, map_children, replace_exprs
from reference_impl.testing import definitions_only
from reference_impl.values import (
    compare,
    compare_by_definition,
    group_key,
    group_key_by_definition,
    order_key,
    order_keys,
)

SETTINGS = settings(max_examples=examples(200), deadline=None)


def sign(a: object, b: object) -> int:
    return (a > b) - (a < b)  # type: ignore[operator]


# ---------------------------------------------------------------------------
# Values


NUMBERS = st.one_of(
    st.integers(-3, 3),
    st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf, 0.5, -1.5, 2.0]),
    st.floats(-4, 4),
    st.decimals(min_value=-3, max_value=3, places=2),
    st.integers(-(2**70), 2**70),
)
DATETIMES = st.one_of(
    st.dates(min_value=dt.date(2000, 1, 1), max_value=dt.date(2000, 1, 5)),
    st.datetimes(min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2000, 1, 5)),
)
FAMILIES = {
    "number": NUMBERS,
    "string": st.text(alphabet="aAb", max_size=3),
    "boolean": st.booleans(),
    "datetime": DATETIMES,
}


@st.composite
def values_of_one_family(draw: st.DrawFn, min_size: int = 0, max_size: int = 8) -> list:
    """Non-NULL values of one comparison family; shrinks towards numbers."""
    family = draw(st.sampled_from(list(FAMILIES)))
    return draw(st.lists(FAMILIES[family], min_size=min_size, max_size=max_size))


@SETTINGS
@given(values_of_one_family(min_size=1))
def test_order_keys_order_as_compare_does(xs):
    keys = order_keys(xs)
    assert keys is not None
    for a, key_a in zip(xs, keys, strict=True):
        for b, key_b in zip(xs, keys, strict=True):
            assert sign(key_a, key_b) == compare_by_definition(a, b)
            assert (key_a == key_b) == (compare_by_definition(a, b) == 0)


@SETTINGS
@given(values_of_one_family(), values_of_one_family())
def test_order_keys_leave_mixed_families_to_compare(xs, ys):
    mixed = xs + ys
    families = {values.category(v) for v in mixed}
    if len(families) > 1:
        assert order_keys(mixed) is None
        with pytest.raises(EvaluationError):
            for a in mixed:
                for b in mixed:
                    compare(a, b)
    else:
        assert order_keys(mixed) is not None


def test_order_keys_leave_odd_values_to_compare():
    aware = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
    assert order_key(aware) is None
    assert order_key(Decimal("NaN")) is None
    assert order_key([1, 2]) is None
    assert order_keys([1, None, 2], null_key=("null",)) == [(1, 0, 1), ("null",), (1, 0, 2)]


@SETTINGS
@given(st.one_of(*FAMILIES.values()), st.one_of(*FAMILIES.values()))
def test_compare_is_its_definition(a, b):
    def outcome(f):
        try:
            return f(a, b)
        except EvaluationError as e:
            return str(e)

    assert outcome(compare) == outcome(compare_by_definition)


@SETTINGS
@given(st.one_of(st.none(), *FAMILIES.values(), st.lists(NUMBERS, max_size=2)))
def test_group_key_is_its_definition(value):
    fast, plain = group_key(value), group_key_by_definition(value)
    assert fast == plain or (fast is plain)
    assert type(fast) is type(plain)


# ---------------------------------------------------------------------------
# Sorting and peers


SPECS = st.builds(SortSpec, descending=st.booleans(), nulls_first=st.booleans())


@st.composite
def sort_inputs(draw: st.DrawFn) -> tuple[list[tuple], list[SortSpec]]:
    """Key rows (with NULLs) and their sort specs; each column is of one
    family, now and then of two (which the definition may refuse to sort)."""
    specs = draw(st.lists(SPECS, min_size=0, max_size=3))
    n = draw(st.integers(0, 9))
    columns = []
    for _ in specs:
        column = draw(values_of_one_family(min_size=n, max_size=n))
        if draw(st.integers(0, 9)) == 0:  # half of it from another family, shuffled in
            other = draw(values_of_one_family(min_size=n, max_size=n))
            column = draw(st.permutations(column[: n // 2] + other[n // 2 :]))
        columns.append([None if draw(st.integers(0, 4)) == 0 else v for v in column])
    rows = [tuple(c[i] for c in columns) for i in range(n)]
    return rows, specs


def outcome(f, *args):
    try:
        return f(*args)
    except EvaluationError as e:
        return ("raises", str(e))


@SETTINGS
@given(sort_inputs())
def test_collation_sort_is_the_comparison_sort(inputs):
    keys, specs = inputs
    plain = outcome(sort_order_by_comparison, keys, specs)
    assert outcome(sort_order, keys, specs) == plain
    collated = collation_keys(keys, specs)
    if collated is not None:
        assert sort_order_by_collation(collated, specs) == plain
        for a in range(len(keys)):
            for b in range(len(keys)):
                tied = compare_keys(keys[a], keys[b], specs) == 0
                assert (collated[a] == collated[b]) == tied


def plain_partition(rows, keys, specs):
    """`sort_partition` by the definitions alone."""
    order = sort_order_by_comparison(keys, specs)
    sorted_keys = [keys[i] for i in order]
    groups: list[tuple[int, int]] = []
    for p, key in enumerate(sorted_keys):
        if not groups or compare_keys(sorted_keys[groups[-1][0]], key, specs) != 0:
            groups.append((p, p))
        groups[-1] = (groups[-1][0], p + 1)
    group_of = [g for g, (start, end) in enumerate(groups) for _ in range(start, end)]
    return [rows[i] for i in order], sorted_keys, groups, group_of


@SETTINGS
@given(sort_inputs())
def test_sort_partition_is_the_definition(inputs):
    keys, specs = inputs
    rows = [10 + i for i in range(len(keys))]
    expected = outcome(plain_partition, rows, keys, specs)
    part = outcome(sort_partition, rows, keys, specs)
    if expected[0] == "raises":
        assert part == expected
    else:
        assert (part.rows, part.keys, part.groups, part.group_of) == expected


# ---------------------------------------------------------------------------
# Frames


KEY_TYPES = {
    "int": (T.INT64, st.integers(-4, 4), st.integers(0, 3)),
    "float": (
        T.FLOAT64,
        st.one_of(st.sampled_from([math.nan, math.inf, -math.inf, -0.0]), st.floats(-4, 4)),
        st.sampled_from([0, 1, 2.5, Decimal("0.5")]),
    ),
    "decimal": (
        T.decimal(10, 2),
        st.decimals(min_value=-4, max_value=4, places=2),
        st.sampled_from([0, 1, Decimal("1.25")]),
    ),
    "date": (
        T.DATE,
        st.one_of(
            st.dates(min_value=dt.date(2000, 1, 1), max_value=dt.date(2000, 3, 1)),
            st.sampled_from([dt.date.min, dt.date.max]),
        ),
        st.builds(Interval, st.integers(0, 40), st.sampled_from(list(IntervalUnit)[:3])),
    ),
}
ORDER_OF_KINDS = list(BoundKind)


@st.composite
def frame_cases(draw: st.DrawFn):
    """A sorted partition and a frame over it; shrinks towards ROWS frames
    over few integer keys."""
    mode = draw(st.sampled_from(list(FrameMode)))
    key_type, key_values, offsets = KEY_TYPES[draw(st.sampled_from(list(KEY_TYPES)))]
    spec = draw(SPECS)
    n = draw(st.integers(1, 9))
    keys = [(draw(st.one_of(st.none(), key_values)),) for _ in range(n)]
    part = sort_partition(list(range(n)), keys, [spec])
    # The start may not come after the end in BoundKind's order, nor the end be
    # UNBOUNDED PRECEDING (the standard's syntax rules).
    start_kind = draw(st.sampled_from(ORDER_OF_KINDS[:-1]))
    later = ORDER_OF_KINDS[ORDER_OF_KINDS.index(start_kind) :]
    end_kind = draw(st.sampled_from([k for k in later if k is not BoundKind.UNBOUNDED_PRECEDING]))

    def bound(kind: BoundKind) -> Bound:
        if kind not in (BoundKind.PRECEDING, BoundKind.FOLLOWING):
            return Bound(kind)
        if mode is FrameMode.RANGE:
            offset = draw(offsets)
            literal = offset if isinstance(offset, Interval) else Literal(offset, None)
            return Bound(kind, literal)
        return Bound(kind, Literal(draw(st.integers(0, 3)), T.INT64))

    exclusion = draw(st.sampled_from([None, *Exclusion]))
    frame = Frame(mode, bound(start_kind), bound(end_kind), exclusion)
    return resolve_frame(frame, [spec], [key_type]), part


@settings(max_examples=examples(400), deadline=None)
@given(frame_cases())
def test_partition_runs_hold_each_rows_frame(case):
    frame, part = case
    all_runs = partition_runs(frame, part)
    assert len(all_runs) == part.size
    for i, runs in enumerate(all_runs):
        assert run_positions(runs) == frame_positions(frame, part, i)
        assert all(start < end for start, end in runs)  # no empty run
        assert all(a[1] <= b[0] for a, b in zip(runs, runs[1:], strict=False))  # in order
        if all_runs.extents is not None:  # no row excluded: each frame is its extent
            starts, ends = all_runs.extents
            assert list(range(starts[i], ends[i])) == frame_positions(frame, part, i)
            assert starts[i] <= ends[i]


def test_a_frame_over_the_partition_is_one_run_per_row():
    keys = [(k,) for k in [3, 1, 2, 2, 1]]
    part = sort_partition(list(range(5)), keys, [SortSpec()])
    whole = Frame(FrameMode.ROWS, Bound(BoundKind.UNBOUNDED_PRECEDING),
                  Bound(BoundKind.UNBOUNDED_FOLLOWING))
    peers = Frame(FrameMode.RANGE, Bound(BoundKind.CURRENT_ROW), Bound(BoundKind.CURRENT_ROW))
    assert list(partition_runs(resolve_frame(whole, [SortSpec()], [T.INT64]), part)) == [((0, 5),)] * 5
    peer_runs = partition_runs(resolve_frame(peers, [SortSpec()], [T.INT64]), part)
    assert list(peer_runs) == [((0, 2),), ((0, 2),), ((2, 4),), ((2, 4),), ((4, 5),)]


@settings(max_examples=examples(400), deadline=None)
@given(frame_cases())
def test_range_bounds_by_collation_are_the_search(case):
    frame, part = case
    fast = [frame_positions(frame, part, i) for i in range(part.size)]
    with mock.patch.object(frames, "_range_edge_by_collation", lambda *args: None):
        plain = [frame_positions(frame, part, i) for i in range(part.size)]
    assert fast == plain


# ---------------------------------------------------------------------------
# Aggregates and sums


EXACT_NUMBERS = st.one_of(
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.decimals(allow_nan=False, allow_infinity=False, places=3),
)


@SETTINGS
@given(st.lists(EXACT_NUMBERS, min_size=1, max_size=8), st.booleans())
def test_scaled_variance_is_the_fraction_variance(xs, sample):
    if sample and len(xs) < 2:
        xs = xs * 2
    assert scaled_variance(xs, sample) == exact_variance(xs, sample)


@SETTINGS
@given(st.lists(EXACT_NUMBERS, max_size=8))
def test_exact_sum_is_the_fraction_sum(xs):
    assert numeric.exact_sum(xs) == sum((Fraction(v) for v in xs), Fraction(0))


# ---------------------------------------------------------------------------
# Rewrites


def plain_replace(node: object, mapping: dict) -> object:
    """`replace_exprs` as first written: every node looked up by value."""
    try:
        if node in mapping:
            return mapping[node]
    except TypeError:
        pass
    if isinstance(node, WindowExpr):
        func = map_children(node.func, lambda c: plain_replace(c, mapping))
        return WindowExpr(func, plain_replace(node.window, mapping))
    if isinstance(node, SUBQUERY_EXPRS):  # a subquery in an expression is a query of its own
        return map_children(node, lambda c: c if isinstance(c, (Select, UnionAll, With, Values))
                            else plain_replace(c, mapping))
    return map_children(node, lambda c: plain_replace(c, mapping))


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(0, 10**6), st.data())
def test_replace_exprs_is_the_lookup_by_value(seed, data):
    query = generate_case(f"rewrite/{seed}").case.query
    nodes = [n for n in walk(query) if dataclasses.is_dataclass(n)]
    keys = data.draw(st.lists(st.sampled_from(nodes), max_size=5))
    # Equal copies stand in for some keys: found by value, not by identity.
    keys = [copy.deepcopy(k) if data.draw(st.booleans()) else k for k in keys]
    pairs = [(k, Column(f"#k{i}")) for i, k in enumerate(keys)]
    mapping = dict(pairs)  # an equal key keeps its first object and its last value
    assert replace_exprs(query, mapping) == plain_replace(query, mapping)
    rewrite = Replacement(pairs)
    assert rewrite(query) == plain_replace(query, mapping)
    assert rewrite(query) is rewrite(query)  # remembered


# ---------------------------------------------------------------------------
# Query analyses remembered per node


def test_a_copy_that_keeps_the_sub_nodes_shares_the_analysis():
    case = generate_case("memo/2", limits=Limits(rows=20, windows=3)).case
    query = case.query
    copy_ = dataclasses.replace(query, limit=None)
    assert copy_ is not query
    plans = windows._window_plans(query, identity)
    assert windows._window_plans(copy_, identity) is plans
    assert windows._window_plans(copy.deepcopy(query), identity) == plans


def test_a_failing_analysis_raises_every_time():
    calls = []

    @memo.per_node
    def analysis(node: object) -> object:
        calls.append(node)
        raise EvaluationError("no")

    node = Literal(1, T.INT64)
    for _ in range(2):
        with pytest.raises(EvaluationError):
            analysis(node)
    assert len(calls) == 2


def test_the_cache_starts_over_when_full():
    @memo.per_node
    def analysis(node: object) -> int:
        return id(node)

    with mock.patch.object(memo, "CACHE_SIZE", 3):
        nodes = [Literal(i, T.INT64) for i in range(10)]
        assert [analysis(n) for n in nodes] == [id(n) for n in nodes]
        assert len(memo._by_identity) <= 3


# ---------------------------------------------------------------------------
# The whole reference: every fast path on, against all of them off


def reversed_peers(key, rows):
    return list(range(len(rows)))[::-1]


def evaluation(query, tables, profile, peer_order):
    try:
        return evaluate_query(query, tables, profile=profile, peer_order=peer_order)
    except HarnessError as e:
        return (type(e).__name__, str(e))


def same(a: object, b: object) -> bool:
    """Equal, and of the same types all the way down (NaN equal to NaN, -0.0 not to 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return repr(a) == repr(b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, Evaluation):
        return (
            a.table.schema == b.table.schema
            and same(a.table.to_pylist(), b.table.to_pylist())
            and same(a.magnitudes, b.magnitudes)
            and a.peer_groups == b.peer_groups
        )
    return a == b


PROFILES = [STANDARD, DUCKDB.semantics, SPARK.semantics]


@pytest.mark.parametrize("limits", [Limits(), Limits(rows=20, windows=3)], ids=["default", "r20w3"])
def test_fast_paths_change_no_result(limits):
    for i in range(40):
        case = generate_case(f"fast-paths/{i}", limits=limits).case
        plan = instrument(case.query, case.schemas)
        tables = with_rowid(case.tables)
        runs = [(case.query, case.tables, p, None) for p in PROFILES]
        runs += [
            (plan.unlimited, tables, STANDARD, None),
            (plan.unlimited, tables, STANDARD, reversed_peers),
        ]
        for query, data, profile, hook in runs:
            fast = evaluation(query, data, profile, hook)
            again = evaluation(query, data, profile, hook)  # remembered analyses
            with definitions_only():
                plain = evaluation(query, data, profile, hook)
            assert same(fast, plain), (case.id, profile.name)
            assert same(again, plain), (case.id, profile.name)
