"""How long the reference takes over a large table with sliding frames.

The target (a benchmark, not a timed test): a 100,000-row table, one query
with a sliding ROWS frame, a RANGE frame and a GROUPS frame, three
functions over each, evaluated in under 60 s on a 2-core machine.

    .venv/bin/python bench/reference_speed.py [--rows N] [--runs N] [--warmup]
        [--seed N] [--target SECONDS]

Prints the median wall time of the evaluations and the peak memory of the
process; exits 1 when the median is over the target.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import sys
import time

import pyarrow as pa

from harness.model import Query
from harness.sql import parse
from reference_impl import evaluate

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


def time_once(query: Query, data: pa.Table) -> float:
    start = time.perf_counter()
    result = evaluate(query, {"t": data})
    elapsed = time.perf_counter() - start
    assert result.table.num_rows == data.num_rows
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=1, help="timed runs; the median is reported")
    parser.add_argument("--warmup", action="store_true", help="one untimed run first")
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--target", type=float, default=TARGET_SECONDS)
    args = parser.parse_args(argv)

    data = make_table(args.rows, args.seed)
    query = parse(QUERY)
    if args.warmup:
        time_once(query, data)
    times = [time_once(query, data) for _ in range(args.runs)]
    median = statistics.median(times)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(
        f"reference, {args.rows} rows, 9 window expressions (ROWS, RANGE, GROUPS): "
        f"median {median:.2f} s over {len(times)} run(s) "
        f"[{', '.join(f'{t:.2f}' for t in times)}]; target {args.target:g} s; "
        f"peak memory {peak_mib:.0f} MiB"
    )
    if median > args.target:
        print(f"OVER TARGET by {median - args.target:.2f} s")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
