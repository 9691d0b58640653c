"""Edges the generator draws since issue 19 (item 8): offsets near 2^63, per-row
and NULL lag/lead offsets and defaults, NULL and negative INTERVAL frame
offsets in the breakers.

Each construct appears in a seeded sample, its SQL round-trips, the reference
evaluates it, and one example each is checked against values derived by hand
from the definition.
"""

from __future__ import annotations

import datetime as dt
import re
from random import Random

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from harness.cases.features import case_features
from harness.core.conformance import KINDS_BY_NAME
from harness.core.dialect import Feature
from harness.core.errors import ReferenceGap, Unsupported
from harness.core.model import Interval, IntervalUnit, Literal, walk
from harness.engines.registry import get_dialect
from harness.generate.cases import generate_case
from harness.generate.invalid import BREAKERS
from harness.sql import parse, write
from reference_impl.api import evaluate
from reference_impl.frames import OffsetOutOfRange
from reference_impl.testing import asc, bound, call, col, frame, lit, over, table, window_values

MAX = 2**63 - 1
MIN = -(2**63)

# -- seeded samples -------------------------------------------------------------------------

# Seeds "edges/0".."edges/(SAMPLE - 1)" hold every construct below (seed-tuned:
# a generator change that shifts the streams may need a larger SAMPLE).
SAMPLE = 400


def _sample() -> list:
    return [generate_case(f"edges/{i}", invalid_share=0.0).case for i in range(SAMPLE)]


@pytest.fixture(scope="module")
def sample() -> list:
    return _sample()


@pytest.mark.parametrize("feature", [Feature.OFFSET_BEYOND_INT, Feature.LAG_ROW_OFFSET,
                                     Feature.LAG_ROW_DEFAULT, Feature.LAG_NULL_OFFSET,
                                     Feature.RANKING_ORDER_BY])
def test_each_offset_edge_appears_round_trips_and_evaluates(sample, feature: Feature) -> None:
    found = [c for c in sample if feature.value in case_features(c)]
    assert found, f"no case of {feature.value} in {SAMPLE} seeds"
    answered = 0
    for case in found[:5]:
        assert parse(write(case.query)) == case.query
        try:
            evaluate(case.query, case.tables)  # raises on anything the reference cannot do
            answered += 1
        except ReferenceGap:  # an answer the standard leaves open (LIMIT through ties...)
            pass
    assert answered, f"the reference answered none of {len(found[:5])} cases of {feature.value}"


def test_offsets_near_2_63_appear_in_frames_and_range_over_integer_keys(sample) -> None:
    texts = [write(c.query) for c in sample]
    assert any(re.search(r"(ROWS|GROUPS) BETWEEN [^)]*922337203685477580[67] (PRECEDING|FOLLOWING)", t)
               for t in texts)
    assert any(re.search(r"RANGE BETWEEN [^)]*9223372036854775807 (PRECEDING|FOLLOWING)", t)
               for t in texts)


# -- the reference, by hand ----------------------------------------------------------------

BIG = table(id=("bigint", [1, 2, 3, 4, 5, 6, 7]),
            k=("bigint", [MAX, MIN, 0, MAX - 1, -1, None, 1]))


def _count(mode: str, start: str, end: str, order=None, data: pa.Table = BIG) -> list:
    f = frame(mode, _bound(start), _bound(end))
    return window_values(over(call("count", col("id")), order=order or [asc(col("k"), "last")], frame=f),
                         data)


def test_range_offset_2_63_minus_1_on_bigint_keys_is_exact() -> None:
    # Frame of key K: the rows whose key lies in [K - (2^63 - 1), K]; a NULL
    # key's frame is its NULL peers. MAX: [0, MAX] -> 0, 1, MAX-1, MAX; MIN:
    # MIN alone; 0: [-(2^63 - 1), 0] -> -1, 0 (MIN lies one below); MAX-1: [-1,
    # MAX-1] -> -1, 0, 1, MAX-1; -1: [MIN, -1] -> MIN, -1; 1: [-(2^63 - 2), 1]
    # -> -1, 0, 1.
    assert _count("range", f"{MAX} preceding", "current row") == [4, 1, 2, 4, 2, 1, 3]
    # [K - 1, K + 2^63 - 1], never the NULL row: MAX: MAX-1, MAX; MIN: MIN, -1;
    # 0: -1, 0, 1, MAX-1, MAX; MAX-1: MAX-1, MAX; -1: -1, 0, 1, MAX-1; 1: 0, 1,
    # MAX-1, MAX.
    assert _count("range", "1 preceding", f"{MAX} following") == [2, 2, 5, 2, 4, 1, 4]


