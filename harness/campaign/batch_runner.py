"""Run a batch of sibling cases (one query, rows of their own) with one query per engine.

`run_batch` gives each case the same verdicts `run_case` would, with far
fewer engine calls (see `harness.campaign.batching` for the rewrite):

1. each case is instrumented; the reference evaluates the batch once and
   splits it by case (`harness.campaign.reference_batch`): an engine's
   answer identical to the case's part is a match at once, any other is
   judged in full against the case's own evaluation (the oracle and the
   tie-aware comparison stay per case);
2. per engine, the cases the reference answers under that engine's profile
   are stacked into one query; its answer is split by case and each part is
   judged exactly as the case's own answer would be;
3. a case the batch cannot answer (the batched query failed, the case is
   invalid by definition, the shape does not batch) runs on its own;
4. a batched verdict that is not a pass is replaced by that engine's verdict
   on the case alone: every finding is confirmed unbatched. A batched
   verdict the case alone does not reproduce is kept as `unconfirmed`
   (batching changed the plan: the campaign re-checks it in the
   batch-of-one form, see `batch_of_one`);
5. the suspect-reference check runs over the final verdicts.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace

import pyarrow as pa

from harness.campaign.batching import (
    CASE_ID,
    Batch,
    NotBatchable,
    batch_query,
    make_batch,
    stack_tables,
)
from harness.campaign.reference_batch import BatchedReference
from harness.cases.case import Case
from harness.core.errors import EngineCrash, EngineError, EngineTimeout, InvalidQuery, Unsupported
from harness.core.model import ColumnDef, TableSchema
from harness.core.stages import stage
from harness.core.types import INT64
from harness.engines.base import Engine
from harness.judge.compare import PASSING, Verdict
from harness.judge.runner import PreparedCase, Result, _judge_engine, _Prepared, judge_answer


@dataclass
class CaseRun:
    """One case's verdicts from a batch, and how they came."""

    results: list[Result]
    batched: frozenset[str] = frozenset()  # engines whose verdict came from the batched query
    # Batched verdicts that the case run alone did not reproduce (its unbatched
    # verdicts are the ones in `results`).
    unconfirmed: list[Result] = field(default_factory=list)
    # The reference's own verdict (judged against the case's rows), for a
    # caller that adds other engines' verdicts and then flags a suspect reference.
    reference: Result | None = None


def run_batch(cases: Sequence[Case], engines: Sequence[Engine], clock: Counter | None = None,
              flag: bool = True) -> list[CaseRun]:
    """Verdicts for sibling cases (one query, one set of table schemas). With
    `flag=False` the suspect-reference check is the caller's (see `run_case`).

    The engines answer their batched queries at the same time as the harness
    works: each batched query is sent (each engine from a thread of its own,
    the slowest first) as soon as the reference has said which cases it
    holds, and its answer is judged once every query is on its way. An engine
    is only ever asked one thing at a time."""
    if not cases:
        return []
    if any(c.query != cases[0].query or c.schemas != cases[0].schemas for c in cases[1:]):
        raise ValueError("a batch holds cases of one query over one set of table schemas")
    t0 = time.perf_counter()
    reference = BatchedReference(cases)  # one evaluation for the batch, split by case
    restrictions: dict = {}  # what each engine runs of the query: the siblings' query is one
    prepared = [PreparedCase(c, reference.source(i), restrictions) for i, c in enumerate(cases)]
    reference_seconds = (time.perf_counter() - t0) / len(cases)
    others = sorted((e for e in engines if not e.is_reference), key=_query_cost, reverse=True)
    columns: dict[str, list[Result]] = {}
    batched: dict[str, list[bool]] = {}
    with ThreadPoolExecutor(max_workers=max(1, len(others)), thread_name_prefix="batch") as pool:
        sent = {e.name: _send([p.for_engine(e) for p in prepared], e, pool) for e in others}
        for engine in engines:
            if engine.is_reference:
                column = [replace(p.reference.named(engine.name), seconds=reference_seconds) for p in prepared]
            else:
                column, batched[engine.name] = _engine_column(sent[engine.name])
            if clock is not None:
                clock[engine.name] += sum(r.seconds for r in column)
            columns[engine.name] = column
    by_name = {e.name: e for e in engines}
    runs = []
    confirmed: dict[tuple[str, str], str] = {}  # a finding confirmed alone: the case it was confirmed on
    for i, p in enumerate(prepared):
        results = [columns[e.name][i] for e in engines]
        from_batch = frozenset(name for name, flags in batched.items() if flags[i])
        run = _confirmed(p, results, from_batch, by_name, clock, confirmed)
        if flag:
            p.flag_suspect_reference(run.results, engines)
        runs.append(run)
    return runs


