"""The fast paths over frames against their definitions: window aggregates
over every frame of a partition at once (`frames_at_once`, next to
`each_frame`) and the value functions reading a frame's runs (next to
first_value, last_value and nth_value).

Values shrink towards small integers, frames towards ROWS frames over few
integer keys (see `frame_cases`), aggregates towards count without FILTER.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from decimal import Decimal
from unittest import mock

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples
from test_reference_speed import frame_cases, same

from harness.core import types as T
from harness.core.errors import HarnessError
from harness.core.model import (
    Bound,
    BoundKind,
    Column,
    Exclusion,
    Frame,
    FrameMode,
    FuncCall,
    Literal,
    NullTreatment,
    Star,
)
from harness.core.semantics import STANDARD, NthValueBelowOne
from harness.engines.datafusion.dialect import DATAFUSION
from harness.engines.duckdb.dialect import DUCKDB
from harness.engines.spark.dialect import SPARK
from harness.engines.sqlite.dialect import SQLITE
from harness.sql import parse
from reference_impl import evaluate, frame_aggregates, frames, windows
from reference_impl.aggregates import compile_aggregate
from reference_impl.frame_aggregates import each_frame, frames_at_once
from reference_impl.frames import partition_runs, resolve_frame
from reference_impl.ordering import SortSpec, sort_partition
from reference_impl.profile import using_profile
from reference_impl.relation import Field, Relation
from reference_impl.window_functions import (
    WINDOW_FUNCTIONS,
    WINDOW_FUNCTIONS_BY_RUNS,
    WindowCall,
)

PROFILES = [STANDARD] + [d.semantics for d in (DUCKDB, DATAFUSION, SPARK, SQLITE)]

FLOATS = st.one_of(
    st.integers(-3, 3).map(float),
    st.sampled_from([-0.0, math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324, 0.1]),
    st.floats(allow_nan=True, allow_infinity=True),
)
# The argument's type and values of that type, now and then a value of another.
COLUMNS = {
    "int": (T.INT64, st.one_of(st.integers(-3, 3), st.integers(-(2**63), 2**63 - 1))),
    "float": (T.FLOAT64, FLOATS),
    "special float": (T.FLOAT64, st.sampled_from([-0.0, 0.0, math.nan, math.inf, -math.inf, 1.0])),
    "decimal": (T.decimal(10, 2), st.decimals(min_value=-10**7, max_value=10**7, places=2)),
    "wide decimal": (T.decimal(38, 2), st.decimals(min_value=-10**35, max_value=10**35, places=2)),
    "string": (T.STRING, st.text(alphabet="aAb", max_size=2)),
    "date": (T.DATE, st.dates(min_value=dt.date(2000, 1, 1), max_value=dt.date(2000, 1, 9))),
}
ODD_VALUES = st.sampled_from([1, 1.0, Decimal("1.00"), True, "1", Decimal("NaN"), 2**70])


@st.composite
def argument_columns(draw: st.DrawFn, n: int) -> tuple[T.SqlType, list]:
    """A typed column of n values with NULLs, rarely with an odd value."""
    sql_type, values = COLUMNS[draw(st.sampled_from(list(COLUMNS)))]
    column = [draw(st.one_of(st.none(), values)) for _ in range(n)]
    if n and draw(st.integers(0, 9)) == 0:
        column[draw(st.integers(0, n - 1))] = draw(ODD_VALUES)
    return sql_type, column


AGGREGATES = ["count", "count(*)", "sum", "avg", "min", "max"]


def compiled(name: str, sql_type: T.SqlType, distinct: bool, filtered: bool, profile):
    rel = Relation((Field("x", sql_type), Field("keep", T.BOOL)), [])
    args = (Star(),) if name == "count(*)" else (Column("x"),)
    call = FuncCall(
        name.removesuffix("(*)"),
        args,
        distinct=distinct and name != "count(*)",
        filter=Column("keep") if filtered else None,
    )
    return compile_aggregate(call, rel, profile)


def outcome(f, *args):
    try:
        return f(*args)
    except (HarnessError, ArithmeticError, ValueError, TypeError) as e:
        return ("raises", type(e).__name__, str(e))


@pytest.mark.parametrize("name", AGGREGATES)
@settings(max_examples=examples(200), deadline=None)
@given(case=frame_cases(), data=st.data())
def test_aggregates_at_once_are_each_frames(name, case, data):
    frame, part = case
    sql_type, column = data.draw(argument_columns(part.size))
    keeps = data.draw(st.lists(st.sampled_from([True, False, None]), min_size=part.size,
                               max_size=part.size))
    distinct = data.draw(st.booleans()) and data.draw(st.booleans())  # mostly without
    filtered = data.draw(st.booleans())
    profile = data.draw(st.sampled_from(PROFILES))
    try:
        agg = compiled(name, sql_type, distinct, filtered, profile)
    except HarnessError:
        return  # sum(string) and the like
    rows = list(zip(column, keeps, strict=True))  # the fields x and keep
    runs = partition_runs(frame, part)
    with using_profile(profile):
        plain = outcome(lambda: each_frame(agg, agg.prepare_rows(rows), runs))
        fast = frames_at_once(agg, rows, runs)
    if fast is not None:
        assert same(fast, plain), (fast, plain)


# What the fast path covers, and what it leaves to the definition.


def whole_and_peer_frames():
    whole = Frame(FrameMode.ROWS, Bound(BoundKind.UNBOUNDED_PRECEDING),
                  Bound(BoundKind.UNBOUNDED_FOLLOWING))
    peers = Frame(FrameMode.RANGE, Bound(BoundKind.CURRENT_ROW), Bound(BoundKind.CURRENT_ROW))
    two = Bound(BoundKind.PRECEDING, Literal(2, T.INT64))
    one = Bound(BoundKind.FOLLOWING, Literal(1, T.INT64))
    return [
        whole,
        peers,
        None,  # RANGE UNBOUNDED PRECEDING .. CURRENT ROW
        Frame(FrameMode.GROUPS, two, one),
        Frame(FrameMode.RANGE, two, one),
        Frame(FrameMode.ROWS, two, one, Exclusion.CURRENT_ROW),
        Frame(FrameMode.ROWS, Bound(BoundKind.UNBOUNDED_PRECEDING),
              Bound(BoundKind.UNBOUNDED_FOLLOWING), Exclusion.TIES),
        Frame(FrameMode.RANGE, Bound(BoundKind.UNBOUNDED_PRECEDING),
              Bound(BoundKind.UNBOUNDED_FOLLOWING), Exclusion.GROUP),
    ]


@pytest.mark.parametrize("frame", whole_and_peer_frames())
@pytest.mark.parametrize("sql_type, values", [
    (T.INT64, [3, None, 1, 1, -7, 2]),
    (T.FLOAT64, [0.5, None, -0.0, math.nan, 1e308, 1e308]),
    (T.decimal(10, 2), [Decimal("1.25"), None, Decimal("-3.00"), Decimal("0.10"),
                        Decimal("2.50"), Decimal("1.25")]),
])
@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_the_fast_path_covers_whole_peer_and_sliding_frames(frame, sql_type, values, profile):
    """count, sum, avg, min and max, with FILTER and EXCLUDE, min and max with
    DISTINCT: never left to the definition, whatever the profile."""
    keys = [(k,) for k in [1, 1, 2, 3, 3, 3]]
    part = sort_partition(list(range(6)), keys, [SortSpec()])
    runs = partition_runs(resolve_frame(frame, [SortSpec()], [T.INT64]), part)
    rows = [(v, p != 3) for p, v in enumerate(values)]
    for name in AGGREGATES:
        for distinct, filtered in [(False, False), (False, True), (name in ("min", "max"), True)]:
            agg = compiled(name, sql_type, distinct, filtered, profile)
            with using_profile(profile):
                fast = frames_at_once(agg, rows, runs)
                assert fast is not None, (name, distinct, filtered)
                assert same(fast, each_frame(agg, agg.prepare_rows(rows), runs))


@pytest.mark.parametrize("name, distinct, order, values", [
    ("sum", True, False, [1, 2, 2]),  # DISTINCT sum, count and avg
    ("count", False, True, [1, 2, 2]),  # an aggregate ORDER BY (its sort may raise)
    ("max", False, False, [1, "a", 2]),  # values `compare` refuses to compare
    ("sum", False, False, [1, 2.5, 2]),  # values of two types
    ("sum", False, False, [Decimal("1"), Decimal("NaN")]),  # a decimal NaN
    ("sum", False, False, [2**62, 2**62, -(2**62)]),  # a frame's sum overflows
])
def test_the_fast_path_leaves_the_rest_to_the_definition(name, distinct, order, values):
    sql_type = T.FLOAT64 if isinstance(values[1], float) else T.INT64
    rel = Relation((Field("x", sql_type),), [])
    order_by = (parse("SELECT 1 FROM t ORDER BY x").order_by if order else ())
    call = FuncCall(name, (Column("x"),), distinct=distinct, order_by=order_by)
    agg = compile_aggregate(call, rel, STANDARD)
    runs = [((0, len(values)),), ((0, 2),)] + [((0, 1),)] * (len(values) - 2)
    assert frames_at_once(agg, [(v,) for v in values], runs) is None


# ---------------------------------------------------------------------------
# Value functions


@settings(max_examples=examples(600), deadline=None)
@given(frame_cases(), st.data())
def test_value_functions_by_runs_are_the_definitions(case, data):
    frame, part = case
    column = data.draw(st.lists(st.one_of(st.none(), st.integers(0, 9)), min_size=part.size,
                                max_size=part.size))
    name = data.draw(st.sampled_from(sorted(WINDOW_FUNCTIONS_BY_RUNS)))
    nths = data.draw(st.lists(st.one_of(st.none(), st.integers(-3, 4)), min_size=part.size,
                              max_size=part.size))
    call = FuncCall(
        name,
        (Column("x"), Column("n")) if name == "nth_value" else (Column("x"),),
        null_treatment=data.draw(st.sampled_from([None, *NullTreatment])),
        from_last=data.draw(st.sampled_from([None, False, True])) if name == "nth_value" else None,
    )
    below_one = data.draw(st.sampled_from(list(NthValueBelowOne)))
    profile = dataclasses.replace(STANDARD, nth_value_below_one=below_one)
    runs = partition_runs(frame, part)
    args = [column, nths] if name == "nth_value" else [column]

    def frame_of(i):
        return frames.frame_positions(frame, part, i)

    def values(functions, with_runs):
        w = WindowCall(call, part, args, frame_of, None, runs if with_runs else None)
        return [outcome(functions[name], w, i) for i in range(part.size)]

    with using_profile(profile):
        assert values(WINDOW_FUNCTIONS_BY_RUNS, True) == values(WINDOW_FUNCTIONS, False)


# ---------------------------------------------------------------------------
# End to end: whole-partition and peer frames never list their positions


WHOLE_AND_PEERS = """
SELECT id,
       max(f)          OVER (PARTITION BY k) AS whole_max,
       min(v)          OVER (PARTITION BY k ORDER BY o) AS running_min,
       sum(f)          OVER (PARTITION BY k ORDER BY o RANGE BETWEEN CURRENT ROW AND CURRENT ROW)
                       AS peer_sum,
       count(v)        OVER (ORDER BY o ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
                       AS whole_count,
       avg(v) FILTER (WHERE v > 0) OVER (ORDER BY o RANGE BETWEEN UNBOUNDED PRECEDING
                       AND UNBOUNDED FOLLOWING EXCLUDE TIES) AS whole_avg,
       first_value(v) IGNORE NULLS OVER w AS first_v,
       last_value(v)   OVER w AS last_v,
       nth_value(f, 3) OVER w AS third_f
FROM t
WINDOW w AS (ORDER BY o RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING)
"""


def whole_frame_table(rows: int) -> pa.Table:
    return pa.table({
        "id": pa.array(range(rows), pa.int64()),
        "k": pa.array([i % 3 for i in range(rows)], pa.int32()),
        "o": pa.array([i // 7 for i in range(rows)], pa.int32()),
        "v": pa.array([None if i % 5 == 0 else (i * 37) % 101 - 50 for i in range(rows)],
                      pa.int64()),
        "f": pa.array([((i * 53) % 97) / 8 for i in range(rows)], pa.float64()),
    })


def test_whole_partition_and_peer_frames_are_never_listed():
    """Each listed position costs the frame's size per row: over frames that
    span the partition, the square of its size."""

    def refuse(*args):
        raise AssertionError("a frame was listed position by position")

    query, data = parse(WHOLE_AND_PEERS), whole_frame_table(300)
    with (
        mock.patch.object(frame_aggregates, "run_positions", refuse),
        mock.patch.object(windows, "frame_positions", refuse),
    ):
        fast = evaluate(query, {"t": data})
    with (
        mock.patch.object(windows, "frames_at_once", lambda *args: None),
        mock.patch.dict(WINDOW_FUNCTIONS_BY_RUNS, clear=True),
    ):
        plain = evaluate(query, {"t": data})
    assert same(fast.table.to_pylist(), plain.table.to_pylist())