def test_range_past_the_key_type_never_takes_in_null_peers() -> None:
    # k = 1 and NULL (NULLS LAST): 1's frame is [1, 1 + 2^63 - 1] -> itself alone.
    data = table(id=("bigint", [1, 2]), k=("bigint", [1, None]))
    assert _count("range", "current row", f"{MAX} following", data=data) == [1, 1]


def test_rows_and_groups_offsets_2_63_minus_1_reach_the_partition_ends() -> None:
    order = [asc(col("id"))]
    assert _count("rows", f"{MAX} preceding", f"{MAX} following", order) == [7] * 7
    assert _count("rows", f"{MAX} following", "unbounded following", order) == [0] * 7
    assert _count("groups", f"{MAX} preceding", "current row", order) == [1, 2, 3, 4, 5, 6, 7]


def _bound(text: str):
    count, _, kind = text.partition(" ")
    return bound(int(count), kind) if count.isdigit() else bound(text)


T = table(id=("bigint", [1, 2, 3, 4, 5]), k=("bigint", [1, 2, None, 0, -1]),
          v=("integer", [10, None, 30, 40, 50]))


def _lag(name: str, *args) -> list:
    return window_values(over(call(name, col("v"), *args), order=[asc(col("id"))]), T)


def test_per_row_offsets_and_defaults() -> None:
    # lag(v, k, id): id 1 k=1 -> no row -> default 1; id 2 k=2 -> none -> 2; id 3
    # k NULL -> NULL; id 4 k=0 -> its own v 40; id 5 k=-1 looks forward -> none -> 5.
    assert _lag("lag", col("k"), col("id")) == [1, 2, None, 40, 5]
    # lead(v, k): id 1 -> v of id 2 (NULL); id 2 -> id 4's 40; id 4 -> 40; id 5 -> back to 40.
    assert _lag("lead", col("k")) == [None, 40, None, 40, 40]


def test_lag_offsets_near_2_63() -> None:
    assert _lag("lag", lit(MAX), lit(-7)) == [-7] * 5
    assert _lag("lead", lit(MAX)) == [None] * 5


# -- breakers ---------------------------------------------------------------------------------

DATES = table(id=("bigint", [1, 2, 3]), dt=("date", [dt.date(2000, 1, 1), dt.date(2000, 1, 2), None]),
              k=("bigint", [1, 2, 3]))


def _broken(kind: str, sql: str, data: pa.Table) -> list[str]:
    """The SQL texts the breaker `kind` makes of `sql` under several draws."""
    from harness.cases.case import Case

    query = parse(sql)
    case = Case(id="t", description="", tags=(), schemas=(_schema(data),), tables={"t": data},
                sql=sql, query=query)
    texts = []
    for seed in range(20):
        broken = BREAKERS[kind](query, Random(seed), case)
        assert broken is not None
        assert parse(write(broken), keep_invalid=True) == broken
        with pytest.raises(OffsetOutOfRange) as caught:
            evaluate(broken, {"t": data})
        assert KINDS_BY_NAME[kind].describes(str(caught.value)), str(caught.value)
        texts.append(write(broken))
    return texts


def test_negative_interval_offsets_over_dates_are_invalid() -> None:
    texts = _broken("negative-range-offset", "SELECT id, count(*) OVER (ORDER BY dt ASC) AS c FROM t",
                    DATES)
    assert all(re.search(r"RANGE BETWEEN .*INTERVAL '-\d+' (DAY|MONTH|YEAR)", t) for t in texts)
    assert any("PRECEDING AND CURRENT ROW" in t for t in texts)
    assert any("CURRENT ROW AND INTERVAL" in t for t in texts)


