"""The corpus on engines one query at a time (`runner.run_cases`, the baseline)
and in batches (`corpus_runner.run_corpus`: each engine's queries in one call
per chunk, Spark's from several threads, the engines' workers at once), in
one process, with the engines in worker processes as the gate runs them.

    .venv/bin/python bench/corpus_speed.py [--engines LIST] [--paths cases/] [--spark-threads N]

Prints each way's wall time (engines' start-up included: each way starts its
own workers), each engine's summed query time, the ratio one-by-one /
batched, and whether the two ways gave the same verdicts, facts and details
per (case, engine), Spark's expression numbers (`k#119`) aside (exit 1 when not).
"""

from __future__ import annotations

import argparse
import re
import sys
import time

from harness.cases.case import load_cases
from harness.engines.base import Engine
from harness.engines.isolation import IsolatedEngine
from harness.engines.registry import get_engine
from harness.judge.corpus_runner import run_corpus
from harness.judge.runner import RunResults, run_cases


def _engines(names: list[str], spark_threads: int | None) -> list[Engine]:
    out: list[Engine] = []
    for name in names:
        options = {"threads": spark_threads} if spark_threads is not None and name.startswith("spark") else {}
        out.append(get_engine(name) if name == "reference" else IsolatedEngine(name, timeout=60, **options))
    return out


def _timed(way, cases, names: list[str], spark_threads: int | None) -> tuple[RunResults, float]:
    engines = _engines(names, spark_threads)
    t0 = time.perf_counter()
    try:
        run = way(cases, engines)
    finally:
        for engine in engines:
            engine.close()
    return run, time.perf_counter() - t0


def _verdicts(run: RunResults) -> list[tuple]:
    # Spark names an expression by a number (`k#119`) of a counter every query it
    # analyses moves on: a message says another number whenever other queries ran before.
    def plain(value: object) -> str:
        return re.sub(r"#\d+", "#N", repr(value))

    return [(r.case, r.engine, r.verdict.value, plain(r.detail), plain(r.notes), r.sql, plain(r.facts))
            for r in run.results]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--engines", default="reference,duckdb,datafusion,spark,sqlite")
    p.add_argument("--paths", nargs="+", default=["cases"])
    p.add_argument("--spark-threads", type=int, default=None, help="Spark's threads (its default otherwise)")
    args = p.parse_args()
    names = args.engines.split(",")
    cases, invalid = load_cases(args.paths)
    if invalid:
        print(f"{len(invalid)} invalid case files left out", file=sys.stderr)
    one, one_s = _timed(run_cases, cases, names, args.spark_threads)
    many, many_s = _timed(run_corpus, cases, names, args.spark_threads)
    print(f"{len(cases)} cases on {', '.join(names)}")
    print(f"{'':18}{'one by one':>12}{'batched':>12}")
    print(f"{'wall s':18}{one_s:12.2f}{many_s:12.2f}")
    for name in names:
        print(f"{name + ' start s':18}{one.startup_seconds.get(name, 0):12.2f}"
              f"{many.startup_seconds.get(name, 0):12.2f}")
        print(f"{name + ' query s':18}{one.query_seconds.get(name, 0):12.2f}{many.query_seconds.get(name, 0):12.2f}")
    print(f"ratio (one by one / batched wall): {one_s / many_s:.2f}x")
    a, b = _verdicts(one), _verdicts(many)
    differ = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
    print(f"verdicts identical: {not differ and len(a) == len(b)} ({len(a)} results; {len(differ)} differ)")
    for x, y in differ[:20]:
        print(f"  {x[0]} on {x[1]}: one by one {x[2]} {x[3][:120]!r}; batched {y[2]} {y[3][:120]!r}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
