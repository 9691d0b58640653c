"""A run's output directory: what `window-harness run --out DIR` (and the gate's
corpus part) leaves behind for the report and for people.

    DIR/run.json           engines and versions, host, every verdict with its
                           detail and SQL, and what each case exercises
    DIR/findings/KEY.yaml  the first case of each finding signature (a case
                           file): each engine's SQL, verdict and answer, and the
                           reference's answer beside them

A finding here is what it is in a campaign (`harness.findings.finding`): a
verdict other than match, unsupported and inconclusive, signed the same way,
so a corpus run and a campaign group their findings alike.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from harness.cases.case import Case
from harness.cases.casefile import SavedCase
from harness.judge.runner import Result, RunResults
from harness.results.records import RunRecord

RUN = "run.json"
FINDINGS_DIR = "findings"
# Where a run reported without --out is said to be: nowhere on disk.
UNSAVED = Path("(not saved)")


def host_info() -> dict:
    """Where a run ran: for a reader comparing figures across machines."""
    return {"os": f"{platform.system()} {platform.release()}", "machine": platform.machine(),
            "cpus": os.cpu_count(), "python": platform.python_version()}


def run_record(out: Path, run: RunResults, cases: Sequence[Case], *, started: float,
               kind: str = "run", extra: dict | None = None) -> RunRecord:
    """`run` as the directory `out` holds it once written (`write_run_dir`), in memory."""
    from harness import __version__
    from harness.cases.axes import case_rows
    from harness.results.output import summary

    by_id = {c.id: c for c in cases}
    findings, saved = _findings(run, by_id)
    doc = {
        "kind": kind,
        "harness_version": __version__,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started)),
        "host": host_info(),
        "engines": run.engines,
        "summary": summary(run),
        "results": [r.as_json() for r in run.results],
        # Each case's source answer judged against the reference (harness.judge.source).
        **({"sources": [source.as_json() for source in run.sources]} if run.sources else {}),
        "cases": {c.id: {"file": shown_path(c.path), "description": c.description,
                         "rows": case_rows(c).as_json(),
                         **({"origin": c.origin} if c.origin is not None else {})} for c in cases},
        "findings": findings,
        **(extra or {}),
    }
    # As run.json holds it: JSON's types (a tuple is a list), so a report built from
    # this record is the one built from the directory.
    doc = json.loads(json.dumps(doc, default=str))
    return RunRecord(out, doc, saved, by_id.get)


def write_run_dir(out: Path, run: RunResults, cases: Sequence[Case], *, started: float,
                  kind: str = "run", extra: dict | None = None) -> RunRecord:
    """Write `run` under `out` (created; an earlier run.json there is replaced);
    returns what was written, in memory."""
    record = run_record(out, run, cases, started=started, kind=kind, extra=extra)
    write_run_record(record)
    return record


def write_run_record(record: RunRecord) -> Path:
    from harness.cases.casefile import save_case

    out = record.path
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out / FINDINGS_DIR, ignore_errors=True)  # an earlier run's findings
    for file, saved in record.saved.items():
        save_case(saved.case, out / file, saved.record)
    path = out / RUN
    tmp = path.with_name(RUN + ".tmp")
    tmp.write_text(json.dumps(record.doc, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def _findings(run: RunResults, cases: dict[str, Case]) -> tuple[list[dict], dict[str, SavedCase]]:
    """One line per finding occurrence; the first case of each signature, by its file."""
    from harness.findings.finding import FINDING_VERDICTS, finding_signature
    from harness.findings.majority import classify

    by_case: dict[str, list[Result]] = {}
    for r in run.results:
        by_case.setdefault(r.case, []).append(r)
    lines: list[dict] = []
    saved: dict[str, SavedCase] = {}
    for case_id, results in by_case.items():
        case = cases[case_id]
        bare = [r.bare for r in results if r.bare is not None and r.verdict not in FINDING_VERDICTS]
        for result in (r for r in results + bare if r.verdict in FINDING_VERDICTS):
            sig = finding_signature(case, result)
            file = f"{FINDINGS_DIR}/{sig.key}.yaml"
            lines.append({"key": sig.key, "signature": sig.text, "engine": result.engine,
                          "verdict": result.verdict.value, "case": case_id, "file": file,
                          "classification": classify(case, result, results),
                          "detail": result.detail[:500], "facts": result.facts.as_json()})
            if file not in saved:
                saved[file] = _finding_case(case, sig, result, results, run, lines[-1])
    return lines, saved


def _finding_case(case: Case, sig, result: Result, results: list[Result],
                  run: RunResults, line: dict) -> SavedCase:
    from harness import __version__
    from harness.findings.finding import engine_records, ran_case, restricted_record, user_answer

    engines = engine_records(results, run.engines)
    if "reference" not in engines:  # the answer every other is shown beside
        engines = {"reference": _reference_record(result), **engines}
    record = {"signature": sig.text, "key": sig.key, "engine": result.engine,
              "verdict": result.verdict.value, "classification": line["classification"],
              "detail": result.detail, "facts": result.facts.as_json(), "case": case.id,
              "harness_version": __version__,
              # A case of a .sql file: where its query is (FILE:LINE:COLUMN).
              **({"origin": case.origin} if case.origin is not None else {}),
              "engines": engines}
    record = restricted_record(case, result, record)
    case = ran_case(case, result)  # what the engine ran: replayed as it is
    if result.distinct_answers:
        record["distinct_answers"] = [user_answer(t) for t in result.distinct_answers]
    return SavedCase.of(replace(case, id=f"findings/{sig.key}", path=None), record)


def _reference_record(result: Result) -> dict:
    """The reference's answer `result` was judged against, as it travelled with it."""
    from harness import __version__
    from harness.findings.finding import user_answer

    answer = user_answer(result.reference_answer)
    return {"version": __version__, "verdict": "error" if answer is None else "match",
            "detail": "" if answer is not None else "the reference has no answer to this query",
            "sql": None, "answer": answer}


def shown_path(path: Path | None) -> str | None:
    """A case file's path relative to the working directory when it lies below it,
    so a report made here names no absolute path of this machine."""
    if path is None:
        return None
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
