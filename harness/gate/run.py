"""Run the gate: the corpus, then a seeded fuzz budget, on one set of engines.

The engines start once (each in its own worker process, so a crash or a
hang is a verdict) and serve both parts. Everything the gate decides is
written under its output directory:

    OUT/gate.json     the result: every non-match verdict, what explains it,
                      stale entries, A/B differences, figures
    OUT/corpus/       the corpus verdicts (as `window-harness run --out`)
    OUT/fuzz/         the campaign directory (as `window-harness fuzz --out`)
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from harness.baseline.known import Baseline, Entry, derived_entries, stale
from harness.cases.case import Case
from harness.cases.casefile import SavedCase
from harness.core.errors import CannotWrite, HarnessError
from harness.gate import AB_REDUCE_SECONDS, AB_REDUCE_TOTAL
from harness.gate.judge import (
    ABDifference,
    Explainer,
    Item,
    ab_differences,
    ab_pairs,
    corpus_items,
    fuzz_items,
)
from harness.judge.corpus_runner import run_corpus
from harness.judge.oracle import time_limit
from harness.judge.runner import Progress, RunResults
from harness.results.lock import DirectoryLock, contents, lock_directory, refuse_foreign, remove
from harness.results.records import CampaignRecord, GateRecord, RunRecord

if TYPE_CHECKING:  # the campaign is imported when the fuzz part runs
    from harness.campaign.loop import Listener

MARKER = "gate.json"
DIFFS_SHOWN = 5  # failures whose diff is computed (each replays its case)
MIN_AB_REDUCE_SECONDS = 1.0  # less left than this: the rest stay unreduced


@dataclass(frozen=True)
class GateConfig:
    engines: tuple[str, ...]
    cases: tuple[Case, ...]
    baseline: Baseline
    out: Path
    seed: int = 0
    budget_seconds: float = 60.0
    budget_cases: int | None = None  # also stop the fuzz after this many cases
    # Shard processes of the fuzz part, each with its own engines; they run while
    # this process runs the corpus on its engines.
    jobs: int = 1
    strict_baseline: bool = False
    engine_options: dict = field(default_factory=dict)
    timeout_seconds: float = 30.0
    # Siblings per query shape in the fuzz part: None chooses them per shape from
    # what they cost, as `fuzz` does (`harness.campaign.siblings`).
    batch_size: int | None = None
    whole_corpus: bool = True  # the repository's whole corpus ran (for staleness)
    # The PostgreSQL options the gate ran with (`--postgres-local`, `--postgres-dsn DSN`):
    # the replay and reduce commands it prints pass them on.
    postgres_args: tuple[str, ...] = ()
    # Seconds to reduce the fuzz part's A/B regressions in, all of them together
    # (each at most AB_REDUCE_SECONDS); 0 reduces none.
    ab_reduce_seconds: float = AB_REDUCE_TOTAL

    @property
    def pythons(self) -> dict[str, str]:
        """The interpreter of each ENGINE@LABEL (--engine-python)."""
        return {name: o["python"] for name, o in self.engine_options.items() if o.get("python")}

    def replay_command(self, file: str | Path, engine: str) -> str:
        """The replay command of a case file on the reference and `engine`, as it works."""
        from harness.findings.replay import replay_command

        return replay_command(file, [engine], self.pythons, self.postgres_args)

    def reduce_command(self, file: str | Path, engine: str, out: str | Path | None = None) -> str:
        """The reduce command of a case file's finding of `engine` (every engine for the
        reference's), as it works."""
        from harness.findings.replay import reduce_command

        engines = list(self.engines) if engine == "reference" else ["reference", engine]
        return reduce_command(file, engines, self.pythons, self.postgres_args, out)


