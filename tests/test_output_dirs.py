"""Output directories of fuzz and gate: one writer at a time, nothing lost or
doubled across kill -9 and `--resume`, never a dead end.

- a second command on a campaign or gate directory in use is refused (exit 2),
  and a kill -9 of the first frees the directory;
- `fuzz --out` into a directory that holds something else is refused;
- a directory left by a campaign that never recorded a case (an engine that
  would not start, a torn campaign.json) is started afresh, with or without
  --resume;
- a resumed campaign draws every case an uninterrupted one draws;
- a reduction cut short by kill -9 is redone on --resume;
- a results file that cannot be written stops the campaign (exit 2, a
  message naming the file) and leaves no harness-bug finding behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.campaign.loop import CampaignConfig, regenerate, run_campaign
from harness.cli.main import main
from harness.results.read import read_campaign_dir
from harness.results.store import CAMPAIGN, CASES, FINDINGS

ROOT = Path(__file__).resolve().parent.parent
ENGINES = "reference,duckdb"
EDGE = str(ROOT / "cases" / "edge")
WAIT = 180  # seconds a started command may take to reach what a test waits for (a busy machine's start)


def _lines(path: Path) -> list[dict]:
    """A JSONL file's complete lines (a line torn by a kill or a full disk is left out)."""
    out = []
    for text in path.read_text().splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            out.append(json.loads(text))
    return out


def _harness(*args: str, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "harness", *args], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kwargs)


def _wait_for(condition: Callable[[], bool], process: subprocess.Popen, what: str) -> None:
    """Until `condition` holds; fails if the process ends first, or has not got
    there in WAIT seconds (a hang fails here, rather than stalling the suite)."""
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"the command did not reach {what} in {WAIT} s")
        if process.poll() is not None:
            pytest.fail(f"the command ended (exit {process.returncode}) before {what}: "
                        f"{process.stderr.read().decode()[-2000:]}")
        time.sleep(0.05)


