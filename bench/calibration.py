"""What the benchmarks compare their figures with, so that runs on a loaded
or a fast machine compare: a baseline measured in the same process and run.

Each benchmark prefers a baseline from the code itself (the naive way, the
previous code path); where there is none it uses `calibration_seconds`, a
fixed pure-Python loop of known work: sorting 100,000 seeded random tuples
(an integer, a float and a six-letter string each), the kind of work the
harness's own Python does (comparisons, tuple and string handling). It
takes about 0.2 s on the project's 2-core machine (load 2).

`baseline_json` gives the keys every benchmark's `--json` carries:
`baseline` (its name, what it is, its figure and the figure's unit) and
`ratio` (the benchmark's figure against it, with what the ratio means).
"""

from __future__ import annotations

import random
import statistics
import time

CALIBRATION_TUPLES = 100_000
CALIBRATION_NAME = f"calibration: sort {CALIBRATION_TUPLES:,} random (int, float, str) tuples"


def calibration_tuples(seed: int = 21) -> list[tuple[int, float, str]]:
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return [(rng.randrange(1000), rng.random(), "".join(rng.choices(letters, k=6)))
            for _ in range(CALIBRATION_TUPLES)]


def calibration(repeat: int = 5) -> tuple[float, float]:
    """The median wall time and the median CPU time of sorting the calibration
    tuples (a fresh copy each time)."""
    data = calibration_tuples()
    walls, cpus = [], []
    for _ in range(repeat):
        work = list(data)
        t0, c0 = time.perf_counter(), time.process_time()
        work.sort()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus)


def calibration_seconds(repeat: int = 5) -> float:
    """The median wall time of the calibration loop."""
    return calibration(repeat)[0]


def calibration_cpu_seconds(repeat: int = 5) -> float:
    """The median CPU time of the calibration loop (steadier on a shared machine)."""
    return calibration(repeat)[1]


def baseline_json(name: str, what: str, figure: float, unit: str, ratio: float, means: str) -> dict:
    """The `baseline` and `ratio` keys of a benchmark's JSON."""
    return {
        "baseline": {"name": name, "what": what, "figure": figure, "unit": unit},
        "ratio": ratio,
        "ratio_means": means,
    }
