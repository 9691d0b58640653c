"""The fuzz loop: generate a case, run it everywhere, judge it, keep what is new.

One campaign is a seed and a list of engines. Case i has the seed
"{campaign seed}/{i}"; its schema, data and query come from sub-streams of
it (`harness.generate`), so any case reproduces from its seed and the
generator's steering choices (`picks`, stored per case). Each case:

1. is generated (steered towards the least-covered grid cells);
2. runs on the reference and on every engine (each engine in its own worker
   process: a crash or a hang is that case's verdict, and the engine restarts);
3. is judged against the reference under each engine's semantics profile;
4. sometimes also gets a metamorphic check on each engine (no reference);
5. is recorded (one line, flushed); each finding is signed, classified by the
   majority view, and the first case of a new signature is saved as a case
   file and reduced.

With `jobs` > 1 the indices are dealt round-robin to shard processes, each
with its own engines; the parent alone writes the campaign's files.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from random import Random

from harness.campaign.findings import FindingMaker, findings_of
from harness.campaign.steer import CoverageSteer, case_cells, data_shapes
from harness.campaign.store import CampaignStore, Progress
from harness.engines.base import Engine
from harness.runner import run_case


@dataclass(frozen=True)
class CampaignConfig:
    seed: int
    engines: tuple[str, ...]
    out: Path
    cases: int | None = None  # stop after this many cases ...
    minutes: float | None = None  # ... or after this long (whichever comes first)
    jobs: int = 1
    resume: bool = False
    reduce: bool = True
    reduce_seconds: float = 60.0
    timeout_seconds: float = 30.0
    isolate: bool = True  # engines in worker processes (crash and hang isolation)
    steer: bool = True
    metamorphic_share: float = 0.1  # cases that also get a metamorphic check per engine
    data: str = "default"  # the data preset: "default" or "tie-heavy" (small domains, many ties)
    # Stop once a new finding of this classification shows (e.g. "engine-vs-all-others").
    stop_when: str | None = None
    engine_options: dict = field(default_factory=dict)

    def as_json(self) -> dict:
        doc = asdict(self)
        doc["out"] = str(self.out)
        doc["engines"] = list(self.engines)
        return doc


def case_seed(campaign_seed: int, index: int) -> str:
    return f"{campaign_seed}/{index}"


# -- one shard ---------------------------------------------------------------------


Emit = Callable[[dict], None]


class Shard:
    """Cases job, job + jobs, job + 2*jobs, ... with this shard's own engines."""

    def __init__(self, config: CampaignConfig, job: int, progress: Progress, findings_dir: Path):
        self.config = config
        self.job = job
        self.done = set(progress.done)
        self.steer = CoverageSteer() if config.steer else None
        if self.steer is not None:
            self.steer.record(progress.cells.elements())
        self.engines = make_engines(config)
        self.maker = FindingMaker(config, self.engines, findings_dir, set(progress.findings))

    def indices(self, deadline: float | None) -> Iterator[int]:
        i = self.job
        while self.config.cases is None or i < self.config.cases:
            if deadline is not None and time.time() >= deadline:
                return
            if i not in self.done:
                yield i
            i += self.config.jobs

    def run(self, emit: Emit, deadline: float | None) -> None:
        try:
            for engine in self.engines:
                engine.start()
            for index in self.indices(deadline):
                self.run_case(index, emit)
                if self.config.stop_when in self.maker.found:
                    break
        finally:
            for engine in self.engines:
                engine.close()

    def run_case(self, index: int, emit: Emit) -> None:
        """One case; a harness bug (an exception) is recorded as a finding, not fatal."""
        recorded: list[str] = []

        def tracking(line: dict) -> None:
            recorded.append(line["kind"])
            emit(line)

        try:
            self._run_case(index, tracking)
        except Exception as e:  # noqa: BLE001 (a long campaign must outlive one bad case)
            seed = case_seed(self.config.seed, index)
            if "case" not in recorded:
                emit({"kind": "case", "index": index, "seed": seed, "verdicts": {"harness": "error"}})
            emit(harness_error_line(index, seed, e))

    def _run_case(self, index: int, emit: Emit) -> None:
        from harness.generate.cases import generate_case

        seed = case_seed(self.config.seed, index)
        t0 = time.perf_counter()
        generated = generate_case(seed, steer=self.steer, data=self.config.data)
        case = generated.case
        generation = time.perf_counter() - t0
        results = run_case(case, self.engines)
        cells, shapes = case_cells(case), data_shapes(case)
        if self.steer is not None:
            self.steer.record(cells, shapes)
        metamorphic = self._metamorphic(seed, case, emit, index)
        emit({
            "kind": "case", "index": index, "seed": seed, "picks": list(generated.picks),
            "verdicts": {r.engine: r.verdict.value for r in results},
            "seconds": {r.engine: round(r.seconds, 5) for r in results},
            "generation_seconds": round(generation, 5),
            "cells": cells, "shapes": shapes, "metamorphic": metamorphic,
        })
        for result in findings_of(results):
            for line in self.maker.make(index, seed, generated, results, result):
                emit(line)

    def _metamorphic(self, seed: str, case, emit: Emit, index: int) -> dict[str, str]:
        """Sometimes: every relation that applies, checked on each engine alone."""
        if Random(f"{seed}/metamorphic").random() >= self.config.metamorphic_share:
            return {}
        from harness.campaign.metamorphic import RELATIONS, Status, check

        statuses: dict[str, str] = {}
        for engine in self.engines:
            rng = Random(f"{seed}/metamorphic/{engine.name}")
            for relation in RELATIONS:
                chk = relation.derive(case, Random(f"{rng.random()}/{relation.name}"), engine.dialect)
                if chk is None:
                    continue
                outcome = check(chk, engine)
                if outcome.status is Status.ERROR and engine.dialect.says_not_implemented(outcome.detail):
                    # The engine's own "not implemented" on one side: a missing feature.
                    outcome = replace(outcome, status=Status.UNSUPPORTED)
                statuses[f"{engine.name}:{relation.name}"] = outcome.status.value
                # One side failing where its twin ran is a finding too: the two
                # queries are equivalent by construction.
                if outcome.status in (Status.VIOLATED, Status.ERROR):
                    for line in self.maker.make_metamorphic(index, seed, chk, engine, outcome):
                        emit(line)
        return statuses