def _query_cost(engine: Engine) -> float:
    from harness.campaign.siblings import DEFAULT_QUERY_SECONDS, QUERY_SECONDS, family

    return QUERY_SECONDS.get(family(engine.name), DEFAULT_QUERY_SECONDS)


def _confirmed(prepared: PreparedCase, results: list[Result], from_batch: frozenset[str],
               engines: dict[str, Engine], clock: Counter | None,
               confirmed: dict[tuple[str, str], str] | None = None) -> CaseRun:
    """The batch's verdicts where they pass; elsewhere the engine's verdict on the case
    alone. `confirmed`: the findings (engine, signature) of this batch confirmed alone
    so far. The siblings share the query, so the same finding on a later one keeps its
    batched verdict (judged on its own rows all the same), with a note naming the case
    it was confirmed on; a finding the case alone did not reproduce is never taken so."""
    from harness.findings.finding import finding_signature

    final, unconfirmed, still = [], [], set(from_batch)
    for result in results:
        if result.engine not in from_batch or result.verdict in PASSING:
            final.append(result)
            continue
        key = (result.engine, finding_signature(prepared.case, result).key)
        if confirmed is not None and key in confirmed:
            final.append(replace(result, notes=(*result.notes, f"from the batched query: the same finding was "
                                                               f"confirmed alone on {confirmed[key]}")))
            continue
        engine = engines[result.engine]
        t0 = time.perf_counter()
        with stage("confirm"):
            alone = _judge_engine(prepared.for_engine(engine), engine)
        alone.seconds = time.perf_counter() - t0
        if clock is not None:
            clock[engine.name] += alone.seconds
        if alone.verdict is not result.verdict:
            unconfirmed.append(result)
        elif confirmed is not None:
            confirmed[key] = prepared.case.id
        final.append(alone)
        still.discard(result.engine)
    return CaseRun(final, frozenset(still), unconfirmed, prepared.reference)


@dataclass
class _Sent:
    """One engine's batched query, on its way: what `_engine_column` judges."""

    engine: Engine
    prepared: list[_Prepared]
    results: list[Result | None]
    members: list[int] = field(default_factory=list)
    batch: Batch | None = None
    sql: str = ""
    answer: Future | None = None  # (the engine's answer, its seconds)


def _send(prepared: list[_Prepared], engine: Engine, pool: ThreadPoolExecutor) -> _Sent:
    """Start the engine's batched query over the cases the reference finds valid under
    its profile (when two or more are); the rest of the column is `_engine_column`'s."""
    sent = _Sent(engine, prepared, [None] * len(prepared))
    profile = engine.dialect.semantics
    sent.members = [i for i, p in enumerate(prepared)
                    if p.under(profile).invalid is None and p.under(profile).gap is None]
    if len(sent.members) < 2:
        return sent
    plan = prepared[sent.members[0]].plan
    try:
        with stage("batching"):
            sent.batch = make_batch(plan.query, [prepared[i].tables for i in sent.members])
        with stage(f"engine {engine.name}"):
            sent.sql = engine.render(sent.batch.query)
    except NotBatchable:
        sent.batch = None
        return sent
    except (Unsupported, InvalidQuery):
        # A feature of the query itself (not of the batching) is every case's verdict.
        sent.batch = None
        shared = sent.results[sent.members[0]] = _judge_engine(prepared[sent.members[0]], engine)
        if shared.verdict is Verdict.UNSUPPORTED:
            for i in sent.members:
                sent.results[i] = replace(shared, case=prepared[i].case.id)
        return sent
    sent.answer = pool.submit(_timed_run, engine, sent.batch, sent.sql)
    return sent