def test_null_frame_offsets_are_invalid() -> None:
    texts = _broken("null-offset", "SELECT id, sum(k) OVER (ORDER BY id ASC) AS s FROM t", DATES)
    assert all("GROUPS BETWEEN CAST(NULL AS BIGINT) PRECEDING" in t for t in texts)


def test_negative_interval_is_a_literal_of_its_own() -> None:
    query = parse("SELECT id, count(*) OVER (ORDER BY dt ASC RANGE BETWEEN INTERVAL '-2' DAY "
                  "PRECEDING AND CURRENT ROW) AS c FROM t", keep_invalid=True)
    assert Interval(-2, IntervalUnit.DAY) in list(walk(query))


# -- dialects ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("sql", "feature", "dialects"), [
    ("SELECT id, lag(v, k % 3) OVER (ORDER BY id ASC) AS x FROM t", Feature.LAG_ROW_OFFSET,
     ("datafusion", "spark")),
    ("SELECT id, lead(v, 1, id) OVER (ORDER BY id ASC) AS x FROM t", Feature.LAG_ROW_DEFAULT,
     ("datafusion",)),
    ("SELECT id, lag(v, CAST(NULL AS BIGINT)) OVER (ORDER BY id ASC) AS x FROM t",
     Feature.LAG_NULL_OFFSET, ("spark",)),
    ("SELECT id, lag(v, 9223372036854775807) OVER (ORDER BY id ASC) AS x FROM t",
     Feature.OFFSET_BEYOND_INT, ("spark",)),
    ("SELECT id, count(*) OVER (ORDER BY id ASC ROWS BETWEEN 9223372036854775807 PRECEDING AND "
     "CURRENT ROW) AS x FROM t", Feature.OFFSET_BEYOND_INT, ("spark",)),
])
def test_offset_edges_are_declared_where_missing(sql: str, feature: Feature, dialects) -> None:
    query = parse(sql)
    for name in ("duckdb", "datafusion", "spark", "sqlite", "postgres"):
        dialect = get_dialect(name)
        if name in dialects:
            with pytest.raises(Unsupported) as caught:
                write(query, dialect)
            assert caught.value.feature == feature.value
        else:
            write(query, dialect)
    assert feature.value in case_features(_case(query))


def test_a_constant_offset_is_none_of_them() -> None:
    query = parse("SELECT id, lag(v, 2, 0) OVER (ORDER BY id ASC) AS x, count(*) OVER (ORDER BY id "
                  "ROWS BETWEEN 2147483647 PRECEDING AND CURRENT ROW) AS c FROM t")
    edges = {f.value for f in (Feature.LAG_ROW_OFFSET, Feature.LAG_ROW_DEFAULT, Feature.LAG_NULL_OFFSET,
                               Feature.OFFSET_BEYOND_INT)}
    assert not edges & case_features(_case(query))
    assert isinstance(next(n for n in walk(query) if isinstance(n, Literal) and n.value == 2147483647),
                      Literal)


def _case(query):
    from harness.cases.case import Case

    return Case(id="t", description="", tags=(), schemas=(_schema(T),), tables={"t": T},
                sql=write(query), query=query)


def _schema(data: pa.Table):
    from harness.core.model import ColumnDef, TableSchema
    from harness.core.types import from_arrow

    return TableSchema("t", tuple(ColumnDef(f.name, from_arrow(f.type)) for f in data.schema))


# -- a RANGE bound past the key's type, as a feature of the data ------------------------------


@pytest.mark.parametrize(("keys", "offset", "past"), [
    ([1, None], MAX, True),        # 1 + (2^63 - 1) is past BIGINT
    ([MAX, None], 1, True),
    ([MIN, 0], 1, True),           # MIN - 1 (the PRECEDING side)
    ([MAX - 1, 0], 1, False),      # MAX - 1 + 1 = MAX still is a BIGINT
    ([None, None], MAX, False),    # no key to start from
])
def test_range_bound_past_the_key_type_is_a_feature(keys, offset, past) -> None:
    data = table(id=("bigint", list(range(1, len(keys) + 1))), k=("bigint", keys))
    query = parse(f"SELECT id, count(*) OVER (ORDER BY k ASC NULLS LAST RANGE BETWEEN {offset} PRECEDING "
                  f"AND {offset} FOLLOWING) AS c FROM t")
    case = _case_over(query, data)
    assert ("data.range-bound-past-key-type" in case_features(case)) is past


