"""The one reader of results directories (`run --out`, `fuzz --out`, `gate --out`):
each read into the record the process that made it would have handed over
(`harness.results.records`), for `window-harness report` and for a campaign's
`fuzz --report`, which reports what is on disk (a resumed campaign's earlier
part is nowhere else).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path

from harness.cases.case import Case, case_from_doc
from harness.cases.casefile import SavedCase
from harness.cases.yamldoc import read_yaml
from harness.core.errors import InvalidInput
from harness.results.jsonfile import check_each, checked, read_object
from harness.results.records import CampaignRecord, GateRecord, Record, RunRecord
from harness.results.rundir import RUN
from harness.results.store import complete_findings, read_versions

GATE = "gate.json"

# The shapes of the fields the readers and the report use (`results.jsonfile`).
_NUMBER = (int, float, type(None))
_RUN = {"cases": dict, "findings": list, "results": list, "summary": dict, "engines": dict,
        "sources": list, "host": dict, "harness_version": str, "started": str, "baseline": (str, type(None))}
_RUN_CASE = {"file": (str, type(None))}
_RESULT = {"case": str, "engine": str, "verdict": str, "facts": (dict, type(None)), "notes": (list, type(None)),
           "sql": (str, type(None))}
_FINDING = {"key": str, "signature": str, "engine": str, "verdict": str, "file": (str, type(None)),
            "detail": (str, type(None)), "classification": (str, type(None)), "facts": (dict, type(None)),
            "event": (str, type(None))}
_SUMMARY = {"cases": int, "per_engine": dict, "wall_seconds": _NUMBER}
_CAMPAIGN = {"engines": list, "seed": (int, str, type(None)), "host": dict, "harness_version": str,
             "started": str}
_GATE = {"engines": dict, "passed": bool, "seed": (int, type(None)), "baseline": (str, type(None))}


def read_results(path: Path) -> Record:
    """The results directory `path`. Raises InvalidInput naming a path that is not one."""
    kind = results_kind(path)
    if kind == "gate":
        fuzz = path / "fuzz"
        return GateRecord(path, read_object(path / GATE, _GATE), read_run_dir(path / "corpus"),
                          read_campaign_dir(fuzz) if (fuzz / "campaign.json").exists() else None)
    return read_run_dir(path) if kind == "run" else read_campaign_dir(path)


def results_kind(path: Path) -> str:
    for marker, kind in ((GATE, "gate"), (RUN, "run"), ("campaign.json", "fuzz")):
        if (path / marker).is_file():
            return kind
    raise InvalidInput(f"{path} is not the output directory of run --out, fuzz or gate "
                       "(it holds no run.json, campaign.json or gate.json)", str(path))


def read_run_dir(path: Path) -> RunRecord:
    doc = read_run_json(path / RUN)
    files = {cid: c.get("file") for cid, c in doc.get("cases", {}).items()}
    saved = {line["file"]: read_saved(path / line["file"]) for line in doc.get("findings", [])
             if line.get("file")}

    def case(case_id: str) -> Case | None:  # the corpus file run.json names, if still there
        file = files.get(case_id)
        return _case_or_none(Path(file)) if file else None
    return RunRecord(path, doc, saved, case)


def read_run_json(path: Path) -> dict:
    """run.json, each field the report reads of its shape (InvalidInput naming the file)."""
    doc = read_object(path, _RUN)
    check_each(doc.get("cases", {}), f"{path}: cases", _RUN_CASE)
    check_each(doc.get("results", []), f"{path}: results", _RESULT, ("case", "engine", "verdict"))
    check_each(doc.get("findings", []), f"{path}: findings", _FINDING, ("key", "signature", "engine",
                                                                        "verdict", "case"))
    _check_counts(doc.get("summary", {}), f"{path}: summary")
    return doc


def _check_counts(summary: dict, where: str) -> None:
    checked(summary, where, _SUMMARY)
    check_each(summary.get("per_engine", {}), f"{where}: per_engine", {})
    for engine, counts in summary.get("per_engine", {}).items():
        check_each({k: {"n": v} for k, v in counts.items()}, f"{where}: per_engine[{engine!r}]", {"n": int})


def read_campaign_dir(path: Path) -> CampaignRecord:
    config = read_object(path / "campaign.json", _CAMPAIGN)
    summary = read_object(path / "summary.json", _SUMMARY) if (path / "summary.json").exists() else {}
    versions = read_versions(path / "versions.json")
    # As --resume would keep them: a case cut short by a kill is not in yet.
    done = {line["index"] for line in _stream(path / "cases.jsonl") if "index" in line}
    occurrences = complete_findings(_stream(path / "findings.jsonl"), done)
    files = {line["file"] for line in occurrences if line.get("file")}
    saved = {file: read_saved(path / file) for file in sorted(files)}
    return CampaignRecord(path, config, summary, versions, lambda: _stream(path / "cases.jsonl"),
                          occurrences, saved)


def read_saved(path: Path) -> SavedCase:
    """A case file under a results directory ({} and no case when it is missing or
    unreadable), read and parsed once."""
    doc = _case_doc(path)
    try:
        case = case_from_doc(doc, path) if doc else None
    except InvalidInput:  # a file this harness cannot read as a case: shown as it is
        case = None
    return SavedCase(doc, case)




def _case_doc(path: Path | None) -> dict:
    if path is None or not path.exists():
        return {}
    try:  # the case reader: a finding file can hold thousands of rows, or be damaged
        doc = read_yaml(path)
    except InvalidInput:
        return {}
    return doc if isinstance(doc, dict) else {}


@functools.lru_cache(maxsize=256)  # a finding's case is read for its status and its rows
def _case_or_none(file: Path | None):
    from harness.cases.case import load_case

    if file is None or not file.exists():
        return None
    try:
        return load_case(file)
    except (OSError, InvalidInput):
        return None


def _stream(path: Path) -> Iterator[dict]:
    """The complete lines of a JSONL file, one at a time (a torn last line is skipped;
    a line that is JSON but no object is InvalidInput naming the file and line)."""
    if not path.exists():
        return
    with path.open(encoding="utf-8", errors="replace") as lines:
        for number, text in enumerate(lines, 1):
            try:
                line = json.loads(text)
            except (ValueError, RecursionError):  # torn, or beyond what Python reads
                continue
            yield checked(line, f"{path}:{number}", _FINDING if path.name == "findings.jsonl" else {})