@dataclass
class GateResult:
    config: GateConfig
    versions: dict[str, str]
    items: list[Item]
    stale: list[Entry]
    ab: list[ABDifference]
    corpus: RunResults
    fuzz: dict  # the campaign's summary ({} without a fuzz budget)
    fuzz_cases: list[dict]  # cases.jsonl lines
    fuzz_occurrences: list[dict]  # findings.jsonl lines
    wall_seconds: float = 0.0
    started: float = 0.0  # time.time() at the start
    # What the gate wrote under corpus/ and fuzz/, as the reader would read it back.
    corpus_record: RunRecord | None = None
    fuzz_record: CampaignRecord | None = None

    @property
    def failures(self) -> list[Item]:
        return [i for i in self.items if i.failed]

    @property
    def regressions(self) -> list[ABDifference]:
        return [d for d in self.ab if d.regression]

    @property
    def exit_code(self) -> int:
        bad = self.failures or self.regressions or (self.config.strict_baseline and self.stale)
        return 1 if bad else 0

    def as_json(self) -> dict:
        from harness import __version__
        from harness.results.rundir import host_info, shown_path

        return {
            "harness_version": __version__,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(self.started)),
            "host": host_info(),
            "passed": self.exit_code == 0,
            "seed": self.config.seed,
            "budget_seconds": self.config.budget_seconds,
            "budget_cases": self.config.budget_cases,
            "engines": self.versions,
            "baseline": shown_path(self.config.baseline.path),
            "strict_baseline": self.config.strict_baseline,
            "corpus_cases": len({r.case for r in self.corpus.results}),
            "fuzz_cases": len(self.fuzz_cases),
            "wall_seconds": round(self.wall_seconds, 1),
            "failures": [i.as_json() for i in self.failures],
            "explained": [i.as_json() for i in self.items if not i.failed],
            "stale": [e.as_json() for e in self.stale],
            "unranged": [e.id for e in self.config.baseline.unranged],
            "ab_differences": [d.as_json() for d in self.ab],
            "fuzz_summary": self.fuzz,
        }

    def record(self, doc: dict | None = None) -> GateRecord:
        """The gate's directory in memory (`doc`: gate.json's document, as written)."""
        if self.corpus_record is None:
            raise ValueError("the gate's corpus part has not run")
        doc = doc if doc is not None else json.loads(json.dumps(self.as_json(), default=str))
        return GateRecord(self.config.out, doc, self.corpus_record, self.fuzz_record, self.config.baseline)


Say = Callable[[str], None]


def claim_out(out: Path) -> DirectoryLock:
    """The output directory, locked for this gate and emptied: an earlier gate's
    results are replaced, a directory that holds anything else is refused, and
    so is one another command is writing (`harness.results.lock`)."""
    holds = "an earlier gate's results"
    refuse_foreign(out, MARKER, holds)  # before a lock file is made in a directory that is not a gate's
    lock = lock_directory(out, "gate")
    try:
        refuse_foreign(out, MARKER, holds)
        remove(contents(out))
    except BaseException:
        lock.release()
        raise
    return lock


def run_gate(config: GateConfig, say: Say = lambda text: None, listener: Listener | None = None,
             progress: Progress | None = None) -> GateResult:
    """`say` gets the gate's messages, `progress` each corpus case as it starts,
    `listener` the campaign's progress: the gate itself prints nothing. Each
    reference evaluation is bounded by the engines' timeout too."""
    t0, started = time.monotonic(), time.time()
    lock = claim_out(config.out)
    try:
        with time_limit(config.timeout_seconds):
            return _run_gate(config, say, listener, progress, t0, started)
    except OSError as e:  # the engines' errors are the harness's own by now: this is a file's
        raise CannotWrite.from_os(e, e.filename or config.out) from None
    finally:
        lock.release()


