"""Results in memory: what a results directory holds, whether the process that
made the results hands them over (`run --report`, the gate) or the reader
(`harness.results.read`) reads them from disk (`window-harness report`). The
report is built from these alone, so both roads give the same report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.baseline.known import Baseline
from harness.cases.case import Case
from harness.cases.casefile import SavedCase


@dataclass
class RunRecord:
    """A run directory (`run --out`, a gate's corpus/): run.json's document, the
    case files under findings/ (by their path in the directory), and the cases run."""

    path: Path
    doc: dict
    saved: Mapping[str, SavedCase]
    # A case of the run by id, or None: in memory, the cases themselves; read from
    # disk, the corpus file run.json names when it is still there.
    case: Callable[[str], Case | None]


@dataclass
class CampaignRecord:
    """A campaign directory (`fuzz --out`, a gate's fuzz/)."""

    path: Path
    config: dict  # campaign.json
    summary: dict  # summary.json ({} while it runs)
    versions: dict[str, str]  # versions.json
    # cases.jsonl's lines, as often as asked: a long campaign's are streamed from
    # disk rather than held.
    case_lines: Callable[[], Iterator[dict]]
    occurrences: list[dict]  # findings.jsonl's lines
    saved: Mapping[str, SavedCase]


@dataclass
class GateRecord:
    """A gate's directory: gate.json's document, its corpus run and its campaign."""

    path: Path
    doc: dict
    corpus: RunRecord
    fuzz: CampaignRecord | None
    # The baseline the gate judged with, when it is at hand; else the report reads
    # the one gate.json names.
    baseline: Baseline | None = None


Record = RunRecord | CampaignRecord | GateRecord