def test_a_rows_offset_is_no_range_bound() -> None:
    data = table(id=("bigint", [1]), k=("bigint", [MAX]))
    query = parse(f"SELECT id, count(*) OVER (ORDER BY k ASC ROWS BETWEEN CURRENT ROW AND {MAX} FOLLOWING) "
                  "AS c FROM t")
    assert "data.range-bound-past-key-type" not in case_features(_case_over(query, data))


def _case_over(query, data: pa.Table):
    from harness.cases.case import Case

    return Case(id="t", description="", tags=(), schemas=(_schema(data),), tables={"t": data},
                sql=write(query), query=query)


# -- ORDER BY inside ranking and distribution functions (DuckDB's extension) --------------------

RK = table(id=("bigint", [1, 2, 3, 4]), x=("bigint", [30, 10, 20, 10]))


def _ranked(sql: str) -> list:
    query = parse(sql)
    assert parse(write(query)) == query
    return evaluate(query, {"t": RK}).table.column("r").to_pylist()


def test_ranking_with_its_own_order_ranks_within_the_frame() -> None:
    # The frame of OVER () is the whole table {30, 10, 20, 10}; by x: 10, 10, 20, 30.
    assert _ranked("SELECT id, rank(ORDER BY x) OVER () AS r FROM t") == [4, 1, 3, 1]
    # cume_dist: rows before or tied / 4: 30 -> 4/4, 10 -> 2/4, 20 -> 3/4.
    assert _ranked("SELECT id, cume_dist(ORDER BY x) OVER () AS r FROM t") == [1.0, 0.5, 0.75, 0.5]
    # percent_rank over the running frame (ids up to the current one): id 1 {30}
    # -> 0 (one row); id 2 {30, 10} -> 10 first -> 0; id 3 {30, 10, 20} -> rank 2
    # -> 1/2; id 4 {30, 10, 20, 10} -> rank 1 -> 0.
    assert _ranked("SELECT id, percent_rank(ORDER BY x) OVER (ORDER BY id) AS r FROM t") == [0.0, 0.0, 0.5, 0.0]
    # row_number and ntile with the row key after x: 10 (id 2), 10 (id 4), 20, 30.
    assert _ranked("SELECT id, row_number(ORDER BY x DESC, id) OVER () AS r FROM t") == [1, 3, 2, 4]
    assert _ranked("SELECT id, ntile(3 ORDER BY x, id) OVER () AS r FROM t") == [3, 1, 2, 1]


@pytest.mark.parametrize("sql", [
    # ties of the function's own keys: the order of ids 2 and 4 is not determined
    "SELECT id, row_number(ORDER BY x) OVER () AS r FROM t",
    "SELECT id, ntile(2 ORDER BY x) OVER () AS r FROM t",
    # a frame without the current row: where it ranks is not defined
    "SELECT id, rank(ORDER BY x) OVER (ORDER BY id ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING) AS r FROM t",
    "SELECT id, cume_dist(ORDER BY x) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW "
    "EXCLUDE CURRENT ROW) AS r FROM t",
])
def test_what_the_extension_leaves_open_is_a_gap(sql: str) -> None:
    with pytest.raises(ReferenceGap):
        evaluate(parse(sql), {"t": RK})


def test_dense_rank_takes_no_order_by_of_its_own() -> None:
    from harness.core.errors import InvalidQuery

    with pytest.raises(InvalidQuery, match="not dense_rank"):
        parse("SELECT id, dense_rank(ORDER BY x) OVER () AS r FROM t")


def test_ranking_with_its_own_order_is_declared_where_missing() -> None:
    query = parse("SELECT id, cume_dist(ORDER BY x) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND "
                  "CURRENT ROW) AS r FROM t")
    assert "cume_dist(ORDER BY x ASC) OVER (ORDER BY id ASC ROWS" in write(query, get_dialect("duckdb"))
    for name in ("datafusion", "spark", "sqlite", "postgres"):
        with pytest.raises(Unsupported) as caught:
            write(query, get_dialect(name))
        assert caught.value.feature == Feature.RANKING_ORDER_BY.value
    features = case_features(_case_over(query, RK))
    assert Feature.RANKING_ORDER_BY.value in features and "aggregate.order-by" not in features


