"""Every benchmark reports, besides its absolute figures, its ratio to a baseline
it measured in the same run (issue 21, item 5): here each script runs on a tiny
size and its `--json` is checked for the `baseline` and `ratio` keys. Nothing
is timed: the figures themselves are bench/README.md's business.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

RUNS = {
    "reference_speed-large": ["reference_speed.py", "--rows", "600", "--baseline-rows", "200"],
    "reference_speed-whole-frame": ["reference_speed.py", "--workload", "whole-frame", "--rows", "600",
                                    "--baseline-rows", "200"],
    "reference_speed-campaign": ["reference_speed.py", "--workload", "campaign", "--groups", "2",
                                 "--siblings", "2", "--runs", "1"],
    "reference_speed-tables": ["reference_speed.py", "--workload", "tables-200k", "--rows", "2000"],
    "load_speed": ["load_speed.py", "--rows", "300", "--baseline-rows", "200"],
    "realistic_sql": ["realistic_sql.py", "--limit", "2"],
    "sibling_cost": ["sibling_cost.py", "--engines", "duckdb", "--shapes", "1", "--siblings", "3"],
}
# These run a campaign, or draw and evaluate a case of thousands of rows: 15 to 25 s on a busy machine.
SLOW_RUNS = {
    "reference_speed-batch-scale": ["reference_speed.py", "--workload", "batch-scale", "--cases", "1"],
    "report_speed": ["report_speed.py", "--cases", "3", "--scale", "20", "--runs", "1"],
}


def bench_json(args: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, str(ROOT / "bench" / args[0]), *args[1:], "--json"],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=300, check=False)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("name", [*RUNS, *(pytest.param(n, marks=pytest.mark.slow) for n in SLOW_RUNS)])
def test_each_benchmark_reports_a_baseline_and_its_ratio(name):
    got = bench_json({**RUNS, **SLOW_RUNS}[name])
    baseline = got["baseline"]
    assert baseline["name"] and baseline["what"] and baseline["unit"], baseline
    assert isinstance(baseline["figure"], float) and baseline["figure"] >= 0, baseline
    if not (name == "sibling_cost" and got["ratio"] is None):  # None: no case cost anything measurable
        assert got["ratio"] > 0, got
    assert got["ratio_means"]