def _timed_run(engine: Engine, batch: Batch, sql: str) -> tuple[pa.Table, float]:
    t0 = time.perf_counter()
    answer = engine.run(batch.tables, sql)
    return answer, time.perf_counter() - t0


def _engine_column(sent: _Sent) -> tuple[list[Result], list[bool]]:
    """Each case's verdict on one engine, and whether it came from the batched query."""
    if sent.answer is not None:
        _judge_batched(sent)
    results, engine = sent.results, sent.engine
    batched = [r is not None for r in results]
    for i, p in enumerate(sent.prepared):
        if results[i] is None:
            t0 = time.perf_counter()
            results[i] = _judge_engine(p, engine)
            results[i].seconds = time.perf_counter() - t0  # type: ignore[union-attr]
    return results, batched  # type: ignore[return-value]


def _judge_batched(sent: _Sent) -> None:
    """Fill `results` for the members the batched answer holds; leave the rest None."""
    engine, prepared, members, results = sent.engine, sent.prepared, sent.members, sent.results
    assert sent.answer is not None and sent.batch is not None
    try:
        with stage(f"engine {engine.name}"):  # the wait: what the harness's own work did not cover
            answer, seconds = sent.answer.result()
        with stage("batching"):
            parts = sent.batch.split(answer)
    except Unsupported:
        # A value (or type) in some case's rows the engine cannot hold: a property of
        # that case's data, not of the query, so each case runs on its own and says so.
        return
    except (EngineError, EngineCrash, EngineTimeout, NotBatchable):
        _shared_refusal(prepared, members, engine, results)
        return
    share = seconds / len(members)
    for i, part in zip(members, parts, strict=True):
        t1 = time.perf_counter()
        result = judge_answer(prepared[i], engine,
                              Result(prepared[i].case.id, engine.name, Verdict.ERROR, sql=sent.sql), part)
        result.seconds = share + time.perf_counter() - t1
        results[i] = result


def _shared_refusal(prepared: list[_Prepared], members: list[int], engine: Engine,
                    results: list[Result | None]) -> None:
    """The batched query failed. If the first case alone is refused as not
    implemented (a property of the query and the column types, which every
    sibling shares), so is every case; otherwise each runs on its own."""
    first = _judge_engine(prepared[members[0]], engine)
    results[members[0]] = first
    # Refused in the engine's own words (no feature of its dialect's tables).
    if first.verdict is Verdict.UNSUPPORTED and first.facts.feature is None:
        for i in members[1:]:
            results[i] = replace(first, case=prepared[i].case.id, notes=(
                *first.notes, f"judged once for its batch: every sibling shares the query ({first.case})"))


def batch_of_one(case: Case) -> Case:
    """The case as its batched query over its own rows alone: a plain case.

    A verdict seen only in a batch may come from the plan batching gives (a
    PARTITION BY the case id); run as this case it is checked on its own.
    Raises NotBatchable when the shape does not batch.
    """
    from harness.sql.writer import write

    query = batch_query(case.query)
    schemas = tuple(TableSchema(s.name, (*s.columns, ColumnDef(CASE_ID, INT64, nullable=False)))
                    for s in case.schemas)
    tables = stack_tables([case.tables])
    return replace(case, id=f"{case.id}#batched", query=query, sql=write(query), schemas=schemas,
                   tables=tables, expected=None, description=f"{case.description} (as a batch of one)")

