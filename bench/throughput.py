"""Verified cases per second: the naive loop against the batched pipeline.

One run measures, on the same seeds, the two ways a campaign can run its
cases on the reference, Spark, DuckDB and DataFusion:

- naive: one query per case per engine (`harness.judge.runner.run_case`);
- batched: one query per group of sibling cases per engine
  (`harness.campaign.batch_runner.run_batch`), every case still judged on its own.

The cases: 20-row tables, 3 window expressions, groups of `--batch-size`
siblings (one query shape, rows of their own); a shape a campaign gives no
siblings (none of the engines can run its batched query, or it must be
refused: each sibling would run alone) is its one case. The naive loop runs the
first `--naive-cases` of them (it is slow: Spark takes ~150 ms a query);
the batched pipeline runs all `--cases`. Both generate their cases inside
the timed loop, as a campaign does.

    .venv/bin/python bench/throughput.py [--cases N] [--naive-cases N]
        [--batch-size N] [--engines LIST] [--seed S] [--json] [--profile FILE]

Prints verified cases/s for each, their ratio (the naive loop is the
baseline, run in the same process), each engine's share of the wall time,
the harness's own share (generation + reference + comparison: the wall time
in which no engine was answering; engines answer at once, from threads, while
the harness works) and the peak RSS of this Python process. Exits 1 when a target is missed:
ratio >= 50, batched >= 300 verified cases/s, overhead <= 30%, RSS <= 2 GiB.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import resource
import sys
import time
from collections import Counter
from collections.abc import Mapping

import pyarrow as pa

from harness.campaign.batch_runner import run_batch
from harness.campaign.siblings import batched_engines
from harness.engines.base import Engine
from harness.engines.registry import get_engine
from harness.generate.cases import GeneratedCase, Limits, generate_case, generate_sibling
from harness.judge.compare import Verdict
from harness.judge.runner import run_case

TARGETS = {"ratio": 50.0, "batched_cases_per_s": 300.0, "overhead_fraction": 0.30, "peak_rss_mb": 2048.0}
LIMITS = Limits(rows=20, windows=3)
# A case is verified when every engine's verdict is a judgement of its answer
# (or a recorded refusal): not a harness error, crash or timeout.
VERIFIED = frozenset({Verdict.MATCH, Verdict.MISMATCH, Verdict.TYPE_MISMATCH, Verdict.UNSUPPORTED,
                      Verdict.SUSPECT_REFERENCE, Verdict.INCONCLUSIVE, Verdict.ERROR})


class Timed(Engine):
    """An engine that counts the seconds it spends rendering and answering, and keeps
    when: the batched pipeline runs engines at once (each from a thread of its own,
    while the harness works), so the harness's share is the wall time no engine
    covered, not the wall time minus every engine's seconds."""

    spans: list[tuple[float, float]] = []  # every engine's (start, end), shared

    def __init__(self, inner: Engine, clock: Counter) -> None:
        self.inner, self.clock = inner, clock
        self.name, self.dialect = inner.name, inner.dialect
        self.is_reference, self.shares_code_with = inner.is_reference, inner.shares_code_with

    def version(self) -> str:
        return self.inner.version()

    def start(self) -> None:
        self.inner.start()

    def render(self, query) -> str:
        t0 = time.perf_counter()
        try:
            return self.inner.render(query)
        finally:
            self._spent(t0)

    def run(self, tables: Mapping[str, pa.Table], sql: str) -> pa.Table:
        t0 = time.perf_counter()
        try:
            return self.inner.run(tables, sql)
        finally:
            self._spent(t0)

    def _spent(self, t0: float) -> None:
        t1 = time.perf_counter()
        self.clock[self.name] += t1 - t0
        Timed.spans.append((t0, t1))


def covered(spans: list[tuple[float, float]]) -> float:
    """The seconds at least one engine was busy (the union of the spans)."""
    total, end = 0.0, float("-inf")
    for start, stop in sorted(spans):
        if stop > end:
            total += stop - max(start, end)
            end = stop
    return total


def groups(seed: str, cases: int, size: int) -> list[list[str]]:
    """The seeds of each group: the first draws the shape, the others their rows."""
    seeds = [f"{seed}/{i}" for i in range(cases)]
    return [seeds[i:i + size] for i in range(0, cases, size)]


def generate(group: list[str], engines: list[str]) -> list[GeneratedCase]:
    """The group's cases: the shape and its siblings, or the shape alone where a
    campaign gives it no siblings (no engine can run its batched query, or it
    must be refused: each sibling would run alone, `harness.campaign.siblings`)."""
    shape = generate_case(group[0], limits=LIMITS)
    if not batched_engines(shape.case, engines):
        return [shape]
    return [shape] + [generate_sibling(shape, s, limits=LIMITS) for s in group[1:]]