def test_ranking_with_its_own_order_reads_its_frame_for_peer_order() -> None:
    from harness.core.functions import is_order_sensitive
    from harness.core.model import FrameMode

    def sensitive(sql: str) -> bool:
        w = parse(sql).items[1].expr
        return is_order_sensitive(w.func, w.window.frame, bool(w.window.order_by))

    assert not sensitive("SELECT id, row_number(ORDER BY x, id) OVER (ORDER BY x) AS r FROM t")
    assert not sensitive("SELECT id, rank(ORDER BY x) OVER (ORDER BY x RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) "
                         "AS r FROM t")
    # A ROWS frame over tied window keys holds rows that depend on their order.
    assert sensitive("SELECT id, rank(ORDER BY id) OVER (ORDER BY x ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) "
                     "AS r FROM t")
    assert sensitive("SELECT id, row_number() OVER (ORDER BY x) AS r FROM t")  # no keys of its own
    assert FrameMode.ROWS  # (imported for the reader: the mode that makes it sensitive)


def test_generated_ranking_orders_keep_the_current_row_in_the_frame(sample) -> None:
    from harness.cases.features import window_expressions
    from harness.core.functions import ARGUMENT_ORDERED_RANKING
    from harness.core.model import BoundKind

    seen = 0
    for case in sample:
        for expr, spec in window_expressions(case.query).values():
            if not (expr.func.order_by and expr.func.name in ARGUMENT_ORDERED_RANKING):
                continue
            seen += 1
            frame = spec.frame
            if frame is not None:
                assert frame.start.kind not in (BoundKind.FOLLOWING, BoundKind.UNBOUNDED_FOLLOWING)
                assert frame.end.kind not in (BoundKind.PRECEDING, BoundKind.UNBOUNDED_PRECEDING)
            if expr.func.name in ("row_number", "ntile"):
                assert len(expr.func.order_by) >= 1
    assert seen



def test_an_offset_past_integer_spelled_as_a_sum_is_a_bigint_sum() -> None:
    """`a + b` of two INTEGER literals is an INTEGER: for n past 2^31 - 1 the sum
    would overflow. The sum starts with a BIGINT, so its value is n itself."""
    from harness.core.model import BinaryOp
    from harness.core.types import INT64
    from harness.generate.context import Context, Scope
    from harness.generate.data import DataKnobs
    from harness.generate.frames import _spelled
    from harness.generate.swarm import Swarm
    from harness.sql.frames import offset_value

    sums = 0
    for seed in range(60):
        ctx = Context(Random(seed), Scope(columns=(), row_key=(), schemas=()), DataKnobs(rows=1),
                      frozenset({Swarm.OFFSET_EXPRESSIONS}))
        for n in (2**31, 2**32, 2**63 - 1):
            spelled = _spelled(ctx, Literal(n, INT64))
            sums += isinstance(spelled, BinaryOp)
            assert offset_value(spelled) == n, spelled
    assert sums


@pytest.mark.parametrize("func", ["rank()", "cume_dist()", "percent_rank()", "row_number()", "ntile(3)"])
def test_one_sort_per_partition_agrees_with_frame_by_frame(func: str) -> None:
    # OVER () takes the one-sort path; a GROUPS frame wider than the table holds the
    # same rows but is ranked frame by frame.
    data = table(id=("bigint", list(range(1, 9))), p=("bigint", [1, 2, 1, 2, 1, 1, 2, 1]),
                 x=("bigint", [5, None, 3, 5, 1, None, 5, 3]))
    call = func.replace("()", "(ORDER BY x DESC NULLS FIRST, id)").replace("(3)", "(3 ORDER BY x, id)")
    fast = parse(f"SELECT id, {call} OVER (PARTITION BY p) AS r FROM t")
    slow = parse(f"SELECT id, {call} OVER (PARTITION BY p ORDER BY id GROUPS BETWEEN 100 PRECEDING "
                 "AND 100 FOLLOWING) AS r FROM t")
    assert evaluate(fast, {"t": data}).table == evaluate(slow, {"t": data}).table


