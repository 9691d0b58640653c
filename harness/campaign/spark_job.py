"""A campaign as a Spark job (`window-harness fuzz --on-spark`).

The same shards as the local pool (`loop.Shard`), mapped over Spark:

1. the driver makes a DataFrame of shard ids 0..jobs-1, one partition each,
   and maps it with `mapInArrow`: each task is shard j of the local pool (the
   groups j, j + jobs, ...: same seeds, same steering, so the same cases). It
   generates each group, runs it on the reference and on every engine that
   is not Spark (DuckDB, DataFusion, SQLite, their profiles) inside the
   executor, and returns the verdicts (answers only where they are not a
   pass, for the findings);
2. the driver runs Spark-under-test (the session the job runs on, or any
   Spark profile of it) on the same groups, batched the same way, adds its
   verdicts, and records every case exactly as the local pool does (reruns,
   findings, reduction);
3. verdicts and findings are also written as Parquet under `--out`
   (`verdicts.parquet`: one row per case and engine; `findings.parquet`).

On one machine the job runs on local[*]; with `--spark-master URL` on a
cluster (the harness and its engines installed on every node, and `--out`
on the driver); with `--spark-remote sc://HOST:PORT` through Spark Connect.
With `--minutes`, the executors stop drawing new groups when time is up;
the driver then finishes Spark-under-test on what they made.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from harness.campaign.batch_runner import CaseRun
from harness.campaign.loop import (
    CampaignConfig,
    CampaignResult,
    Listener,
    Shard,
    _check_engines,
    _meta,
    case_seed,
    make_engine,
    make_engines,
    slot_size,
    summarize,
)
from harness.core.errors import InvalidInput
from harness.engines.base import Engine
from harness.generate.cases import GeneratedCase, Limits, generate_case, generate_sibling
from harness.judge.compare import PASSING
from harness.judge.oracle import time_limit
from harness.judge.runner import PreparedCase, Result, flag_suspect_reference
from harness.results.store import CASES, FINDINGS, CampaignStore, Progress

SHARD_SCHEMA = "shard long, first long, payload binary"
VERDICTS_PARQUET, FINDINGS_PARQUET = "verdicts.parquet", "findings.parquet"


def is_spark(name: str) -> bool:
    """Spark and its profiles run from the driver; every other engine in the executors."""
    from harness.engines.registry import engine_class

    return engine_class(name).runs_on_spark


def run_on_spark(config: CampaignConfig, master: str | None = None, remote: str | None = None,
                 listener: Listener | None = None) -> CampaignResult:
    if master and remote:
        raise InvalidInput("give --spark-master or --spark-remote, not both", "spark-remote")
    _check_engines(config)
    url = remote or master or "local[*]"
    options = {name: {**config.engine_options.get(name, {}), "master": url}
               for name in config.engines if is_spark(name)}
    config = replace(config, engine_options={**config.engine_options, **options})
    store = CampaignStore(config.out, {**_meta(config), "on_spark": url}, config.resume)
    started = time.time()
    before = len(store.progress.done)
    deadline = started + 60 * config.minutes if config.minutes is not None else None

    def emit(line: dict) -> None:
        kind = line.pop("kind")
        if kind == "versions":
            store.record_versions(line["versions"])
        else:
            {"case": store.record_case, "finding": store.record_finding,
             "reduced": store.record_reduction}[kind](line)
        if listener is not None:
            listener(store.progress, time.time() - started)

    # Python workers of a local Spark run this interpreter (the one the harness
    # is installed in); on a cluster, PYSPARK_PYTHON names the nodes' own.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    try:
        from harness.engines.spark.adapter import SQL_CONF, root_session
        from harness.engines.spark.connect import is_connect_url, open_session

        spark = open_session(url, SQL_CONF) if is_connect_url(url) else root_session(url).spark
        groups = _executor_groups(spark, config, store.progress, deadline)
        _finish_on_driver(config, store.progress, store.findings_dir, groups, emit)
    finally:
        wall = time.time() - started
        summary = summarize(config, store.progress, wall, len(store.progress.done) - before)
        summary["on_spark"] = url
        try:
            store.write_summary(summary)
            write_parquet(config.out)
        finally:
            store.close()  # releases the directory: last
    findings = [t.as_json() for t in store.progress.findings.values()]
    return CampaignResult(config.out, summary, findings)


# -- in the executors -------------------------------------------------------------------


def _executor_groups(spark, config: CampaignConfig, progress: Progress,
                     deadline: float | None) -> list[tuple[int, dict]]:
    """Run every shard's groups on the executors' engines; (first index, payload) per group."""
    executor_engines = tuple(name for name in config.engines if not is_spark(name))
    # The sibling counts are chosen for every engine, Spark too (as the local pool chooses them).
    executor = replace(config, engines=executor_engines, cost_engines=config.cost_engines or config.engines)
    work = pickle.dumps((executor, progress, deadline))
    shards = spark.range(0, config.jobs, 1, config.jobs)
    rows = shards.mapInArrow(_shard_task(work), SHARD_SCHEMA).collect()
    out = [(row["first"], pickle.loads(row["payload"])) for row in rows]
    return sorted(out, key=lambda item: item[0])


def _shard_task(work: bytes):
    def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        config, progress, deadline = pickle.loads(work)
        for batch in batches:
            for job in batch.column(0).to_pylist():
                yield from _run_shard(config, progress, job, deadline)

    return task


def _run_shard(config: CampaignConfig, progress: Progress, job: int,
               deadline: float | None) -> Iterator[pa.RecordBatch]:
    import tempfile

    shard = Shard(config, job, progress, Path(tempfile.gettempdir()))
    # Profiles of one engine are compared with each other on the driver: keep their answers.
    count = Counter(e.implementation for e in shard.engines)
    keep = {e.name for e in shard.engines if count[e.implementation] > 1}
    try:
        for engine in shard.engines:
            engine.start()
        yield from _judged(shard, job, keep, deadline)
    finally:
        for engine in shard.engines:
            engine.close()


def _judged(shard: Shard, job: int, keep: set[str], deadline: float | None) -> Iterator[pa.RecordBatch]:
    for indices in shard.groups(deadline):
        generated = shard._generate(indices)
        # The reference is bounded as each engine query is, as in the local pool's shards
        # (not across the yield: the limit is this judging's, not the consumer's).
        with time_limit(shard.config.timeout_seconds):
            runs = shard.judge(generated, indices, complete=True, flag=False)
        first = indices[0] - indices[0] % slot_size(shard.config)
        # The group's sibling count, chosen here: the driver records it with each case.
        siblings = shard._siblings(first)
        payload = {i: (generated[i][0].picks, generated[i][1], _light(runs[i], keep), siblings)
                   for i in indices}
        yield pa.RecordBatch.from_pydict(
            {"shard": [job], "first": [indices[0]], "payload": [pickle.dumps(payload)]},
            schema=pa.schema([("shard", pa.int64()), ("first", pa.int64()), ("payload", pa.binary())]))


def _light(run: CaseRun, keep: set[str]) -> CaseRun:
    """The run without the answers of passing verdicts (only findings, and the
    comparison of profiles of one engine, need answers)."""
    return replace(run, results=[r if r.verdict not in PASSING or r.engine in keep else replace(r, answer=None)
                                 for r in run.results])


# -- on the driver ----------------------------------------------------------------------


def _finish_on_driver(config: CampaignConfig, progress: Progress, findings_dir: Path,
                      groups: list[tuple[int, dict]], emit) -> None:
    """Spark-under-test on each group, then every case recorded as the local pool records it."""
    # Spark-under-test runs in this process, on the session the job runs on;
    # the other engines are here for reruns, metamorphic checks and reduction.
    from harness.engines.registry import get_engine

    others = dict(zip([n for n in config.engines if not is_spark(n)],
                      make_engines(replace(config, engines=tuple(n for n in config.engines if not is_spark(n)))),
                      strict=True))
    engines = [get_engine(n, **config.engine_options.get(n, {})) if is_spark(n) else others[n]
               for n in config.engines]
    shard = _DriverShard(config, 0, progress, findings_dir, engines)
    spark_engines = [e for e in engines if is_spark(e.name)]
    spark_side = replace(config, engines=tuple(e.name for e in spark_engines))
    spark_shard = Shard(spark_side, 0, progress, findings_dir, spark_engines) if spark_engines else None
    try:
        emit({"kind": "versions", "versions": {e.name: e.version() for e in engines}})
        with time_limit(config.timeout_seconds):
            _judge_on_driver(config, shard, spark_shard, groups, emit)
    finally:
        for engine in [*shard.engines, *shard.profiled.values()]:
            engine.close()


class _DriverShard(Shard):
    """The driver's shard, which records every case. A Spark profile a case draws
    (spark[window-buffer]) runs on a session of the driver's own Spark, as
    Spark-under-test does: in a worker process it would be a second Spark
    application, which a standalone cluster leaves waiting for cores while the
    job's application holds them all (until the query times out)."""

    def _drawn_engine(self, name: str) -> Engine:
        if not is_spark(name) or name in self.profiled:
            return super()._drawn_engine(name)
        engine = self.profiled[name] = make_engine(name, replace(self.config, isolate=False))
        engine.start()
        self.maker.engines = [*self.engines, *self.profiled.values()]  # its findings reduce on it
        return engine


