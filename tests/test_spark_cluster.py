"""`fuzz --on-spark` on a real standalone Spark cluster (`window-harness
spark-cluster`, `harness.engines.spark.standalone`): a master and two
workers on this machine, whose executors are JVMs of their own running the
harness's Python, give the verdicts the local process pool gives.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.core.errors import EngineUnavailable
from harness.engines.spark.adapter import _builder
from harness.engines.spark.standalone import LocalCluster

CLI = str(Path(sys.executable).parent / "window-harness")

pytestmark = pytest.mark.spark  # pyspark, and for most of them its JVM


@pytest.mark.parametrize("master", ["local[*]", "local[2]", "spark://127.0.0.1:7077", "spark://localhost:7077"])
def test_a_driver_for_a_master_on_this_machine_listens_on_loopback_only(master: str) -> None:
    options = _builder(master)._options
    assert options["spark.driver.host"] == options["spark.driver.bindAddress"] == "127.0.0.1"


@pytest.mark.parametrize("master", ["spark://spark-master.example:7077", "yarn",
                                    "k8s://https://kubernetes.example:6443", "spark://10.0.0.5:7077"])
def test_a_driver_for_a_remote_cluster_is_reachable_from_its_executors(master: str) -> None:
    """Executors on other hosts connect back to the driver: 127.0.0.1 would be their own
    machine. Spark's defaults (this host's name and address) apply, or the user's."""
    options = _builder(master)._options
    assert "spark.driver.host" not in options and "spark.driver.bindAddress" not in options


# -- the cluster itself -------------------------------------------------------------------


def test_a_cluster_that_does_not_start_in_time_is_unavailable_and_gone(monkeypatch) -> None:
    launched: list[subprocess.Popen] = []

    class Recorded(subprocess.Popen):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            launched.append(self)

    monkeypatch.setattr(subprocess, "Popen", Recorded)
    cluster = LocalCluster(workers=1, timeout=0.5)
    with pytest.raises(EngineUnavailable, match="did not start within 0.5 s"):
        cluster.start()
    daemons = [p for p in launched if "spark-class" in str(p.args)]
    assert len(daemons) == 1  # the master: no worker is started before it answers
    assert _group_ends(daemons[0].pid)
    assert cluster.directory is None


def test_spark_cluster_refuses_a_memory_it_cannot_read() -> None:
    done = subprocess.run([CLI, "spark-cluster", "--memory", "lots"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert "--memory" in done.stderr and "512m" in done.stderr


# -- a campaign on the cluster ----------------------------------------------------------

# Seed 7's first two groups, one for each worker's executor (one core each: two shards):
# DataFusion refuses the first shape, Spark wrongly rejects the second (a finding), and
# case 7 draws a Spark profile, which runs from the driver in the job's application.
# --profile-share 1: each shape's first case draws a batch-changing profile; case 0's
# is spark[window-buffer], which must run on the job's own Spark (one application).
ARGS = ["--cases", "8", "--batch-size", "4", "--jobs", "2", "--seed", "7", "--no-reduce",
        "--metamorphic-share", "0", "--profile-share", "1", "--engines", "reference,duckdb,datafusion,spark", "--format", "json"]


def _campaign(out: Path, *extra: str) -> tuple[dict, dict[int, dict]]:
    done = subprocess.run([CLI, "fuzz", *ARGS, "--out", str(out), *extra],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    cases = {line["index"]: line for line in map(json.loads, (out / "cases.jsonl").read_text().splitlines())}
    return json.loads(done.stdout), cases


def _group_ends(group: int, within: float = 15.0) -> bool:
    """Whether no process is left in `group` (a zombie goes once reaped) within `within` s."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.slow
def test_a_campaign_on_a_standalone_cluster_gives_the_local_pools_verdicts(tmp_path: Path) -> None:
    with LocalCluster(workers=2, cores=1, memory="1g") as cluster:
        assert cluster.directory is not None
        assert [w["state"] for w in cluster.state()["workers"]] == ["ALIVE", "ALIVE"]
        job, job_cases = _campaign(tmp_path / "cluster", "--on-spark", "--spark-master", cluster.url)
        state = cluster.state()
        # Each worker launched an executor for the campaign (work/APP/EXECUTOR/, its stderr inside).
        executors = {worker: [p.parent for p in (cluster.directory / worker).glob("app-*/*/stderr")]
                     for worker in ("worker-0", "worker-1")}
        groups = cluster.groups
    assert job["summary"]["on_spark"] == state["url"]
    apps = state["completedapps"] + state["activeapps"]
    assert [(app["name"], app["cores"]) for app in apps] == [("window-harness", 2)]  # one core of each
    assert all(executors.values()), executors
    # No daemon, executor or Python worker of the cluster is left.
    assert [g for g in groups if not _group_ends(g)] == []

    pool, pool_cases = _campaign(tmp_path / "pool")
    assert job_cases.keys() == pool_cases.keys() == set(range(8))
    for index, line in pool_cases.items():
        assert job_cases[index]["seed"] == line["seed"]
        assert job_cases[index]["verdicts"] == line["verdicts"], f"case {index}"
    assert sorted(f["key"] for f in job["findings"]) == sorted(f["key"] for f in pool["findings"])
    assert pool["findings"], "the seed was chosen to give findings"
    assert "spark[window-buffer]" in job_cases[0]["verdicts"]
