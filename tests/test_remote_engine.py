"""Engine A/B: one adapter, two builds of the engine, one of them run by another Python.

Real engines throughout: `duckdb` is this environment's DuckDB and
`duckdb@candidate` the same adapter run by a second virtualenv with another
DuckDB release (the `candidate_python` fixture builds it once, or takes
WINDOW_HARNESS_CANDIDATE_PYTHON).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path

import pyarrow as pa
import pytest

from harness.campaign.loop import CampaignConfig, make_engines
from harness.cases.case import load_cases
from harness.cli.main import main
from harness.core.errors import (
    EngineCrash,
    EngineError,
    EngineTimeout,
    EngineUnavailable,
    InvalidInput,
    Unsupported,
)
from harness.engines.registry import canonical_name, engine_class, get_engine
from harness.engines.remote import ArrowChannel, RemoteEngine
from harness.judge.runner import run_case

REPO = Path(__file__).resolve().parent.parent
CANDIDATE_VENV = REPO / ".venv-candidate"
CANDIDATE_DUCKDB = "1.5.6"
CANDIDATE_PACKAGES = [f"duckdb=={CANDIDATE_DUCKDB}", "pyarrow>=15"]
ENV_VAR = "WINDOW_HARNESS_CANDIDATE_PYTHON"

TABLES = {"t": pa.table({"id": pa.array([1, 2, 3, 4], pa.int64()),
                         "g": pa.array(["a", "a", "b", None]),
                         "v": pa.array([10.5, None, -2.0, 7.25])})}
WINDOWS = ("SELECT id, g, row_number() OVER (PARTITION BY g ORDER BY id) AS rn, "
           "sum(v) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s FROM t ORDER BY id")
SLOW = "SELECT count(*) FROM range(100000000000) a"  # minutes of work for DuckDB
CASES = ["ranking/rank_ties", "frames/range/decimal_offset", "nulls/desc_nulls_first",
         "offset/lag_ignore_nulls", "aggregate/avg_integer_is_double"]


def _duckdb_version(python: Path | str) -> str | None:
    try:
        done = subprocess.run([str(python), "-I", "-c", "import duckdb, pyarrow; print(duckdb.__version__)"],
                              capture_output=True, text=True, timeout=60)
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


@pytest.fixture(scope="session")
def candidate_python() -> str:
    """A Python of another environment with DuckDB 1.5.6: $WINDOW_HARNESS_CANDIDATE_PYTHON,
    else <repo>/.venv-candidate, made here once when it is missing."""
    given = os.environ.get(ENV_VAR)
    if given:
        return given
    python = CANDIDATE_VENV / "bin" / "python"
    if _duckdb_version(python) != CANDIDATE_DUCKDB:
        try:
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(CANDIDATE_VENV)],
                           check=True, capture_output=True, timeout=120)
            subprocess.run([str(python), "-m", "pip", "install", "-q", *CANDIDATE_PACKAGES],
                           check=True, capture_output=True, timeout=600)
        except (OSError, subprocess.SubprocessError) as e:
            output = getattr(e, "stderr", None) or b""
            pytest.skip(f"no second Python environment with duckdb {CANDIDATE_DUCKDB}: making "
                        f"{CANDIDATE_VENV} failed ({e}; {output.decode(errors='replace')[-300:]}). "
                        f"Make one (`python3 -m venv V && V/bin/pip install {' '.join(CANDIDATE_PACKAGES)}`) "
                        f"and set {ENV_VAR}=V/bin/python")
    return str(python)


@pytest.fixture(scope="module")
def local():
    engine = get_engine("duckdb")
    yield engine
    engine.close()


@pytest.fixture
def candidate(candidate_python):
    engine = get_engine("duckdb@candidate", python=candidate_python, timeout=20)
    yield engine
    engine.close()


# -- the spec and the registry -------------------------------------------------------


def test_a_labelled_spec_answers_class_questions_without_constructing_anything():
    cls = engine_class("duckdb@candidate")
    assert issubclass(cls, RemoteEngine) and cls.out_of_process
    assert cls.name == "duckdb@candidate"
    assert cls.dialect is engine_class("duckdb").dialect
    assert cls.shares_code_with == "duckdb" and cls.profiles == ()
    profiled = engine_class("duckdb[threads=1,default]@cand-1.5")
    assert profiled.name == canonical_name("duckdb[default,threads=1]@cand-1.5") == "duckdb[threads=1]@cand-1.5"
    assert profiled.profiles == ("threads=1",) and profiled.target == "duckdb[threads=1]"
    assert not engine_class("duckdb").out_of_process


@pytest.mark.parametrize(("spec", "message"), [
    ("reference@x", "oracle"),
    ("duckdb~ntile@x", "renders queries its own way"),
    ("duckdb@", "malformed engine"),
    ("duckdb@a/b", "malformed engine"),
    ("duckdb[nosuch]@x", "no profile 'nosuch'"),
])
def test_bad_labelled_specs_are_refused(spec, message):
    with pytest.raises(InvalidInput, match=message):
        engine_class(spec)


def test_a_labelled_engine_needs_its_python():
    with pytest.raises(InvalidInput, match=r"--engine-python duckdb@candidate=PATH"):
        get_engine("duckdb@candidate")
    with pytest.raises(EngineUnavailable, match=r"'duckdb@candidate'.*no executable file.*/no/such/python"):
        get_engine("duckdb@candidate", python="/no/such/python")


def test_messages_cross_as_arrow_ipc_and_plain_values_only():
    ours, theirs = socket.socketpair()
    a, b = ArrowChannel(Connection(ours.detach())), ArrowChannel(Connection(theirs.detach()))
    table = pa.table({"d": pa.array([1, None], pa.decimal128(20, 3)), "l": [[1, 2], None],
                      "ts": pa.array([0, None], pa.timestamp("us", "UTC"))})
    a.send(("run", {"t": table, "empty": pa.table({})}, "SELECT 1", 7, None))
    kind, tables, sql, n, nothing = b.recv()
    assert (kind, sql, n, nothing) == ("run", "SELECT 1", 7, None)
    assert tables["t"].equals(table) and tables["empty"].num_columns == 0
    a.send(ValueError("not plain"))
    with pytest.raises(Exception, match="only plain values may cross"):
        b.recv()
    a.close()
    b.close()


# -- the engine in the other environment ------------------------------------------------


def test_the_candidate_is_another_build_and_answers_as_the_released_one(local, candidate):
    assert local.version().startswith("2.")
    assert candidate.version().startswith("1.5.") and candidate.version() != local.version()
    assert candidate.pid not in (None, os.getpid())
    assert candidate.run(TABLES, WINDOWS).to_pylist() == local.run(TABLES, WINDOWS).to_pylist()


def test_corpus_verdicts_match_the_in_process_engine(local, candidate):
    cases, errors = load_cases([REPO / "cases" / f"{c}.yaml" for c in CASES])
    assert not errors and len(cases) == len(CASES)
    for case in cases:
        released, other = run_case(case, [local, candidate])
        assert (other.engine, other.verdict.value) == ("duckdb@candidate", "match"), other.detail
        assert released.verdict is other.verdict


def test_errors_and_unsupported_come_back_as_the_harness_types(candidate):
    with pytest.raises(EngineError, match=r"Binder Error.*nope") as raised:
        candidate.run(TABLES, "SELECT nope FROM t")
    assert type(raised.value) is EngineError and raised.value.engine == "duckdb@candidate"
    cases, _ = load_cases([REPO / "cases" / "value" / "nth_value_from_last.yaml"])
    with pytest.raises(Unsupported):  # the dialect, in this process: nothing reaches the child
        candidate.render(cases[0].query)
    (result,) = run_case(cases[0], [candidate])
    assert result.verdict.value == "unsupported"


def test_a_child_killed_mid_query_is_a_crash_and_the_next_query_restarts_it(candidate):
    candidate.start()
    pid = candidate.pid
    threading.Timer(0.5, os.kill, (pid, signal.SIGKILL)).start()
    with pytest.raises(EngineCrash, match="SIGKILL"):
        candidate.run(TABLES, SLOW)
    assert candidate.run(TABLES, "SELECT 1 AS x").column("x").to_pylist() == [1]
    assert candidate.pid != pid and candidate.restarts == 1


def test_a_query_that_hangs_times_out_and_the_next_query_restarts_it(candidate_python):
    engine = get_engine("duckdb@candidate", python=candidate_python, timeout=1.0)
    try:
        with pytest.raises(EngineTimeout, match="did not answer within 1 s"):
            engine.run(TABLES, SLOW)
        assert engine.run(TABLES, "SELECT 2 AS x").column("x").to_pylist() == [2]
    finally:
        engine.close()


def test_an_environment_without_pyarrow_is_unavailable_with_the_childs_output(tmp_path):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    python = tmp_path / "bare" / "bin" / "python"
    engine = get_engine("duckdb@bare", python=python)
    with pytest.raises(EngineUnavailable) as raised:
        engine.start()
    message = str(raised.value)
    assert "'duckdb@bare'" in message and str(python) in message
    assert "No module named 'pyarrow'" in message  # the tail of the child's own output


# -- campaigns and the command line ------------------------------------------------------


def test_a_campaign_constructs_it_with_its_timeout_instead_of_wrapping_it(tmp_path, candidate_python):
    config = CampaignConfig(seed=1, engines=("reference", "duckdb@candidate"), out=tmp_path,
                            timeout_seconds=7.0, engine_options={"duckdb@candidate": {"python": candidate_python}})
    _, remote = make_engines(config)
    assert type(remote) is engine_class("duckdb@candidate") and remote.timeout == 7.0


@pytest.mark.parametrize(("args", "message"), [
    ([], "pass --engine-python duckdb@candidate=PATH"),
    (["--engine-python", "duckdb@candidate"], "expected NAME=PATH"),
    (["--engine-python", "duckdb@candidate=/no/such/python"], "not an executable file"),
    (["--engine-python", "duckdb@other={python}"], "not among --engines"),
    (["--engine-python", "duckdb={python}"], "runs in this process"),
])
@pytest.mark.parametrize("command", ["run", "fuzz"])
def test_command_line_mistakes_exit_2_naming_the_option(command, args, message, candidate_python, capsys, tmp_path):
    where = [str(REPO / "cases" / "ranking")] if command == "run" else ["--cases", "1", "--out", str(tmp_path)]
    argv = [command, *where, "--engines", "reference,duckdb,duckdb@candidate",
            *(a.format(python=candidate_python) for a in args)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--engine-python" in err and message in err


def test_run_compares_the_two_builds_end_to_end(candidate_python, capsys):
    argv = ["run", str(REPO / "cases" / "ranking"), "--engines", "reference,duckdb,duckdb@candidate",
            "--engine-python", f"duckdb@candidate={candidate_python}", "--format", "json"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["engines"]["duckdb"].startswith("2.") and doc["engines"]["duckdb@candidate"].startswith("1.5.")
    verdicts = {(r["case"], r["engine"]): r["verdict"] for r in doc["results"]}
    # ranking/ntile_zero_buckets is invalid by definition: both builds must refuse it.
    assert {v for (_, e), v in verdicts.items() if e == "duckdb@candidate"} == {"match", "rejected-as-expected"}
    assert verdicts[("ranking/ntile_zero_buckets", "duckdb@candidate")] == "rejected-as-expected"


def test_fuzz_runs_the_candidate_beside_the_released_build(candidate_python, tmp_path, capsys):
    argv = ["fuzz", "--seed", "3", "--cases", "20", "--no-reduce", "--reruns", "0", "--out", str(tmp_path),
            "--engines", "reference,duckdb,duckdb@candidate",
            "--engine-python", f"duckdb@candidate={candidate_python}", "--format", "json"]
    assert main(argv) in (0, 1)
    doc = json.loads(capsys.readouterr().out)
    assert doc["campaign"]["engine_options"] == {"duckdb@candidate": {"python": os.path.abspath(candidate_python)}}
    assert sum(doc["summary"]["verdicts"]["duckdb@candidate"].values()) == 20


def test_the_gate_compares_two_releases_and_fails_on_a_regression(tmp_path, capsys, candidate_python):
    """duckdb 2.0.0 here, 1.5.6 as the candidate: 1.5.6 raises "STDDEV_SAMP is out of range"
    for a sliding frame that holds NaN, where 2.0.0 (and the reference) answer NaN."""
    code = main(["gate", "--engines", "reference,duckdb,duckdb@candidate",
                 "--engine-python", f"duckdb@candidate={candidate_python}",
                 "--corpus", str(REPO / "cases" / "regressions"), "--budget-cases", "20", "--seed", "3",
                 "--out", str(tmp_path / "gate"), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    assert doc["engines"]["duckdb@candidate"] == CANDIDATE_DUCKDB
    regression = {"source": "corpus", "case": "regressions/stddev_samp_nan_in_sliding_frame",
                  "a": "duckdb", "b": "duckdb@candidate", "a_verdict": "match", "b_verdict": "error",
                  "regression": True}
    found = [{k: d[k] for k in regression} for d in doc["ab_differences"]]
    assert regression in found
    assert "STDDEV_SAMP is out of range" in next(
        d["detail"] for d in doc["ab_differences"] if d["case"] == regression["case"])
    assert doc["fuzz_cases"] == 20  # the candidate served the campaign too



# -- findings of a labelled build are first-class (issue 20, item 4) -----------------

REGRESSION_CASE = REPO / "cases" / "regressions" / "stddev_samp_nan_in_sliding_frame.yaml"


def _printed(text: str, label: str) -> list[list[str]]:
    """The commands the gate printed after `label:` (`replay:`, `reduce:`), as argv."""
    import shlex

    return [shlex.split(line.split(f"{label}: ", 1)[1]) for line in text.splitlines()
            if line.strip().startswith(f"{label}: window-harness ")]


def test_the_gates_replay_and_reduce_commands_for_a_labelled_build_work_as_printed(
        tmp_path, capsys, candidate_python):
    """The regression of the candidate (1.5.6: STDDEV_SAMP out of range) is printed with
    replay and reduce commands that name its --engine-python; each runs as printed."""
    code = main(["gate", "--engines", "reference,duckdb,duckdb@candidate",
                 "--engine-python", f"duckdb@candidate={candidate_python}",
                 "--corpus", str(REGRESSION_CASE), "--budget-seconds", "0", "--out", str(tmp_path / "gate")])
    out = capsys.readouterr().out
    assert code == 1, out
    replays, reduces = _printed(out, "replay"), _printed(out, "reduce")
    assert replays and reduces, out
    for argv in replays + reduces:
        assert argv[argv.index("--engine-python") + 1] == f"duckdb@candidate={os.path.abspath(candidate_python)}"
    assert main(replays[0][1:]) == 1  # the candidate's error again
    replayed = capsys.readouterr().out
    assert "duckdb@candidate" in replayed and "STDDEV_SAMP is out of range" in replayed
    assert main([*reduces[0][1:], "--seconds", "5"]) == 0  # reduced and confirmed
    reduced = capsys.readouterr().out
    written = Path(reduced.rsplit("written: ", 1)[1].strip())
    assert written.is_file() and written.is_relative_to(tmp_path)  # never into the corpus


def test_replay_takes_a_labelled_engine_from_the_finding_when_its_python_is_given(tmp_path, capsys,
                                                                                   candidate_python):
    """A finding record naming duckdb@candidate replays on it by default once
    --engine-python names it; without, it is left out (the released engines replay)."""
    from harness.cases.casefile import save_case

    case = load_cases([REGRESSION_CASE])[0][0]
    path = tmp_path / "finding.yaml"
    save_case(case, path, {"engine": "duckdb@candidate", "verdict": "error",
                           "engines": {"reference": {}, "duckdb@candidate": {}}})
    assert main(["replay", str(path), "--engine-python", f"duckdb@candidate={candidate_python}",
                 "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [e["engine"] for e in doc["engines"]] == ["reference", "duckdb@candidate"]


def test_export_for_a_labelled_build_names_it_and_reproduces_with_its_python(tmp_path, capsys,
                                                                              candidate_python):
    """`export --engine-python duckdb@candidate=PATH`: the test is for that build (its
    version in the header), its finding record is the one quoted, and the Reproduce
    line replays on it with its --engine-python, as printed."""
    import shlex

    from harness.cases.casefile import save_case

    case = load_cases([REGRESSION_CASE])[0][0]
    path = tmp_path / "finding.yaml"
    save_case(case, path, {"engine": "duckdb@candidate", "verdict": "error",
                           "engines": {"duckdb@candidate": {"verdict": "error", "version": CANDIDATE_DUCKDB,
                                                            "detail": "STDDEV_SAMP is out of range!"}}})
    assert main(["export", str(path), "--to", "duckdb-test",
                 "--engine-python", f"duckdb@candidate={candidate_python}"]) == 0
    text = capsys.readouterr().out
    assert f"# For duckdb@candidate {CANDIDATE_DUCKDB}:" in text
    assert f"# In the finding, duckdb@candidate {CANDIDATE_DUCKDB} gave error: STDDEV_SAMP" in text
    reproduce = next(line for line in text.splitlines() if line.startswith("# Reproduce: "))
    argv = shlex.split(reproduce.removeprefix("# Reproduce: "))
    assert argv[argv.index("--engine-python") + 1] == f"duckdb@candidate={os.path.abspath(candidate_python)}"
    assert main(argv[1:]) == 1  # the candidate's error, replayed as printed
    assert "STDDEV_SAMP is out of range" in capsys.readouterr().out
    # A build of another engine than the format's is refused, naming the option.
    assert main(["export", str(path), "--to", "slt",
                 "--engine-python", f"duckdb@candidate={candidate_python}"]) == 2
    assert "--engine-python" in capsys.readouterr().err
