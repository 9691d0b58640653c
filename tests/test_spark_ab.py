"""Spark as an engine under change: two pyspark releases side by side.

`spark` is this environment's pyspark (4.x) and `spark@old` the same adapter
run by a second virtualenv with pyspark 3.5.9 (`spark_old_python` takes the
cached one of `harness.engines.releases`, made once, or
$WINDOW_HARNESS_SPARK_CANDIDATE_PYTHON), with a JVM, warehouse and local
directories of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.cli.options import engine_options
from harness.core.errors import EngineUnavailable
from harness.engines.registry import engine_class, get_dialect, get_engine
from harness.engines.releases import environment

REPO = Path(__file__).resolve().parent.parent
OLD_PYSPARK = "3.5.9"
ENV_VAR = "WINDOW_HARNESS_SPARK_CANDIDATE_PYTHON"


@pytest.fixture(scope="session")
def spark_old_python() -> str:
    """A Python of another environment with pyspark 3.5.9: $WINDOW_HARNESS_SPARK_CANDIDATE_PYTHON,
    else the cached one of `harness.engines.releases.environment`, made once when it is missing."""
    given = os.environ.get(ENV_VAR)
    if given:
        return given
    try:
        return str(environment("spark", OLD_PYSPARK))
    except EngineUnavailable as e:
        pytest.skip(f"no second Python environment with pyspark {OLD_PYSPARK}: {e}. Make one "
                    f"(`python3 -m venv V && V/bin/pip install pyspark=={OLD_PYSPARK} pyarrow`) "
                    f"and set {ENV_VAR}=V/bin/python")


# -- without a JVM ----------------------------------------------------------------------


def test_a_labelled_spark_receives_the_spark_master():
    assert engine_class("spark@old").runs_on_spark
    args = argparse.Namespace(spark_master="local[2]", engine_python=[f"spark@old={sys.executable}"])
    options = engine_options(args, ["reference", "spark", "spark@old"])
    assert options["spark@old"] == {"python": os.path.abspath(sys.executable), "master": "local[2]"}
    assert options["spark"] == {"master": "local[2]"}


def test_each_spark_process_launches_its_jvm_with_its_own_warehouse_and_local_dirs(tmp_path, monkeypatch):
    pytest.importorskip("pyspark")
    from harness.engines.spark import adapter

    monkeypatch.chdir(tmp_path)
    first, second = (adapter._builder("local[1]")._options for _ in range(2))
    for key in ("spark.sql.warehouse.dir", "spark.local.dir"):
        assert not first[key].startswith(str(tmp_path)) and first[key] != second[key]


def test_spark_35_runs_with_ansi_mode_off_and_is_judged_so():
    old, new = get_dialect("spark").at("3.5.9"), get_dialect("spark").at("4.3.0")
    assert new is get_dialect("spark")
    assert old.semantics != new.semantics and old.releases_for("3.5.9")[0].measured


# -- two releases (slow: a JVM of each, ~1 min with the corpus) -----------------------------


@pytest.mark.slow
def test_the_two_releases_run_side_by_side_each_with_its_own_spark(spark_old_python, capsys, monkeypatch):
    # A SPARK_HOME of this environment's pyspark would start 4.x's JVM under pyspark 3.5.
    import pyspark

    monkeypatch.setenv("SPARK_HOME", os.path.dirname(pyspark.__file__))
    # Typed values both ways through Arrow: NaN and infinities beside NULL, decimals, dates
    # and timestamps as RANGE keys (pyspark 3.5 has no toArrow or createDataFrame of a Table).
    argv = ["run", *(str(REPO / "cases" / d) for d in ("ranking", "special_floats", "frames/range")),
            "--engines", "reference,spark,spark@old",
            "--engine-python", f"spark@old={spark_old_python}", "--format", "json"]
    assert main(argv) in (0, 1)
    doc = json.loads(capsys.readouterr().out)
    assert doc["engines"]["spark"].startswith("4.") and doc["engines"]["spark@old"] == OLD_PYSPARK
    verdicts = {(r["case"], r["engine"]): r["verdict"] for r in doc["results"]}
    cases = {case for case, _ in verdicts}
    differ = {case: (verdicts[(case, "spark")], verdicts[(case, "spark@old")]) for case in cases
              if verdicts[(case, "spark")] != verdicts[(case, "spark@old")]}
    # What 3.5 lacks is unsupported there (RANGE over a DATE with an INTERVAL); nothing else differs.
    assert len(cases) > 30 and all(old == "unsupported" for _, old in differ.values()), differ
    # Each JVM keeps its tables under a directory of its own, not the working directory.
    spark, spark_old = get_engine("spark"), get_engine("spark@old", python=spark_old_python, timeout=120)
    try:
        where = [e.run({}, "SET spark.sql.warehouse.dir").column(1).to_pylist()[0] for e in (spark, spark_old)]
    finally:
        spark_old.close()
        spark.close()
    assert where[0] != where[1] and not any(os.getcwd() in w for w in where), where


@pytest.mark.slow
def test_the_gate_ab_of_two_spark_releases_runs_to_the_end_and_every_difference_is_declared(
        spark_old_python, tmp_path, capsys):
    code = main(["gate", "--engines", "reference,spark,spark@old",
                 "--engine-python", f"spark@old={spark_old_python}",
                 "--budget-cases", "30", "--budget-seconds", "600", "--seed", "0",
                 "--out", str(tmp_path / "gate"), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["engines"]["spark@old"] == OLD_PYSPARK and doc["fuzz_cases"] == 30
    assert [d for d in doc["ab_differences"] if d["regression"]] == []
    unread = [(d["case"], d["a_verdict"], d["b_verdict"]) for d in doc["ab_differences"] if not _declared(d)]
    assert unread == []
    assert doc["failures"] == [] and code == 0


# A/B differences of 3.5.9 against 4.3.0 that are neither 3.5's `unsupported`
# (its release table in harness/engines/spark/dialect.py) nor a regression, as
# read one by one: (4.3.0's verdict, 3.5.9's verdict) -> the reading.
LISTED: dict[str, tuple[str, str, str]] = {
    # ANSI mode off in 3.5 (the release table's semantics): judged by its own profile.
    "defaults/sum_overflow": ("rejected-as-expected", "match", "sum(bigint) wraps: sum_overflow"),
    "semantics/date_vs_invalid_string_literal": ("rejected-as-expected", "match",
                                                 "'not a date' casts to NULL: invalid_string_cast"),
    # 4.3 raises ARITHMETIC_OVERFLOW computing a RANGE bound past BIGINT, 3.5 wraps
    # and answers wrongly (baseline spark-range-bound-wraps-without-ansi).
    "regressions/range_offset_past_bigint_max": ("error", "mismatch", "3.5 bug (ANSI off)"),
    "regressions/range_bound_past_key_type_keeps_nulls_out": ("error", "mismatch", "3.5 bug (ANSI off)"),
}


def _declared(difference: dict) -> bool:
    if difference["b_verdict"] == "unsupported" and difference["b_older"]:
        return True
    listed = LISTED.get(difference["case"])
    return listed is not None and listed[:2] == (difference["a_verdict"], difference["b_verdict"])
