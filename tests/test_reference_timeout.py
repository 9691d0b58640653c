"""--timeout bounds the reference too (harness/judge/oracle.py `time_limit`).

The slow case is a correlated subquery over 2,000 rows: quadratic in the
reference (seconds), whatever its window fast paths, and instant in DuckDB.
"""

from __future__ import annotations

import json
import pickle
import signal
import time
from pathlib import Path

import pyarrow as pa
import pytest

from harness.campaign import spark_job
from harness.campaign.loop import CampaignConfig, run_campaign
from harness.cases.case import Case, case_from_doc, load_cases
from harness.cli.main import main
from harness.core.errors import ReferenceTimeout
from harness.engines.registry import get_engine
from harness.judge.compare import Verdict
from harness.judge.oracle import _alarm, time_limit
from harness.judge.runner import Result, _prepare, judge_answer, reference_table, run_case
from harness.results.store import Progress

ROWS = 2000
LIMIT = 0.2  # seconds: a small share of what the slow case needs


def write_slow_case(path: Path) -> Path:
    values = [(i * 7919) % 1000 for i in range(ROWS)]
    rows = "\n".join(f"      - [{i}, {v}]" for i, v in enumerate(values))
    expected = "\n".join(f"    - [{i}, {sum(u <= v for u in values)}]" for i, v in enumerate(values))
    path.write_text(f"""\
description: a correlated subquery over {ROWS} rows, quadratic in the reference
tables:
  t:
    columns:
      id: bigint
      v: integer
    rows:
{rows}
sql: |
  SELECT id, (SELECT count(*) FROM t AS u WHERE u.v <= t.v) AS x FROM t ORDER BY id
expected:
  columns: [id, x]
  rows:
{expected}
""")
    return path


@pytest.fixture(scope="module")
def slow_case(tmp_path_factory: pytest.TempPathFactory) -> Case:
    (case,), errors = load_cases([write_slow_case(tmp_path_factory.mktemp("slow") / "slow.yaml")])
    assert errors == []
    return case


def test_a_reference_past_the_time_limit_is_a_timeout_and_engines_are_inconclusive(slow_case: Case) -> None:
    before = signal.getsignal(signal.SIGALRM)
    with time_limit(LIMIT):
        reference, duckdb = run_case(slow_case, [get_engine("reference"), get_engine("duckdb")])
    assert reference.verdict is Verdict.TIMEOUT
    assert reference.detail == f"reference cannot evaluate: did not finish within {LIMIT:g} s"
    assert duckdb.verdict is Verdict.INCONCLUSIVE
    assert "did not finish" in duckdb.detail
    # Nothing is left armed: the handler is restored and no alarm is pending.
    assert signal.getsignal(signal.SIGALRM) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_the_gate_bounds_the_reference_by_its_timeout(tmp_path: Path) -> None:
    case = write_slow_case(tmp_path / "slow.yaml")
    out = tmp_path / "gate"
    code = main(["gate", "--engines", "reference,duckdb", "--corpus", str(case), "--budget-seconds", "0",
                 "--timeout", str(LIMIT), "--out", str(out)])
    assert code == 1
    failures = json.loads((out / "gate.json").read_text())["failures"]
    assert {(f["engine"], f["verdict"]) for f in failures} == {("reference", "timeout"),
                                                              ("duckdb", "inconclusive")}


def test_a_campaign_bounds_the_reference_by_its_timeout(tmp_path: Path) -> None:
    # A budget no evaluation fits in (1 us: a case over an empty table evaluates in
    # well under the 100 us this once was, and then it was answered); engines in
    # this process, so only the reference is bounded.
    config = CampaignConfig(seed=3, engines=("reference", "sqlite"), out=tmp_path / "c", cases=2,
                            timeout_seconds=1e-6, isolate=False, reduce=False)
    run_campaign(config)
    lines = [json.loads(line) for line in (tmp_path / "c" / "cases.jsonl").read_text().splitlines()]
    assert [line["verdicts"]["reference"] for line in lines] == ["timeout", "timeout"]


def test_a_ring_swallowed_by_a_callback_rings_again() -> None:
    # A gc callback or a __del__ swallows what it raises ("Exception ignored in ..."):
    # were the alarm one-shot, a ring lost that way would leave the evaluation unbounded.
    deadline = time.monotonic() + 10
    with pytest.raises(ReferenceTimeout), _alarm(0.05):
        try:
            while True:
                pass
        except ReferenceTimeout:
            pass  # the first ring, swallowed
        while time.monotonic() < deadline:
            pass
        pytest.fail("the alarm rang once only")
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # and stops once the block is left


