"""Proof of teeth: the harness catches each bug planted in `harness.engines.duckdb.faulty`.

For every fault, a small case that exercises it: the faulty engine gets a
non-match verdict and plain DuckDB a match on the same case, so the fault, not
the case, is the cause. The control (`duckdb~peer-shuffle`, correct but fed
its rows in a fresh order per query) must give no finding at all.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from random import Random

import pyarrow as pa
import pytest

from harness.cases.case import Case
from harness.core.errors import InvalidInput
from harness.core.model import ColumnDef, TableSchema
from harness.core.types import from_arrow
from harness.engines.base import Engine
from harness.engines.duckdb.dialect import DUCKDB
from harness.engines.duckdb.faults import FAULTY
from harness.engines.registry import engine_names, get_dialect, get_engine
from harness.judge.compare import Verdict
from harness.judge.runner import Result, run_case
from harness.sql import parse

CONTROL = "duckdb~peer-shuffle"
FLAKY = "duckdb~flaky"  # wrong on every other query: tests/test_nondeterminism.py
# Fires only where the query is not instrumented: tests/test_bare.py
BARE_ONLY = "duckdb~single-window"
FAULTS = sorted(set(FAULTY) - {CONTROL, FLAKY, BARE_ONLY})


def make_case(case_id: str, sql: str, **tables: pa.Table) -> Case:
    schemas = tuple(
        TableSchema(name, tuple(ColumnDef(f.name, from_arrow(f.type)) for f in t.schema))
        for name, t in tables.items()
    )
    return Case(id=case_id, description=case_id, tags=(), schemas=schemas,
                tables=dict(tables), sql=sql, query=parse(sql))


def int_table(**columns: list[object]) -> pa.Table:
    return pa.table({name: pa.array(values, pa.int64()) for name, values in columns.items()})


# One case per fault, each exercising it on data where it changes the answer.
PLANTED: dict[str, Case] = {
    "duckdb~range-offset": make_case(
        "range-offset",
        """SELECT id, sum(v) OVER (ORDER BY v ASC NULLS LAST
                                 RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) AS s
           FROM t ORDER BY id ASC NULLS LAST""",
        t=int_table(id=[1, 2, 3, 4, 5, 6], v=[1, 2, 3, 5, 8, 9]),
    ),
    "duckdb~desc-nulls": make_case(
        "desc-nulls",
        """SELECT id, row_number() OVER (ORDER BY v DESC NULLS LAST, id ASC NULLS LAST) AS rn
           FROM t ORDER BY id ASC NULLS LAST""",
        t=int_table(id=[1, 2, 3, 4, 5], v=[3, None, 1, None, 2]),
    ),
    "duckdb~exclude-ties": make_case(
        "exclude-ties",
        """SELECT id, sum(v) OVER (ORDER BY k ASC NULLS LAST
                                 RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
                                 EXCLUDE TIES) AS s
           FROM t ORDER BY id ASC NULLS LAST""",
        t=int_table(id=[1, 2, 3, 4, 5], k=[1, 1, 2, 2, 3], v=[1, 10, 100, 1000, 10000]),
    ),
    "duckdb~tie-value": make_case(
        "tie-value",
        """SELECT id, first_value(v) OVER (PARTITION BY p ORDER BY k ASC NULLS LAST
                                         ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS f
           FROM t ORDER BY id ASC NULLS LAST""",
        t=int_table(id=[1, 2, 3, 4, 5, 6, 7], p=[1, 1, 1, 2, 2, 2, 2],
                    k=[1, 1, 2, 5, 5, 5, None], v=[10, 20, 30, 40, 50, 60, 70]),
    ),
    "duckdb~ntile": make_case(
        "ntile",
        """SELECT id, ntile(3) OVER (ORDER BY v ASC NULLS LAST) AS n
           FROM t ORDER BY id ASC NULLS LAST""",
        t=int_table(id=[1, 2, 3, 4, 5, 6, 7], v=[70, 10, 50, 20, 60, 30, 40]),
    ),
    "duckdb~ignore-nulls": make_case(
        "ignore-nulls",
        """SELECT id, lag(v) IGNORE NULLS OVER (ORDER BY id ASC NULLS LAST) AS l
           FROM t ORDER BY id ASC NULLS LAST""",
        t=int_table(id=[1, 2, 3, 4, 5], v=[1, None, None, 4, None]),
    ),
    "duckdb~float-sum-6": make_case(
        "float-sum-6",
        """SELECT id, sum(v) OVER (ORDER BY id ASC NULLS LAST
                                 ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS s
           FROM t ORDER BY id ASC NULLS LAST""",
        t=pa.table({"id": pa.array([1, 2, 3], pa.int64()),
                    "v": pa.array([0.123456789, 1.987654321, 3.141592653], pa.float64())}),
    ),
    "duckdb~topn-frame": make_case(
        "topn-frame",
        """SELECT id, sum(v) OVER (ORDER BY id ASC NULLS LAST
                                 ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s
           FROM t QUALIFY row_number() OVER (ORDER BY id ASC NULLS LAST) <= 3
           ORDER BY id ASC NULLS LAST""",
        t=int_table(id=[1, 2, 3, 4, 5], v=[1, 10, 100, 1000, 10000]),
    ),
    "duckdb~limit-lead": make_case(
        "limit-lead",
        """SELECT id, lead(v) OVER (ORDER BY id ASC NULLS LAST) AS l
           FROM t ORDER BY id ASC NULLS LAST LIMIT 3""",
        t=int_table(id=[1, 2, 3, 4, 5], v=[1, 2, 3, 4, 5]),
    ),
    # A partition of 1,100 rows: past row 1,024 the frame slips.
    "duckdb~long-partition": make_case(
        "long-partition",
        """SELECT id, count(*) OVER (ORDER BY id ASC NULLS LAST
                                   ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS c
           FROM t ORDER BY id ASC NULLS LAST""",
        t=int_table(id=list(range(1, 1101))),
    ),
    # 2,100 input rows, a NULL key in the second batch of 2,048.
    "duckdb~batch-null-peers": make_case(
        "batch-null-peers",
        """SELECT id, rank() OVER (ORDER BY k ASC NULLS LAST) AS r
           FROM t ORDER BY id ASC NULLS LAST""",
        t=int_table(id=list(range(2100)), k=[None if i in (3, 2050) else i % 7 for i in range(2100)]),
    ),
}

# A case that uses none of the planted features: no RANGE offset, no DESC, no
# EXCLUDE, no ntile, no IGNORE NULLS, no float sum, no ties.
NEUTRAL = make_case(
    "neutral",
    """SELECT id, row_number() OVER (PARTITION BY p ORDER BY id ASC NULLS LAST) AS rn,
              lag(v) OVER (PARTITION BY p ORDER BY id ASC NULLS LAST) AS l,
              sum(v) OVER (PARTITION BY p ORDER BY id ASC NULLS LAST
                           ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s
       FROM t ORDER BY id ASC NULLS LAST""",
    t=int_table(id=[1, 2, 3, 4, 5, 6], p=[1, 1, 1, 2, 2, None], v=[5, None, 7, 8, 9, 10]),
)


@pytest.fixture(scope="module")
def fakes() -> dict[str, Engine]:
    made = {name: get_engine(name) for name in [*FAULTY, "duckdb", "reference"]}
    yield made
    for engine in made.values():
        engine.close()


def verdicts(case: Case, *engines: Engine) -> dict[str, Result]:
    return {r.engine: r for r in run_case(case, engines)}


# -- the registry ---------------------------------------------------------------------


def test_faulty_engines_are_found_by_name_but_never_listed() -> None:
    assert not set(FAULTY) & set(engine_names())
    for name in FAULTY:
        assert get_dialect(name) is DUCKDB
        engine = get_engine(name)
        assert engine.name == name and not engine.is_reference
        assert ("not faulty" if name == CONTROL else "FAULTY") in engine.version()
    with pytest.raises(InvalidInput, match="unknown engine"):
        get_engine("duckdb~no-such-fault")


def test_faulty_engines_cover_every_planted_case() -> None:
    assert sorted(PLANTED) == FAULTS


# -- each planted bug is caught -------------------------------------------------------


@pytest.mark.parametrize("name", FAULTS)
def test_faulty_engine_is_caught_where_plain_duckdb_matches(name: str, fakes: dict[str, Engine]) -> None:
    case = PLANTED[name]
    results = verdicts(case, fakes["reference"], fakes["duckdb"], fakes[name])
    assert results["reference"].verdict is Verdict.MATCH
    assert results["duckdb"].verdict is Verdict.MATCH, results["duckdb"].detail
    assert results[name].verdict is Verdict.MISMATCH, (results[name].verdict, results[name].detail)


@pytest.mark.parametrize("name", sorted(set(FAULTY) - {FLAKY}))
def test_faulty_engine_matches_where_its_fault_does_not_fire(name: str, fakes: dict[str, Engine]) -> None:
    result = verdicts(NEUTRAL, fakes[name])[name]
    assert result.verdict is Verdict.MATCH, result.detail


@pytest.mark.parametrize("key, offset", [
    (pa.array([Decimal("0.5"), Decimal("1.0"), Decimal("1.5"), Decimal("3.0")], pa.decimal128(3, 1)),
     "CAST(0.5 AS DECIMAL(1,1))"),
    (pa.array([dt.date(2024, 1, d) for d in (1, 2, 3, 5)]), "INTERVAL '1' DAY"),
])
def test_faulty_range_offset_widens_decimal_and_interval_offsets(
    key: pa.Array, offset: str, fakes: dict[str, Engine]
) -> None:
    case = make_case(
        "range-offset-typed",
        f"""SELECT id, count(*) OVER (ORDER BY k ASC NULLS LAST
                                    RANGE BETWEEN {offset} PRECEDING AND CURRENT ROW) AS c
            FROM t ORDER BY id ASC NULLS LAST""",
        t=pa.table({"id": pa.array([1, 2, 3, 4], pa.int64()), "k": key}),
    )
    results = verdicts(case, fakes["duckdb"], fakes["duckdb~range-offset"])
    assert results["duckdb"].verdict is Verdict.MATCH, results["duckdb"].detail
    assert results["duckdb~range-offset"].verdict is Verdict.MISMATCH


def test_faulty_desc_nulls_fires_on_an_unwritten_null_order(fakes: dict[str, Engine]) -> None:
    case = make_case(
        "desc-nulls-default",
        """SELECT id, rank() OVER (ORDER BY v DESC) AS r FROM t ORDER BY id ASC NULLS LAST""",
        t=int_table(id=[1, 2, 3], v=[2, None, 1]),
    )
    results = verdicts(case, fakes["duckdb"], fakes["duckdb~desc-nulls"])
    assert results["duckdb"].verdict is Verdict.MATCH
    assert results["duckdb~desc-nulls"].verdict is Verdict.MISMATCH


def test_faulty_tie_value_corrupts_a_string_inside_a_tie(fakes: dict[str, Engine]) -> None:
    case = make_case(
        "tie-value-string",
        """SELECT id, last_value(s) OVER (ORDER BY k ASC NULLS LAST
                                        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS l
           FROM t ORDER BY id ASC NULLS LAST""",
        t=pa.table({"id": pa.array([1, 2, 3, 4], pa.int64()), "k": pa.array([1, 2, 2, 2], pa.int64()),
                    "s": pa.array(["a", "b", "c", "d"])}),
    )
    results = verdicts(case, fakes["duckdb"], fakes["duckdb~tie-value"])
    assert results["duckdb"].verdict is Verdict.MATCH
    assert results["duckdb~tie-value"].verdict is Verdict.MISMATCH
    assert "~faulty" in str(results["duckdb~tie-value"].answer.column("l").to_pylist())


def test_faulty_topn_frame_fires_on_a_filter_over_a_derived_table(fakes: dict[str, Engine]) -> None:
    case = make_case(
        "topn-frame-derived",
        """SELECT id, s FROM (
               SELECT id, row_number() OVER (ORDER BY id ASC NULLS LAST) AS rn,
                      max(v) OVER (ORDER BY id ASC NULLS LAST ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) AS s
               FROM t) AS q
           WHERE rn <= 2 ORDER BY id ASC NULLS LAST""",
        t=int_table(id=[1, 2, 3, 4], v=[4, 3, 2, 1]),
    )
    results = verdicts(case, fakes["duckdb"], fakes["duckdb~topn-frame"])
    assert results["duckdb"].verdict is Verdict.MATCH, results["duckdb"].detail
    assert results["duckdb~topn-frame"].verdict is Verdict.MISMATCH


@pytest.mark.parametrize("name, rows", [("duckdb~long-partition", 1024), ("duckdb~batch-null-peers", 2048)])
def test_faulty_size_bugs_stay_quiet_below_their_size(name: str, rows: int, fakes: dict[str, Engine]) -> None:
    """The planted case with its table cut to the size the bug needs, minus nothing:
    at exactly that many rows the fault has not fired yet."""
    planted = PLANTED[name]
    case = make_case(f"{planted.id}-short", planted.sql, t=planted.tables["t"].slice(0, rows))
    assert verdicts(case, fakes[name])[name].verdict is Verdict.MATCH


# -- the control: peers in any order are never a finding ------------------------------

TIE_HEAVY_QUERIES = [
    """SELECT id, row_number() OVER (PARTITION BY p ORDER BY k ASC NULLS FIRST) AS rn,
              rank() OVER (PARTITION BY p ORDER BY k ASC NULLS FIRST) AS r
       FROM t ORDER BY id ASC NULLS LAST""",
    """SELECT id, first_value(v) OVER (ORDER BY k DESC NULLS LAST
                                     ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS f,
              lag(v, 1, -1) OVER (ORDER BY k DESC NULLS LAST) AS l
       FROM t ORDER BY id ASC NULLS LAST""",
    """SELECT id, sum(v) OVER (PARTITION BY p ORDER BY k ASC NULLS LAST
                             ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS s,
              ntile(2) OVER (PARTITION BY p ORDER BY k ASC NULLS LAST) AS n
       FROM t ORDER BY id ASC NULLS LAST""",
    """SELECT id, sum(v) OVER (ORDER BY k ASC NULLS LAST
                             RANGE BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE TIES) AS s,
              count(v) OVER (PARTITION BY p ORDER BY k ASC NULLS LAST GROUPS CURRENT ROW) AS c
       FROM t ORDER BY id ASC NULLS LAST""",
    """SELECT p, k, v FROM t""",
    """SELECT id, last_value(v) IGNORE NULLS OVER (PARTITION BY p ORDER BY k ASC NULLS LAST
                                                 ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS l
       FROM t ORDER BY p ASC NULLS LAST, k ASC NULLS LAST, id ASC NULLS LAST""",
]


def tie_heavy_table(rng: Random) -> pa.Table:
    """Eight rows, two partitions, keys from {1, 2, NULL}: peer groups of two or three."""
    n = 8
    return int_table(
        id=list(range(1, n + 1)),
        p=[rng.choice([1, 2]) for _ in range(n)],
        k=[rng.choice([1, 2, None]) for _ in range(n)],
        v=[rng.choice([None, *range(10)]) for _ in range(n)],
    )


def test_faulty_control_peer_shuffle_gives_no_finding_on_tie_heavy_cases(fakes: dict[str, Engine]) -> None:
    control = fakes[CONTROL]
    for seed in range(12):
        table = tie_heavy_table(Random(seed))
        for i, sql in enumerate(TIE_HEAVY_QUERIES):
            case = make_case(f"ties/{seed}/{i}", sql, t=table)
            result = verdicts(case, control)[CONTROL]
            assert result.verdict is Verdict.MATCH, (case.id, result.verdict, result.detail)


def generated_cases(seeds: range) -> list[Case]:
    """Generated tie-heavy cases (see harness.generate.cases), small ones: a
    batch-scale draw's thousands of rows show ties no better, at minutes a case."""
    from harness.generate.cases import Limits, generate_case

    return [generate_case(f"faulty/{seed}", data="tie-heavy", limits=Limits(large_share=0.0)).case
            for seed in seeds]


def test_faulty_control_peer_shuffle_agrees_with_duckdb_on_generated_cases(fakes: dict[str, Engine]) -> None:
    cases = generated_cases(range(60))
    assert len(cases) >= 20
    for case in cases:
        results = verdicts(case, fakes["duckdb"], fakes[CONTROL])
        shuffled = results[CONTROL]
        if results["duckdb"].verdict in (Verdict.MISMATCH, Verdict.TYPE_MISMATCH):
            # DuckDB's own difference (its NaN corr/regr_slope at zero variance, in
            # the baseline) shows under the shuffle too: not the control's doing.
            continue
        assert shuffled.verdict not in (Verdict.MISMATCH, Verdict.TYPE_MISMATCH), (case.id, shuffled.detail)
        if results["duckdb"].verdict is Verdict.MATCH:
            # A window over a subquery's order-sensitive window has no witness
            # of its own; a shuffled input can exhaust the search there:
            # inconclusive, never a pass and never a finding (its rate is
            # bounded in test_faulty_campaigns).
            assert shuffled.verdict in (Verdict.MATCH, Verdict.INCONCLUSIVE), (case.id, shuffled.detail)
