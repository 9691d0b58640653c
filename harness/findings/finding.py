"""Turn a failing verdict into a finding: signed, classified, saved, reduced.

The first case of each signature is saved as a self-contained case file
(tables, canonical SQL, and a `finding` record with the seeds, the harness
and engine versions, and each engine's SQL, verdict and answer), so it
reproduces on a later commit without the generator. It is then reduced
while its signature holds, and the reduction is confirmed by one more plain
(unbatched) run on every engine before it is saved next to the original.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pyarrow as pa

from harness.cases.case import Case
from harness.cases.casefile import SavedCase, rows_doc, save_case
from harness.core.errors import CannotWrite
from harness.core.names import HIDDEN_PREFIX
from harness.core.stages import stage
from harness.engines.base import Engine
from harness.findings.majority import classify
from harness.findings.signature import Signature, signature
from harness.judge.compare import CONFORMING, Verdict
from harness.judge.runner import Result, run_case

FINDING_VERDICTS = frozenset({
    Verdict.MISMATCH, Verdict.TYPE_MISMATCH, Verdict.ERROR, Verdict.CRASH, Verdict.TIMEOUT,
    Verdict.SUSPECT_REFERENCE, Verdict.NONDETERMINISTIC, Verdict.WRONGLY_ACCEPTED,
    Verdict.WRONGLY_REJECTED,
})
# A reduction given less time than this (the campaign's end is near) is not begun.
MIN_REDUCE_SECONDS = 5.0


def finding_signature(case: Case, result: Result) -> Signature:
    return signature(ran_case(case, result), result.engine, result.verdict.value, result.facts)


def ran_case(case: Case, result: Result) -> Case:
    """The case as the engine ran it: for a verdict on a restricted (or respelled)
    query, that query (`harness.judge.restrict`), judged against the reference
    alone, so a finding file of it reproduces on every engine as it is."""
    if result.ran_query is None:
        return case
    from harness.sql.writer import write

    return replace(case, query=result.ran_query, sql=write(result.ran_query), expected=None, error=None,
                   finding=case.finding if case.finding is not None else {})


def restricted_record(case: Case, result: Result, record: dict) -> dict:
    """A finding record for a verdict on a restricted (or respelled) query: it says
    what was left out of the case's query (whose SQL it keeps), and its answers are
    the ones to the query the finding file holds: the engine's, and the reference's
    it was judged against. Other engines answered the case's query: their verdicts
    and SQL stay, their answers (of other columns) do not."""
    if result.ran_query is None:
        return record
    facts = result.facts.as_json()
    engines = {}
    for name, e in (record.get("engines") or {}).items():
        if name == result.engine:
            engines[name] = e
        elif name != "reference":
            engines[name] = {**{k: v for k, v in e.items() if k != "answer"},
                             "note": "answered the case's query, not the restricted one"}
    answer = user_answer(result.reference_answer)
    reference = {"version": (record.get("engines") or {}).get("reference", {}).get("version", "?"),
                 "verdict": "match" if answer is not None else "error", "sql": None, "answer": answer,
                 "detail": "the reference's answer to the restricted query"}
    return {**record, "engines": {"reference": reference, **engines},
            "restricted": {"note": result.notes[0] if result.notes else "",
                           **{k: facts[k] for k in ("left_out", "order_keys_left_out", "respelled") if k in facts},
                           "case_sql": case.sql}}


def user_answer(table: pa.Table | None) -> dict | None:
    """An answer without the harness's hidden columns, as a case file writes it."""
    if table is None:
        return None
    keep = [n for n in table.column_names if not n.startswith(HIDDEN_PREFIX)]
    return rows_doc(table.select(keep))


def engine_records(results: Sequence[Result], versions: dict[str, str]) -> dict:
    """Each engine's verdict, SQL and answer; where the bare query ran too, the
    same of it under `bare`."""
    return {r.engine: {"version": versions.get(r.engine, "?"), **_verdict_record(r),
                       **({"bare": _verdict_record(r.bare)} if r.bare is not None else {})}
            for r in results}


def _verdict_record(r: Result) -> dict:
    return {"verdict": r.verdict.value, "detail": r.detail, "facts": r.facts.as_json(), "sql": r.sql,
            "answer": user_answer(r.answer)}