def _judge_on_driver(config: CampaignConfig, shard: Shard, spark_shard: Shard | None,
                     groups: list[tuple[int, dict]], emit) -> None:
    for _, payload in groups:
        indices = sorted(payload)
        first = indices[0] - indices[0] % slot_size(config)
        for sh in (shard, spark_shard):
            if sh is not None:
                sh.shape_siblings[case_seed(config.seed, first)] = payload[indices[0]][3]
        generated = _regenerate(config, indices, payload)
        spark_runs = (spark_shard.judge(generated, indices, complete=True, flag=False)
                      if spark_shard is not None else {})
        for index in indices:
            run = _merged(config, shard.engines, generated[index][0], payload[index][2],
                          spark_runs.get(index))
            shard._record_case(index, generated[index], run, emit)


def _regenerate(config: CampaignConfig, indices: list[int],
                payload: dict) -> dict[int, tuple[GeneratedCase, float]]:
    """The group's cases again, from its first case's seed and stored picks."""
    limits = Limits(config.rows, config.windows, config.large_share)
    size = slot_size(config)
    first = indices[0] - indices[0] % size
    shape_picks = payload[first][0] if first in payload else payload[indices[0]][0]
    shape = generate_case(case_seed(config.seed, first), picks=shape_picks, data=config.data, limits=limits)
    return {i: (shape if i == first else generate_sibling(shape, case_seed(config.seed, i), config.data, limits),
                payload[i][1]) for i in indices}


