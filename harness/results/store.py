"""A campaign's output directory: append-only, so a crash loses at most one case.

    OUT/campaign.json      the configuration (seed, engines, versions), written once
    OUT/cases.jsonl        one line per case done: index, seed, picks, verdicts, cells
    OUT/findings.jsonl     one line per finding occurrence, and one per reduction
    OUT/findings/KEY.yaml          the first case of each signature (a case file)
    OUT/findings/KEY.reduced.yaml  its reduction, ready for cases/regressions/
    OUT/versions.json      each engine's version, as its first shard started it
    OUT/summary.json       written at the end

Every line is flushed as soon as it is written; `--resume` reads the lines
back and continues where the campaign stopped. A case's line is written
after its findings and their reductions, so a case is done once its line is
there: the lines of a case a kill cut short (a finding, a reduction under
way) are dropped on `--resume` and the case is run again, whole.

One command at a time writes the directory (`harness.results.lock`). A
directory whose campaign never recorded a case (it failed to start: an
engine that would not start, a full disk) is started afresh by the next
command, with or without `--resume`.
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from harness.cases.casefile import SavedCase
from harness.core.errors import CannotWrite, InvalidInput
from harness.results.jsonfile import check_each, checked, read_object
from harness.results.lock import DirectoryLock, lock_directory, refuse_foreign, remove
from harness.results.records import CampaignRecord

CAMPAIGN = "campaign.json"
CASES = "cases.jsonl"
FINDINGS = "findings.jsonl"
SUMMARY = "summary.json"
VERSIONS = "versions.json"
FINDINGS_DIR = "findings"
# Everything a campaign writes in its directory (the Spark job adds its Parquet
# files): what starting afresh removes, and nothing else.
CAMPAIGN_FILES = (CAMPAIGN, CASES, FINDINGS, SUMMARY, VERSIONS, FINDINGS_DIR, "verdicts.parquet",
                  "findings.parquet", *(f"{name}.tmp" for name in (CAMPAIGN, FINDINGS, SUMMARY, VERSIONS)))
# What must match for --resume to continue a campaign rather than start another:
# the seed, the engines, and the stride of case indices per shape (`slot`),
# which a campaign recorded before it was written had at 20.
RESUME_FIELDS = ("seed", "engines", "slot")
RESUME_DEFAULTS = {"slot": 20}


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
    # The bare query's verdicts (`harness.judge.bare`), per engine, and the cases it ran on.
    bare: dict[str, Counter] = field(default_factory=dict)
    bare_cases: int = 0
    # Per engine, its verdicts on a query restricted to the items it writes.
    restricted: Counter = field(default_factory=Counter)
    # The steering picks of each group's shape, so a group cut short by a kill
    # resumes with the same query.
    shape_picks: dict[str, list[int]] = field(default_factory=dict)
    # What each group's shape gave the steering (its grid cells and data shapes),
    # by the shape's index: a resumed shard steers from what its own earlier
    # groups gave, as it did before the kill, so it draws the same queries.
    shape_cells: dict[int, tuple[list[str], list[str]]] = field(default_factory=dict)
    # Each group's sibling count, by its shape's seed (`harness.campaign.siblings`):
    # a resumed campaign runs its groups with the counts they had.
    shape_siblings: dict[str, int] = field(default_factory=dict)
    # The distinct query shapes run (by their seed) and grid cells covered, over
    # the whole campaign and by this command alone (`this_run`: not read back).
    shape_seeds: set[str] = field(default_factory=set)
    run_shapes: set[str] = field(default_factory=set)
    run_cells: set[str] = field(default_factory=set)
    run_cases: int = 0

    def add_case(self, line: dict, this_run: bool = True) -> None:
        self.done.add(line["index"])
        shape = line.get("shape", line.get("seed"))
        if shape is not None:
            self.shape_seeds.add(shape)
        if this_run:
            self.run_cases += 1
            if shape is not None:
                self.run_shapes.add(shape)
            self.run_cells.update(line.get("cells", []))
        if "shape" in line and "siblings" in line:
            self.shape_siblings.setdefault(line["shape"], line["siblings"])
        if "shape" in line and "picks" in line:
            self.shape_picks.setdefault(line["shape"], line["picks"])
            if line["shape"] == line["seed"] and "cells" in line:
                self.shape_cells[line["index"]] = (line["cells"], line.get("shapes", []))
        for engine, verdict in line["verdicts"].items():
            self.verdicts.setdefault(engine, Counter())[verdict] += 1
        for engine, seconds in line.get("seconds", {}).items():
            self.engine_seconds[engine] += seconds
        for engine, facts in line.get("facts", {}).items():
            if facts.get("left_out"):
                self.restricted[engine] += 1
        self.cells.update(line.get("cells", []))
        self.shapes.update(line.get("shapes", []))
        for relation, status in line.get("metamorphic", {}).items():
            self.metamorphic[f"{relation}:{status}"] += 1
        if "bare" in line:
            self.bare_cases += 1
            for engine, verdict in line["bare"].items():
                self.bare.setdefault(engine, Counter())[verdict] += 1

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
    """The campaign directory `out`, locked for this command until `close`.

    `keep`: also hold every line written, so the process that runs the campaign
    hands it over in memory (`record`) instead of reading the files back."""

    def __init__(self, out: Path, config: dict, resume: bool, keep: bool = False) -> None:
        self.out = out
        self.config = json.loads(json.dumps(config))  # as campaign.json holds it
        self.progress = Progress()
        self.versions: dict[str, str] = {}
        self.kept: tuple[list[dict], list[dict]] | None = ([], []) if keep else None  # cases, findings
        # Before a lock file is made in a directory that is not a campaign's.
        refuse_foreign(out, CAMPAIGN, f"a campaign (no {CAMPAIGN})")
        self.lock: DirectoryLock = lock_directory(out, "fuzz")
        try:
            self._open(resume)
            (out / FINDINGS_DIR).mkdir(exist_ok=True)
            self._cases = _open_for_append(out / CASES)
            self._findings = _open_for_append(out / FINDINGS)
        except OSError as e:
            self.lock.release()
            raise CannotWrite.from_os(e, e.filename or out) from None
        except BaseException:
            self.lock.release()
            raise

    def _open(self, resume: bool) -> None:
        """Continue the campaign in the directory, or start one (afresh when the
        one there never recorded a case)."""
        out, config = self.out, self.config
        cases = _lines(out / CASES)
        if (out / CAMPAIGN).exists() and cases:
            if not resume:
                raise InvalidInput(f"{out} already holds a campaign; pass --resume to continue it "
                                   "or choose another --out", "--out")
            recorded = _config(out / CAMPAIGN)
            if recorded is None:  # torn by a full disk or a kill: this command's, if its seed fits
                self._check_seed(cases, config.get("seed"))
                _write_atomic(out / CAMPAIGN, json.dumps(config, indent=2) + "\n")
            else:
                self._check_same(recorded, config)
                self.config = recorded
            self._load(cases)
            return
        remove([out / name for name in CAMPAIGN_FILES])  # nothing done there: start afresh
        _write_atomic(out / CAMPAIGN, json.dumps(config, indent=2) + "\n")

    @property
    def findings_dir(self) -> Path:
        return self.out / FINDINGS_DIR

    def _check_same(self, recorded: dict, config: dict) -> None:
        for name in RESUME_FIELDS:
            was = recorded.get(name, RESUME_DEFAULTS.get(name))
            if name in config and was != config[name]:
                hint = (" (an earlier version of window-harness gave each query shape another range of "
                        "case indices; resume it with that version, or start a new campaign)"
                        if name == "slot" else "")
                raise InvalidInput(
                    f"cannot resume: the campaign in {self.out} has {name}={was!r}, "
                    f"this run asks for {config[name]!r}{hint}", f"--{name}")

    def _check_seed(self, cases: list[dict], seed: object) -> None:
        recorded = {str(line.get("seed", "")).rpartition("/")[0] for line in cases}
        if recorded != {str(seed)}:
            raise InvalidInput(f"cannot resume: the campaign in {self.out} ran with seed "
                               f"{', '.join(sorted(recorded))}, this run asks for {seed!r}", "--seed")

    def _load(self, cases: list[dict]) -> None:
        """An earlier run of this campaign (--resume): the one place its lines are read.
        The lines of a case cut short (no case line) are dropped from the file too."""
        for line in cases:
            self.progress.add_case(line, this_run=False)
        written = _lines(self.out / FINDINGS)
        findings = complete_findings(written, self.progress.done)
        if len(findings) != len(written):
            _write_atomic(self.out / FINDINGS, "".join(json.dumps(line) + "\n" for line in findings))
        for line in findings:
            if line.get("event") == "reduced":
                self.progress.add_reduction(line)
            else:
                self.progress.add_finding(line)
        if self.kept is not None:
            self.kept[0].extend(cases)
            self.kept[1].extend(findings)
        self.versions = read_versions(self.out / VERSIONS)

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
        try:
            _append(stream, line)
        except OSError as e:
            raise CannotWrite.from_os(e, stream.name) from None
        if self.kept is not None:  # as a reader of the file would see it
            self.kept[kept].append(json.loads(json.dumps(line, default=str)))

    def record_versions(self, versions: dict[str, str]) -> None:
        if any(name not in self.versions for name in versions):
            self.versions = {**versions, **self.versions}
            _write_atomic(self.out / VERSIONS, json.dumps(self.versions, indent=2) + "\n")

    def write_summary(self, summary: dict) -> Path:
        path = self.out / SUMMARY
        _write_atomic(path, json.dumps(summary, indent=2, default=str) + "\n")
        return path

    def record(self, summary: dict, saved: Mapping[str, SavedCase]) -> CampaignRecord | None:
        """The campaign in memory, as the reader would read its directory (None unless kept)."""
        if self.kept is None:
            return None
        cases, findings = self.kept
        return CampaignRecord(self.out, self.config, json.loads(json.dumps(summary, default=str)),
                              dict(self.versions), lambda: iter(cases), findings, saved)

    def close(self) -> None:
        """Close the files and release the directory. A line a full disk refused
        is not flushed again: it was reported when it failed."""
        for stream in (self._cases, self._findings):
            with contextlib.suppress(OSError):
                stream.close()
        self.lock.release()


def recorded_seed(out: Path) -> int | None:
    """The seed of the campaign in `out`: campaign.json's, or, when that was torn,
    the one its cases ran with (None when neither says)."""
    config = _config(out / CAMPAIGN)
    if config is not None and isinstance(config.get("seed"), int):
        return config["seed"]
    for line in _lines(out / CASES):
        seed = str(line.get("seed", "")).rpartition("/")[0]
        return int(seed) if seed.lstrip("-").isdigit() else None
    return None


def recorded_jobs(out: Path) -> int | None:
    """The shard count the campaign in `out` ran with (None when campaign.json does
    not say): a resume keeps it, so every case is the one an uninterrupted run draws."""
    config = _config(out / CAMPAIGN)
    jobs = config.get("jobs") if config is not None else None
    return jobs if isinstance(jobs, int) and jobs >= 1 else None


def complete_findings(findings: Iterable[dict], done: set[int]) -> list[dict]:
    """The findings.jsonl lines of the cases that are done (the first occurrence of
    each signature marked new): a case's line is written after its findings and
    their reductions, so the lines of a case without one belong to a case cut short."""
    out: list[dict] = []
    seen: set[str] = set()
    for line in findings:
        key = line.get("key")
        if line.get("event") == "reduced":
            if key in seen:
                out.append(line)
        elif line.get("case") in done:
            out.append({**line, "new": key not in seen} if "new" in line else line)
            seen.add(key)
    return out


def read_versions(path: Path) -> dict[str, str]:
    """versions.json ({} when absent): engine names and version strings, else
    InvalidInput naming the file (it was emptied or crafted)."""
    if not path.exists():
        return {}
    versions = read_object(path)
    check_each({k: {"version": v} for k, v in versions.items()}, str(path), {"version": str}, ("version",))
    return versions


def _config(path: Path) -> dict | None:
    """campaign.json, or None when it is missing, empty or torn."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return doc if isinstance(doc, dict) and "seed" in doc else None


def _write_atomic(path: Path, text: str) -> None:
    """`path` holds the old text or the new, never a part (a full disk, a kill)."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise CannotWrite.from_os(e, path) from None


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
    for number, text in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        try:
            line = json.loads(text)
        except (ValueError, RecursionError):  # torn (JSONDecodeError), or beyond what Python reads
            continue
        out.append(checked(line, f"{path}:{number}", {}))
    return out
