"""Bisect cases over an engine's releases: run each probed release as the labelled
engine `ENGINE@VERSION` (`harness.engines.remote`; its dialect narrowed to that
release at start), judged against the reference as `replay` does, and keep
every probe's answers so the two releases around a change show both.

Each release's engine is started once and kept (the few most recently used:
`_LIVE`), since a corpus's searches come back to the same releases.
"""

from __future__ import annotations

import collections
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.bisect.search import FOUND, SAME, Search, search
from harness.cases.case import Case
from harness.core.errors import EngineUnavailable, InvalidInput
from harness.core.versions import parse_version
from harness.engines.base import Engine
from harness.engines.registry import get_engine
from harness.engines.releases import environment, package_of, release_key
from harness.findings.replay import EngineReplay, replay
from harness.judge.compare import PASSING, Verdict

_LIVE = 4  # release engines kept started at once

Say = Callable[[str], None]


def _stderr(line: str) -> None:
    print(f"window-harness: {line}", file=sys.stderr, flush=True)


# What a change is (`CaseBisect.change`).
REGRESSION = "regression"  # a passing verdict at the start, a failing one at the end
FIX = "fix"                # the other way
CHANGE = "change"          # both pass, or both fail, with different verdicts


class Releases:
    """The engine of each release, started on first use: `pythons` names the
    interpreter of a release (--engine-python), else its cached environment is
    made (`harness.engines.releases.environment`)."""

    def __init__(self, engine: str, pythons: dict[str, str] | None = None, say: Say = _stderr) -> None:
        self.engine = engine
        self.pythons = dict(pythons or {})
        self.say = say
        self._live: collections.OrderedDict[str, Engine] = collections.OrderedDict()
        self.versions: dict[str, str] = {}  # release -> the version its engine reported

    def get(self, version: str) -> Engine:
        """The started engine of `version`; EngineUnavailable when it cannot be had."""
        if version in self._live:
            self._live.move_to_end(version)
            return self._live[version]
        python = self.pythons.get(version) or str(environment(self.engine, version, self.say))
        engine = get_engine(f"{self.engine}@{version}", python=python)
        try:
            engine.start()
        except BaseException:
            engine.close()
            raise
        self._check_release(engine, version, python)
        reported = engine.version()
        self.versions[version] = reported
        if not _same_release(version, reported):
            self.say(f"note: {self.engine}@{version} ({python}) reports version {reported}")
        self._live[version] = engine
        while len(self._live) > _LIVE:
            self._live.popitem(last=False)[1].close()
        return engine

    def _check_release(self, engine: Engine, version: str, python: str) -> None:
        """Refuse an interpreter whose installed release is not `version`: its
        verdicts would be reported as `version`'s (InvalidInput, exit 2, both named)."""
        installed = engine.release()
        if installed is None or release_key(installed)[0] == release_key(version)[0]:
            return
        engine.close()
        raise InvalidInput(f"{python} runs {package_of(self.engine)} {installed}, not {version}: give "
                           f"{version}'s interpreter (or label it {installed})", "--engine-python")

    def close(self) -> None:
        while self._live:
            self._live.popitem()[1].close()


def _same_release(asked: str, reported: str) -> bool:
    """Whether an engine's reported version is the release asked for (DataFusion's
    core may be a patch ahead of its binding: 55.0.0 reports 55.2.0)."""
    a, r = parse_version(asked), parse_version(reported)
    return a is not None and r is not None and r[:len(a)] == a


@dataclass
class CaseBisect:
    """One case's search over the releases, and the answers of every probe."""

    case: Case
    engine: str
    search: Search
    probes: dict[str, EngineReplay | None]  # release -> its replay (None: could not run)
    reference: EngineReplay | None

    @property
    def change(self) -> str | None:
        s = self.search
        if s.status == SAME:
            return None
        start, end = Verdict(s.start) in PASSING, Verdict(s.end) in PASSING
        return REGRESSION if start and not end else FIX if end and not start else CHANGE

    @property
    def found(self) -> bool:
        """The search ended on one step (or had nothing to search)."""
        return self.search.status in (FOUND, SAME)


class Bisector:
    """Bisects cases over `versions` of one engine (its `Releases`)."""

    def __init__(self, releases: Releases, versions: Sequence[str], scan: bool = False) -> None:
        self.releases = releases
        self.versions = list(versions)
        self.scan = scan
        self._reference = get_engine("reference")
        self._probes: dict[tuple[str, str], tuple[EngineReplay | None, EngineReplay | None]] = {}

    def probe(self, case: Case, version: str, required: bool = False) -> EngineReplay | None:
        """`case` on `version` (memoized). A release that cannot be installed or
        started is None (skipped) unless `required` (the range's ends): raised."""
        key = (case.id, version)
        if key not in self._probes:
            try:
                engine = self.releases.get(version)
            except EngineUnavailable as e:
                if required:
                    raise
                self.releases.say(f"skipping {self.releases.engine} {version}: {e.reason}")
                self._probes[key] = (None, None)
                return None
            reference, shown = replay(case, [self._reference, engine]).engines
            self._probes[key] = (shown, reference)
        return self._probes[key][0]

    def _same_ends(self, case: Case) -> bool:
        start, end = (self._probes[(case.id, v)][0] for v in (self.versions[0], self.versions[-1]))
        return start is not None and end is not None and start.result.verdict == end.result.verdict

    def bisect(self, case: Case) -> CaseBisect:
        ends = {self.versions[0], self.versions[-1]}

        def verdict(version: str) -> str | None:
            shown = self.probe(case, version, required=version in ends)
            return None if shown is None else shown.result.verdict.value

        found = search(self.versions, verdict, scan=self.scan)
        probes = {v: self._probes[(case.id, v)][0] for v in self.versions if v in found.verdicts}
        reference = self._probes[(case.id, self.versions[0])][1]
        return CaseBisect(case, self.releases.engine, found, probes, reference)

    def bisect_all(self, cases: Sequence[Case], progress: Callable[[int, int, str], None] | None = None
                   ) -> list[CaseBisect]:
        """Each case bisected; every case runs on the range's start first, then on its
        end, so only two releases are started before the searches begin."""
        ends = (self.versions[0], self.versions[-1])
        # Under --scan every release runs every case whose ends agree: release by
        # release, so each release's engine starts once.
        for version in (*ends, *(self.versions[1:-1] if self.scan else ())):
            todo = [c for c in cases if version in ends or self._same_ends(c)]
            self.releases.say(f"{self.releases.engine} {version}: running {len(todo)} case(s)")
            for case in todo:
                self.probe(case, version, required=version in ends)
        out = []
        for i, case in enumerate(cases):
            if progress:
                progress(i, len(cases), case.id)
            out.append(self.bisect(case))
        return out