def measure(mode: str, seeds: list[list[str]], engines: list[Engine], clock: Counter) -> dict:
    clock.clear()
    Timed.spans.clear()
    verdicts: Counter = Counter()
    verified = cases = 0
    generation = 0.0
    t0 = time.perf_counter()
    for group in seeds:
        g0 = time.perf_counter()
        drawn = generate(group, [e.name for e in engines])
        generation += time.perf_counter() - g0
        if mode == "naive":
            per_case = [run_case(g.case, engines) for g in drawn]
        else:
            per_case = [run.results for run in run_batch([g.case for g in drawn], engines)]
        for results in per_case:
            cases += 1
            verdicts.update(f"{r.engine}:{r.verdict.value}" for r in results)
            verified += all(r.verdict in VERIFIED for r in results)
    wall = time.perf_counter() - t0
    engine_seconds = {name: round(s, 3) for name, s in clock.items()}
    overhead = wall - covered(Timed.spans)
    return {
        "cases": cases, "verified": verified, "wall_seconds": round(wall, 3),
        "verified_cases_per_s": round(verified / wall, 2),
        "engine_share": {name: round(s / wall, 3) for name, s in clock.items()},
        "engine_seconds": engine_seconds,
        "generation_seconds": round(generation, 3),
        "overhead_fraction": round(overhead / wall, 3),
        "verdicts": dict(sorted(verdicts.items())),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", type=int, default=2000, help="cases for the batched pipeline (default: %(default)s)")
    p.add_argument("--naive-cases", type=int, default=100,
                   help="the first cases, for the naive loop (default: %(default)s)")
    p.add_argument("--batch-size", type=int, default=250, help="siblings per query shape (default: %(default)s)")
    p.add_argument("--engines", default="reference,spark,duckdb,datafusion")
    p.add_argument("--seed", default="throughput")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--profile", help="write a cProfile of the batched run to this file")
    args = p.parse_args(argv)

    clock: Counter = Counter()
    engines: list[Engine] = []
    for name in args.engines.split(","):
        engine = get_engine(name)
        engine.start()
        engines.append(engine if engine.is_reference else Timed(engine, clock))
    seeds = groups(args.seed, args.cases, args.batch_size)
    naive_seeds = groups(args.seed, min(args.naive_cases, args.cases), args.batch_size)
    # A warm-up batch, so neither side pays first-query costs (JIT, planning caches).
    measure("batched", groups(f"{args.seed}-warmup", 20, 10), engines, clock)
    naive = measure("naive", naive_seeds, engines, clock)
    profiler = cProfile.Profile() if args.profile else None
    if profiler:
        profiler.enable()
    batched = measure("batched", seeds, engines, clock)
    if profiler:
        profiler.disable()
        profiler.dump_stats(args.profile)
    ratio = batched["verified_cases_per_s"] / naive["verified_cases_per_s"] if naive["verified_cases_per_s"] else 0.0
    report = {
        "naive_cases_per_s": naive["verified_cases_per_s"],
        "batched_cases_per_s": batched["verified_cases_per_s"],
        "ratio": round(ratio, 1),
        "overhead_fraction": batched["overhead_fraction"],
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "engines": {e.name: e.version() for e in engines},
        "batch_size": args.batch_size, "rows": LIMITS.rows, "windows": LIMITS.windows, "seed": args.seed,
        "naive": naive, "batched": batched,
    }
    missed = [k for k, target in TARGETS.items()
              if (report[k] < target if k in ("ratio", "batched_cases_per_s") else report[k] > target)]
    report["targets_missed"] = missed
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(_table(report))
    return 1 if missed else 0


def _table(r: dict) -> str:
    lines = [f"cases: {r['rows']}-row tables, {r['windows']} window expressions, "
             f"{r['batch_size']} siblings per query shape; seed {r['seed']!r}",
             f"{'':<10}{'cases':>8}{'verified/s':>12}{'wall s':>9}{'harness':>9}  engine share of wall time"]
    for mode in ("naive", "batched"):
        m = r[mode]
        shares = ", ".join(f"{k} {v:.0%}" for k, v in sorted(m["engine_share"].items()))
        lines.append(f"{mode:<10}{m['cases']:>8}{m['verified_cases_per_s']:>12}{m['wall_seconds']:>9}"
                     f"{m['overhead_fraction']:>9.0%}  {shares}")
    lines.append(f"ratio batched/naive: {r['ratio']} (target >= {TARGETS['ratio']:g})")
    lines.append(f"batched verified cases/s: {r['batched_cases_per_s']} (target >= {TARGETS['batched_cases_per_s']:g})")
    lines.append(f"harness overhead (generation + reference + comparison): {r['overhead_fraction']:.0%} "
                 f"of wall time (target <= {TARGETS['overhead_fraction']:.0%})")
    lines.append(f"peak RSS of this process: {r['peak_rss_mb']} MB (target <= {TARGETS['peak_rss_mb']:g})")
    lines.append("targets missed: " + (", ".join(r["targets_missed"]) or "none"))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
