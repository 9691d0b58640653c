"""Every corpus case on every engine: one test per (case, engine).

The corpus runs once per test session (one Spark session, Spark work batched
per case); each test then checks its own verdict: a match, an `unsupported`
the engine's dialect declares, or a verdict a reviewed known-differences
entry explains. Every reviewed entry must explain some corpus verdict, so
the baseline cannot go stale and every entry has a case that shows it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.baseline.known import derived_entries, load_baseline
from harness.cases.case import load_cases
from harness.engines.registry import engine_names
from harness.judge.compare import CONFORMING

CASES_DIR = Path(__file__).resolve().parent.parent / "cases"
CASES, ERRORS = load_cases([CASES_DIR])
BASELINE = load_baseline()
BY_ID = {c.id: c for c in CASES}
DERIVED = derived_entries(engine_names())


def test_every_case_file_is_valid():
    assert not ERRORS, "\n".join(str(e) for e in ERRORS)
    assert len(CASES) >= 60


@pytest.fixture(scope="session")
def corpus_results(engines, corpus_runs):
    return corpus_runs.results([e.name for e in engines], CASES)


def _explanation(result, versions):
    return BASELINE.explain(_observation(result, versions), DERIVED)


def _observation(result, versions):
    from harness.baseline.known import Observation

    return Observation(result.case, result.engine, result.verdict.value, result.detail,
                       versions[result.engine], BY_ID[result.case], facts=result.facts)


@pytest.fixture(scope="session")
def versions(engines):
    return {e.name: e.version() for e in engines}


@pytest.mark.parametrize("engine", engine_names())
@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_case_on_engine(corpus_results, versions, case_id, engine):
    result = corpus_results[(case_id, engine)]
    if result.verdict in CONFORMING:
        return
    entry = _explanation(result, versions)
    assert entry is not None, (
        f"{result.verdict.value}, explained by no baseline entry and no declaration of "
        f"{engine}'s dialect: {result.detail}\n{result.sql}")


@pytest.mark.parametrize("entry", BASELINE.entries, ids=lambda e: e.id)
def test_every_baseline_entry_is_shown_by_a_corpus_case(corpus_results, versions, entry):
    if not any(entry.applies_to(name, version) for name, version in versions.items()):
        pytest.skip(f"{entry.label} is not about the engine versions installed here")
    if entry.campaign_only:
        pytest.skip(f"{entry.label} is about verdicts only a campaign observes")
    shown = [key for key, r in corpus_results.items()
             if r.verdict not in CONFORMING and entry.explains(_observation(r, versions))]
    assert shown, (f"stale baseline entry {entry.label} ({entry.where}): it explains no corpus "
                   "verdict; remove it, or add the case that shows it")