def harness_error_line(index: int, seed: str, error: Exception) -> dict:
    """A finding against the harness itself: generator, reference or comparator raised."""
    import traceback

    from harness.campaign.signature import Signature, normalise_error

    sig = Signature("harness", "error", (type(error).__name__,), normalise_error(str(error)))
    where = traceback.extract_tb(error.__traceback__)[-1]
    detail = f"{type(error).__name__}: {error} (at {Path(where.filename).name}:{where.lineno})"
    return {"kind": "finding", "key": sig.key, "signature": sig.text, "engine": "harness",
            "verdict": "error", "classification": "harness-bug", "case": index, "seed": seed,
            "file": "", "detail": detail[:500]}


def make_engines(config: CampaignConfig) -> list[Engine]:
    from harness.campaign.isolation import IsolatedEngine
    from harness.engines.registry import get_engine

    engines: list[Engine] = []
    for name in config.engines:
        options = config.engine_options.get(name, {})
        if name == "reference" or not config.isolate:
            engines.append(get_engine(name, **options))
        else:
            engines.append(IsolatedEngine(name, timeout=config.timeout_seconds, **options))
    return engines


# -- the campaign ------------------------------------------------------------------


@dataclass
class CampaignResult:
    out: Path
    summary: dict
    findings: list[dict]

    @property
    def exit_code(self) -> int:
        return 1 if self.findings else 0


Listener = Callable[[Progress, float], None]


