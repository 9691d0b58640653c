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
from harness.results.records import CampaignRecord, GateRecord, Record, RunRecord
from harness.results.rundir import RUN
from harness.results.store import complete_findings

GATE = "gate.json"


def read_results(path: Path) -> Record:
    """The results directory `path`. Raises InvalidInput naming a path that is not one."""
    kind = results_kind(path)
    if kind == "gate":
        fuzz = path / "fuzz"
        return GateRecord(path, _json(path / GATE), read_run_dir(path / "corpus"),
                          read_campaign_dir(fuzz) if (fuzz / "campaign.json").exists() else None)
    return read_run_dir(path) if kind == "run" else read_campaign_dir(path)


def results_kind(path: Path) -> str:
    for marker, kind in ((GATE, "gate"), (RUN, "run"), ("campaign.json", "fuzz")):
        if (path / marker).is_file():
            return kind
    raise InvalidInput(f"{path} is not the output directory of run --out, fuzz or gate "
                       "(it holds no run.json, campaign.json or gate.json)", str(path))


def read_run_dir(path: Path) -> RunRecord:
    doc = _json(path / RUN)
    files = {cid: c.get("file") for cid, c in doc.get("cases", {}).items()}
    saved = {line["file"]: read_saved(path / line["file"]) for line in doc.get("findings", [])
             if line.get("file")}

    def case(case_id: str) -> Case | None:  # the corpus file run.json names, if still there
        file = files.get(case_id)
        return _case_or_none(Path(file)) if file else None
    return RunRecord(path, doc, saved, case)


def read_campaign_dir(path: Path) -> CampaignRecord:
    config = _json(path / "campaign.json")
    summary = _json(path / "summary.json") if (path / "summary.json").exists() else {}
    versions = _json(path / "versions.json") if (path / "versions.json").exists() else {}
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


def _json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise InvalidInput(f"cannot read {path}: {e}", str(path)) from None


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
    """The complete lines of a JSONL file, one at a time (a torn last line is skipped)."""
    if not path.exists():
        return
    with path.open(encoding="utf-8") as lines:
        for text in lines:
            try:
                yield json.loads(text)
            except json.JSONDecodeError:
                continue