def test_a_spark_job_shard_bounds_the_reference_by_its_timeout() -> None:
    # `fuzz --on-spark` judges in Spark's Python workers (`spark_job._run_shard`); the
    # shard's part is plain Python, run here without Spark.
    config = CampaignConfig(seed=3, engines=("reference", "sqlite"), out=Path("unused"), cases=2,
                            timeout_seconds=1e-6, isolate=False, reduce=False)
    batches = list(spark_job._run_shard(config, Progress(), 0, None))
    runs = [run for b in batches for run in pickle.loads(b.column("payload")[0].as_py()).values()]
    assert [r.engine for _, _, run, _ in runs for r in run.results if r.verdict is Verdict.TIMEOUT] \
        == ["reference", "reference"]


def test_a_tie_search_past_the_time_limit_is_inconclusive_never_a_pass() -> None:
    # The first evaluation fits; the search over orders of tied rows (which evaluates
    # the reference again per order) does not: the verdict is inconclusive, not match.
    case = case_from_doc({
        "description": "a sliding sum over tied rows", "finding": {},  # the reference is the oracle
        "tables": {"t": {"columns": {"id": "bigint", "x": "bigint"},
                         "rows": [[i, 1 if i <= 4 else 2] for i in range(1, 9)]}},
        "sql": "SELECT id, x, sum(id) OVER (ORDER BY x ASC ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s "
               "FROM t ORDER BY id",
    }, Path("ties.yaml"))
    prepared = _prepare(case)
    engine = get_engine("duckdb")
    answer = reference_table(prepared.under(engine.dialect.semantics))
    wrong = answer.set_column(2, "s", pa.array([999, *answer.column("s").to_pylist()[1:]], pa.int64()))
    untimed = judge_answer(prepared, engine, Result(case.id, engine.name, Verdict.MATCH), wrong)
    assert untimed.verdict is Verdict.MISMATCH  # the wrong value is found when time allows
    with time_limit(1e-6):
        timed = judge_answer(prepared, engine, Result(case.id, engine.name, Verdict.MATCH), wrong)
    assert timed.verdict is Verdict.INCONCLUSIVE and "did not finish" in timed.detail


def test_a_tie_search_past_its_own_budget_is_inconclusive_never_a_pass(monkeypatch) -> None:
    """Each evaluation of the reference fits, but one judgement's search over orders
    of tied rows evaluates it again per order (seconds each on a batch-scale case):
    past SEARCH_SECONDS in all, a right answer that only another order of the
    tied rows gives is inconclusive, never a match."""
    from harness.judge import oracle

    case = case_from_doc({
        "description": "a sliding sum over tied rows", "finding": {},
        "tables": {"t": {"columns": {"id": "bigint", "x": "bigint"},
                         "rows": [[i, 1 if i <= 4 else 2] for i in range(1, 9)]}},
        "sql": "SELECT id, x, sum(id) OVER (ORDER BY x ASC ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s "
               "FROM t ORDER BY id",
    }, Path("ties.yaml"))
    prepared = _prepare(case)
    shuffler = get_engine("duckdb~peer-shuffle")  # right answers, peers in a fresh order each time
    default = reference_table(prepared.under(shuffler.dialect.semantics))
    answers = [shuffler.run(prepared.tables, shuffler.render(prepared.plan.query)) for _ in range(30)]
    other = next(a for a in answers if a.column("s") != default.column("s"))  # another order's sums
    judged = judge_answer(prepared, shuffler, Result(case.id, shuffler.name, Verdict.MATCH), other)
    assert judged.verdict is Verdict.MATCH, judged.detail  # right, found by searching
    monkeypatch.setattr(oracle, "SEARCH_SECONDS", -1.0)  # every re-evaluation is past the budget
    oracle._SHARED._by_key.clear()  # nothing kept from the search above
    prepared = _prepare(case)
    timed = judge_answer(prepared, shuffler, Result(case.id, shuffler.name, Verdict.MATCH), other)
    assert timed.verdict is Verdict.INCONCLUSIVE and "took too long" in timed.detail, timed.detail
