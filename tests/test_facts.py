"""The runner records what a verdict is about as typed fields (harness/judge/facts.py)."""

from __future__ import annotations

from pathlib import Path

import yaml

from harness.cases.case import load_case
from harness.engines.registry import get_engine
from harness.judge.compare import Verdict
from harness.judge.facts import Facts, recorded
from harness.judge.runner import run_case


def _case(tmp_path: Path, expected: list[list[int]]):
    doc = {"description": "row_number", "tables": {"t": {"columns": {"id": "bigint"}, "rows": [[1], [2]]}},
           "sql": "SELECT id, row_number() OVER (ORDER BY id ASC NULLS LAST) AS rn FROM t ORDER BY id ASC NULLS LAST",
           "expected": {"columns": ["id", "rn"], "rows": expected}}
    path = tmp_path / "facts" / "case.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return load_case(path)


def test_a_verdict_made_suspect_keeps_its_verdicts_against_the_reference_and_the_case(tmp_path) -> None:
    engine = get_engine("duckdb")
    engine.start()
    try:
        wrong_rows = _case(tmp_path, [[1, 1], [2, 3]])  # the case's own rows are wrong: rn is 2
        (result,) = run_case(wrong_rows, [engine])
        assert result.verdict is Verdict.SUSPECT_REFERENCE
        assert result.facts.against_reference is Verdict.MATCH  # duckdb agrees with the reference
        assert result.facts.against_case is Verdict.MISMATCH  # the reference fails the case's rows
        assert recorded(result.as_json()) == result.facts  # what is written is what is read back
        (fine,) = run_case(_case(tmp_path, [[1, 1], [2, 2]]), [engine])
        assert fine.verdict is Verdict.MATCH and fine.facts == Facts()
    finally:
        engine.close()
