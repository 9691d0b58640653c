"""How long listing and loading a large case file take, and how much memory.

Writes a case file of `--rows` rows (1,150,000 by default: about 60 MB of
YAML, five columns of every common kind) into a temporary directory, then
measures, each in a fresh Python process:

- `list`: `window-harness cases FILE` (what the listing reads);
- `load`: `harness.cases.case.load_case(FILE)` (the whole case: its tables as
  Arrow, its query parsed).

- the baseline, `old-load`: the previous code path, still in the code as the
  fallback for what the event reader leaves to PyYAML: PyYAML's safe loader
  builds the whole node graph and then Python lists
  (`harness.cases.yamldoc._strict_load`), which `case_from_doc` turns into
  the case. It takes several times as long and far more memory (3.5 GiB
  for the default file), so it reads a file of `--baseline-rows` rows
  (100,000 by default, the same columns), and `load` is measured on that
  file too: the ratio is the old path's time over the new one's on the same
  file (the call alone, without the imports; CPU time, steadier on a shared
  machine). With `--code DIR` both run in that copy, which needs
  `case_from_doc` and `yamldoc._strict_load`.

    .venv/bin/python bench/load_speed.py [--rows N] [--baseline-rows N] [--keep DIR] [--only list|load]
        [--code DIR] [--json]

Prints, per measurement, the wall time, the CPU time (steadier on a busy
machine) and the peak resident memory of the process that did it (the file's
size for scale); then the baseline and the ratio. `--json` prints one JSON
object instead. `--code DIR` measures another copy of the harness (the code
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
sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/calibration.py
from calibration import baseline_json  # noqa: E402

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
# `seconds` and `cpu` include the imports; `call_seconds` and `call_cpu` are the call alone.
CHILD = """\
import contextlib, io, json, resource, sys, time
from pathlib import Path
what, path = sys.argv[1], Path(sys.argv[2])
start = time.perf_counter()
if what != "list":  # imports that loading makes on first use are not the load's work
    import datetime, pyarrow, harness.sql
    pyarrow.array([datetime.date(2000, 1, 1)])  # Arrow imports pandas for its first dates
if what == "list":
    from harness.cli.main import main
    call, cpu = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(io.StringIO()) as out:
        code = main(["cases", str(path)])
    assert code == 0, code
    assert out.getvalue().strip(), "nothing listed"
elif what == "load":
    from harness.cases.case import load_case
    call, cpu = time.perf_counter(), time.process_time()
    case = load_case(path)
    assert case.tables["t"].num_rows > 0
else:  # old-load: PyYAML's node graph, then the case from Python lists
    from harness.cases.case import InvalidCase, case_from_doc
    from harness.cases.yamldoc import _strict_load
    call, cpu = time.perf_counter(), time.process_time()
    case = case_from_doc(_strict_load(path.read_bytes(), str(path), InvalidCase), path)
    assert case.tables["t"].num_rows > 0
end, end_cpu = time.perf_counter(), time.process_time()
usage = resource.getrusage(resource.RUSAGE_SELF)
peak = usage.ru_maxrss * 1024  # KiB on Linux
print(json.dumps({"seconds": end - start, "cpu": usage.ru_utime + usage.ru_stime, "peak_bytes": peak,
                  "call_seconds": end - call, "call_cpu": end_cpu - cpu}))
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
    parser.add_argument("--baseline-rows", type=int, default=100_000,
                        help="rows of the file the old path (the baseline) and load both read")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
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
        say = (lambda *a: None) if args.json else print
        say(f"case file: {args.rows:,} rows, {size / 2**20:.1f} MiB "
            f"(written in {time.perf_counter() - started:.1f} s)")
        result: dict = {"rows": args.rows, "file_bytes": size}
        for what in [args.only] if args.only else ["list", "load"]:
            got = result[what] = measure(what, path, args.code)
            say(f"{what}: {got['seconds']:.1f} s ({got['cpu']:.1f} s of CPU, imports included; "
                f"the call alone {got['call_cpu']:.1f} s of CPU), peak RSS "
                f"{got['peak_bytes'] / 2**20:.0f} MiB ({got['peak_bytes'] / size:.1f} x the file)")
        # The baseline: the old path and the new one on the same (smaller) file.
        small = path if args.baseline_rows >= args.rows else folder / f"large-{args.baseline_rows}.yaml"
        small_size = small.stat().st_size if small.exists() else write_case(small, args.baseline_rows)
        rows = min(args.rows, args.baseline_rows)
        old, new = measure("old-load", small, args.code), measure("load", small, args.code)
        ratio = old["call_cpu"] / max(new["call_cpu"], 1e-9)
        result.update(baseline_json(
            "old-load", f"the previous path (PyYAML's node graph, then lists into the case) over "
            f"{rows:,} rows", old["call_cpu"], "s of CPU", ratio,
            f"the old path's CPU time over load's, both on the same {rows:,}-row file"))
        result["baseline"].update(old, rows=rows, file_bytes=small_size)
        result["load_on_baseline_file"] = new
        if args.json:
            print(json.dumps(result))
            return 0
        print(f"baseline, {rows:,} rows ({small_size / 2**20:.1f} MiB): old path "
              f"{old['call_seconds']:.1f} s ({old['call_cpu']:.1f} s of CPU), peak RSS "
              f"{old['peak_bytes'] / 2**20:.0f} MiB; load {new['call_seconds']:.1f} s "
              f"({new['call_cpu']:.1f} s of CPU), peak RSS {new['peak_bytes'] / 2**20:.0f} MiB; "
              f"ratio {ratio:.1f} (old / load, CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