def _merged(config: CampaignConfig, engines: list[Engine], generated: GeneratedCase,
            executor: CaseRun, spark: CaseRun | None) -> CaseRun:
    """One case's verdicts from both sides, in the campaign's engine order, and
    the suspect-reference check over all of them."""
    by_engine: dict[str, Result] = {r.engine: r for r in executor.results}
    unconfirmed, batched = list(executor.unconfirmed), set(executor.batched)
    if spark is not None:
        by_engine.update({r.engine: r for r in spark.results})
        unconfirmed += spark.unconfirmed
        batched |= spark.batched
    results = [by_engine[name] for name in config.engines if name in by_engine]
    reference = executor.reference
    if reference is None or generated.case.expected is not None:
        reference = PreparedCase(generated.case).reference
    flag_suspect_reference(generated.case, reference, results, engines)
    return CaseRun(results, frozenset(batched), unconfirmed, reference)


def write_parquet(out: Path) -> None:
    """verdicts.parquet (case x engine) and findings.parquet, from the campaign's JSON lines."""
    rows = []
    cases_file = out / CASES
    if cases_file.exists():
        for text in cases_file.read_text().splitlines():
            if not text.strip():
                continue
            line = json.loads(text)
            for engine, verdict in line.get("verdicts", {}).items():
                rows.append({"index": line["index"], "seed": line["seed"], "shape": line.get("shape"),
                             "engine": engine, "verdict": verdict,
                             "seconds": line.get("seconds", {}).get(engine),
                             "batched": engine in line.get("batched", [])})
    schema = pa.schema([("index", pa.int64()), ("seed", pa.string()), ("shape", pa.string()),
                        ("engine", pa.string()), ("verdict", pa.string()), ("seconds", pa.float64()),
                        ("batched", pa.bool_())])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), out / VERDICTS_PARQUET)
    findings = []
    findings_file = out / FINDINGS
    if findings_file.exists():
        for text in findings_file.read_text().splitlines():
            line = json.loads(text) if text.strip() else {}
            if line and "event" not in line:
                findings.append({k: str(line.get(k, "")) for k in
                                 ("key", "signature", "engine", "verdict", "classification", "case",
                                  "seed", "file", "detail")})
    fields = ("key", "signature", "engine", "verdict", "classification", "case", "seed", "file", "detail")
    pq.write_table(pa.Table.from_pylist(findings, schema=pa.schema([(f, pa.string()) for f in fields])),
                   out / FINDINGS_PARQUET)
