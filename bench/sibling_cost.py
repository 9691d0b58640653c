"""What a query shape costs against what one more sibling costs: the constants
of the campaign's sibling count (`harness.campaign.siblings`).

For `--shapes` drawn shapes (seed S, cases S/0, S/20, ...) and `--siblings`
siblings each, it measures, as a campaign runs them:

- per engine, the fixed cost of one batched query (render and answer a batch
  of one case, in the engine's worker process as a campaign runs it) and the
  cost each more case adds to the batch (the answer of a batch of all the
  siblings, minus the fixed cost, over the siblings), judging included;
- per case, the harness's own cost: the sibling's rows drawn, the reference's
  evaluation, against the case's rows times its window expressions.

    .venv/bin/python bench/sibling_cost.py [--engines LIST] [--shapes N] [--siblings N] [--seed S] [--json]

Prints medians (milliseconds); the numbers written into
`harness/campaign/siblings.py` came from one run of it (see there).

The baseline, per engine and in the same run: the cost of one more case in
a batch. The ratio, the fixed cost of a query over it, says how many
siblings a query carries for the price of one more query (what batching
saves); both are measured in the same loop, so the machine's speed moves
it less than either figure, but on a shared machine it is noisy (the
per-case cost is the difference of two short wall times): two runs at the
same load gave 6 and 2 for DuckDB. The overall figures are the medians over the engines. `--json`
prints one JSON object: per engine `fixed_ms`, `per_case_ms`, `baseline`
and `ratio`, the harness's own per-case figures, and overall `baseline` and
`ratio`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from harness.campaign.batching import NotBatchable, make_batch
from harness.core.errors import HarnessError
from harness.engines.isolation import IsolatedEngine
from harness.engines.registry import get_engine
from harness.generate.cases import generate_case, generate_sibling
from harness.judge.compare import Verdict
from harness.judge.runner import PreparedCase, Result, judge_answer

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/calibration.py
from calibration import baseline_json  # noqa: E402


def _window_count(case) -> int:
    from harness.core.model import Select, walk, window_exprs

    return sum(len(window_exprs(n)) for n in walk(case.query) if isinstance(n, Select))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--engines", default="duckdb,datafusion,sqlite,spark")
    p.add_argument("--shapes", type=int, default=12)
    p.add_argument("--siblings", type=int, default=10)
    p.add_argument("--seed", default="7")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = p.parse_args()
    names = args.engines.split(",")
    engines = [IsolatedEngine(n, timeout=60) if n != "spark" else get_engine(n) for n in names]
    for e in engines:
        e.start()
        e.run({}, "SELECT 1 AS x")  # warm (Spark's first queries compile for seconds)
    fixed: dict[str, list[float]] = {n: [] for n in names}
    per_case: dict[str, list[float]] = {n: [] for n in names}
    harness_ms: list[tuple[int, float]] = []  # (rows x windows, ms per case)
    try:
        for k in range(args.shapes):
            shape = generate_case(f"{args.seed}/{20 * k}")
            cases = [shape.case]
            for j in range(1, args.siblings):
                t0 = time.perf_counter()
                cases.append(generate_sibling(shape, f"{args.seed}/{20 * k + j}").case)
                gen = time.perf_counter() - t0
                t0 = time.perf_counter()
                PreparedCase(cases[-1])
                prep = time.perf_counter() - t0
                rows = sum(t.num_rows for t in cases[-1].tables.values())
                harness_ms.append((rows * max(1, _window_count(shape.case)), 1000 * (gen + prep)))
            prepared = [PreparedCase(c) for c in cases]
            for engine in engines:
                ps = [p.for_engine(engine) for p in prepared]
                try:
                    _batched_seconds(engine, ps[:1])  # warm: this shape's first query
                    one = _batched_seconds(engine, ps[:1])
                    all_ = _batched_seconds(engine, ps)
                except (NotBatchable, HarnessError):
                    continue
                fixed[engine.name].append(one)
                per_case[engine.name].append(max(0.0, (all_ - one) / (len(ps) - 1)))
    finally:
        for e in engines:
            e.close()
    result: dict = {"engines": {}}
    say = (lambda *a: None) if args.json else print
    for name in names:
        if fixed[name]:
            fixed_ms, case_ms = 1000 * statistics.median(fixed[name]), 1000 * statistics.median(per_case[name])
            ratio = fixed_ms / case_ms if case_ms > 0 else None
            result["engines"][name] = {
                "shapes": len(fixed[name]), "fixed_ms": fixed_ms, "per_case_ms": case_ms,
                **baseline_json("per-case", "the cost of one more case in a batched query", case_ms,
                                "ms", ratio, "the fixed cost of a query over the cost of one more case"),
            }
            say(f"{name}: fixed per query {fixed_ms:.1f} ms, per more case {case_ms:.2f} ms "
                f"({len(fixed[name])} shapes); ratio {'-' if ratio is None else f'{ratio:.0f}'} "
                f"(a query costs as much as that many more cases)")
        else:
            result["engines"][name] = {"shapes": 0}
            say(f"{name}: no shape measured (every batch not batchable or refused with an error)")
    work = sorted(harness_ms)
    small = [ms for w, ms in work[: len(work) // 2]]
    large = [ms for w, ms in work[len(work) // 2:]]
    slope = statistics.median(ms / w for w, ms in work if w > 0)
    result["harness"] = {"per_case_ms": statistics.median(ms for _, ms in work),
                         "smaller_half_ms": statistics.median(small), "larger_half_ms": statistics.median(large),
                         "us_per_row_window": 1000 * slope}
    say(f"harness per case (sibling rows + reference): median {result['harness']['per_case_ms']:.1f} ms; "
        f"smaller half (rows x windows <= {work[len(work) // 2][0]}) {statistics.median(small):.1f} ms, "
        f"larger half {statistics.median(large):.1f} ms")
    say(f"per row x window: {1000 * slope:.1f} us (median of ms / (rows x windows))")
    measured = [e for e in result["engines"].values() if e.get("ratio") is not None]
    if measured:
        case_ms = statistics.median(e["per_case_ms"] for e in measured)
        ratio = statistics.median(e["ratio"] for e in measured)
        result.update(baseline_json(
            "per-case", f"the cost of one more case in a batched query (median over {len(measured)} "
            "engine(s))", case_ms, "ms", ratio,
            "the fixed cost of a query over the cost of one more case (median over the engines)"))
        say(f"overall: per more case {case_ms:.2f} ms; ratio {ratio:.0f} (fixed per query / per more case, "
            "median over the engines)")
    else:
        result.update(baseline_json("per-case", "no engine measured", 0.0, "ms", None, "nothing measured"))
    if args.json:
        print(json.dumps(result))


def _batched_seconds(engine, prepared) -> float:
    """Render, run and judge one batched query over `prepared` (median of 3)."""
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        batch = make_batch(prepared[0].plan.query, [p.tables for p in prepared])
        sql = engine.render(batch.query)
        parts = batch.split(engine.run(batch.tables, sql))
        for p, part in zip(prepared, parts, strict=True):
            judge_answer(p, engine, Result(p.case.id, engine.name, Verdict.ERROR, sql=sql), part)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


if __name__ == "__main__":
    main()
