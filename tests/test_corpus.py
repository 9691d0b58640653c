"""Every corpus case on every engine: one test per (case, engine).

The corpus runs once per test session (one Spark session, Spark work batched
per case); each test then checks its own verdict: a pass, or exactly the
verdict a reviewed known-differences entry explains. An entry whose verdict
is no longer observed fails too, so the baseline cannot go stale.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.baseline import load_baseline
from harness.cases import load_cases
from harness.compare import PASSING
from harness.engines.registry import engine_names
from harness.runner import run_case

CASES_DIR = Path(__file__).resolve().parent.parent / "cases"
CASES, ERRORS = load_cases([CASES_DIR])
KNOWN = load_baseline()


def test_every_case_file_is_valid():
    assert not ERRORS, "\n".join(str(e) for e in ERRORS)
    assert len(CASES) >= 60


@pytest.fixture(scope="session")
def corpus_results(engines):
    results = {}
    for case in CASES:
        for r in run_case(case, engines):
            results[(case.id, r.engine)] = r
    return results


@pytest.mark.parametrize("engine", engine_names())
@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_case_on_engine(corpus_results, case_id, engine):
    result = corpus_results[(case_id, engine)]
    known = KNOWN.get((case_id, engine))
    if known is not None:
        assert result.verdict is known.verdict, (
            f"baseline expects {known.verdict.value} ({known.reason}); observed "
            f"{result.verdict.value}: {result.detail}"
        )
    else:
        assert result.verdict in PASSING, f"{result.verdict.value}: {result.detail}\n{result.sql}"
