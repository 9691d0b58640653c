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
from harness.core.errors import HarnessError
from harness.judge.runner import Result, RunResults

RUN = "run.json"
FINDINGS_DIR = "findings"


def host_info() -> dict:
    """Where a run ran: for a reader comparing figures across machines."""
    return {"os": f"{platform.system()} {platform.release()}", "machine": platform.machine(),
            "cpus": os.cpu_count(), "python": platform.python_version()}


def write_run_dir(out: Path, run: RunResults, cases: Sequence[Case], *, started: float,
                  kind: str = "run", extra: dict | None = None) -> Path:
    """Write `run` under `out` (created; an earlier run.json there is replaced)."""
    from harness import __version__
    from harness.cases.axes import case_rows
    from harness.results.output import summary

    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out / FINDINGS_DIR, ignore_errors=True)  # an earlier run's findings
    by_id = {c.id: c for c in cases}
    findings = _save_findings(out / FINDINGS_DIR, run, by_id)
    doc = {
        "kind": kind,
        "harness_version": __version__,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started)),
        "host": host_info(),
        "engines": run.engines,
        "summary": summary(run),
        "results": [r.as_json() for r in run.results],
        "cases": {c.id: {"file": shown_path(c.path), "description": c.description,
                         "rows": case_rows(c).as_json()} for c in cases},
        "findings": findings,
        **(extra or {}),
    }
    path = out / RUN
    tmp = path.with_name(RUN + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, default=str) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def _save_findings(directory: Path, run: RunResults, cases: dict[str, Case]) -> list[dict]:
    """One line per finding occurrence; the first case of each signature saved."""
    from harness.findings.finding import FINDING_VERDICTS, finding_signature
    from harness.findings.majority import classify

    by_case: dict[str, list[Result]] = {}
    for r in run.results:
        by_case.setdefault(r.case, []).append(r)
    lines, saved = [], set()
    for case_id, results in by_case.items():
        case = cases[case_id]
        for result in (r for r in results if r.verdict in FINDING_VERDICTS):
            sig = finding_signature(case, result)
            file = f"{FINDINGS_DIR}/{sig.key}.yaml"
            lines.append({"key": sig.key, "signature": sig.text, "engine": result.engine,
                          "verdict": result.verdict.value, "case": case_id, "file": file,
                          "classification": classify(case, result, results),
                          "detail": result.detail[:500], "facts": result.facts.as_json()})
            if sig.key not in saved:
                saved.add(sig.key)
                _save_finding(directory / f"{sig.key}.yaml", case, sig, result, results, run, lines[-1])
    return lines


def _save_finding(path: Path, case: Case, sig, result: Result, results: list[Result],
                  run: RunResults, line: dict) -> None:
    from harness import __version__
    from harness.cases.casefile import save_case
    from harness.findings.finding import engine_records, user_answer

    engines = engine_records(results, run.engines)
    if "reference" not in engines:  # the answer every other is shown beside
        engines = {"reference": _reference_record(case), **engines}
    record = {"signature": sig.text, "key": sig.key, "engine": result.engine,
              "verdict": result.verdict.value, "classification": line["classification"],
              "detail": result.detail, "facts": result.facts.as_json(), "case": case.id,
              "harness_version": __version__,
              "engines": engines}
    if result.distinct_answers:
        record["distinct_answers"] = [user_answer(t) for t in result.distinct_answers]
    save_case(replace(case, id=f"findings/{sig.key}", path=None), path, record)


def _reference_record(case: Case) -> dict:
    from harness import __version__
    from harness.findings.finding import user_answer
    from reference_impl import evaluate

    try:
        answer, detail = user_answer(evaluate(case.query, case.tables).table), ""
    except HarnessError as e:  # an invalid query has no answer; say why
        answer, detail = None, str(e)
    return {"version": __version__, "verdict": "error" if answer is None else "match",
            "detail": detail, "sql": None, "answer": answer}


def shown_path(path: Path | None) -> str | None:
    """A case file's path relative to the working directory when it lies below it,
    so a report made here names no absolute path of this machine."""
    if path is None:
        return None
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def load_run_dir(directory: Path) -> dict:
    from harness.core.errors import InvalidInput

    path = directory / RUN
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise InvalidInput(f"cannot read {path}: {e}", str(directory)) from None
