"""What a report shows, read from results directories: plain values, no HTML."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from harness.cases.case import Case
from harness.judge.facts import Facts

# Verdicts folded into the four counts a matrix cell shows (the rest keep their
# own name in the summary and the plots).
CELL_BUCKETS = {
    "match": "match", "mismatch": "mismatch", "type-mismatch": "mismatch",
    "suspect-reference": "mismatch", "nondeterministic": "mismatch",
    "unsupported": "unsupported", "error": "error", "crash": "error", "timeout": "error",
    "inconclusive": "inconclusive",
    # Error conformance: a refusal the definition requires conforms; an answer to
    # an invalid query, or a refusal of a valid one, does not.
    "rejected-as-expected": "rejected", "wrongly-accepted": "accepted",
    "wrongly-rejected": "refused",
}


@dataclass
class Source:
    """One results directory: a run, a fuzz campaign, or a gate (corpus + fuzz)."""

    kind: str  # run | fuzz | gate
    path: str
    engines: dict[str, str]  # name -> version ("?" when it was not recorded)
    cases: int
    verdicts: dict[str, Counter]  # engine -> verdict -> count
    wall_seconds: float | None = None
    seed: int | None = None
    harness_version: str = "?"
    host: dict = field(default_factory=dict)
    started: str = ""
    passed: bool | None = None  # a gate's decision
    throughput: list[tuple[float, float]] = field(default_factory=list)  # (s since start, cases/s)
    # "shapes/min" and "cells/min": new query shapes and grid cells covered, in the same bins.
    diversity: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # Per engine, its verdicts on a query restricted to the items it writes
    # (harness.judge.restrict); and the first few of them: (case, engine,
    # verdict, what was left out, the SQL the engine ran).
    restricted: Counter = field(default_factory=Counter)
    restricted_examples: list[tuple[str, str, str, str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class BaselineStatus:
    """What the known-differences baseline says of a finding."""

    entry: str | None  # the entry id; None: unexplained
    kind: str = ""  # unsupported | by-design | upstream-bug
    link: str = ""
    reason: str = ""

    @property
    def explained(self) -> bool:
        return self.entry is not None


@dataclass
class Finding:
    """One signature: every occurrence of one difference, and its smallest case."""

    key: str
    signature: str
    engine: str
    verdict: str
    classification: str
    source: str  # the results directory it came from
    detail: str = ""
    facts: Facts = Facts()  # what the first occurrence is about (harness.judge.facts)
    count: int = 0
    cases: list[str] = field(default_factory=list)  # occurrence ids (corpus ids or fuzz seeds)
    file: Path | None = None  # the case file shown (with the answers): the reduction if any
    original: Path | None = None  # the first case of the signature, as saved with the results
    replay: Path | None = None  # the case file to replay: the corpus file, or `file`
    rows: frozenset[str] = frozenset()  # matrix rows it is pinned on
    baseline: BaselineStatus | None = None  # None: not judged (no baseline was read)
    doc: dict = field(default_factory=dict)  # `file`'s case document ({}: not found beside the results)
    case: Case | None = None  # `file` as a case (the explanations of its differing cells are derived on it)

    @property
    def anchor(self) -> str:
        from harness.report.markup import slug

        return "f-" + slug(f"{self.source}/{self.key}")


@dataclass
class Outcome:
    """Verdicts of one engine that count in the same matrix rows (`count` of them:
    a long campaign has a few thousand kinds of outcome, not a verdict object per case)."""

    engine: str
    verdict: str
    rows: frozenset[str]
    finding: Finding | None = None  # the signature these verdicts are occurrences of
    count: int = 0


@dataclass
class ReportData:
    sources: list[Source] = field(default_factory=list)
    kinds: dict[tuple, Outcome] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    # matrix row -> cases that exercised it (the "features exercised" plot)
    exercised: Counter = field(default_factory=Counter)
    # Each case's source answer judged (run.json's `sources` lines, with `run` added).
    source_answers: list[dict] = field(default_factory=list)

    @property
    def outcomes(self) -> list[Outcome]:
        return list(self.kinds.values())

    def add_outcome(self, engine: str, verdict: str, rows: frozenset[str],
                    finding: Finding | None = None) -> None:
        key = (engine, verdict, rows, id(finding))
        outcome = self.kinds.get(key)
        if outcome is None:
            outcome = self.kinds[key] = Outcome(engine, verdict, rows, finding)
        outcome.count += 1

    @property
    def engines(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for source in self.sources:
            for name, version in source.engines.items():
                if out.get(name, "?") == "?":
                    out[name] = version
        return out