def _descendants(pid: int) -> list[int]:
    """The processes below `pid` (engine workers, shards), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _kill9(process: subprocess.Popen) -> list[int]:
    """kill -9 the command alone (as a user would); returns what it leaves running."""
    left = _descendants(process.pid)
    process.kill()
    process.wait()
    return left


def _end(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


# -- one writer per directory -----------------------------------------------------------


def test_a_second_resume_of_a_running_campaign_is_refused_until_a_kill_9_frees_it(tmp_path, capsys):
    out = tmp_path / "c"
    # One job: the cases are then indices 0, 1, 2, ... (a resume keeps the campaign's jobs).
    first = _harness("fuzz", "--engines", ENGINES, "--seed", "5", "--cases", "1000000", "--no-reduce",
                     "--jobs", "1", "--out", str(out))
    left: list[int] = []
    try:
        _wait_for(lambda: (out / CASES).exists() and (out / CASES).stat().st_size > 0, first,
                  "its first case")
        resume = ["fuzz", "--engines", ENGINES, "--out", str(out), "--resume", "--no-reduce"]
        assert main([*resume, "--cases", "5"]) == 2
        err = capsys.readouterr().err
        assert f"{out} is in use by another window-harness command (fuzz, pid {first.pid}" in err
        assert "Traceback" not in err
        assert main(["fuzz", "--engines", ENGINES, "--seed", "5", "--out", str(out)]) == 2
        assert "in use" in capsys.readouterr().err
        left = _kill9(first)
        done = {line["index"] for line in _lines(out / CASES)}
        assert main([*resume, "--cases", str(len(done) + 25)]) in (0, 1)
    finally:
        if first.poll() is None:
            left = _kill9(first)
        _end(left)
    indices = [line["index"] for line in _lines(out / CASES)]
    assert _each_once(indices, len(done) + 25)


def _hold(lock: object, ready: object) -> None:  # a spawned shard's part: it holds `lock`
    ready.set()
    time.sleep(600)


def test_a_shard_holds_its_parents_lock_until_it_ends(tmp_path):
    """The parent's lock is the shards' too (a shard gets the same open file), so a
    shard still writing keeps the directory refused after its parent let go."""
    import multiprocessing as mp

    from harness.core.errors import DirectoryInUse
    from harness.results.lock import lock_directory

    ctx = mp.get_context("spawn")  # as the campaign's pool starts its shards
    lock = lock_directory(tmp_path, "fuzz")
    ready = ctx.Event()
    shard = ctx.Process(target=_hold, args=(lock, ready))
    shard.start()
    try:
        assert ready.wait(60)
        lock.release()  # the parent is gone, as far as the lock can tell
        with pytest.raises(DirectoryInUse):
            lock_directory(tmp_path, "fuzz")
    finally:
        shard.kill()
        shard.join()
    lock_directory(tmp_path, "fuzz").release()  # the shard's end freed it


def test_a_campaign_whose_parent_was_killed_resumes_once_its_shards_died_with_it(tmp_path, capsys):
    out = tmp_path / "c"
    first = _harness("fuzz", "--engines", ENGINES, "--seed", "6", "--cases", "1000000", "--no-reduce",
                     "--jobs", "2", "--out", str(out))
    left: list[int] = []
    try:
        _wait_for(lambda: (out / CASES).exists() and (out / CASES).stat().st_size > 0, first,
                  "its first case")
        left = _kill9(first)
        deadline = time.monotonic() + 10
        for pid in left:  # the shards die with their parent (harness.core.lifeline)
            while Path(f"/proc/{pid}").exists() and "Z" not in _state(pid):
                assert time.monotonic() < deadline, f"pid {pid} outlived its campaign by 10 s"
                time.sleep(0.05)
        resume = ["fuzz", "--engines", ENGINES, "--out", str(out), "--resume", "--no-reduce", "--cases", "0"]
        assert main(resume) in (0, 1)
    finally:
        if first.poll() is None:
            left += _kill9(first)
        _end(left)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return "X"


def test_a_second_gate_on_a_directory_in_use_is_refused_and_deletes_nothing(tmp_path, capsys):
    out = tmp_path / "gate"
    gate = ["gate", "--engines", ENGINES, "--corpus", EDGE, "--out", str(out)]
    first = _harness(*gate, "--budget-seconds", "100000")
    left: list[int] = []
    try:
        # the fuzz runs beside the corpus: wait for both to have written
        _wait_for(lambda: (out / "fuzz" / CASES).exists() and (out / "corpus" / "run.json").exists(), first,
                  "its corpus and its fuzz part")
        assert main([*gate, "--budget-seconds", "0"]) == 2
        assert f"{out} is in use by another window-harness command (gate, pid {first.pid}" in \
            capsys.readouterr().err
        assert (out / "corpus" / "run.json").exists() and (out / "fuzz" / CAMPAIGN).exists()
        left = _kill9(first)
        assert main([*gate, "--budget-cases", "5"]) in (0, 1)
        assert json.loads((out / "gate.json").read_text())["fuzz_cases"] == 5
    finally:
        if first.poll() is None:
            left += _kill9(first)
        _end(left)


# -- no dead ends -------------------------------------------------------------------------


def test_fuzz_refuses_a_directory_that_holds_something_else(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    for extra in ([], ["--resume"]):
        assert main(["fuzz", "--engines", ENGINES, "--cases", "2", "--out", str(out), *extra]) == 2
        assert "does not hold a campaign" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_a_campaign_that_failed_to_start_is_started_afresh(tmp_path, capsys):
    out = str(tmp_path / "c")
    dead = ["--postgres-dsn", "postgresql://nobody@127.0.0.1:1/none"]
    assert main(["fuzz", "--engines", "reference,duckdb,postgres", *dead, "--cases", "5", "--out", out]) == 2
    assert "not available" in capsys.readouterr().err
    assert main(["fuzz", "--engines", ENGINES, "--seed", "2", "--cases", "5", "--out", out, "--resume"]) in (0, 1)
    assert json.loads((Path(out) / CAMPAIGN).read_text())["engines"] == ["reference", "duckdb"]
    assert len(_lines(Path(out) / CASES)) == 5


@pytest.mark.parametrize("resume", [[], ["--resume"]])
@pytest.mark.parametrize("torn", ["", '{"seed": 4, "eng'])
def test_a_torn_campaign_json_with_no_case_is_started_afresh(tmp_path, capsys, torn, resume):
    out = tmp_path / "c"
    out.mkdir()
    (out / CAMPAIGN).write_text(torn)
    assert main(["fuzz", "--engines", ENGINES, "--seed", "4", "--cases", "5", "--out", str(out), *resume]) in (0, 1)
    assert json.loads((out / CAMPAIGN).read_text())["seed"] == 4
    assert len(_lines(out / CASES)) == 5


def test_a_torn_campaign_json_after_cases_is_resumed_with_the_cases_seed(tmp_path, capsys):
    out = tmp_path / "c"
    args = ["fuzz", "--engines", ENGINES, "--no-reduce", "--out", str(out)]
    assert main([*args, "--seed", "4", "--cases", "5"]) in (0, 1)
    (out / CAMPAIGN).write_text("")
    capsys.readouterr()
    assert main([*args, "--cases", "8"]) == 2  # it holds cases: continued with --resume only
    assert "pass --resume" in capsys.readouterr().err
    assert main([*args, "--cases", "8", "--resume", "--seed", "9"]) == 2
    assert "seed 4" in capsys.readouterr().err
    assert main([*args, "--cases", "8", "--resume"]) in (0, 1)  # the seed its cases ran with
    assert json.loads((out / CAMPAIGN).read_text())["seed"] == 4
    assert _each_once([line["index"] for line in _lines(out / CASES)], 8)


# -- nothing lost across a kill -----------------------------------------------------------


def _each_once(indices: list[int], cases: int) -> bool:
    """`cases` cases, none twice (a group's indices past its sibling count are never
    run, so the indices need not be 0..cases-1: `harness.campaign.siblings`)."""
    return len(indices) == len(set(indices)) == cases


def _queries(out: Path, config: CampaignConfig) -> dict[int, str]:
    return {line["index"]: regenerate(line, config).case.sql for line in _lines(out / CASES)}


@pytest.mark.parametrize("jobs, cuts", [(1, (70, 130, 160)), (2, (50, 97, 140))])
def test_a_resumed_campaign_draws_every_case_an_uninterrupted_one_draws(tmp_path, jobs, cuts):
    """Stopped twice, mid-group (groups of 20), then resumed to the end."""
    config = CampaignConfig(seed=7, engines=("reference", "duckdb"), out=tmp_path / "whole", cases=cuts[-1],
                            jobs=jobs, reduce=False, isolate=False, metamorphic_share=0, reruns=0)
    run_campaign(config)
    cut = tmp_path / "cut"
    for i, cases in enumerate(cuts):
        run_campaign(CampaignConfig(**{**config.__dict__, "out": cut, "cases": cases, "resume": i > 0}))
    whole, resumed = _queries(config.out, config), _queries(cut, config)
    assert _each_once(resumed, cuts[-1]) and sorted(resumed) == sorted(whole)
    assert [i for i in whole if whole[i] != resumed[i]] == []


def test_a_reduction_cut_short_by_kill_9_is_redone_on_resume(tmp_path, capsys):
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    # Short reductions (as tests/killing_campaign.py runs them): two of this
    # campaign's findings do not shrink further within a minute.
    fuzz = ["fuzz", "--engines", "reference,duckdb~tie-value", "--seed", "3", "--cases", "40", "--reduce-seconds", "10"]
    main([*fuzz, "--out", str(whole), "--format", "json"])
    expected = json.loads(capsys.readouterr().out)["findings"]
    assert any(f["reduced_file"] for f in expected), "no reduction to cut short"

    killed = subprocess.run([sys.executable, str(ROOT / "tests" / "killing_campaign.py"), str(cut), "3", "40"],
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert not [line for line in _lines(cut / FINDINGS) if line.get("event") == "reduced"]
    # The killed case's finding is not in yet, for a reader either: its case line is missing.
    assert {line["case"] for line in read_campaign_dir(cut).occurrences} <= \
        {line["index"] for line in _lines(cut / CASES)}
    assert [line for line in _lines(cut / FINDINGS) if line.get("new")]

    main([*fuzz, "--out", str(cut), "--resume", "--format", "json"])
    found = json.loads(capsys.readouterr().out)["findings"]
    # Which cases show the planted bug can vary from run to run (DuckDB orders tied
    # rows its own way on each run), so the runs are not compared case by case: what
    # must hold is that every finding is reduced, as every one of the uninterrupted
    # run is, and that nothing is lost or doubled.
    assert found and all(f["reduced_file"] for f in expected)
    for f in found:
        assert f["reduced_file"] and (cut / f["reduced_file"]).is_file(), f
    assert _each_once([line["index"] for line in _lines(cut / CASES)], 40)
    occurrences = [(line["case"], line["key"]) for line in _lines(cut / FINDINGS) if "event" not in line]
    assert len(occurrences) == len(set(occurrences))  # the killed case's, once
    assert sum(f["count"] for f in found) == len(occurrences)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_disk_that_fills_up_stops_the_campaign_with_no_harness_bug(tmp_path, jobs):
    """A real write failure: the OS's file-size limit (RLIMIT_FSIZE) stands in for a
    full disk, so writes past it fail with EFBIG as they would with ENOSPC."""
    import resource

    out = tmp_path / "c"

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # fail the write instead of killing the process
        resource.setrlimit(resource.RLIMIT_FSIZE, (40_000, 40_000))

    fuzz = ["fuzz", "--engines", ENGINES, "--seed", "5", "--cases", "200", "--no-reduce", "--jobs", jobs,
            "--out", str(out)]
    full = _harness(*fuzz, preexec_fn=limited)
    err = full.communicate()[1].decode()
    assert full.returncode == 2, err[-3000:]
    assert "Traceback" not in err
    assert f"{out / CASES}: cannot write: File too large; the campaign stopped after" in err
    assert "continue it with --resume" in err
    assert not [line for line in _lines(out / FINDINGS) if line.get("engine") == "harness"]

    assert main([*fuzz, "--resume"]) in (0, 1)  # room again: it continues
    assert _each_once([line["index"] for line in _lines(out / CASES) if "verdicts" in line], 200)