class FindingMaker:
    def __init__(self, config, engines: list[Engine], directory: Path, known: set[str]) -> None:
        self.config = config
        self.engines = engines
        self.directory = directory
        self.known = known
        self.found: set[str] = set()  # the classifications of this run's new signatures
        # Each case file this maker wrote, by its path under the campaign directory:
        # what an in-process caller (the gate) reads instead of the files.
        self.saved: dict[str, SavedCase] = {}
        # The campaign's end (time.time()), when it has one: a reduction never runs
        # past it; a finding met too late stays unreduced (`window-harness reduce`).
        self.deadline: float | None = None

    def save(self, case: Case, path: Path, record: dict) -> None:
        """Write a finding's case file, and keep it."""
        try:
            save_case(case, path, record)
        except OSError as e:  # a full disk: the campaign stops, the finding is no harness bug
            raise CannotWrite.from_os(e, path) from None
        self.saved[str(path.relative_to(self.directory.parent))] = SavedCase.of(case, record)

    def versions(self) -> dict[str, str]:
        from harness.engines.registry import get_engine

        out = {e.name: e.version() for e in self.engines}
        out.setdefault("reference", get_engine("reference").version())
        return out

    def make(self, index: int, seed: str, generated, results: list[Result], result: Result) -> Iterator[dict]:
        case = generated.case
        sig = finding_signature(case, result)
        classification = classify(case, result, results)
        path = self.directory / f"{sig.key}.yaml"
        line = {"kind": "finding", "key": sig.key, "signature": sig.text, "engine": result.engine,
                "verdict": result.verdict.value, "classification": classification, "case": index,
                "seed": seed, "file": str(path.relative_to(self.directory.parent)),
                "detail": result.detail, "facts": result.facts.as_json()}
        if sig.key in self.known:
            yield line
            return
        self.known.add(sig.key)
        self.found.add(classification)
        record = restricted_record(case, result, self.record(sig, classification, result, results, seed,
                                                             generated))
        case = ran_case(case, result)  # what the engine ran: reduced and replayed as it is
        self.save(replace(case, id=f"findings/{sig.key}", tags=(*case.tags, "finding")), path, record)
        yield line
        if self.config.reduce and result.verdict is not Verdict.TIMEOUT:
            reduced = self.reduce(case, sig, result, record)
            if reduced is not None:
                yield reduced

    def record(self, sig: Signature, classification: str, result: Result, results: list[Result],
               seed: str, generated) -> dict:
        from harness import __version__

        record = {
            "signature": sig.text,
            "key": sig.key,
            "engine": result.engine,
            "verdict": result.verdict.value,
            "classification": classification,
            "detail": result.detail,
            "facts": result.facts.as_json(),
            "seeds": {"campaign": self.config.seed, "case": seed, "picks": list(generated.picks)},
            "harness_version": __version__,
            "engines": engine_records(results, self.versions()),
        }
        if result.distinct_answers:  # a nondeterministic verdict keeps every answer seen
            record["distinct_answers"] = [user_answer(t) for t in result.distinct_answers]
        return record

    # -- reduction ------------------------------------------------------------------

    def engines_for(self, result: Result) -> list[Engine]:
        """The engines a reduction runs: the one at fault (all of them for a suspect reference)."""
        if result.engine == "reference":
            return [e for e in self.engines if not e.is_reference]
        return [e for e in self.engines if e.name == result.engine]

    def reduce(self, case: Case, sig: Signature, result: Result, record: dict) -> dict | None:
        path = self.directory / f"{sig.key}.reduced.yaml"
        seconds = self.config.reduce_seconds
        if self.deadline is not None:
            seconds = min(seconds, self.deadline - time.time())
            if seconds < MIN_REDUCE_SECONDS:
                return None
        with stage("reduction"):
            outcome = reduce_finding(case, sig.key, self.engines_for(result), self.engines,
                                     seconds, bare=bool(result.facts.bare))
        self.save(outcome.case, path, {**record, **outcome.record(f"{sig.key}.yaml", self.versions())})
        return {"kind": "reduced", "key": sig.key,
                "file": str(path.relative_to(self.directory.parent)),
                "rows": outcome.rows, "attempts": outcome.reduction.attempts,
                "seconds": round(outcome.seconds, 2), "confirmed": outcome.confirmed}

    # -- profile against profile ----------------------------------------------------

    def make_profiles(self, index: int, seed: str, generated, results: list[Result],
                      disagreement) -> Iterator[dict]:
        """Two profiles of one engine answered one case differently (confirmed alone)."""
        a, b = disagreement.engines
        sig = Signature(f"{a} vs {b}", f"profiles-disagree-{disagreement.kind.value}",
                        tuple(disagreement.columns))
        path = self.directory / f"{sig.key}.yaml"
        line = {"kind": "finding", "key": sig.key, "signature": sig.text, "engine": a,
                "verdict": sig.verdict, "classification": "profiles-disagree", "case": index,
                "seed": seed, "file": str(path.relative_to(self.directory.parent)),
                "detail": str(disagreement)[:500]}
        if sig.key not in self.known:
            self.known.add(sig.key)
            self.found.add("profiles-disagree")
            record = {**self.record(sig, "profiles-disagree", next(r for r in results if r.engine == a),
                                    results, seed, generated),
                      "profiles": [a, b], "detail": str(disagreement)}
            self.save(replace(generated.case, id=f"findings/{sig.key}", tags=(*generated.case.tags, "finding")),
                      path, record)
        yield line

    # -- metamorphic ----------------------------------------------------------------

    def make_metamorphic(self, index: int, seed: str, chk, engine: Engine, outcome) -> Iterator[dict]:
        """A violated relation: saved as its left query's case, the right one in the record."""
        status = outcome.status.value
        sig = Signature(engine.name, f"metamorphic-{status}", (outcome.relation,))
        path = self.directory / f"{sig.key}.yaml"
        line = {"kind": "finding", "key": sig.key, "signature": sig.text, "engine": engine.name,
                "verdict": sig.verdict, "classification": "metamorphic", "case": index, "seed": seed,
                "file": str(path.relative_to(self.directory.parent)), "detail": outcome.detail[:500],
                "facts": outcome.facts}
        if sig.key not in self.known:
            self.known.add(sig.key)
            self.found.add("metamorphic")
            record = {
                "signature": sig.text, "key": sig.key, "engine": engine.name,
                "verdict": sig.verdict, "classification": "metamorphic",
                "relation": outcome.relation, "detail": outcome.detail, "facts": outcome.facts,
                "left_sql": outcome.left_sql, "right_sql": outcome.right_sql,
                "right_canonical_sql": chk.right.sql,
                "compared": {"key": chk.key, "columns": list(chk.columns)},
                "seeds": {"campaign": self.config.seed, "case": seed},
                "engines": {engine.name: {"version": engine.version()}},
            }
            left = replace(chk.left, id=f"findings/{sig.key}", tags=(*chk.left.tags, "finding"))
            self.save(left, path, record)
        yield line