def _run_gate(config: GateConfig, say: Say, listener: Listener | None, progress: Progress | None,
              t0: float, started: float) -> GateResult:
    from harness.campaign.loop import CampaignConfig, RunningCampaign, make_engines
    from harness.results.rundir import write_run_dir

    (config.out / MARKER).write_text(json.dumps({"running": True}) + "\n")  # marks the directory a gate's
    campaign = CampaignConfig(
        seed=config.seed, engines=config.engines, out=config.out / "fuzz", cases=config.budget_cases,
        minutes=config.budget_seconds / 60, jobs=config.jobs, reduce=False,
        timeout_seconds=config.timeout_seconds, batch_size=config.batch_size,
        engine_options=config.engine_options,
    )
    engines = make_engines(campaign)
    fuzz: RunningCampaign | None = None
    try:
        if config.budget_seconds > 0 and config.budget_cases != 0:
            # The fuzz shards start their own engines and fuzz while this process
            # runs the corpus: the budget's wall time is spent beside it, not after it.
            say(f"fuzzing for {config.budget_seconds:g} s, seed {config.seed}, in {config.jobs} "
                f"shard(s) beside the corpus")
            fuzz = RunningCampaign(campaign, listener, in_memory=True)
        say(f"starting {len(engines)} engines")
        corpus = run_corpus(config.cases, engines, progress=progress)
        say(f"corpus done in {time.monotonic() - t0:.1f} s")
        versions = dict(corpus.engines)
        explainer = Explainer(config.baseline, derived_entries(list(config.engines)), versions)
        by_id = {c.id: c for c in config.cases}
        items = corpus_items(corpus.results, by_id, explainer)
        _add_diffs([i for i in items if i.failed], by_id, engines)
        corpus_record = write_run_dir(config.out / "corpus", corpus, config.cases, started=started,
                                      kind="gate-corpus")
        summary: dict = {}
        cases: list[dict] = []
        occurrences: list[dict] = []
        fuzz_record: CampaignRecord | None = None
        if fuzz is not None:
            result = fuzz.result()
            fuzz_record = result.record
            assert fuzz_record is not None  # asked for in_memory
            summary, cases, occurrences = result.summary, list(fuzz_record.case_lines()), fuzz_record.occurrences
            found = fuzz_items(result.findings, campaign.out, config.seed, explainer, fuzz_record.saved)
            _add_fuzz_diffs([i for i in found if i.failed], engines,
                            {str(campaign.out / file): saved.case for file, saved in fuzz_record.saved.items()})
            items += found
        pairs = ab_pairs(list(config.engines))
        ab = [replace(d, file=_corpus_file(by_id.get(d.case_id)))
              for d in ab_differences("corpus", _corpus_verdicts(corpus), pairs, versions)]
        fuzz_ab = [_with_finding(d, occurrences, campaign.out)
                   for d in ab_differences("fuzz", _fuzz_verdicts(cases, config.seed), pairs, versions)]
        if fuzz_record is not None:
            by_file = {str(campaign.out / file): saved for file, saved in fuzz_record.saved.items()}
            fuzz_ab = reduce_regressions(fuzz_ab, engines, by_file, config.ab_reduce_seconds, say)
        ab += fuzz_ab
    finally:  # a diff or a reduction may have restarted one
        if fuzz is not None:
            fuzz.cancel()  # nothing when it is over; else (this process failed) its shards end now
        for engine in engines:
            engine.close()
    old = stale(config.baseline, explainer.used, versions, by_id, config.whole_corpus)
    result = GateResult(config, versions, items, old, ab, corpus, summary, cases, occurrences,
                        time.monotonic() - t0, started, corpus_record, fuzz_record)
    (config.out / MARKER).write_text(json.dumps(result.as_json(), indent=2, default=str) + "\n")
    return result




def _corpus_file(case: Case | None) -> str | None:
    return str(case.path) if case is not None and case.path else None


def _with_finding(d: ABDifference, occurrences: Sequence[dict], out: Path) -> ABDifference:
    """`d` with the finding file of `d.b`'s finding on the fuzz case `d.case_id`
    (`fuzz/SEED/INDEX`), and its detail when `d` has none (cases.jsonl holds verdicts alone)."""
    index = d.case_id.rpartition("/")[2]
    found = next((o for o in occurrences
                  if o.get("kind", "finding") == "finding" and o.get("engine") == d.b
                  and str(o.get("case")) == index), None)
    if found is None:
        return d
    return replace(d, file=str(out / found["file"]) if found.get("file") else None,
                   detail=d.detail or found.get("detail") or "")


# -- reducing A/B regressions --------------------------------------------------------


