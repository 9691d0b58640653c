"""Proof of teeth: short seeded campaigns find every planted bug and reduce it.

Each faulty engine (`harness.engines.duckdb.faulty`, `faulty_plans`) is DuckDB
with one planted bug. A campaign against it must report a finding on it and
reduce that finding to a case of at most 10 rows that still shows the bug
(more where the bug needs a long partition or several batches: a partition
past row 1,024, an input past row 2,048). The bugs of `faulty_plans` fire
only under one query shape (a top-N filter, LIMIT over lead), past one size
(a campaign's batch-scale share), or only on the bare query (the
`single-window` fault, which instrumenting hides). And the opposite: a
correct engine that orders peers arbitrarily must give no finding at all
over 10,000 tie-heavy cases (a tie must never look like a bug).
"""

from __future__ import annotations

import json
from dataclasses import replace
from random import Random

import pytest

from harness.campaign.loop import CampaignConfig, regenerate, run_campaign
from harness.cases.case import load_case
from harness.engines.registry import get_engine
from harness.findings.majority import ENGINE_VS_ALL
from harness.judge.compare import Verdict
from harness.judge.runner import run_case
from harness.results.store import CASES as CASES_FILE

FAULTS = ["range-offset", "desc-nulls", "exclude-ties", "tie-value", "ntile", "ignore-nulls",
          "float-sum-6", "topn-frame", "limit-lead", "single-window", "long-partition",
          "batch-null-peers"]
CASES = 800
SEED = 20261122
# RANGE n PRECEDING over keys n + 1 apart is one frame among many since issue 19
# widened the generator (query shapes, offset edges): SEED meets no such pair
# within 800 cases; of seeds 1-4, seed 4 does at case ~230 (checked 2026-11-26).
# single-window: the frame variants of issue 19 moved SEED's first finding onto a
# query the instrumenter leaves as it is (so not hidden). Since issue 21 draws the
# bare query per shape (on its first case), seeds 1, 2, 3 and 6 meet such a query
# first too; seed 7 finds it first through the bare query, at case 56 (and seed
# 5 at 430; checked 2026-11-26).
SEED_FOR = {"range-offset": 4, "single-window": 7}
BATCH = 2  # pairs of siblings: the batched path, and as many query shapes as 400 cases alone
MAX_ROWS = 10
# The bugs that need rows: a partition past its 1,024th row (1,026 rows at least,
# so a row past it has one after it), an input past its 2,048th row (2,049). The
# reducer's 30 seconds get close to that, not to it.
MAX_ROWS_FOR = {"long-partition": 4096, "batch-null-peers": 4096}
# Their campaigns give every table that many rows (`CampaignConfig.rows`, as the
# benchmarks fix it): a partition past row 1,024, an input past row 2,048. A
# campaign's own batch-scale share (3% of cases) reaches them too, but seldom: a
# batch-scale case also needs a moving ROWS aggregate or a NULL window key late
# in its input, and the test is of finding and reducing the bug, not of waiting.
ROWS_FOR = {"long-partition": 1100, "batch-null-peers": 2100}
CONTROL = "duckdb~peer-shuffle"
CONTROL_CASES = 10_000

# Campaigns of hundreds to thousands of cases: out of the fast loop (`pytest -m "not slow"`).
pytestmark = pytest.mark.slow


def config_for(fault: str, out, **changes) -> CampaignConfig:
    """The campaign that hunts one fault: the shares that cost time and do not
    reach its bug are off (batch-scale data, the bare query but for the fault only
    it shows, drawn profiles and thread re-runs); tables as long as its bug needs."""
    return replace(CampaignConfig(
        seed=SEED_FOR.get(fault, SEED), engines=("duckdb", f"duckdb~{fault}"), out=out, cases=CASES,
        batch_size=BATCH, reduce=True, reduce_seconds=30, isolate=False, metamorphic_share=0,
        stop_when=ENGINE_VS_ALL, rows=ROWS_FOR.get(fault), large_share=0.0,
        bare_share=0.15 if fault == "single-window" else 0.0, profile_share=0.0, thread_share=0.0),
        **changes)


