"""The baseline put to work for one run: explains each observed verdict, and
remembers which entries it used (the gate reports the unused ones as stale).

Used by the gate and by the report alike, so it lives with the baseline.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from harness.baseline.known import Baseline, Entry, Observation, engine_parts
from harness.cases.case import Case
from harness.judge.facts import NO_FACTS, Facts


@dataclass
class Explainer:
    """The baseline and the dialect-derived entries, for the engines of one run."""

    baseline: Baseline
    derived: list[Entry]
    versions: Mapping[str, str]  # engine -> version
    used: set[str] = field(default_factory=set)

    def explain(self, obs: Observation) -> Entry | None:
        entry = self.baseline.explain(obs, self.derived)
        if entry is not None:
            self.used.add(entry.id)
        return entry

    def observe(self, case_id: str, engine: str, verdict: str, detail: str,
                case: Case | None, extra: frozenset[str] = frozenset(), facts: Facts = NO_FACTS) -> Observation:
        return Observation(case_id, engine, verdict, detail, self.version(engine), case, extra, facts)

    def version(self, engine: str) -> str:
        """The version of `engine` as it ran; under profiles (`datafusion[partitions=4]`,
        `duckdb[threads=4]@old`, drawn by the fuzz) the same build's: that of the
        engine without them."""
        if engine in self.versions:
            return self.versions[engine]
        base, profiles, label = engine_parts(engine)
        if not profiles:
            return ""
        return self.versions.get(base + (f"@{label}" if label else ""), "")