def reduce_regressions(differences: Sequence[ABDifference], engines, saved: Mapping[str, SavedCase],
                       seconds: float, say: Say = lambda text: None) -> list[ABDifference]:
    """`differences` with each regression's finding reduced (at most AB_REDUCE_SECONDS
    each, `seconds` for all of them): shrunk while the other build still gives its
    finding and the released engine still conforms, written beside the finding file
    (`KEY.reduced.yaml`). A finding shared by several regressions is reduced once.
    `saved`: the campaign's finding cases, by the file `ABDifference.file` names."""
    from harness.cases.casefile import save_case
    from harness.findings.finding import reduce_finding

    deadline = time.monotonic() + seconds
    done: dict[str, tuple[str | None, str]] = {}
    todo = [d for d in differences if d.regression and d.file]
    if todo and seconds > 0:
        say(f"reducing {len({d.file for d in todo})} A/B regression finding(s), at most {seconds:g} s")
    for d in todo:
        assert d.file is not None
        left = deadline - time.monotonic()
        if d.file in done or left < MIN_AB_REDUCE_SECONDS:
            continue
        file = saved.get(d.file)
        at_fault = [e for e in engines if e.name == d.b]
        released = [e for e in engines if e.name == d.a]
        if file is None or not at_fault or not released or not file.record.get("key"):
            continue
        record = file.record
        outcome = reduce_finding(file.case, record["key"], at_fault, engines, min(AB_REDUCE_SECONDS, left),
                                 bare=bool((record.get("facts") or {}).get("bare")), conforming=released)
        path = Path(d.file).with_name(Path(d.file).name.removesuffix(".yaml") + ".reduced.yaml")
        versions = {e.name: e.version() for e in engines}
        save_case(outcome.case, path, {**record, **outcome.record(Path(d.file).name, versions),
                                       "key": record["key"]})
        rows = sum(t.num_rows for t in file.case.tables.values())
        done[d.file] = (str(path), f"rows {rows} -> {outcome.rows}, {outcome.reduction.attempts} attempts, "
                                   f"{outcome.seconds:.1f} s, confirmed: {'yes' if outcome.confirmed else 'NO'}")
    return [replace(d, reduced=done[d.file][0], reduction=done[d.file][1]) if d.regression and d.file in done
            else d for d in differences]


def _corpus_verdicts(run: RunResults):
    by_case: dict[str, dict[str, tuple[str, str]]] = {}
    for r in run.results:
        by_case.setdefault(r.case, {})[r.engine] = (r.verdict.value, r.detail)
    return by_case.items()


def _fuzz_verdicts(cases: list[dict], seed: int):
    for line in cases:
        yield f"fuzz/{seed}/{line['index']}", {e: (v, "") for e, v in line["verdicts"].items()}


# -- diffs for failures ------------------------------------------------------------


def _add_diffs(items: Sequence[Item], cases: dict[str, Case], engines) -> None:
    for item in items[:DIFFS_SHOWN]:
        case = cases.get(item.case_id)
        if case is not None:
            item.diff = diff_text(case, item.engine, engines)


def _add_fuzz_diffs(items: Sequence[Item], engines, cases: Mapping[str, Case | None]) -> None:
    """`cases`: the campaign's saved cases, by the file `Item.file` names."""
    for item in [i for i in items if i.file][:DIFFS_SHOWN]:
        case = cases.get(item.file)
        if case is not None:
            item.diff = diff_text(case, item.engine, engines)


def diff_text(case: Case, engine_name: str, engines) -> str:
    """`engine_name`'s answer on `case` against the reference's, as text (empty when
    the engine gave no answer or the reference has none)."""
    import io

    from harness.findings.replay import replay
    from harness.findings.replay_text import write_diff

    reference = next((e for e in engines if e.is_reference), None)
    engine = next((e for e in engines if e.name == engine_name), None)
    made = None
    if engine is None and reference is not None:
        # A profile the campaign drew (`duckdb[threads=4]`): not among the gate's
        # engines, so made for the diff alone.
        from harness.engines.registry import get_engine

        try:
            engine = made = get_engine(engine_name)
            engine.start()
        except HarnessError as e:
            return f"(no diff: {e})"
    if reference is None or engine is None or engine.is_reference:
        return ""
    try:
        rep = replay(case, [reference, engine])
    except Exception as e:  # noqa: BLE001 (a diff is an aid; the verdict stands without it)
        return f"(no diff: {type(e).__name__}: {e})"
    finally:
        if made is not None:
            made.close()
    ran = rep.engines[1]
    if ran.answer is None or ran.diff is None:
        return ""
    out = io.StringIO()
    write_diff(ran.diff, ran.answer.columns, out)
    return out.getvalue()
