"""`bisect --engine-python VERSION=PATH` checks the release PATH runs (issue 33,
minor): an interpreter with another release installed would have its verdicts
reported as VERSION's, so it is refused, exit 2, naming both releases.

On the real second environment (DuckDB 1.5.6: $WINDOW_HARNESS_CANDIDATE_PYTHON,
as .ci/run builds it); skipped, saying why, without one.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from harness.bisect.run import Releases
from harness.cli.main import main
from harness.engines.registry import get_engine

CASE = "cases/ranking/rank_ties.yaml"
ENV_VAR = "WINDOW_HARNESS_CANDIDATE_PYTHON"
CANDIDATE = "1.5.6"


@pytest.fixture(scope="module")
def candidate_python() -> str:
    python = os.environ.get(ENV_VAR)
    if not python:
        pytest.skip(f"no second Python environment with duckdb {CANDIDATE}: set {ENV_VAR} to its "
                    f"bin/python (python3 -m venv V && V/bin/pip install duckdb=={CANDIDATE} 'pyarrow>=15')")
    done = subprocess.run([python, "-I", "-c", "import duckdb; print(duckdb.__version__)"],
                          capture_output=True, text=True, timeout=60)
    if done.stdout.strip() != CANDIDATE:
        pytest.skip(f"{ENV_VAR}={python} does not run duckdb {CANDIDATE} ({done.stdout.strip() or done.stderr[-200:]})")
    return python


def test_an_engine_reports_the_release_its_interpreter_has_installed(candidate_python):
    import duckdb

    here = get_engine("duckdb")
    there = get_engine("duckdb@other", python=candidate_python)
    try:
        assert here.release() == duckdb.__version__
        assert there.release() == CANDIDATE  # from the other interpreter, not this one
    finally:
        here.close()
        there.close()


def test_a_label_the_interpreter_does_not_run_is_refused_naming_both_releases(candidate_python, capsys):
    code = main(["bisect", CASE, "--engine", "duckdb", "--versions", f"1.1.0,{CANDIDATE}",
                 "--engine-python", f"1.1.0={candidate_python}",
                 "--engine-python", f"{CANDIDATE}={candidate_python}"])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert f"runs duckdb {CANDIDATE}, not 1.1.0" in err and "--engine-python" in err, err
    assert "Traceback" not in err and "1.1.0" not in out  # no verdict reported as 1.1.0's


def test_a_label_the_interpreter_runs_is_used(candidate_python):
    releases = Releases("duckdb", {CANDIDATE: candidate_python}, say=lambda line: None)
    try:
        assert releases.get(CANDIDATE).version() == CANDIDATE
    finally:
        releases.close()
