"""How long the reference takes: over a large table with sliding frames or
with frames spanning the partition, or per evaluation on the small queries
of a fuzzing campaign.

`--workload large` (the default): a 100,000-row table, one query with a
sliding ROWS frame, a RANGE frame and a GROUPS frame, three functions over
each, evaluated in under 60 s on a 2-core machine (the target).
`--workload million`: the same query over 1,000,000 rows, same target.
`--workload whole-frame`: a 200,000-row table, one query with eight window
expressions (max, min, sum, count, avg, first_value, last_value, nth_value)
over six windows whose frames span the whole partition (up to the whole
table) or a peer group, or grow or shrink with it; same target.

    .venv/bin/python bench/reference_speed.py [--workload large|million|whole-frame]
        [--rows N] [--runs N] [--warmup] [--seed N] [--target SECONDS]

Prints the median wall time of the evaluations (and their CPU time, steadier
on a busy machine) and the peak memory of the process; exits 1 when the
median wall time is over the target.

The baseline, measured in the same run: the same query evaluated by the
reference's definitions (`reference_impl.testing.definitions_only`: every
fast path off, each row's frame listed by `frames.frame_positions` and
aggregated row by row) over the first `--baseline-rows` rows of the same
table (default 2,000; the definitions are quadratic in a partition's size,
so the full table would take hours). The ratio: the definitions' CPU time
per row over the reference's (the median run's), at those sizes.

`--workload campaign`: what a campaign asks of the reference. Generated
shapes with 20-row tables and 3 window expressions, each with 20 sibling
cases (the same query object over other tables, as a batch runs them); per
sibling, the query under every engine's semantics profile, and the
instrumented query (instrumented per case, as the runner does) under every
profile plus twice under a peer_order hook, as the comparator's tie search
asks. Queries and tables are fresh objects in every run, so nothing is
remembered from one run to the next.

    .venv/bin/python bench/reference_speed.py --workload campaign [--groups N]
        [--siblings N] [--runs N]

`--workload batch-scale`: the campaign's batch-scale cases (the first
`--cases` of campaign seed `--seed`, default 21, that drew batch-scale
tables: 5,000-50,000 rows, long partitions), each prepared as the runner
prepares a case (instrumented, evaluated on the reference under the
standard profile, once with the unordered witness where it applies).

    .venv/bin/python bench/reference_speed.py --workload batch-scale [--cases N] [--seed N]

Prints each case's rows and CPU seconds, and the median wall and CPU time
per case. The baseline (the definitions would take hours at these sizes):
`bench/calibration.py`'s pure-Python loop, timed in the same process; the
ratio is the median CPU time per case over the loop's.

Prints the median milliseconds per evaluation over the runs (after one
warm-up run): wall time, and CPU time (steadier on a busy machine), the
latter also for the first evaluation over each case's tables (nothing about
them known yet) and for the others apart. To time another copy of the
reference (the code before a change, say), put the directory holding its
`reference_impl` first on PYTHONPATH; the report names the copy it timed.
The baseline: the same evaluations (one run over fresh objects) by the
reference's definitions (`definitions_only`); the ratio is their CPU time
per evaluation over the reference's. A copy of the reference older than
`reference_impl.testing.definitions_only` is timed without a baseline.

`--workload tables-million` and `--workload tables-200k`: the whole of
`window-harness run q.sql --tables DIR --engines reference,duckdb` over a
1,000,000-row Parquet table with five windows (target 60 s) or 200,000 rows
with six (target 20 s), ties in every partition; the run's wall and CPU
time, and the reference's and the judge's times and shares (`tables_run.py`).

    .venv/bin/python bench/reference_speed.py --workload tables-million [--rows N] [--runs N]

`--json` prints one JSON object instead: the figures, `baseline` (name,
what, figure, unit) and `ratio`.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import random
import resource
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

import reference_impl
from harness.core.errors import HarnessError
from harness.core.model import Query
from harness.core.semantics import STANDARD
from harness.sql import parse
from reference_impl import PeerOrder, SemanticsProfile, evaluate

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/calibration.py
from calibration import CALIBRATION_NAME, baseline_json, calibration_cpu_seconds  # noqa: E402
from tables_run import TABLES_WORKLOADS, tables_workload  # noqa: E402

TARGET_SECONDS = 60.0

QUERY = """
SELECT id,
       sum(v)         OVER w_rows   AS rows_sum_v,
       avg(f)         OVER w_rows   AS rows_avg_f,
       max(f)         OVER w_rows   AS rows_max_f,
       sum(f)         OVER w_range  AS range_sum_f,
       count(v)       OVER w_range  AS range_count_v,
       min(v)         OVER w_range  AS range_min_v,
       sum(v)         OVER w_groups AS groups_sum_v,
       max(v)         OVER w_groups AS groups_max_v,
       first_value(f) OVER w_groups AS groups_first_f