def run_campaign(config: CampaignConfig, listener: Listener | None = None) -> CampaignResult:
    _check_engines(config)
    store = CampaignStore(config.out, _meta(config), config.resume)
    started = time.time()
    before = len(store.progress.done)
    deadline = started + 60 * config.minutes if config.minutes is not None else None

    def emit(line: dict) -> None:
        kind = line.pop("kind")
        if kind == "case":
            store.record_case(line)
        elif kind == "finding":
            store.record_finding(line)
        elif kind == "reduced":
            store.record_reduction(line)
        if listener is not None:
            listener(store.progress, time.time() - started)

    try:
        if config.jobs <= 1:
            Shard(config, 0, store.progress, store.findings_dir).run(emit, deadline)
        else:
            _run_pool(config, store, emit, deadline)
    finally:
        wall = time.time() - started
        summary = summarize(config, store.progress, wall, len(store.progress.done) - before)
        store.write_summary(summary)
        store.close()
    findings = [t.as_json() for t in store.progress.findings.values()]
    return CampaignResult(config.out, summary, findings)


def _check_engines(config: CampaignConfig) -> None:
    from harness.engines.registry import get_dialect

    for name in config.engines:
        get_dialect(name)  # raises InvalidInput naming an unknown engine


def _meta(config: CampaignConfig) -> dict:
    from harness import __version__

    return {**config.as_json(), "harness_version": __version__, "started": time.strftime("%Y-%m-%dT%H:%M:%S")}


def _run_pool(config: CampaignConfig, store: CampaignStore, emit: Emit, deadline: float | None) -> None:
    ctx = mp.get_context("spawn")
    lines: mp.Queue = ctx.Queue()
    workers = [ctx.Process(target=_shard_main, args=(config, job, store.progress, store.findings_dir,
                                                       lines, deadline), name=f"shard {job}")
               for job in range(config.jobs)]
    for w in workers:
        w.start()
    running = len(workers)
    try:
        while running:
            try:
                line = lines.get(timeout=1.0)
            except queue.Empty:
                if not any(w.is_alive() for w in workers):
                    break
                continue
            if line.get("kind") == "shard-done":
                running -= 1
            else:
                emit(line)
    finally:
        for w in workers:
            w.join(30)
            if w.is_alive():
                w.terminate()


def _shard_main(config: CampaignConfig, job: int, progress: Progress, findings_dir: Path,
                lines: mp.Queue, deadline: float | None) -> None:
    try:
        Shard(config, job, progress, findings_dir).run(lines.put, deadline)
    finally:
        lines.put({"kind": "shard-done", "job": job})


def summarize(config: CampaignConfig, progress: Progress, wall: float, new_cases: int) -> dict:
    from harness.coverage import grid

    defined = {c.key for c in grid() if c.reason is None}
    covered = {tuple(c.split("|")) for c in progress.cells} & defined
    cases = len(progress.done)
    per_engine = {
        engine: round(cases / seconds, 1) if seconds > 0 else None
        for engine, seconds in progress.engine_seconds.items()
    }
    return {
        "seed": config.seed,
        "engines": list(config.engines),
        "cases": cases,
        "cases_this_run": new_cases,
        "wall_seconds": round(wall, 2),
        "cases_per_s": round(new_cases / wall, 2) if wall > 0 else 0.0,
        "findings": len(progress.findings),
        "finding_occurrences": sum(t.count for t in progress.findings.values()),
        "verdicts": {e: dict(c) for e, c in progress.verdicts.items()},
        "engine_seconds": {e: round(s, 2) for e, s in progress.engine_seconds.items()},
        "engine_cases_per_s": per_engine,
        "coverage": {"grid_cells_covered": len(covered), "grid_cells_defined": len(defined),
                     "data_shapes": dict(progress.shapes.most_common())},
        "metamorphic": dict(progress.metamorphic),
        "out": str(config.out),
    }