# -- INTERVAL columns (issue 19, items 3 and 8) ------------------------------------------

def _interval_cases(campaign: str, count: int) -> list:
    from harness.generate.cases import PORTABLE_SHARE, interval_stream

    seeds = [f"{campaign}/{i}" for i in range(4000)
             if interval_stream(f"{campaign}/{i}") is not None
             and Random(f"{campaign}/{i}/types").random() >= PORTABLE_SHARE]
    return [generate_case(s) for s in seeds[:count]]


def test_a_share_of_cases_orders_by_an_interval_column_with_interval_offsets():
    cases = _interval_cases("7", 40)
    kinds = [{c.name: c.type.kind.value for s in g.case.schemas for c in s.columns} for g in cases]
    assert sum("interval" in k.values() for k in kinds) >= 30  # the query mostly reads it
    ranged = []
    for g, k in zip(cases, kinds, strict=True):
        assert parse(g.case.sql, keep_invalid=g.case.error is not None) == g.case.query, g.seed
        assert "an INTERVAL column" in g.case.description
        offsets = [n for n in walk(g.case.query) if isinstance(n, Interval)]
        if offsets and any(k.get(key) == "interval" for key in re.findall(r"ORDER BY (\w+)", g.case.sql)):
            ranged.append(g)
            assert all(o.unit not in (IntervalUnit.MONTH, IntervalUnit.YEAR) for o in offsets), g.seed
    assert ranged, "no RANGE INTERVAL offset over an interval key in 40 interval cases"
    for g in ranged[:5]:  # the reference answers them (no gap, no crash)
        if g.case.error is None:
            evaluate(g.case.query, g.case.tables)


def test_interval_cases_draw_from_their_own_stream():
    from harness.generate.cases import INTERVAL_SHARE, interval_stream

    fired = [i for i in range(2000) if interval_stream(f"0/{i}") is not None]
    assert 0.5 * INTERVAL_SHARE * 2000 < len(fired) < 2 * INTERVAL_SHARE * 2000
    for i in range(30):  # only a fired draw gives a case an interval column
        kinds = {c.type.kind.value for s in generate_case(f"0/{i}").case.schemas for c in s.columns}
        assert ("interval" in kinds) <= (i in fired), i


_FRAMES = [
    "ORDER BY g ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
    "ORDER BY g ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING",
    "ORDER BY g RANGE BETWEEN 1 PRECEDING AND 2 FOLLOWING",
    "ORDER BY g GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW",
    "ORDER BY g ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE GROUP",
    "ORDER BY g RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE TIES",
    "PARTITION BY p ORDER BY g GROUPS BETWEEN CURRENT ROW AND 1 FOLLOWING EXCLUDE NO OTHERS",
]


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 4), st.one_of(st.none(), st.integers(0, 3))),
                min_size=1, max_size=14),
       st.sampled_from(["rank", "cume_dist", "percent_rank"]), st.sampled_from(_FRAMES))
def test_ranking_with_its_own_order_counts_as_the_definition_does(rows, name, window) -> None:
    """The counts behind rank(ORDER BY x) OVER (...) come from each frame's runs
    and a Fenwick tree (`_ranked_in_runs`); they equal comparing the row with
    every row of its frame, as the definition reads (forced by giving no runs),
    gaps included."""
    import reference_impl.windows as windows

    t = pa.table({"id": list(range(len(rows))), "p": [r[0] for r in rows], "g": [r[1] for r in rows],
                  "x": [r[2] for r in rows]})
    query = parse(f"SELECT id, {name}(ORDER BY x DESC NULLS FIRST) OVER ({window}) AS r FROM t")

    def answer():
        try:
            return evaluate(query, {"t": t}).table.column("r").to_pylist()
        except ReferenceGap:
            return "gap"

    fast = answer()
    original = windows._runs_or_none
    windows._runs_or_none = lambda runs_of, n: None
    try:
        assert answer() == fast
    finally:
        windows._runs_or_none = original