FROM t
WINDOW w_rows   AS (PARTITION BY k ORDER BY o ASC NULLS LAST, id ASC NULLS LAST
                    ROWS BETWEEN 3 PRECEDING AND 2 FOLLOWING),
       w_range  AS (PARTITION BY k ORDER BY o ASC NULLS LAST
                    RANGE BETWEEN 5 PRECEDING AND 5 FOLLOWING),
       w_groups AS (PARTITION BY k ORDER BY o ASC NULLS LAST
                    GROUPS BETWEEN 2 PRECEDING AND 1 FOLLOWING)
"""


# Frames over the whole partition (no ORDER BY, or UNBOUNDED both ways), over
# peer groups (o has rows/200 values, so ~50 peers per value in each of the
# four partitions of `k % 4`), and growing or shrinking with the peer group
# (the default frame, and CURRENT ROW .. UNBOUNDED FOLLOWING); half over the
# whole table as one partition.
WHOLE_FRAME_QUERY = """
SELECT id,
       max(f)          OVER ()       AS table_max_f,
       min(v)          OVER w_whole  AS whole_min_v,
       sum(f)          OVER w_peers  AS peers_sum_f,
       count(v)        OVER w_upto   AS upto_count_v,
       avg(v)          OVER w_rest   AS rest_avg_v,
       first_value(f)  OVER w_range  AS range_first_f,
       last_value(v) IGNORE NULLS OVER w_range AS range_last_v,
       nth_value(f, 3) OVER w_range  AS range_third_f
