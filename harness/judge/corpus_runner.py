"""The corpus on engines in batches: `runner.run_cases`' verdicts, without one
round trip per (case, engine).

`run_cases` runs each case on each engine in turn, and Spark costs about
150 ms a query whatever its size. Here the cases go in chunks of `CHUNK`:
the parent prepares a chunk (instruments it, evaluates the reference, renders
each engine's queries) and hands each engine its chunk's queries in one call
(`Engine.run_many`: a worker gets them in one message, Spark runs them from
several threads at once). Engines in processes of their own
(`Engine.out_of_process`) run their chunks in a thread of the parent each, so
they run at the same time as one another and as the parent preparing the next
chunk; engines in this process run theirs in turn, on this thread (an
in-process SQLite connection belongs to the thread that made it). Each answer
is judged, a chunk at a time and `AHEAD` chunks behind, exactly as `run_case`
judges it, case by case in order.

What stays per query: an error, a rejection or an unsupported feature is
that query's own answer (`Ran`); a worker that crashes or hangs in a batch
is killed and each query it had not answered runs again alone
(`WorkerEngine.run_each`), so a crash or a timeout is the verdict of the
query that causes it, and only its.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from harness.cases.case import Case
from harness.core.errors import EngineCrash, EngineError, EngineTimeout, InvalidQuery, Unsupported
from harness.engines.base import Engine, Item, Ran, start_together
from harness.judge.compare import Verdict
from harness.judge.runner import (
    PreparedCase,
    Progress,
    Result,
    RunResults,
    _failed,
    _harness_failed,
    _Prepared,
    judge_answer,
    judge_source_answer,
    reference_table,
    run_bare,
    said_restricted,
)

# Cases per batch: enough that a round trip is shared by many queries, few
# enough that the engines start while the parent still prepares the next.
CHUNK = 64

# Chunks prepared and handed to the engines before the oldest is judged: the
# engines always have the next chunk while the parent judges one, and a large
# corpus is not held prepared all at once.
AHEAD = 2

# What a query's verdict is made of; anything else is raised, as `run_case` raises it.
_ANSWERED = (Unsupported, EngineCrash, EngineTimeout, EngineError)


@dataclass
class _Pending:
    """One (case, engine): its result so far, and the query it runs (None when
    rendering it already gave the verdict)."""

    prepared: _Prepared
    result: Result
    item: Item | None
    seconds: float  # the parent's own time on it so far (rendering)


@dataclass
class _Chunk:
    cases: list[PreparedCase]
    pending: dict[str, list[_Pending]] = field(default_factory=dict)  # engine name -> one per case
    answers: dict[str, Future[list[Ran]] | list[Ran]] = field(default_factory=dict)


def run_corpus(cases: Sequence[Case], engines: Sequence[Engine], progress: Progress | None = None,
               bare: bool = False, chunk: int = CHUNK) -> RunResults:
    """`runner.run_cases`' results (the same verdicts, facts and details per
    (case, engine), in the same order), each engine's queries run in batches."""
    t0 = time.perf_counter()
    run = RunResults(engines={})
    # In processes of their own, the engines start at the same time (a Spark worker takes seconds).
    seconds = start_together(engines)
    for engine in engines:
        run.engines[engine.name] = engine.version()
        run.startup_seconds[engine.name] = seconds[engine.name]
    apart = [e for e in engines if e.out_of_process and not e.is_reference]
    pools = {e.name: ThreadPoolExecutor(1, thread_name_prefix=f"corpus {e.name}") for e in apart}
    ahead: list[_Chunk] = []  # submitted, not judged yet: at most AHEAD
    try:
        for start in range(0, len(cases), chunk):
            batch = _Chunk([])
            for i in range(start, min(start + chunk, len(cases))):
                if progress:
                    progress(i, len(cases), cases[i].id)
                batch.cases.append(PreparedCase(cases[i]))
            for engine in engines:
                if engine.is_reference:
                    continue
                pending = batch.pending[engine.name] = [_render(p, engine) for p in batch.cases]
                items = [p.item for p in pending if p.item is not None]
                pool = pools.get(engine.name)
                batch.answers[engine.name] = (pool.submit(engine.run_many, items) if pool is not None
                                              else [] if not items else engine.run_many(items))
            ahead.append(batch)
            if len(ahead) > AHEAD and not bare:
                run.results.extend(_judge_chunk(ahead.pop(0), engines, run, bare))
        if bare:  # the bare queries run from this thread: no batch may be under way then
            wait([a for batch in ahead for a in batch.answers.values() if isinstance(a, Future)])
        for batch in ahead:
            run.results.extend(_judge_chunk(batch, engines, run, bare))
    except BaseException:  # the caller closes the engines, which ends a batch under way
        for pool in pools.values():
            pool.shutdown(wait=False, cancel_futures=True)
        raise
    for pool in pools.values():
        pool.shutdown()
    run.wall_seconds = time.perf_counter() - t0
    return run




def _render(prepared: PreparedCase, engine: Engine) -> _Pending:
    """`runner._judge_engine` up to running the query: what it does before, and
    the verdicts it gives without running."""
    t0 = time.perf_counter()
    p = prepared.for_engine(engine)
    result = Result(p.case.id, engine.name, Verdict.ERROR)
    ref = p.under(engine.dialect.semantics)
    result.reference_answer = reference_table(ref)
    item: Item | None = None
    try:
        engine.check_tables(p.tables)
        result.sql = engine.render(p.plan.query)
        item = (p.tables, result.sql)
    except InvalidQuery as e:  # the writer could not spell the model: a harness bug
        _harness_failed(result, Verdict.ERROR, f"the harness cannot render this query: {e}")
        result = said_restricted(result, p)
    except _ANSWERED as e:
        result = said_restricted(_failed(result, e, ref, engine), p)
    return _Pending(p, result, item, time.perf_counter() - t0)


def _judge_chunk(batch: _Chunk, engines: Sequence[Engine], run: RunResults, bare: bool) -> list[Result]:
    answers = {name: iter(a.result() if isinstance(a, Future) else a) for name, a in batch.answers.items()}
    results: list[Result] = []
    for k, prepared in enumerate(batch.cases):
        mine = []
        for engine in engines:
            if engine.is_reference:
                result = prepared.reference.named(engine.name)
                result.seconds = prepared.plain.seconds
            else:
                pending = batch.pending[engine.name][k]
                result = pending.result
                if pending.item is not None:
                    t0 = time.perf_counter()
                    ran = next(answers[engine.name])
                    result = _judged(pending, engine, ran)
                    result.seconds = pending.seconds + ran.seconds + time.perf_counter() - t0
                else:
                    result.seconds = pending.seconds
            run.query_seconds[engine.name] += result.seconds
            mine.append(result)
        run.add_times(prepared, mine)
        prepared.flag_suspect_reference(mine, engines)
        source = judge_source_answer(prepared)
        if source is not None:
            run.sources.append(source)
        if bare:  # one query at a time, as `run_case` runs it (`run_corpus` waits for every batch first)
            run_bare(prepared.case, mine, engines, run.query_seconds, prepared.reference)
        results.extend(mine)
    return results


def _judged(pending: _Pending, engine: Engine, ran: Ran) -> Result:
    """`runner._judge_engine` from the query's answer on."""
    p, result = pending.prepared, pending.result
    if ran.error is None:
        assert ran.answer is not None
        return judge_answer(p, engine, result, ran.answer)
    if isinstance(ran.error, _ANSWERED):
        return said_restricted(_failed(result, ran.error, p.under(engine.dialect.semantics), engine), p)
    raise ran.error
