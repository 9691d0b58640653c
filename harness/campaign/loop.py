"""The fuzz loop: generate a case, run it everywhere, judge it, keep what is new.

One campaign is a seed and a list of engines. Case i has the seed
"{campaign seed}/{i}". Cases come in groups of siblings: case g*B (B the
batch size, `MAX_SIBLINGS` unless `--batch-size` fixes it) is drawn whole
from its seed (`harness.generate`), steered towards the least-covered grid
cells; the next n-1 cases of its group (n the shape's sibling count,
`harness.campaign.siblings`: what its batched query pays for; B when fixed)
share its query and schemas and draw their own rows from their own seeds.
The indices g*B+n .. g*B+B-1 are never run.
So any case reproduces from its seed, its group's first seed (`shape`) and
the steering choices (`picks`), all stored per case. Each group:

1. is generated;
2. runs batched (`harness.campaign.batch_runner`: one query per engine for the whole
   group), except a seeded share of its cases (`unbatched_share`), which run
   alone as a check on batching itself (it changes the plan). Every engine
   runs in its own worker process: a crash or a hang is a verdict, and the
   engine restarts;
3. is judged against the reference under each engine's semantics profile;
   a batched verdict that is not a pass is confirmed by running the case
   alone, and a finding is re-run `reruns` times: verdicts that change
   between identical runs make it `nondeterministic`;
4. sometimes also gets a metamorphic check on each engine (no reference);
5. is recorded: each finding is signed, classified by the majority view,
   and the first case of a new signature is saved as a case file and
   reduced; then the case's own line (flushed) says it is done. A kill
   before that line loses nothing: `--resume` drops what the case had
   written and runs it again (`harness.results.store`).

With `jobs` > 1 the groups are dealt round-robin to shard processes, each
with its own engines; the parent alone writes the campaign's files (the
shards their findings' case files, under the parent's lock on the directory).

Steering makes a group's query depend on the groups before it in its shard
(the coverage they gave). A resumed shard steers from what its own earlier
groups' shapes gave, as it did before it stopped, so with the same `jobs`
every case of a resumed campaign is the one an uninterrupted run draws.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from random import Random

from harness.campaign.batch_runner import CaseRun, run_batch
from harness.campaign.batching import NotBatchable
from harness.campaign.steer import CoverageSteer, case_cells, data_shapes
from harness.cases.casefile import SavedCase
from harness.core import stages
from harness.core.errors import CannotWrite, HarnessError
from harness.core.lifeline import Parent, die_with
from harness.core.secrets import redact
from harness.core.stages import stage
from harness.engines.base import Engine, start_together
from harness.findings.finding import FINDING_VERDICTS, FindingMaker, findings_of
from harness.generate.cases import LARGE_SHARE, GeneratedCase
from harness.judge.compare import Verdict
from harness.judge.oracle import time_limit
from harness.judge.runner import Result, rerun, run_bare, run_case
from harness.results.records import CampaignRecord
from harness.results.store import CampaignStore, Progress


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
    # Query shapes whose first case also gets metamorphic checks per engine (up to
    # METAMORPHIC_RELATIONS relations, two queries each): the relations derive
    # from the query, so checking each sibling again would cost more than
    # batching saves.
    metamorphic_share: float = 0.4
    data: str = "default"  # the data preset: "default" or "tie-heavy" (small domains, many ties)
    # Sibling cases per query shape, answered by one batched query: None chooses
    # the count per shape from its cost (`harness.campaign.siblings`), B fixes it.
    batch_size: int | None = None
    unbatched_share: float = 0.1  # cases that run alone all the same (batching changes the plan)
    # Cases whose bare query (no row id, no witnesses) runs too: instrumenting changes the plan.
    bare_share: float = 0.15
    reruns: int = 3  # identical re-runs of a finding, to tell a nondeterministic answer
    rows: int | None = None  # fixed table sizes and window counts (benchmarks)
    windows: int | None = None
    # Stop once a new finding of this classification shows (e.g. "engine-vs-all-others").
    stop_when: str | None = None
    engine_options: dict = field(default_factory=dict)
    # The engines the sibling count is chosen for, when not `engines` (a Spark
    # job's executors run every engine but Spark, which the driver runs).
    cost_engines: tuple[str, ...] | None = None
    # Cases that also run on a batch-changing profile of one engine (BATCH_PROFILES),
    # and cases re-run on multi-threaded profiles with the answers compared run to
    # run (THREAD_PROFILES; batch-scale cases at least LARGE_THREAD_SHARE).
    profile_share: float = 0.05
    thread_share: float = 0.02
    large_share: float = LARGE_SHARE  # seeds drawn for batch-scale tables
    profile: bool = False  # shards keep a stage clock and send it (`harness.core.stages`, `fuzz --profile`)

    def as_json(self) -> dict:
        doc = asdict(self)
        doc["out"] = str(self.out)
        doc["engines"] = list(self.engines)
        if self.cost_engines is not None:
            doc["cost_engines"] = list(self.cost_engines)
        else:
            doc.pop("cost_engines")
        # A DSN may hold a password, a Spark Connect URL a token: campaign.json keeps
        # them without (a resumed campaign takes its options from the command line again).
        doc["engine_options"] = {name: {k: redact(v) if isinstance(v, str) else v for k, v in options.items()}
                                 for name, options in self.engine_options.items()}
        return doc


def case_seed(campaign_seed: int, index: int) -> str:
    return f"{campaign_seed}/{index}"


def regenerate(line: dict, config: CampaignConfig) -> GeneratedCase:
    """A campaign's case again, from its line in cases.jsonl: its group's first
    case (`shape`, with the stored picks), then its own rows if it is a sibling."""
    from harness.generate.cases import Limits, generate_case, generate_sibling

    limits = Limits(config.rows, config.windows, config.large_share)
    shape_seed = line.get("shape", line["seed"])
    shape = generate_case(shape_seed, picks=line.get("picks"), data=config.data, limits=limits)
    if shape_seed == line["seed"]:
        return shape
    return generate_sibling(shape, line["seed"], config.data, limits)


def slot_size(config: CampaignConfig) -> int:
    """The stride of case indices per shape: group g's cases are g*B .. g*B+n-1."""
    from harness.campaign.siblings import MAX_SIBLINGS

    return max(1, config.batch_size) if config.batch_size is not None else MAX_SIBLINGS


