"""`run FILE.sql --tables DIR` at scale, on the reference and DuckDB (issue 33, item 8).

`reference_speed.py --workload tables-million`: a 1,000,000-row Parquet
table (seeded: ~5,000 partitions `p`, an order key `o` with 60 values, so
ties in every partition; an int `x`, a double `d` with 5% NULLs, a string
`s`) and a `.sql` file of one query with five window expressions
(row_number, rank, a ROWS sum, lag with a default, a RANGE avg), written to
a temporary directory and run as a user runs them, in a subprocess:
`window-harness run q.sql --tables DIR --engines reference,duckdb --format
json`. Target: 60 s. `--workload tables-200k`: 200,000 rows (1,000
partitions), six windows (dense_rank too); target 20 s.

Prints the median wall time over the runs, the run's CPU time (the
subprocess's user + system), and the reference's and the judge's times and
shares of the wall time, as the run's own summary says them
(`reference_seconds`, `judge_seconds`); exits 1 over the target, or when
a verdict is not a match. The baseline: `calibration.py`'s loop; the ratio
is the run's median CPU time over the loop's.
"""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from calibration import CALIBRATION_NAME, baseline_json, calibration_cpu_seconds

ROOT = Path(__file__).resolve().parent.parent

WINDOWS = (
    "row_number() OVER (PARTITION BY p ORDER BY o) AS rn",
    "rank() OVER (PARTITION BY p ORDER BY o) AS rk",
    "sum(x) OVER (PARTITION BY p ORDER BY o ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS sx",
    "lag(x, 1, 0) OVER (PARTITION BY p ORDER BY o) AS lx",
    "avg(d) OVER (PARTITION BY p ORDER BY o RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS ad",
    "dense_rank() OVER (PARTITION BY p ORDER BY o) AS dr",
)


@dataclass(frozen=True)
class TablesWorkload:
    rows: int
    windows: int
    target: float


TABLES_WORKLOADS = {
    "tables-million": TablesWorkload(1_000_000, 5, 60.0),
    "tables-200k": TablesWorkload(200_000, 6, 20.0),
}


def write_workload(directory: Path, rows: int, windows: int, seed: int) -> Path:
    """The Parquet table `t` and `q.sql` in `directory`; the .sql file's path."""
    rng = random.Random(seed)
    partitions = max(1, rows // 200)
    table = pa.table({
        "p": pa.array([rng.randrange(partitions) for _ in range(rows)], pa.int64()),
        "o": pa.array([rng.randrange(60) for _ in range(rows)], pa.int64()),
        "x": pa.array([rng.randrange(-1000, 1000) for _ in range(rows)], pa.int64()),
        "d": pa.array([None if rng.random() < 0.05 else rng.uniform(-100, 100) for _ in range(rows)], pa.float64()),
        "s": pa.array([f"s{rng.randrange(1000)}" for _ in range(rows)], pa.string()),
    })
    pq.write_table(table, directory / "t.parquet")
    sql = directory / "q.sql"
    sql.write_text(f"SELECT p, o, x, d, s, {', '.join(WINDOWS[:windows])} FROM t;\n")
    return sql


def run_once(sql: Path) -> tuple[float, float, dict]:
    """One `run` as a user runs it: its wall time, CPU time and JSON document."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "harness", "run", str(sql), "--tables", str(sql.parent),
                           "--engines", "reference,duckdb", "--format", "json"],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        raise SystemExit(f"the run failed (exit {done.returncode}): {done.stderr.strip()}")
    return wall, cpu, json.loads(done.stdout)


def tables_workload(name: str, rows: int | None, runs: int, seed: int, target: float | None,
                    as_json: bool) -> int:
    workload = TABLES_WORKLOADS[name]
    rows = rows or workload.rows
    target = workload.target if target is None else target
    with tempfile.TemporaryDirectory() as tmp:
        sql = write_workload(Path(tmp), rows, workload.windows, seed)
        timed = [run_once(sql) for _ in range(runs)]
    wall, cpu, doc = sorted(timed, key=lambda t: t[0])[len(timed) // 2]  # the median run
    summary = doc["summary"]
    judge = sum(summary["judge_seconds"].values())
    reference = summary["reference_seconds"]
    loop = calibration_cpu_seconds()
    result = {
        "workload": name, "rows": rows, "windows": workload.windows, "runs": runs,
        "median_seconds": wall, "seconds": [t[0] for t in timed], "cpu_seconds": cpu,
        "reference_seconds": reference, "judge_seconds": judge,
        "reference_share": reference / wall, "judge_share": judge / wall,
        "verdicts": summary["verdicts"], "target_seconds": target,
        **baseline_json(CALIBRATION_NAME, "the calibration loop, timed in this process", loop, "CPU s",
                        cpu / loop, "the run's CPU time over the loop's"),
    }
    passed = set(summary["verdicts"]) == {"match"}
    if as_json:
        print(json.dumps(result))
    else:
        print(f"run --tables, {name}: {rows} rows, {workload.windows} windows, reference and duckdb: "
              f"median {wall:.1f} s over {runs} run(s) [{', '.join(f'{t[0]:.1f}' for t in timed)}], "
              f"CPU {cpu:.1f} s; the reference {reference:.1f} s ({100 * reference / wall:.0f}%), "
              f"judging {judge:.1f} s ({100 * judge / wall:.0f}%); target {target:g} s\n"
              f"  verdicts {summary['verdicts']}; baseline, the calibration loop: {loop:.2f} s of CPU; "
              f"ratio {cpu / loop:.0f} (the run's CPU / the loop's)")
    if not passed:
        print(f"NOT EVERY VERDICT A MATCH: {summary['verdicts']}", file=sys.stderr)
        return 1
    if wall > target:
        print(f"OVER TARGET by {wall - target:.2f} s", file=sys.stderr if as_json else sys.stdout)
        return 1
    return 0
