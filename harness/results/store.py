"""A campaign's output directory: append-only, so a crash loses at most one case.

    OUT/campaign.json      the configuration (seed, engines, versions), written once
    OUT/cases.jsonl        one line per case done: index, seed, picks, verdicts, cells
    OUT/findings.jsonl     one line per finding occurrence, and one per reduction
    OUT/findings/KEY.yaml          the first case of each signature (a case file)
    OUT/findings/KEY.reduced.yaml  its reduction, ready for cases/regressions/
    OUT/versions.json      each engine's version, as its first shard started it
    OUT/summary.json       written at the end

Every line is flushed as soon as it is written; `--resume` reads the lines
back and continues where the campaign stopped.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from harness.cases.casefile import SavedCase
from harness.core.errors import InvalidInput
from harness.results.records import CampaignRecord

CAMPAIGN = "campaign.json"
CASES = "cases.jsonl"
FINDINGS = "findings.jsonl"
SUMMARY = "summary.json"
VERSIONS = "versions.json"
FINDINGS_DIR = "findings"
# What must match for --resume to continue a campaign rather than start another.
RESUME_FIELDS = ("seed", "engines")


@dataclass
class FindingTally:
    """One signature across the campaign."""

    key: str
    signature: str
    engine: str
    verdict: str
    classification: str
    first_case: int
    file: str
    count: int = 0
    reduced_file: str | None = None
    reduced_rows: int | None = None
    detail: str = ""
    facts: dict = field(default_factory=dict)  # the first occurrence's (harness.judge.facts)

    def as_json(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Progress:
    """What has been recorded so far (rebuilt from the files on --resume)."""

    done: set[int] = field(default_factory=set)
    verdicts: dict[str, Counter] = field(default_factory=dict)
    findings: dict[str, FindingTally] = field(default_factory=dict)
    cells: Counter = field(default_factory=Counter)  # grid cell -> cases that covered it
    shapes: Counter = field(default_factory=Counter)
    engine_seconds: Counter = field(default_factory=Counter)
    metamorphic: Counter = field(default_factory=Counter)
    # The steering picks of each group's shape, so a group cut short by a kill
    # resumes with the same query.
    shape_picks: dict[str, list[int]] = field(default_factory=dict)

    def add_case(self, line: dict) -> None:
        self.done.add(line["index"])
        if "shape" in line and "picks" in line:
            self.shape_picks.setdefault(line["shape"], line["picks"])
        for engine, verdict in line["verdicts"].items():
            self.verdicts.setdefault(engine, Counter())[verdict] += 1
        for engine, seconds in line.get("seconds", {}).items():
            self.engine_seconds[engine] += seconds
        self.cells.update(line.get("cells", []))
        self.shapes.update(line.get("shapes", []))
        for relation, status in line.get("metamorphic", {}).items():
            self.metamorphic[f"{relation}:{status}"] += 1

    def add_finding(self, line: dict) -> bool:
        """Count an occurrence; True when its signature is new."""
        tally = self.findings.get(line["key"])
        new = tally is None
        if tally is None:
            tally = FindingTally(line["key"], line["signature"], line["engine"], line["verdict"],
                                 line["classification"], line["case"], line["file"],
                                 detail=line.get("detail", ""), facts=line.get("facts") or {})
            self.findings[line["key"]] = tally
        tally.count += 1
        return new

    def add_reduction(self, line: dict) -> None:
        tally = self.findings.get(line["key"])
        if tally is not None:
            tally.reduced_file, tally.reduced_rows = line["file"], line.get("rows")


class CampaignStore:
    """`keep`: also hold every line written, so the process that runs the campaign
    hands it over in memory (`record`) instead of reading the files back."""

    def __init__(self, out: Path, config: dict, resume: bool, keep: bool = False) -> None:
        self.out = out
        self.config = json.loads(json.dumps(config))  # as campaign.json holds it
        self.progress = Progress()
        self.versions: dict[str, str] = {}
        self.kept: tuple[list[dict], list[dict]] | None = ([], []) if keep else None  # cases, findings
        meta = out / CAMPAIGN
        if meta.exists():
            if not resume:
                raise InvalidInput(f"{out} already holds a campaign; pass --resume to continue it "
                                   "or choose another --out", "--out")
            self.config = json.loads(meta.read_text())
            self._check_same(self.config, config)
            self._load()
        else:
            out.mkdir(parents=True, exist_ok=True)
            meta.write_text(json.dumps(config, indent=2) + "\n")
        (out / FINDINGS_DIR).mkdir(exist_ok=True)
        self._cases = _open_for_append(out / CASES)
        self._findings = _open_for_append(out / FINDINGS)

    @property
    def findings_dir(self) -> Path:
        return self.out / FINDINGS_DIR

    def _check_same(self, recorded: dict, config: dict) -> None:
        for name in RESUME_FIELDS:
            if recorded.get(name) != config.get(name):
                raise InvalidInput(
                    f"cannot resume: the campaign in {self.out} has {name}={recorded.get(name)!r}, "
                    f"this run asks for {config.get(name)!r}", f"--{name}")

    def _load(self) -> None:
        """An earlier run of this campaign (--resume): the one place its lines are read."""
        cases, findings = _lines(self.out / CASES), _lines(self.out / FINDINGS)
        for line in cases:
            self.progress.add_case(line)
        for line in findings:
            if line.get("event") == "reduced":
                self.progress.add_reduction(line)
            else:
                self.progress.add_finding(line)
        if self.kept is not None:
            self.kept[0].extend(cases)
            self.kept[1].extend(findings)
        path = self.out / VERSIONS
        self.versions = json.loads(path.read_text()) if path.exists() else {}

    def record_case(self, line: dict) -> None:
        self.progress.add_case(line)
        self._write(self._cases, 0, line)

    def record_finding(self, line: dict) -> bool:
        new = self.progress.add_finding(line)
        self._write(self._findings, 1, {**line, "new": new})
        return new

    def record_reduction(self, line: dict) -> None:
        self.progress.add_reduction(line)
        self._write(self._findings, 1, {"event": "reduced", **line})

    def _write(self, stream: IO[str], kept: int, line: dict) -> None:
        _append(stream, line)
        if self.kept is not None:  # as a reader of the file would see it
            self.kept[kept].append(json.loads(json.dumps(line, default=str)))

    def record_versions(self, versions: dict[str, str]) -> None:
        if any(name not in self.versions for name in versions):
            self.versions = {**versions, **self.versions}
            (self.out / VERSIONS).write_text(json.dumps(self.versions, indent=2) + "\n")

    def write_summary(self, summary: dict) -> Path:
        path = self.out / SUMMARY
        path.write_text(json.dumps(summary, indent=2, default=str) + "\n")
        return path

    def record(self, summary: dict, saved: Mapping[str, SavedCase]) -> CampaignRecord | None:
        """The campaign in memory, as the reader would read its directory (None unless kept)."""
        if self.kept is None:
            return None
        cases, findings = self.kept
        return CampaignRecord(self.out, self.config, json.loads(json.dumps(summary, default=str)),
                              dict(self.versions), lambda: iter(cases), findings, saved)

    def close(self) -> None:
        self._cases.close()
        self._findings.close()


def _open_for_append(path: Path) -> IO[str]:
    # A line torn by a kill must not swallow the next one: end it first.
    torn = path.exists() and path.stat().st_size > 0 and not path.read_bytes().endswith(b"\n")
    stream = path.open("a", encoding="utf-8")
    if torn:
        stream.write("\n")
    return stream


def _append(stream: IO[str], line: dict) -> None:
    stream.write(json.dumps(line, default=str) + "\n")
    stream.flush()


def _lines(path: Path) -> list[dict]:
    """The complete lines of a JSONL file; a torn last line (a kill mid-write) is dropped."""
    if not path.exists():
        return []
    out = []
    for text in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(text))
        except json.JSONDecodeError:
            continue
    return out