def sibling_count(config: CampaignConfig, shape: GeneratedCase) -> int:
    """How many cases (the shape's own first) a group gets: `batch_size` when fixed,
    else what the shape's batched query pays for on the campaign's engines."""
    if config.batch_size is not None:
        return max(1, config.batch_size)
    from harness.campaign.siblings import sibling_count as by_cost

    return by_cost(shape.case, config.cost_engines or config.engines)


def shard_quota(config: CampaignConfig, job: int) -> int | None:
    """How many cases of `--cases` shard `job` runs: as many as its groups' slots
    hold below `cases` (with a fixed batch size, exactly the indices below it)."""
    if config.cases is None:
        return None
    size = slot_size(config)
    slots = -(-config.cases // size)  # the groups that start below `cases`
    return sum(min(size, config.cases - g * size) for g in range(job, slots, config.jobs))


# The checks of the plan itself (the query unbatched, the bare query, other
# profiles of an engine) are drawn per query shape, never per case: a plan is
# the query's, which every sibling shares, and a check per case would cost one
# unbatched query per engine on a share of every shape's siblings, which is
# what batching saves. So a shape's checks cost the same however many
# siblings it has, and more siblings cost only their rows.


def runs_alone(shape_seed: str, share: float) -> bool:
    """Whether a shape's second case runs unbatched all the same (batching changes
    the plan): a seeded draw of the shape's, never the engines'."""
    return Random(f"{shape_seed}/unbatched").random() < share


def runs_bare(shape_seed: str, share: float) -> bool:
    """Whether a shape's first case runs its bare query too (instrumenting changes
    the plan): a seeded draw of the shape's, never the engines'."""
    return Random(f"{shape_seed}/bare").random() < share

# Profiles that move batch boundaries, by implementation: DataFusion's batches
# of 7 or 100 rows make any input multi-batch; DuckDB on one thread or four
# splits its input into other morsels; Spark's window buffer leaves its array
# after one row (`window-spill` is unsafe past small partitions).
BATCH_PROFILES: dict[str, tuple[str, ...]] = {
    "datafusion": ("batch_size=7", "batch_size=100"),
    "duckdb": ("threads=1", "threads=4"),
    "spark": ("window-buffer",),
}
# Multi-threaded profiles a case is re-run on to hunt nondeterminism (DataFusion
# repartitions only inputs of more rows than its batch size: hence batch_size=100).
THREAD_PROFILES: dict[str, str] = {
    "datafusion": "partitions=4,batch_size=100",
    "duckdb": "threads=4",
    "spark": "shuffle-partitions=8",
}
# The share of batch-scale cases re-run on threads (thread-dependence needs rows).
LARGE_THREAD_SHARE = 0.5
# Relations checked per engine on a shape drawn for metamorphic checks.
METAMORPHIC_RELATIONS = 2


def drawn_engines(seed: str, engines: list[tuple[str, str]], large: bool, profile_share: float,
                  thread_share: float) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The profiled engines a case runs on besides the campaign's: one batch-changing
    profile of one engine (a `profile_share` of the cases drawn for it: a shape's
    first case, and every batch-scale case), and each engine's multi-threaded
    profile (a `thread_share` of them, LARGE_THREAD_SHARE of the batch-scale
    ones), on which the case is re-run. `engines`: the campaign's (name,
    implementation) pairs; only those without profiles or label get profiled.
    Seeded draws of the case's own, never the engines'."""
    plain = [(name, impl) for name, impl in engines if "[" not in name and "@" not in name]
    batch: tuple[str, ...] = ()
    rng = Random(f"{seed}/profile")
    candidates = [f"{name}[{p}]" for name, impl in plain for p in BATCH_PROFILES.get(impl, ())]
    if rng.random() < profile_share and candidates:
        batch = (rng.choice(candidates),)
    share = max(thread_share, LARGE_THREAD_SHARE) if large else thread_share
    threads: tuple[str, ...] = ()
    if Random(f"{seed}/threads").random() < share:
        threads = tuple(f"{name}[{THREAD_PROFILES[impl]}]" for name, impl in plain if impl in THREAD_PROFILES)
    return batch, threads


# -- one shard ---------------------------------------------------------------------


Emit = Callable[[dict], None]


class Shard:
    """Cases job, job + jobs, job + 2*jobs, ... with this shard's own engines."""

    def __init__(self, config: CampaignConfig, job: int, progress: Progress, findings_dir: Path,
                 engines: list[Engine] | None = None):
        self.config = config
        self.job = job
        self.done = set(progress.done)
        self.shape_picks = dict(progress.shape_picks)
        self.shape_siblings = dict(progress.shape_siblings)  # recorded counts (a resume reads them)
        self.drawn: dict[int, tuple[GeneratedCase, float]] = {}  # shapes drawn to count their siblings
        self.steer = CoverageSteer() if config.steer else None
        self.steered: set[int] = set()  # the groups (by first index) the steering has counted
        if self.steer is not None:
            size = slot_size(config)
            for first, (cells, shapes) in sorted(progress.shape_cells.items()):
                if (first // size) % config.jobs == job:  # this shard's own earlier groups
                    self.steer.record(cells, shapes)
                    self.steered.add(first)
        self.engines = engines if engines is not None else make_engines(config)
        self.maker = FindingMaker(config, self.engines, findings_dir, set(progress.findings))
        self.profiled: dict[str, Engine] = {}  # profiled engines the draws asked for, started once
        # What the group in hand has settled already, by (check, engine, finding
        # signature): the seed of the sibling it was done on (see `_first_in_group`).
        self.group_done: dict[tuple[str, str, str], str] = {}

    def groups(self, deadline: float | None) -> Iterator[list[int]]:
        """This shard's groups of sibling cases (those not done yet): g*B .. g*B+n-1
        for g = job, job + jobs, ... (n the group's sibling count), until the
        shard's share of `cases` is done."""
        size, g, left = slot_size(self.config), self.job, shard_quota(self.config, self.job)
        while left is None or left > 0:
            if deadline is not None and time.time() >= deadline:
                return
            first = g * size
            count = self._siblings(first)
            if left is not None:
                count = min(count, left)
                left -= count
            todo = [i for i in range(first, first + count) if i not in self.done]
            if todo:
                yield todo
            else:
                self.drawn.pop(first, None)
            g += self.config.jobs

    def _siblings(self, first: int) -> int:
        """The group's sibling count: fixed, recorded by an earlier run, or chosen
        for its shape (drawn here, and kept for `_generate`)."""
        if self.config.batch_size is not None:
            return max(1, self.config.batch_size)
        seed = case_seed(self.config.seed, first)
        if seed not in self.shape_siblings:
            if first not in self.drawn:
                self.drawn[first] = self._draw_shape(first)
            self.shape_siblings[seed] = sibling_count(self.config, self.drawn[first][0])
        return self.shape_siblings[seed]

    def _draw_shape(self, first: int) -> tuple[GeneratedCase, float]:
        from harness.generate.cases import Limits, generate_case

        config, t0 = self.config, time.perf_counter()
        shape_seed = case_seed(config.seed, first)
        picks = self.shape_picks.get(shape_seed)  # a group resumed after a kill: its query again
        with stage("generation"):
            shape = generate_case(shape_seed, steer=self.steer, picks=picks, data=config.data,
                                  limits=Limits(config.rows, config.windows, config.large_share))
        return shape, time.perf_counter() - t0

    def run(self, emit: Emit, deadline: float | None) -> None:
        # The reference is bounded as each engine query is (a reference timeout is a finding).
        with time_limit(self.config.timeout_seconds):
            self._run(emit, deadline)

    def _run(self, emit: Emit, deadline: float | None) -> None:
        self.maker.deadline = deadline  # reductions end with the campaign
        try:
            with stage("start"):
                start_together(self.engines)  # a Spark worker takes seconds: not one after another
            emit({"kind": "versions", "versions": {e.name: e.version() for e in self.engines}})
            for group in self.groups(deadline):
                self.run_group(group, emit)
                if self.config.stop_when in self.maker.found:
                    break
        finally:
            for engine in [*self.engines, *self.profiled.values()]:
                engine.close()

    def run_group(self, indices: list[int], emit: Emit) -> None:
        """One group; a harness bug (an exception) is recorded as a finding, not
        fatal. A results file that cannot be written (a full disk) stops the campaign."""
        self.group_done = {}
        try:
            generated = self._generate(indices)
        except Exception as e:  # noqa: BLE001 (a long campaign must outlive one bad case)
            for index in indices:
                self._harness_error(index, e, emit, recorded=False)
            return
        runs = self.judge(generated, indices)
        for index in indices:
            if self.maker.deadline is not None and time.time() >= self.maker.deadline and index != indices[0]:
                break  # time is up: the group's other cases are left undone (a --resume runs them)
            recorded: list[str] = []

            def tracking(line: dict, recorded: list[str] = recorded) -> None:
                recorded.append(line["kind"])
                emit(line)

            try:
                self._record_case(index, generated[index], runs.get(index), tracking)
            except CannotWrite:
                raise  # the disk's fault, not the case's: no finding
            except Exception as e:  # noqa: BLE001 (a long campaign must outlive one bad case)
                self._harness_error(index, e, emit, recorded="case" in recorded,
                                    drawn=self._drawn(index, generated[index][0]))

    def judge(self, generated: dict[int, tuple[GeneratedCase, float]], indices: list[int],
              complete: bool = False, flag: bool = True) -> dict[int, CaseRun]:
        """The verdicts of the group's batched cases (all of them with `complete`,
        the others then run alone here too). A batch that raises leaves its
        cases to run alone, each reporting for itself."""
        # A batch-scale case runs alone: stacked with its siblings it would make
        # one huge query (memory, and a timeout that blames the whole batch).
        size = slot_size(self.config)
        together = [i for i in indices if not generated[i][0].large
                    and not (i % size == 1 and runs_alone(case_seed(self.config.seed, i - 1),
                                                          self.config.unbatched_share))]
        runs: dict[int, CaseRun] = {}
        if len(together) >= 2:
            try:
                batch = run_batch([generated[i][0].case for i in together], self.engines, flag=flag)
                runs.update(zip(together, batch, strict=True))
            except Exception:  # noqa: BLE001 (each case then runs alone and reports for itself)
                runs.clear()
        if complete:
            for i in indices:
                if i not in runs:
                    runs[i] = CaseRun(run_case(generated[i][0].case, self.engines, flag=flag))
        return runs

    def _generate(self, indices: list[int]) -> dict[int, tuple[GeneratedCase, float]]:
        """Each case of the group and the seconds its generation took."""
        from harness.generate.cases import Limits, generate_sibling

        config = self.config
        limits = Limits(config.rows, config.windows, config.large_share)
        size = slot_size(config)
        first = indices[0] - indices[0] % size
        shape, seconds = self.drawn.pop(first, None) or self._draw_shape(first)
        out = {first: (shape, seconds)}
        for index in indices:
            if index != first:
                t0 = time.perf_counter()
                with stage("generation"):
                    sibling = generate_sibling(shape, case_seed(config.seed, index), config.data, limits)
                out[index] = (sibling, time.perf_counter() - t0)
        if self.steer is not None and first not in self.steered:  # a resumed group's counted already
            with stage("steering"):
                self.steer.record(case_cells(shape.case), data_shapes(shape.case))
            self.steered.add(first)
        return out

    def _drawn(self, index: int, generated: GeneratedCase) -> dict:
        """What a case line says of how the case was drawn: its group's shape, the
        steering picks, and what it gives the steering (`Progress.shape_cells`)."""
        line = self._shape_of(index, generated)
        try:
            return {**line, **_exercised(generated.case)}
        except Exception:  # noqa: BLE001 (for a harness error's line: what could be worked out)
            return line

    def _shape_of(self, index: int, generated: GeneratedCase) -> dict:
        """The case's group's shape seed, its steering picks and its sibling count
        (what a resume replays)."""
        size = slot_size(self.config)
        first = index - index % size
        line = {"shape": case_seed(self.config.seed, first), "picks": list(generated.picks)}
        if self.config.batch_size is None:
            line["siblings"] = self._siblings(first)
        return line

    def _harness_error(self, index: int, error: Exception, emit: Emit, recorded: bool,
                       drawn: dict | None = None) -> None:
        """The harness's own error as a finding, then (unless written) the case's line."""
        seed = case_seed(self.config.seed, index)
        emit(harness_error_line(index, seed, error))
        if not recorded:
            emit({"kind": "case", "index": index, "seed": seed, **(drawn or {}),
                  "verdicts": {"harness": "error"}})

    def _record_case(self, index: int, drawn: tuple[GeneratedCase, float], run: CaseRun | None,
                     emit: Emit) -> None:
        generated, generation = drawn
        seed, case = case_seed(self.config.seed, index), generated.case
        if run is None:  # not batched: the case alone
            run = CaseRun(run_case(case, self.engines))
        with stage("rerun"):
            results = [self._settled(case, r) for r in run.results]
        batch, threads = (drawn_engines(seed, [(e.name, e.implementation) for e in self.engines], generated.large,
                                        self.config.profile_share, self.config.thread_share)
                          if self._first(index) or generated.large else ((), ()))
        campaign = {r.engine for r in results}
        with stage("profiles"):
            results += self._on_drawn(case, batch, threads)
        with stage("bare"):
            bare = self._bare(seed if self._first(index) else None, case, results, run)
        # Not on batch-scale data: a relation's twin queries (another frame mode, a
        # DISTINCT) can cost the reference minutes over thousands of rows.
        with stage("metamorphic"):
            metamorphic = {} if generated.large else self._metamorphic(seed, case, emit, index)
        with stage("findings"):
            for result in findings_of(results):
                for line in self.maker.make(index, seed, generated, results, result):
                    emit(line)
            # A batched verdict that is no finding (inconclusive) is not one alone either.
            for doubt in [d for d in run.unconfirmed if d.verdict in FINDING_VERDICTS]:
                for line in self._batched_only(index, seed, generated, doubt, results):
                    emit(line)
        with stage("profiles"):
            disagreements = self._profile_disagreements(case, [r for r in results if r.engine in campaign])
        with stage("findings"):
            for disagreement in disagreements:
                for line in self.maker.make_profiles(index, seed, generated, results, disagreement):
                    emit(line)
        # Last: the case is done once this line is written (`harness.results.store`).
        size = slot_size(self.config)
        with stage("coverage"):
            exercised = {**_exercised(case), **self._rows(index, case, size)}
        emit({
            "kind": "case", "index": index, "seed": seed, **self._shape_of(index, generated),
            "batched": sorted(run.batched),
            "verdicts": {r.engine: r.verdict.value for r in results},
            **({"large": True} if generated.large else {}),
            **({"profiled": list(batch)} if batch else {}),
            **({"threads": list(threads)} if threads else {}),
            "details": {r.engine: r.detail[:200] for r in results
                        if r.verdict.value != "match" and r.detail},
            "facts": {r.engine: r.facts.as_json() for r in results
                      if (r.verdict.value != "match" or _ran_otherwise(r)) and r.facts.as_json()},
            # What an engine ran instead of the case's query (items left out, a
            # respelling), with its SQL: never dropped silently, matches included.
            "restricted": {r.engine: {"note": r.notes[0], "sql": r.sql} for r in results if _ran_otherwise(r)},
            "seconds": {r.engine: round(r.seconds + (r.bare.seconds if r.bare else 0), 5) for r in results},
            **bare,
            "generation_seconds": round(generation, 5),
            "at": round(time.time(), 2),
            "metamorphic": metamorphic, **exercised,
        })

    def _rows(self, index: int, case, size: int) -> dict:
        """What the case exercises, for the report's matrix: the query's window
        expressions once per shape (its siblings share them), the query and data
        rows for every case."""
        from harness.cases.axes import case_rows

        rows = case_rows(case)
        line = {"rows": sorted(rows.case)}
        if index % size == 0:
            line["expr_rows"] = {k: sorted(v) for k, v in rows.exprs.items()}
        return line

    def _profile_disagreements(self, case, results: list[Result]) -> list:
        """Profiles of one engine that answered differently, where the standard fixes
        the answer (`harness.judge.profile_compare`), confirmed by running both alone."""
        from harness.engines.registry import label_of
        from harness.judge.instrument import instrument
        from harness.judge.profile_compare import profile_disagreements

        # One build's profiles are compared; another build (`duckdb@candidate`, an
        # older release) may answer otherwise by right: the gate's A/B lists that.
        implementations = {e.name: f"{e.implementation}@{label_of(e.name) or ''}"
                           for e in self.engines if not e.is_reference}
        if len(set(implementations.values())) == len(implementations):
            return []  # no engine runs under two profiles
        def disagreements(results: list[Result]) -> list:
            """Profiles are compared on the query they ran: the case's, or the same
            restricted one (`harness.judge.restrict`); never one against the other."""
            by_query: dict = {}
            for r in results:
                by_query.setdefault(r.ran_query, []).append(r)
            return [d for query, group in by_query.items()
                    for d in profile_disagreements(instrument(query or case.query, case.schemas), group,
                                                   implementations)]

        confirmed = []
        for seen in disagreements(results):
            pair = [e for e in self.engines if e.name in seen.engines]
            again = disagreements(run_case(case, pair, flag=False))
            confirmed += [d for d in again if d.engines == seen.engines]
        return confirmed

    def _first(self, index: int) -> bool:
        """Whether the case is its shape's first (the one its query was drawn for)."""
        return index % slot_size(self.config) == 0

    def _bare(self, shape_seed: str | None, case, results: list[Result], run: CaseRun) -> dict:
        """The bare query on every engine (`harness.judge.bare`): for a shape's first
        case, on a seeded share of shapes (`shape_seed`: None for other cases), and
        for the first case of its group that shows a finding (its record then shows
        what the user's own query gives). A bare verdict that fails where the instrumented
        one passed is re-run as any finding is. Returns what the case line says:
        each engine's bare verdict and seconds (none where instrumenting adds nothing)."""
        drawn = shape_seed is not None and runs_bare(shape_seed, self.config.bare_share)
        # A finding's bare query runs on the first case of the group that shows it.
        new = [r for r in findings_of(results) if self._first_in_group("bare", case, r) is None]
        if not drawn and not new:
            return {}
        run_bare(case, results, self.engines, reference=run.reference)
        for r in results:
            if r.bare is not None and r.verdict not in FINDING_VERDICTS:
                r.bare = self._settled(case, r.bare)
        ran = [r for r in results if r.bare is not None]
        return {"bare": {r.engine: r.bare.verdict.value for r in ran},
                "bare_seconds": {r.engine: round(r.bare.seconds, 5) for r in ran}}

    def _on_drawn(self, case, batch: tuple[str, ...], threads: tuple[str, ...]) -> list[Result]:
        """The case's verdicts on its drawn profiled engines (`drawn_engines`), each
        named by its spec (`datafusion[batch_size=7]`). On a multi-threaded one the
        case is re-run `reruns` times (at least twice) and the answers compared run
        to run: verdicts that change, or failing answers that change, make it
        `nondeterministic`. A finding on a batch profile is settled as any other."""
        from harness.judge.runner import PreparedCase, run_prepared

        if not batch and not threads:
            return []
        prepared = PreparedCase(case)  # once for all drawn engines and their re-runs
        out = []
        for name in (*batch, *threads):
            engine = self._drawn_engine(name)
            result = run_prepared(prepared, engine)
            if name in threads and result.verdict is not Verdict.TIMEOUT:
                result = rerun(case, engine, result, max(2, self.config.reruns), answers=True, prepared=prepared)
            elif name in batch:
                result = self._settled(case, result)
            out.append(result)
        return out

    def _drawn_engine(self, name: str) -> Engine:
        """The profiled engine `name`, started once: on its engine's worker when that
        engine runs in one (`IsolatedEngine.profile`), else an adapter of its own."""
        from harness.engines.isolation import IsolatedEngine

        engine = self.profiled.get(name)
        if engine is None:
            base = next((e for e in self.engines
                         if isinstance(e, IsolatedEngine) and e.name == name.partition("[")[0]), None)
            engine = self.profiled[name] = base.profile(name) if base is not None else make_engine(name, self.config)
            with stage("start"):
                engine.start()
            self.maker.engines = [*self.engines, *self.profiled.values()]  # its findings reduce on it
        return engine

    def _settled(self, case, result: Result) -> Result:
        """A finding's verdict after `reruns` identical runs (nondeterministic if they
        differ): on the first case of its group that shows it. Its siblings share
        the query, so the same finding on another of them keeps its verdict, with
        a note naming the sibling whose runs settled it."""
        if self.config.reruns <= 0 or result not in findings_of([result]) or result.engine == "reference":
            return result
        engine = next((e for e in [*self.engines, *self.profiled.values()] if e.name == result.engine), None)
        if engine is None or engine.is_reference or result.verdict is Verdict.TIMEOUT:
            return result
        key = self._group_key("rerun", case, result)
        earlier = self.group_done.get(key)
        if earlier is not None:
            return replace(result, notes=(*result.notes, f"not re-run: the same finding was re-run on "
                                                         f"this shape's case {earlier}, which answered alike"))
        settled = rerun(case, engine, result, self.config.reruns)
        if settled.verdict is not Verdict.NONDETERMINISTIC:
            # Settled: the same finding on a later sibling is taken as it comes. An
            # engine that answered otherwise run to run is re-run on each of them.
            self.group_done[key] = _case_seed_of(case)
        return settled

    def _group_key(self, check: str, case, result: Result) -> tuple[str, str, str]:
        from harness.findings.finding import finding_signature

        return (check, result.engine, finding_signature(case, result).key)

    def _first_in_group(self, check: str, case, result: Result) -> str | None:
        """None the first time `check` meets this finding (engine and signature) in
        the group in hand (and it is noted); after, the seed of that first case."""
        key = self._group_key(check, case, result)
        if key in self.group_done:
            return self.group_done[key]
        self.group_done[key] = _case_seed_of(case)
        return None

    def _batched_only(self, index: int, seed: str, generated: GeneratedCase, doubt: Result,
                      results: list[Result]) -> Iterator[dict]:
        """A batched verdict the case alone did not reproduce. First, the case alone
        is re-run: verdicts that change make it a nondeterministic finding. Else
        batching changed the plan (a PARTITION BY the case id), so the batched
        query over this case's rows alone is a query of its own: run as a plain
        case, its findings are reported like any other. If it does not reproduce
        either, the verdict needed the other cases' rows: a `batched-only` finding."""
        from harness.campaign.batch_runner import batch_of_one
        from harness.findings.finding import finding_signature
        from harness.findings.signature import Signature

        engine = next(e for e in self.engines if e.name == doubt.engine)
        alone = next(r for r in results if r.engine == doubt.engine)
        if self.config.reruns > 0 and alone.verdict is not Verdict.NONDETERMINISTIC:
            again = rerun(generated.case, engine, alone, self.config.reruns)
            if again.verdict is Verdict.NONDETERMINISTIC:
                settled = [again if r is alone else r for r in results]
                yield from self.maker.make(index, seed, generated, settled, again)
                return

        try:
            single = batch_of_one(generated.case)
        except NotBatchable:
            single = None
        if single is not None:
            results = [self._settled(single, r) for r in run_case(single, self.engines)]
            same = [r for r in findings_of(results) if r.engine == doubt.engine]
            if same:
                for result in same:
                    yield from self.maker.make(index, seed, replace(generated, case=single), results, result)
                return
        # Signed by the features of what went wrong, as any finding; the case is
        # saved, so the batched SQL can be rebuilt and a baseline can read its features.
        plain = finding_signature(generated.case, doubt)
        sig = Signature(doubt.engine, f"batched-only-{doubt.verdict.value}", plain.features, plain.error)
        path = self.maker.directory / f"{sig.key}.yaml"
        if sig.key not in self.maker.known:
            self.maker.known.add(sig.key)
            record = {"signature": sig.text, "key": sig.key, "engine": doubt.engine,
                      "verdict": sig.verdict, "classification": "batched-only", "detail": doubt.detail,
                      "facts": doubt.facts.as_json(), "batched_sql": doubt.sql,
                      "seeds": {"campaign": self.config.seed, "case": seed}}
            self.maker.save(replace(generated.case, id=f"findings/{sig.key}",
                                    tags=(*generated.case.tags, "finding")), path, record)
        yield {"kind": "finding", "key": sig.key, "signature": sig.text, "engine": doubt.engine,
               "verdict": sig.verdict, "classification": "batched-only", "case": index, "seed": seed,
               "file": str(path.relative_to(self.maker.directory.parent)),
               "detail": f"{doubt.detail} (batched SQL: {doubt.sql})"[:500], "facts": doubt.facts.as_json()}

    def _metamorphic(self, seed: str, case, emit: Emit, index: int) -> dict[str, str]:
        """For a share of query shapes, on the shape's first case: on each engine
        alone, up to METAMORPHIC_RELATIONS of the relations that apply, drawn
        from the seed (all of them on every chosen shape cost a fifth of a
        campaign's time, where fewer per shape spread over more shapes)."""
        if index % slot_size(self.config) or Random(f"{seed}/metamorphic").random() >= self.config.metamorphic_share:
            return {}
        if case.error is not None:
            return {}  # relations are between valid queries; this one must be refused
        from harness.judge.metamorphic import RELATIONS, Status, check

        statuses: dict[str, str] = {}
        for engine in self.engines:
            # Two builds of one engine (`duckdb`, `duckdb@candidate`) get the same checks.
            rng = Random(f"{seed}/metamorphic/{engine.name.partition('@')[0]}")
            checked = 0
            for relation in rng.sample(RELATIONS, len(RELATIONS)):
                if checked == METAMORPHIC_RELATIONS:
                    break
                chk = relation.derive(case, Random(f"{rng.random()}/{relation.name}"), engine.dialect)
                if chk is None:
                    continue
                checked += 1
                outcome = check(chk, engine)
                if outcome.status is Status.ERROR and engine.dialect.says_not_implemented(outcome.message):
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

    from harness.findings.signature import Signature, normalise_error

    sig = Signature("harness", "error", (type(error).__name__,), normalise_error(str(error)))
    where = traceback.extract_tb(error.__traceback__)[-1]
    detail = f"{type(error).__name__}: {error} (at {Path(where.filename).name}:{where.lineno})"
    return {"kind": "finding", "key": sig.key, "signature": sig.text, "engine": "harness",
            "verdict": "error", "classification": "harness-bug", "case": index, "seed": seed,
            "file": "", "detail": detail[:500]}


def make_engines(config: CampaignConfig) -> list[Engine]:
    return [make_engine(name, config) for name in config.engines]


def make_engine(name: str, config: CampaignConfig) -> Engine:
    """The campaign's adapter for `name` (a profiled spec takes its base's options)."""
    from harness.engines.isolation import IsolatedEngine
    from harness.engines.registry import engine_class, get_engine

    options = config.engine_options.get(name, config.engine_options.get(name.partition("[")[0], {}))
    cls = engine_class(name)
    if cls.out_of_process:  # in a process of its own already (another Python's)
        return get_engine(name, timeout=config.timeout_seconds, **options)
    if name == "reference" or not config.isolate or cls.faulty:
        # A faulty engine's planted bug lives in its own render(), which a worker
        # (rendering in this process with the dialect) would bypass.
        return get_engine(name, **options)
    return IsolatedEngine(name, timeout=config.timeout_seconds, **options)


# -- the campaign ------------------------------------------------------------------


@dataclass
class CampaignResult:
    out: Path
    summary: dict
    findings: list[dict]
    record: CampaignRecord | None = None  # the directory in memory (run_campaign's `in_memory`)

    @property
    def exit_code(self) -> int:
        return 1 if self.findings else 0


Listener = Callable[[Progress, float], None]


def run_campaign(config: CampaignConfig, listener: Listener | None = None,
                 engines: list[Engine] | None = None, in_memory: bool = False, pool: bool = False,
                 stop: threading.Event | None = None) -> CampaignResult:
    """Run (or resume) a campaign. `engines`, when given, are started ones to use
    (and close) instead of making new ones; only with one job run here. `in_memory`:
    the result also holds the campaign as its directory would be read (`record`),
    for a caller that must not read back what it wrote; a new campaign. `pool`: the
    shards run in processes of their own even with one job (this process only
    records). `stop`, once set, ends a pool's shards and the campaign."""
    _check_engines(config)
    if engines is not None and (config.jobs > 1 or pool):
        raise ValueError("a campaign runs on given engines only with one job, in this process")
    if in_memory and config.resume:
        raise ValueError("a resumed campaign's earlier findings are on disk, not in memory")
    store = CampaignStore(config.out, _meta(config), config.resume, keep=in_memory)
    started = time.time()
    before = len(store.progress.done)
    deadline = started + 60 * config.minutes if config.minutes is not None else None

    def emit(line: dict) -> None:
        with stage("writing"):
            _record(store, line)
            if listener is not None:
                listener(store.progress, time.time() - started)

    saved: dict[str, SavedCase] = {}  # the finding files the shards wrote, when in memory
    stopped = False
    try:
        if config.jobs <= 1 and not pool:
            shard = Shard(config, 0, store.progress, store.findings_dir, engines)
            try:
                shard.run(emit, deadline)
            finally:
                saved = shard.maker.saved
        else:
            saved = _run_pool(config, store, emit, deadline, in_memory, stop)
    except CannotWrite as e:
        stopped = True
        raise CannotWrite(f"{e.reason}; the campaign stopped after "
                          f"{len(store.progress.done)} cases: make room, then continue it with --resume",
                          e.where) from None
    finally:
        wall = time.time() - started
        summary = summarize(config, store.progress, wall, len(store.progress.done) - before)
        try:
            store.write_summary(summary)
        except CannotWrite:
            if not stopped:  # else the disk is full still: the first failure is the one to report
                raise
        finally:
            store.close()
    findings = [t.as_json() for t in store.progress.findings.values()]
    return CampaignResult(config.out, summary, findings, store.record(summary, saved))


class RunningCampaign:
    """A campaign whose shards run in processes of their own while the caller
    works on (the gate's fuzz part beside its corpus). This process records what
    the shards send, from a thread; `result` waits for the end."""

    def __init__(self, config: CampaignConfig, listener: Listener | None = None, in_memory: bool = False):
        self._stop = threading.Event()
        self._result: CampaignResult | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, args=(config, listener, in_memory),
                                        name="campaign", daemon=True)
        self._thread.start()

    def _main(self, config: CampaignConfig, listener: Listener | None, in_memory: bool) -> None:
        try:
            self._result = run_campaign(config, listener, in_memory=in_memory, pool=True, stop=self._stop)
        except BaseException as e:  # noqa: BLE001 (raised again by `result`, in the caller's thread)
            self._error = e

    def result(self) -> CampaignResult:
        """The campaign's result, once its shards are done; its error, raised here."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result

    def cancel(self) -> None:
        """End the shards now (the caller failed); nothing when the campaign is over."""
        self._stop.set()
        self._thread.join(60)


def _record(store: CampaignStore, line: dict) -> None:
    """Write a line a shard emitted where it belongs."""
    kind = line.pop("kind")
    if kind == "case":
        store.record_case(line)
    elif kind == "finding":
        store.record_finding(line)
    elif kind == "reduced":
        store.record_reduction(line)
    elif kind == "versions":
        store.record_versions(line["versions"])
    elif kind == "cannot-write":  # a shard's: it stopped
        raise CannotWrite(line["message"], line["where"])


def _check_engines(config: CampaignConfig) -> None:
    from harness.engines.registry import get_dialect

    for name in config.engines:
        get_dialect(name)  # raises InvalidInput naming an unknown engine


def _exercised(case) -> dict:
    """What a case line says the case gives the coverage steering."""
    return {"cells": case_cells(case), "shapes": data_shapes(case)}


def _meta(config: CampaignConfig) -> dict:
    from harness import __version__
    from harness.results.rundir import host_info

    return {**config.as_json(), "slot": slot_size(config), "harness_version": __version__, "host": host_info(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%S")}


def _run_pool(config: CampaignConfig, store: CampaignStore, emit: Emit, deadline: float | None,
              in_memory: bool = False, stop: threading.Event | None = None) -> dict[str, SavedCase]:
    """Run the shards; the finding files they wrote, as they sent them (`in_memory`)."""
    ctx = mp.get_context("spawn")
    lines: mp.Queue = ctx.Queue()
    parent = Parent.this()
    # Each shard holds the parent's lock on the directory too (`harness.results.lock`).
    workers = [ctx.Process(target=_shard_main, args=(config, job, store.progress, store.findings_dir,
                                                       lines, deadline, parent, store.lock, in_memory),
                           name=f"shard {job}")
               for job in range(config.jobs)]
    for w in workers:
        w.start()
    running = len(workers)
    failed: Exception | None = None
    saved: dict[str, SavedCase] = {}
    try:
        while running:
            if stop is not None and stop.is_set():
                for w in workers:
                    w.terminate()
                break
            try:
                with stage(stages.PARENT_WAIT):
                    line = lines.get(timeout=1.0)
            except queue.Empty:
                if not any(w.is_alive() for w in workers):
                    break
                continue
            if line.get("kind") == "shard-done":
                running -= 1
            elif line.get("kind") == "profile":
                stages.merge(line["profile"])
            elif line.get("kind") == "shard-failed":
                failed = failed or line["error"]  # the first; the other shards finish as they can
            elif line.get("kind") == "saved":
                saved.update(line["saved"])
            else:
                emit(line)
    except CannotWrite:  # the campaign stops: the shards' work could not be recorded anyway
        for w in workers:
            w.terminate()
        raise
    finally:
        for w in workers:
            w.join(30)
            if w.is_alive():
                w.terminate()
    if failed is not None:
        raise failed
    return saved


def _shard_main(config: CampaignConfig, job: int, progress: Progress, findings_dir: Path,
                lines: mp.Queue, deadline: float | None, parent: Parent, lock: object = None,
                send_saved: bool = False) -> None:
    """`lock`: the parent's lock on the campaign directory, held while this shard
    lives. `send_saved`: the finding files this shard wrote are sent too, as written
    (a parent that keeps the campaign in memory never reads them back)."""
    die_with(parent)  # a shard whose campaign was killed stops at once (its workers follow it)
    if config.profile:
        stages.start()
    shard: Shard | None = None
    try:
        shard = Shard(config, job, progress, findings_dir)
        shard.run(lines.put, deadline)
    except CannotWrite as e:  # the parent stops the campaign and says why
        lines.put({"kind": "cannot-write", "message": e.reason, "where": e.where})
    except HarnessError as e:  # bad input, an engine that would not start: the parent raises it
        lines.put({"kind": "shard-failed", "error": e})
    finally:
        if send_saved and shard is not None:
            lines.put({"kind": "saved", "saved": shard.maker.saved})
        clock = stages.stop()
        if clock is not None:
            lines.put({"kind": "profile", "profile": clock.as_json()})
        lines.put({"kind": "shard-done", "job": job})



def _case_seed_of(case) -> str:
    """`7/41` for the case `generated/7/41`."""
    return case.id.rpartition("generated/")[2]


def _ran_otherwise(result) -> bool:
    """Whether the engine ran a restricted or respelled query (`harness.judge.restrict`)."""
    return result.facts.left_out is not None or result.facts.respelled is not None


def diversity(progress: Progress, wall: float) -> dict:
    """Distinct query shapes and defined grid cells: over the campaign (a resumed
    one's earlier cases too), and per minute of this command's wall time (its own
    cases' shapes and cells, as `cases_per_s` counts its own cases)."""
    from harness.cases.coverage import defined_cells

    defined = defined_cells()
    covered = {tuple(c.split("|")) for c in progress.cells} & defined
    run_cells = {tuple(c.split("|")) for c in progress.run_cells} & defined
    minutes = wall / 60

    def per_minute(n: int) -> float:
        return round(n / minutes, 1) if minutes > 0 else 0.0

    return {"shapes": len(progress.shape_seeds), "shapes_this_run": len(progress.run_shapes),
            "shapes_per_minute": per_minute(len(progress.run_shapes)),
            "grid_cells_covered": len(covered), "grid_cells_defined": len(defined),
            "grid_cells_this_run": len(run_cells), "grid_cells_per_minute": per_minute(len(run_cells))}


def summarize(config: CampaignConfig, progress: Progress, wall: float, new_cases: int) -> dict:
    from harness.results.output import inconclusive_share

    spread = diversity(progress, wall)
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
        "shapes": spread["shapes"],
        "shapes_this_run": spread["shapes_this_run"],
        "shapes_per_minute": spread["shapes_per_minute"],
        "findings": len(progress.findings),
        "finding_occurrences": sum(t.count for t in progress.findings.values()),
        "verdicts": {e: dict(c) for e, c in progress.verdicts.items()},
        # Verdicts (of any kind) on a query restricted to the items the engine writes.
        "restricted": dict(progress.restricted),
        "inconclusive": inconclusive_share({e: dict(c) for e, c in progress.verdicts.items()}),
        "engine_seconds": {e: round(s, 2) for e, s in progress.engine_seconds.items()},
        "engine_cases_per_s": per_engine,
        "coverage": {"grid_cells_covered": spread["grid_cells_covered"],
                     "grid_cells_defined": spread["grid_cells_defined"],
                     "grid_cells_this_run": spread["grid_cells_this_run"],
                     "grid_cells_per_minute": spread["grid_cells_per_minute"],
                     "data_shapes": dict(progress.shapes.most_common())},
        "metamorphic": dict(progress.metamorphic),
        "bare": {"cases": progress.bare_cases, "verdicts": {e: dict(c) for e, c in progress.bare.items()}},
        "out": str(config.out),
    }
