"""`window-harness fuzz --on-spark`: the campaign as a Spark job finds what
the local process pool finds for the same seed.

Both run through the command line in their own processes (each has its own
Spark: one process holds one master). Shard j of the pool and task j of the
job draw the same groups with the same steering, so the cases, their
verdicts and the finding signatures must all be equal. The seed is one whose
20 cases give findings (DataFusion and Spark differences), so the
comparison is not of two empty sets.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

CLI = str(Path(sys.executable).parent / "window-harness")
ARGS = ["--cases", "20", "--batch-size", "4", "--jobs", "2", "--seed", "7", "--no-reduce",
        "--metamorphic-share", "0", "--engines", "reference,duckdb,datafusion,spark"]


def _campaign(out: Path, *extra: str) -> tuple[dict, dict[int, dict]]:
    done = subprocess.run([CLI, "fuzz", *ARGS, "--out", str(out), "--format", "json", *extra],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    report = json.loads(done.stdout)
    cases = {line["index"]: line for line in map(json.loads, (out / "cases.jsonl").read_text().splitlines())}
    return report, cases


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory) -> tuple:
    root = tmp_path_factory.mktemp("on-spark")
    return _campaign(root / "pool"), _campaign(root / "job", "--on-spark", "--spark-master", "local[2]"), root


@pytest.mark.slow
def test_on_spark_finds_what_the_local_pool_finds(campaigns) -> None:
    (pool, pool_cases), (job, job_cases), _ = campaigns
    assert sorted(f["key"] for f in job["findings"]) == sorted(f["key"] for f in pool["findings"])
    assert pool["findings"], "the seed was chosen to give findings"
    assert job_cases.keys() == pool_cases.keys() == set(range(20))
    for index, line in pool_cases.items():
        assert job_cases[index]["seed"] == line["seed"]
        assert job_cases[index]["picks"] == line["picks"]
        assert job_cases[index]["verdicts"] == line["verdicts"], f"case {index}"


@pytest.mark.slow
def test_on_spark_writes_parquet(campaigns) -> None:
    _, (job, _), root = campaigns
    verdicts = pq.read_table(root / "job" / "verdicts.parquet")
    engines = verdicts.column("engine").to_pylist()
    # One row per case and engine; a profile the campaign drew for a case (a thread
    # re-run of a batch-scale one, say) adds its own row.
    assert {e for e in engines if "[" not in e} == {"reference", "duckdb", "datafusion", "spark"}
    assert sum("[" not in e for e in engines) == 20 * 4
    findings = pq.read_table(root / "job" / "findings.parquet")
    assert findings.num_rows >= len(job["findings"])
    assert job["summary"]["on_spark"] == "local[2]"


def test_spark_remote_must_be_a_connect_url(tmp_path) -> None:
    done = subprocess.run([CLI, "fuzz", "--cases", "1", "--on-spark", "--spark-remote", "local[2]",
                           "--out", str(tmp_path / "x")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "--spark-remote" in done.stderr


@pytest.mark.slow
def test_on_spark_through_spark_connect(tmp_path, monkeypatch) -> None:
    """The job and Spark-under-test on a Spark Connect server (a local one here)."""
    from harness.engines.spark.connect import LocalConnectServer

    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)  # the server's Python workers import the harness
    # Seed 2's one shape is a query Spark runs (a match is asserted below).
    with LocalConnectServer("local[1]") as server:
        done = subprocess.run(
            [CLI, "fuzz", "--cases", "4", "--batch-size", "4", "--seed", "2", "--no-reduce",
             "--metamorphic-share", "0", "--engines", "reference,duckdb,spark", "--on-spark",
             "--spark-remote", server.url, "--out", str(tmp_path / "c"), "--format", "json"],
            capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["summary"]["cases"] == 4
    assert report["summary"]["verdicts"]["spark"].get("match", 0) >= 1
    engines = pq.read_table(tmp_path / "c" / "verdicts.parquet").column("engine").to_pylist()
    assert sum("[" not in e for e in engines) == 4 * 3  # and a drawn profile's rows beside them
