"""How long listing and loading a large case file take, and how much memory.

Writes a case file of `--rows` rows (1,150,000 by default: about 60 MB of
YAML, five columns of every common kind) into a temporary directory, then
measures, each in a fresh Python process:

- `list`: `window-harness cases FILE` (what the listing reads);
- `load`: `harness.cases.case.load_case(FILE)` (the whole case: its tables as
  Arrow, its query parsed).

    .venv/bin/python bench/load_speed.py [--rows N] [--keep DIR] [--only list|load] [--code DIR]

Prints, per measurement, the wall time, the CPU time (steadier on a busy
machine) and the peak resident memory of the process that did it (the file's
size for scale). `--code DIR` measures another copy of the harness (the code
before a change, say: `git archive COMMIT | tar -x -C DIR`). `--keep DIR` writes the file
there and leaves it, to run `/usr/bin/time -v` on the commands yourself.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HEADER = """\
description: a large table (bench/load_speed.py)
tags: [bench]
tables:
  t:
    columns:
      id: bigint
      g: integer
      v: double
      s: varchar
      d: date
    rows:
"""

FOOTER = """\
sql: |
  SELECT id, sum(v) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS s
  FROM t
finding:
  note: no expected rows; the reference is the oracle
"""

# One process, one measurement: it prints its own wall time and peak memory.
CHILD = """\
import contextlib, io, json, resource, sys, time
from pathlib import Path
what, path = sys.argv[1], Path(sys.argv[2])
start = time.perf_counter()
if what == "list":
    from harness.cli.main import main
    with contextlib.redirect_stdout(io.StringIO()) as out:
        code = main(["cases", str(path)])
    assert code == 0, code
    assert out.getvalue().strip(), "nothing listed"
else:
    from harness.cases.case import load_case
    case = load_case(path)
    assert case.tables["t"].num_rows > 0
seconds = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_SELF)
peak = usage.ru_maxrss * 1024  # KiB on Linux
print(json.dumps({"seconds": seconds, "cpu": usage.ru_utime + usage.ru_stime, "peak_bytes": peak}))
"""


def write_case(path: Path, rows: int, seed: int = 0) -> int:
    """The case file; its size in bytes."""
    rnd = random.Random(seed)
    with path.open("w", encoding="utf-8") as f:
        f.write(HEADER)
        for i in range(rows):
            g, v = rnd.randrange(1000), round(rnd.uniform(-1e6, 1e6), 3)
            s = "".join(rnd.choices("abcdefghij", k=rnd.randrange(4, 10)))
            d = f"20{rnd.randrange(10, 30)}-{rnd.randrange(1, 13):02d}-{rnd.randrange(1, 29):02d}"
            f.write(f"      - [{i}, {g}, {v}, {s}, {d}]\n")
        f.write(FOOTER)
    return path.stat().st_size


def measure(what: str, path: Path, code: Path = ROOT) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, what, str(path)], capture_output=True,
                         text=True, cwd=code, env={"PYTHONPATH": str(code), "PATH": "/usr/bin:/bin"},
                         check=False)
    if out.returncode != 0:
        raise SystemExit(f"{what} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_150_000)
    parser.add_argument("--keep", type=Path, metavar="DIR", help="write the file here and keep it")
    parser.add_argument("--only", choices=["list", "load"], help="one measurement only")
    parser.add_argument("--code", type=Path, default=ROOT, metavar="DIR",
                        help="the copy of the harness to measure (default: this one)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"large-{args.rows}.yaml"
        started = time.perf_counter()
        size = path.stat().st_size if path.exists() else write_case(path, args.rows)
        print(f"case file: {args.rows:,} rows, {size / 2**20:.1f} MiB "
              f"(written in {time.perf_counter() - started:.1f} s)")
        for what in [args.only] if args.only else ["list", "load"]:
            got = measure(what, path, args.code)
            print(f"{what}: {got['seconds']:.1f} s ({got['cpu']:.1f} s of CPU, imports included), "
                  f"peak RSS {got['peak_bytes'] / 2**20:.0f} MiB "
                  f"({got['peak_bytes'] / size:.1f} x the file)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