def findings_of(results: list[Result]) -> list[Result]:
    """The results that are findings; a suspect reference is one finding, not one per engine.
    An engine's bare verdict (`Result.bare`) is one where its instrumented verdict is not:
    the user's own query fails where the instrumented one passed."""
    bare = [r.bare for r in results if r.bare is not None and r.verdict not in FINDING_VERDICTS]
    return _findings(results) + _findings(bare)


def _findings(results: list[Result]) -> list[Result]:
    suspect = [r for r in results if r.verdict is Verdict.SUSPECT_REFERENCE]
    out = [r for r in results if r.verdict in FINDING_VERDICTS and r.verdict is not Verdict.SUSPECT_REFERENCE]
    if suspect:
        out.append(Result(suspect[0].case, "reference", Verdict.SUSPECT_REFERENCE, suspect[0].detail,
                          facts=suspect[0].facts))
    return out


@dataclass
class ReducedFinding:
    case: Case
    reduction: object  # harness.findings.reduce.Reduction
    confirmation: list[Result]
    confirmed: bool
    seconds: float

    @property
    def rows(self) -> int:
        return sum(t.num_rows for t in self.case.tables.values())

    def record(self, reduced_from: str, versions: dict[str, str]) -> dict:
        return {
            "reduced_from": reduced_from,
            "reduction": {"attempts": self.reduction.attempts, "seconds": round(self.seconds, 2),
                          "confirmed": self.confirmed},
            "engines": engine_records(self.confirmation, versions),
        }


def reduce_finding(case: Case, key: str, at_fault: Sequence[Engine], everyone: Sequence[Engine],
                   seconds: float, bare: bool = False, conforming: Sequence[Engine] = ()) -> ReducedFinding:
    """Shrink `case` while some engine in `at_fault` still gives a finding signed `key`
    (and every engine of `conforming` still conforms: an A/B regression stays one);
    then confirm with one plain (unbatched) run on every engine. `bare`: the finding is
    of the bare query, so every run judges that too."""
    from harness.findings.reduce import shrink

    def holds(candidate: Case) -> bool:
        results = run_case(candidate, [*at_fault, *conforming], bare=bare)
        return (any(finding_signature(candidate, r).key == key for r in findings_of(results))
                and all(r.verdict in CONFORMING for r in results if r.engine in keep))

    keep = {e.name for e in conforming}

    t0 = time.monotonic()
    # Shrunk rows no longer fit a hand-written case's `expected`: with a finding
    # record the reference is the oracle (and `expected` is dropped).
    start = case if case.finding is not None else replace(case, finding={})
    reduction = shrink(start, holds, deadline=t0 + seconds)
    reduced = replace(reduction.case, id=f"{case.id}.reduced",
                      description=case.description.removesuffix(" (reduced)") + " (reduced)")
    confirmation = run_case(reduced, list(everyone), bare=bare)
    confirmed = (any(finding_signature(reduced, r).key == key for r in findings_of(confirmation))
                 and all(r.verdict in CONFORMING for r in confirmation if r.engine in keep))
    return ReducedFinding(reduced, reduction, confirmation, confirmed, time.monotonic() - t0)