FROM t
WINDOW w_whole AS (PARTITION BY k % 4 ORDER BY o
                   ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING),
       w_peers AS (PARTITION BY k % 4 ORDER BY o RANGE BETWEEN CURRENT ROW AND CURRENT ROW),
       w_upto  AS (ORDER BY o),
       w_rest  AS (ORDER BY o RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING),
       w_range AS (PARTITION BY k % 4 ORDER BY o
                   RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
"""


@dataclass(frozen=True)
class Workload:
    query: str
    rows: int
    what: str


WORKLOADS = {
    "large": Workload(QUERY, 100_000, "9 window expressions (ROWS, RANGE, GROUPS)"),
    "million": Workload(QUERY, 1_000_000, "9 window expressions (ROWS, RANGE, GROUPS)"),
    "whole-frame": Workload(
        WHOLE_FRAME_QUERY, 200_000, "8 window expressions over whole-partition and peer frames"
    ),
}


def make_table(rows: int, seed: int) -> pa.Table:
    """id unique; k ~100 partitions; v integer with ~10% NULLs; f double;
    o an integer order key with ties (about 2 rows per value in a partition)
    and ~1% NULLs."""
    rng = random.Random(seed)
    ids = list(range(1, rows + 1))
    rng.shuffle(ids)
    o_values = max(1, rows // 200)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "k": pa.array([rng.randrange(100) for _ in range(rows)], pa.int32()),
            "v": pa.array(
                [None if rng.random() < 0.1 else rng.randint(-1000, 1000) for _ in range(rows)],
                pa.int32(),
            ),
            "f": pa.array([rng.uniform(-1e6, 1e6) for _ in range(rows)], pa.float64()),
            "o": pa.array(
                [None if rng.random() < 0.01 else rng.randrange(o_values) for _ in range(rows)],
                pa.int32(),
            ),
        }
    )


def definitions_only():
    """`reference_impl.testing.definitions_only()`, the baseline's context; None
    in a copy of the reference older than it (put on PYTHONPATH to be timed):
    that copy is timed without a baseline."""
    try:
        from reference_impl.testing import definitions_only as definitions
    except ImportError:
        return None
    return definitions()


NO_BASELINE = baseline_json("definitions", "none: this copy of the reference has no "
                            "reference_impl.testing.definitions_only", 0.0, "-", None, "no baseline")


def time_once(query: Query, data: pa.Table) -> tuple[float, float]:
    """The wall time and the CPU time of one evaluation."""
    start, start_cpu = time.perf_counter(), time.process_time()
    result = evaluate(query, {"t": data})
    elapsed, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    assert result.table.num_rows == data.num_rows
    return elapsed, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload", choices=[*WORKLOADS, "campaign", "batch-scale", *TABLES_WORKLOADS],
                        default="large")
    parser.add_argument("--rows", type=int, default=None, help="default: the workload's")
    parser.add_argument("--runs", type=int, default=None, help="timed runs; the median is reported")
    parser.add_argument("--warmup", action="store_true", help="one untimed run first")
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--target", type=float, default=None, help=f"default: {TARGET_SECONDS:g} s, "
                        "or the tables workload's")
    parser.add_argument("--groups", type=int, default=20, help="campaign: generated shapes")
    parser.add_argument("--siblings", type=int, default=20, help="campaign: cases per shape")
    parser.add_argument("--cases", type=int, default=12, help="batch-scale: cases to time")
    parser.add_argument("--baseline-rows", type=int, default=2_000,
                        help="rows the definitions (the baseline) evaluate")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args(argv)
    if args.workload == "batch-scale":
        return batch_scale(args.cases, 21 if args.seed == parser.get_default("seed") else args.seed,
                           args.json)
    if args.workload == "campaign":
        return campaign(args.groups, args.siblings, args.runs or 5, args.json)
    if args.workload in TABLES_WORKLOADS:
        return tables_workload(args.workload, args.rows, args.runs or 1, args.seed, args.target, args.json)
    args.target = TARGET_SECONDS if args.target is None else args.target
    args.runs = args.runs or 1
    workload = WORKLOADS[args.workload]
    rows = args.rows or workload.rows

    data = make_table(rows, args.seed)
    query = parse(workload.query)
    if args.warmup:
        time_once(query, data)
    runs = [time_once(query, data) for _ in range(args.runs)]
    times = [wall for wall, _ in runs]
    median = statistics.median(times)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    # The baseline: the definitions over the first rows of the same table.
    small = data.slice(0, min(rows, args.baseline_rows))
    cpu_median = statistics.median(cpu for _, cpu in runs)
    us = 1e6 * cpu_median / rows
    result = {
        "workload": args.workload, "rows": rows, "median_seconds": median, "seconds": times,
        "cpu_median_seconds": cpu_median, "cpu_us_per_row": us,
        "target_seconds": args.target, "peak_mib": peak_mib, **NO_BASELINE,
    }
    baseline_line = "no baseline: this copy of the reference has no definitions_only"
    if (definitions := definitions_only()) is not None:
        with definitions:
            base_wall, base_cpu = time_once(parse(workload.query), small)
        base_us = 1e6 * base_cpu / small.num_rows
        ratio = base_us / us
        result.update(baseline_json(
            "definitions", f"the same query by the reference's definitions (fast paths off) "
            f"over the first {small.num_rows} rows", base_us, "CPU us per row", ratio,
            "the definitions' CPU time per row over the reference's"))
        baseline_line = (
            f"baseline, the definitions over the first {small.num_rows} rows: {base_wall:.2f} s "
            f"({base_cpu:.2f} s of CPU), {base_us:.1f} us of CPU per row; ratio {ratio:.1f} "
            f"(definitions / reference, CPU per row)")
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"reference, {args.workload} workload, {rows} rows, {workload.what}: "
            f"median {median:.2f} s over {len(times)} run(s) "
            f"[{', '.join(f'{t:.2f}' for t in times)}], CPU median "
            f"{result['cpu_median_seconds']:.2f} s; target {args.target:g} s; "
            f"peak memory {peak_mib:.0f} MiB\n"
            f"  per row: {us:.1f} us of CPU; {baseline_line}"
        )
    if median > args.target:
        print(f"OVER TARGET by {median - args.target:.2f} s", file=sys.stderr if args.json else sys.stdout)
        return 1
    return 0


# ---------------------------------------------------------------------------
# The campaign workload


def profiles() -> list[SemanticsProfile]:
    from harness.engines.datafusion.dialect import DATAFUSION
    from harness.engines.duckdb.dialect import DUCKDB
    from harness.engines.spark.dialect import SPARK
    from harness.engines.sqlite.dialect import SQLITE

    return [STANDARD] + [d.semantics for d in (DUCKDB, DATAFUSION, SPARK, SQLITE)]


def reversed_peers(key: object, rows: list) -> list[int]:
    return list(range(len(rows)))[::-1]


@dataclass(frozen=True)
class Call:
    """One evaluation the reference is asked for; `query` is called at run time
    (`plan.unlimited` builds a new query object each time, as in the runner).
    `first`: the first evaluation over these tables (of this instrumented query)."""

    query: Callable[[], Query]
    tables: Mapping[str, pa.Table]
    profile: SemanticsProfile
    peer_order: PeerOrder | None = None
    first: bool = False


def campaign_calls(shapes: list, siblings: int) -> list[Call]:
    """The evaluations of one run, over fresh query and table objects."""
    from harness.generate.cases import Limits, generate_sibling
    from harness.judge.instrument import instrument, with_rowid

    limits, calls = Limits(rows=20, windows=3), []
    for shape in shapes:
        query = copy.deepcopy(shape.case.query)  # one object, shared by the shape's siblings
        for i in range(siblings):
            case = generate_sibling(shape, f"{shape.seed}/{i}", limits=limits).case
            tables = {name: t.slice(0) for name, t in case.tables.items()}
            calls += [Call(lambda q=query: q, tables, p, first=p is STANDARD) for p in profiles()]
            plan = instrument(query, case.schemas)
            rowid_tables = with_rowid(case.tables)
            instrumented = [
                Call(lambda plan=plan: plan.unlimited, rowid_tables, p) for p in profiles()
            ]
            instrumented += [
                Call(lambda plan=plan: plan.unlimited, rowid_tables, STANDARD, reversed_peers)
            ] * 2
            calls += [dataclasses.replace(instrumented[0], first=True), *instrumented[1:]]
    return calls


@dataclass
class Timing:
    """Milliseconds per evaluation, CPU time, for all calls and for first calls and the others."""

    wall: float
    cpu: float
    first: float
    repeat: float
    failed: int


def time_calls(calls: list[Call]) -> Timing:
    failed, cpu_by_kind = 0, {True: [0.0, 0], False: [0.0, 0]}
    wall = time.perf_counter()
    for c in calls:
        start = time.process_time()
        try:
            evaluate(c.query(), c.tables, profile=c.profile, peer_order=c.peer_order)
        except HarnessError:  # a gap or an invalid query: timed all the same
            failed += 1
        spent = cpu_by_kind[c.first]
        spent[0] += time.process_time() - start
        spent[1] += 1
    wall = time.perf_counter() - wall
    (first, n_first), (repeat, n_repeat) = cpu_by_kind[True], cpu_by_kind[False]
    return Timing(
        wall * 1000 / len(calls),
        (first + repeat) * 1000 / len(calls),
        first * 1000 / max(1, n_first),
        repeat * 1000 / max(1, n_repeat),
        failed,
    )


def campaign(groups: int, siblings: int, runs: int, as_json: bool = False) -> int:
    from harness.generate.cases import Limits, generate_case

    limits = Limits(rows=20, windows=3)
    shapes = [generate_case(f"bench/{g}", limits=limits) for g in range(groups)]
    timings = []
    for _ in range(runs + 1):  # the first run warms up
        calls = campaign_calls(shapes, siblings)
        timings.append(time_calls(calls))
    timings = timings[1:]

    def median(field: str) -> float:
        return statistics.median(getattr(t, field) for t in timings)

    baseline, baseline_line = NO_BASELINE, "no baseline: this copy of the reference has no definitions_only"
    if (definitions := definitions_only()) is not None:
        with definitions:  # the baseline: the same evaluations by the definitions
            base = time_calls(campaign_calls(shapes, siblings))
        ratio = base.cpu / median("cpu")
        baseline = baseline_json("definitions", "the same evaluations by the reference's definitions "
                                 "(fast paths off), one run", base.cpu, "CPU ms per evaluation", ratio,
                                 "the definitions' CPU time per evaluation over the reference's")
        baseline_line = (f"baseline, the same evaluations by the definitions: {base.wall:.3f} ms per "
                         f"evaluation (wall), {base.cpu:.3f} ms (CPU); ratio {ratio:.2f} "
                         "(definitions / reference, CPU)")
    firsts = sum(c.first for c in calls)
    if as_json:
        print(json.dumps({
            "workload": "campaign", "evaluations_per_run": len(calls), "runs": runs,
            "ms_per_evaluation": median("wall"), "cpu_ms_per_evaluation": median("cpu"),
            "cpu_ms_first": median("first"), "cpu_ms_repeat": median("repeat"), **baseline,
        }))
        return 0
    print(
        f"reference at {reference_impl.__file__.rsplit('/', 2)[0]}: campaign workload, "
        f"{groups} shapes x {siblings} siblings, {len(calls)} evaluations per run "
        f"({timings[-1].failed} raise), medians over {runs} runs:\n"
        f"  {median('wall'):.3f} ms per evaluation (wall) "
        f"[{', '.join(f'{t.wall:.3f}' for t in timings)}]\n"
        f"  {median('cpu'):.3f} ms per evaluation (CPU): {median('first'):.3f} for the first "
        f"over a case's tables ({firsts}), {median('repeat'):.3f} for the others "
        f"({len(calls) - firsts})\n"
        f"  {baseline_line}"
    )
    return 0


# ---------------------------------------------------------------------------
# The batch-scale workload


def batch_scale(cases: int, seed: int, as_json: bool = False) -> int:
    from itertools import count

    from harness.generate.cases import generate_case, is_large
    from harness.judge.runner import PreparedCase

    walls, cpus = [], []
    for i in count():
        if len(walls) == cases:
            break
        if not is_large(f"{seed}/{i}"):
            continue
        generated = generate_case(f"{seed}/{i}")
        if not generated.large:
            continue  # declined: a join, or a query too costly at scale
        t0, c0 = time.perf_counter(), time.process_time()
        PreparedCase(generated.case)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        rows = sum(t.num_rows for t in generated.case.tables.values())
        if not as_json:
            print(f"  {generated.seed}: {rows} rows, {cpus[-1]:.2f} s CPU", flush=True)
    calibration = calibration_cpu_seconds()
    ratio = statistics.median(cpus) / calibration
    if as_json:
        print(json.dumps({
            "workload": "batch-scale", "cases": len(walls), "seed": seed,
            "median_seconds": statistics.median(walls), "cpu_median_seconds": statistics.median(cpus),
            "cpu_max_seconds": max(cpus),
            **baseline_json("calibration", CALIBRATION_NAME, calibration, "s of CPU", ratio,
                            "the median CPU time per case over the calibration loop's time"),
        }))
        return 0
    print(f"reference at {reference_impl.__file__.rsplit('/', 2)[0]}: batch-scale workload, "
          f"{len(walls)} cases of seed {seed}: median {statistics.median(walls):.2f} s wall, "
          f"{statistics.median(cpus):.2f} s CPU per case (max {max(cpus):.2f} s CPU)\n"
          f"  baseline, {CALIBRATION_NAME}: {calibration:.3f} s of CPU; "
          f"ratio {ratio:.1f} (CPU per case / calibration)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