@pytest.mark.parametrize("fault", FAULTS)
def test_faulty_engine_is_found_and_reduced(tmp_path, fault):
    engine = f"duckdb~{fault}"
    # Plain DuckDB runs alongside: a finding only the faulty engine shows is
    # classified engine-vs-all-others (DuckDB's own bugs show on both).
    result = run_campaign(config_for(fault, tmp_path / fault))
    mine = [f for f in result.findings if f["engine"] == engine and f["classification"] == ENGINE_VS_ALL]
    assert mine, f"{CASES} cases did not find the planted bug in {engine}"
    reduced = [f for f in mine if f.get("reduced_file")]
    assert reduced, "the finding was not reduced"
    best = min(reduced, key=lambda f: f["reduced_rows"])
    assert best["reduced_rows"] <= MAX_ROWS_FOR.get(fault, MAX_ROWS)
    case = load_case(tmp_path / fault / best["reduced_file"])
    assert case.finding["reduction"]["confirmed"] is True
    assert sum(t.num_rows for t in case.tables.values()) == best["reduced_rows"]
    # The planted bug, not one DuckDB has anyway: the real engine passes the repro
    # (the bare query too: the single-window fault shows only there).
    (faulty,) = run_case(case, [get_engine(engine)], bare=True)
    (real,) = run_case(case, [get_engine("duckdb")], bare=True)
    # The single-window fault shows on the bare query; where the reduced query needs
    # no instrumenting at all (no row id, no witness), it is the query judged (no bare run).
    wrong = (faulty.bare or faulty) if fault == "single-window" else faulty
    assert wrong.verdict is Verdict.MISMATCH and real.verdict is Verdict.MATCH, (faulty, real)
    # The real engine's bare answer over a long tie-heavy repro may leave the tie
    # search undecided (inconclusive: never a pass, and no failure either).
    assert real.bare is None or real.bare.verdict in (Verdict.MATCH, Verdict.INCONCLUSIVE), real.bare


def test_the_single_window_fault_hides_from_the_instrumented_query(tmp_path):
    """The campaign that finds `duckdb~single-window` through the bare query
    (above) finds nothing without it: instrumenting adds windows, so the planted
    rewrite never fires on the query the harness checks row by row."""
    fault = "single-window"
    engine = f"duckdb~{fault}"
    first = run_campaign(config_for(fault, tmp_path / "bare", reduce=False))
    found = [f for f in first.findings if f["engine"] == engine and f["classification"] == ENGINE_VS_ALL]
    assert found and all(f["facts"].get("bare") for f in found), found
    cases = first.summary["cases"]  # as far as the bare query needed to find it
    plain = run_campaign(config_for(fault, tmp_path / "plain", cases=cases, bare_share=0.0, reduce=False,
                                    stop_when=None))
    assert plain.summary["cases"] == cases
    assert [f for f in plain.findings if f["engine"] == engine and f["classification"] == ENGINE_VS_ALL] == []


def test_faulty_control_peer_shuffling_engine_gives_no_finding(tmp_path):
    """Peers in a fresh order on every query, otherwise DuckDB: no finding of its own.

    Plain DuckDB runs alongside, so DuckDB's own differences (overflow limits
    of DECIMAL(38,s), say) are told apart. Its own bugs can depend on input
    order (2.0.0: max over RANGE ... AND 0 PRECEDING splits the peer group;
    related to duckdb#23664), so a finding only the shuffling engine shows
    must reproduce on plain DuckDB under some other input order.
    """
    out = tmp_path / "shuffle"
    # Small tie-heavy cases only: the batch-scale share (3%, thousands of rows each)
    # would cost this run tens of minutes and shows ties no better.
    config = CampaignConfig(seed=7, engines=("duckdb", CONTROL), out=out, cases=CONTROL_CASES, jobs=2,
                            reduce=False, isolate=False, metamorphic_share=0, data="tie-heavy",
                            large_share=0.0)
    result = run_campaign(config)
    assert result.summary["cases"] == CONTROL_CASES
    lines = [json.loads(t) for t in (out / CASES_FILE).read_text().splitlines()]
    differ = [x for x in lines if x["verdicts"].get(CONTROL) != x["verdicts"].get("duckdb")]
    # Where the verdicts differ, the shuffle may have made the tie search give
    # up (inconclusive: never a pass), or passed where DuckDB's own input order
    # did not. A worse verdict must be DuckDB's own bug that its fixed input
    # order hid: plain DuckDB fails the same case given its rows in another order.
    worse = [x for x in differ if x["verdicts"][CONTROL] not in ("inconclusive", "match")]
    unexplained = [x["seed"] for x in worse if not duckdb_fails_under_some_input_order(
        regenerate(x, config).case)]
    assert unexplained == []
    # Both must stay rare, or this test would prove little.
    assert len(differ) <= 0.01 * CONTROL_CASES, len(differ)
    verdicts = result.summary["verdicts"][CONTROL]
    assert verdicts.get("match", 0) >= 0.8 * CONTROL_CASES, verdicts


def duckdb_fails_under_some_input_order(case, tries: int = 400) -> bool:
    # Some of DuckDB's own order-dependent bugs need one input order in a hundred
    # (var_pop(DISTINCT id) over RANGE ... AND INTERVAL '0' HOUR PRECEDING: 3 of 300).
    duckdb = get_engine("duckdb")
    rng = Random(0)
    for _ in range(tries):
        tables = {name: t.take(rng.sample(range(t.num_rows), t.num_rows)) for name, t in case.tables.items()}
        (result,) = run_case(replace(case, tables=tables), [duckdb])
        if result.verdict in (Verdict.MISMATCH, Verdict.TYPE_MISMATCH, Verdict.ERROR):
            return True
    return False
