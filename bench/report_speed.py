"""How long `window-harness report` takes over a long campaign, and its peak memory.

A real seeded campaign (reference, DuckDB and SQLite; --cases, default 200) is
run once; its cases.jsonl is then repeated, with fresh indices and times, until
it holds --scale cases (default 100,000), as a campaign of that length would
write it. The report is made --runs times (default 3) in a fresh process each.

    .venv/bin/python bench/report_speed.py [--cases N] [--scale N] [--runs N] [--target SECONDS] [--json]

Prints the median wall time and the peak RSS; exits 1 when the median is over
the target (default 120 s on a 2-core machine).

The baseline: the report has no older path left to run, so before each
report this process times `bench/calibration.py`'s pure-Python loop
(sorting 100,000 random tuples: comparisons and tuple handling, as the
report's own Python does); the ratio is the report process's median CPU
time over the loop's median CPU time, a figure that a loaded or a faster
machine leaves about where it is. `--json` prints one JSON object: the figures, `baseline` and
`ratio`.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/calibration.py
from calibration import CALIBRATION_NAME, baseline_json, calibration  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--scale", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--target", type=float, default=120.0)
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        campaign = Path(tmp) / "campaign"
        subprocess.run([sys.executable, "-m", "harness", "fuzz", "--cases", str(args.cases), "--seed", "1",
                        "--engines", "reference,duckdb,sqlite", "--no-reduce", "--out", str(campaign)],
                       check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _scale(campaign / "cases.jsonl", args.scale)
        seconds, cpus, loops = [], [], []
        for _ in range(args.runs):  # the loop just before each report: both see the same load
            loops.append(calibration()[1])
            wall, cpu = _timed_report(campaign, Path(tmp) / "report.html")
            seconds.append(wall)
            cpus.append(cpu)
        size = (Path(tmp) / "report.html").stat().st_size
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    median, cpu, loop = statistics.median(seconds), statistics.median(cpus), statistics.median(loops)
    ratio = cpu / loop
    if args.json:
        print(json.dumps({
            "cases": args.scale, "runs": args.runs, "median_seconds": median, "seconds": seconds,
            "cpu_median_seconds": cpu, "cpu_seconds": cpus,
            "peak_rss_mb": peak, "html_bytes": size, "target_seconds": args.target,
            **baseline_json("calibration", CALIBRATION_NAME, loop, "s of CPU", ratio,
                            "the report's median CPU time over the calibration loop's"),
        }))
    else:
        print(f"report over {args.scale:,} cases: median {median:.1f} s of {args.runs} runs "
              f"({', '.join(f'{s:.1f}' for s in seconds)}), CPU median {cpu:.1f} s, peak RSS "
              f"{peak:.0f} MB, {size / 1024:.0f} KB of HTML; target {args.target:g} s\n"
              f"baseline, {CALIBRATION_NAME}: median {loop:.3f} s of CPU "
              f"({', '.join(f'{s:.3f}' for s in loops)}); ratio {ratio:.1f} "
              f"(report / calibration, CPU)")
    return 0 if median <= args.target else 1


def _scale(path: Path, total: int) -> None:
    """cases.jsonl repeated to `total` lines; each copy of a group keeps its shape's
    rows, with indices, seeds and times of its own."""
    lines = [json.loads(text) for text in path.read_text().splitlines() if text.strip()]
    start = time.time()
    with path.open("w") as out:
        for i in range(total):
            line = dict(lines[i % len(lines)])
            copy = i // len(lines)
            line.update(index=i, seed=f"1/{i}", shape=f"{line.get('shape')}#{copy}", at=start + i * 0.01)
            out.write(json.dumps(line) + "\n")


def _timed_report(campaign: Path, out: Path) -> tuple[float, float]:
    """The report's wall time and the CPU time of its process."""
    t0, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "harness", "report", str(campaign), "--out", str(out)],
                   check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return time.perf_counter() - t0, cpu


if __name__ == "__main__":
    sys.exit(main())
