"""`fuzz --on-spark` on a real standalone Spark cluster (`window-harness
spark-cluster`, `harness.engines.spark.standalone`): a master and two
workers on this machine, whose executors are JVMs of their own running the
harness's Python, give the verdicts the local process pool gives.
"""

from __future__ import annotations

import pytest

from harness.engines.spark.adapter import _builder


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
