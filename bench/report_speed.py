"""How long `window-harness report` takes over a long campaign, and its peak memory.

A real seeded campaign (reference, DuckDB and SQLite; --cases, default 200) is
run once; its cases.jsonl is then repeated, with fresh indices and times, until
it holds --scale cases (default 100,000), as a campaign of that length would
write it. The report is made --runs times (default 3) in a fresh process each.

    .venv/bin/python bench/report_speed.py [--cases N] [--scale N] [--runs N] [--target SECONDS]

Prints the median wall time and the peak RSS; exits 1 when the median is over
the target (default 120 s on a 2-core machine).
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--scale", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--target", type=float, default=120.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        campaign = Path(tmp) / "campaign"
        subprocess.run([sys.executable, "-m", "harness", "fuzz", "--cases", str(args.cases), "--seed", "1",
                        "--engines", "reference,duckdb,sqlite", "--no-reduce", "--out", str(campaign)],
                       check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _scale(campaign / "cases.jsonl", args.scale)
        seconds = [_timed_report(campaign, Path(tmp) / "report.html") for _ in range(args.runs)]
        size = (Path(tmp) / "report.html").stat().st_size
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    median = statistics.median(seconds)
    print(f"report over {args.scale:,} cases: median {median:.1f} s of {args.runs} runs "
          f"({', '.join(f'{s:.1f}' for s in seconds)}), peak RSS {peak:.0f} MB, "
          f"{size / 1024:.0f} KB of HTML; target {args.target:g} s")
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


def _timed_report(campaign: Path, out: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "harness", "report", str(campaign), "--out", str(out)],
                   check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


if __name__ == "__main__":
    sys.exit(main())
