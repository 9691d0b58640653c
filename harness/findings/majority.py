"""The majority view: who is probably wrong when answers disagree.

The reference is the main oracle, but it can share a blind spot with the
engines, or have one of its own. Each finding is classified from every
engine's verdict on the same case:

- `reference-vs-all-engines`: the reference disagrees with every engine
  that answered (two at least): the reference is suspect;
- `implementation-defined`: the engine's answer is what the reference gives
  under another engine's semantics profile (or the standard's): a by-design
  choice the engine's own profile does not declare yet;
- `engine-vs-all-others`: the engine disagrees with the reference, and every
  other engine that answered agrees with the reference;
- `engine-vs-reference`: the engine disagrees with the reference, and so do
  other engines (or no other engine answered to say).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.cases.case import Case
from harness.core.errors import EvaluationError, HarnessError
from harness.core.semantics import STANDARD, SemanticsProfile
from harness.judge.compare import Judgement, Verdict, compare
from harness.judge.instrument import Plan, bare_plan, instrument, with_rowid
from harness.judge.oracle import Oracle
from harness.judge.runner import Result, effective_knobs

REFERENCE_VS_ALL = "reference-vs-all-engines"
IMPLEMENTATION_DEFINED = "implementation-defined"
ENGINE_VS_ALL = "engine-vs-all-others"
ENGINE_VS_REFERENCE = "engine-vs-reference"

_ANSWERED = (Verdict.MATCH, Verdict.MISMATCH, Verdict.TYPE_MISMATCH)


def classify(case: Case, finding: Result, results: Sequence[Result]) -> str:
    """A bare verdict (`facts.bare`) is weighed against the other engines' bare verdicts."""
    if finding.facts.bare:
        results = [r.bare for r in results if r.bare is not None]
    if finding.verdict is Verdict.SUSPECT_REFERENCE or finding.engine == "reference":
        return REFERENCE_VS_ALL
    if _defined_elsewhere(case, finding):
        return IMPLEMENTATION_DEFINED
    others = [r for r in results
              if r.engine not in (finding.engine, "reference") and r.verdict in _ANSWERED]
    if others and all(r.verdict is Verdict.MATCH for r in others):
        return ENGINE_VS_ALL
    return ENGINE_VS_REFERENCE


def other_profiles(own: SemanticsProfile) -> list[SemanticsProfile]:
    """The standard's profile and every registered engine's, other than `own`."""
    from harness.engines.registry import engine_names, get_dialect

    profiles = [STANDARD, *(get_dialect(n).semantics for n in engine_names())]
    unique: list[SemanticsProfile] = []
    for p in profiles:
        if p != own and p not in unique:
            unique.append(p)
    return unique


def _defined_elsewhere(case: Case, finding: Result) -> bool:
    """Would another profile's reference have accepted this engine's answer (or error)?"""
    from harness.engines.registry import get_dialect

    try:
        own = get_dialect(finding.engine).semantics
    except HarnessError:
        return False
    plan = bare_plan(case.query, case.schemas) if finding.facts.bare else instrument(case.query, case.schemas)
    tables = with_rowid(case.tables) if plan.rowid_column is not None else dict(case.tables)
    # Profiles that differ only in knobs this query never touches give the same
    # reference answer (the runner's rule) and so the same verdict: one of them is
    # enough, and the engine's own is the verdict being classified.
    tried = {_judged_alike(own, plan)}
    for profile in other_profiles(own):
        if _judged_alike(profile, plan) in tried:
            continue
        tried.add(_judged_alike(profile, plan))
        oracle = Oracle(plan.unlimited, tables, profile)
        try:
            oracle.evaluate()
        except EvaluationError:
            if finding.verdict is Verdict.ERROR:
                return True
            continue
        except HarnessError:
            continue
        if finding.answer is not None and finding.verdict in (Verdict.MISMATCH, Verdict.TYPE_MISMATCH):
            outcome = compare(finding.answer, Judgement(plan, profile.null_ordering), oracle)
            if outcome.verdict is Verdict.MATCH:
                return True
    return False


def _judged_alike(profile: SemanticsProfile, plan: Plan) -> tuple:
    """What a verdict under `profile` depends on: the knobs the query touches, and the
    null order the comparator checks the rows' order with."""
    return effective_knobs(profile, plan.query), profile.null_ordering
