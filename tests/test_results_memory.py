"""One results object in memory (`harness.results`): `run --report` and the gate
build their report from the results they hold, and write their directory once,
for the user; `window-harness report` reads that directory back through the one
reader into the same records, so both roads give the same page.

Real engines (DuckDB, SQLite, the reference and a deliberately faulty DuckDB);
nothing is mocked: the spies below only fail a read of a results directory.
"""

from __future__ import annotations

import builtins
import html
import json
import re
from pathlib import Path

import pytest

import harness.results.read as reader
from harness.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
RANKING = str(ROOT / "cases" / "ranking")
ENGINES = "reference,duckdb,sqlite,duckdb~ntile"  # the faulty ntile makes findings with answers
# A faulty value among tied rows: findings in the corpus and in a short seeded fuzz.
GATE = ["gate", "--engines", "reference,duckdb,duckdb~tie-value", "--corpus", RANKING,
        "--budget-cases", "30", "--seed", "2", "--format", "json"]
MADE = re.compile(r"made \d{4}-\d\d-\d\d \d\d:\d\d by")  # the page's only clock reading


def _page(path: Path) -> str:
    return MADE.sub("made (time) by", path.read_text(encoding="utf-8"))


@pytest.fixture
def no_read_back(monkeypatch, tmp_path: Path):
    """Fail any read of a file under `tmp_path / "out"`, by the project's reader or any
    other road (`Path.read_text`, `open`): what is written there is for the user alone."""
    out = (tmp_path / "out").resolve()

    def under_out(file: object) -> bool:
        try:
            return Path(file).resolve().is_relative_to(out)
        except TypeError:  # a file descriptor
            return False

    def refuse(what: str):
        def fail(*args, **kwargs):
            raise AssertionError(f"{what} read back a results directory in the process that wrote it")
        return fail

    for name in ("read_results", "read_run_dir", "read_campaign_dir", "read_saved"):
        monkeypatch.setattr(reader, name, refuse(f"harness.results.read.{name}"))
    for method in ("read_text", "read_bytes"):
        original = getattr(Path, method)

        def spy(self, *args, _original=original, _method=method, **kwargs):
            if under_out(self):
                raise AssertionError(f"Path.{_method}({self}) read back a results directory")
            return _original(self, *args, **kwargs)
        monkeypatch.setattr(Path, method, spy)
    real_open, path_open = builtins.open, Path.open

    def spy_open(file, mode="r", *args, **kwargs):
        if not any(c in mode for c in "wax+") and under_out(file):
            raise AssertionError(f"open({file}, {mode!r}) read back a results directory")
        return real_open(file, mode, *args, **kwargs)

    def spy_path_open(self, mode="r", *args, **kwargs):
        if not any(c in mode for c in "wax+") and under_out(self):
            raise AssertionError(f"Path.open({self}, {mode!r}) read back a results directory")
        return path_open(self, mode, *args, **kwargs)
    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(Path, "open", spy_path_open)
    return out


def test_run_report_is_made_in_memory_and_equals_the_report_of_its_directory(tmp_path: Path, monkeypatch) -> None:
    out, memory, disk = tmp_path / "run", tmp_path / "memory.html", tmp_path / "disk.html"
    assert main(["run", RANKING, "--engines", ENGINES, "--out", str(out), "--report", str(memory)]) == 1
    assert main(["report", str(out), "--out", str(disk)]) == 0
    page = _page(memory)
    assert "Canonical SQL" in page and 'class="finding unexplained"' in page  # findings with their cases
    assert page == _page(disk)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_gate_report_is_made_in_memory_and_equals_the_report_of_its_directory(tmp_path: Path, capsys,
                                                                                  jobs: str) -> None:
    """With one fuzz shard or two beside the corpus: the shards send the finding
    files they wrote, and the gate judges and diffs the cases they sent."""
    gate, memory, disk = tmp_path / "gate", tmp_path / "memory.html", tmp_path / "disk.html"
    assert main([*GATE, "--jobs", jobs, "--out", str(gate), "--report", str(memory)]) == 1  # the faulty engine
    failures = json.loads(capsys.readouterr().out)["failures"]
    # the fuzz findings were judged, and diffed, from the cases the campaign kept in memory
    fuzz = [f for f in failures if f["source"] == "fuzz"]
    assert fuzz and all(f["diff"] for f in fuzz) and any(f["source"] == "corpus" for f in failures)
    assert main(["report", str(gate), "--out", str(disk)]) == 0
    page = _page(memory)
    assert "gate: corpus" in page and "gate: fuzz" in page and "gate: FAIL" in page
    assert all(html.escape(f["signature"]) in page for f in fuzz)
    assert page == _page(disk)


def test_run_and_gate_never_read_back_what_they_wrote(no_read_back: Path, tmp_path: Path, capsys) -> None:
    out = no_read_back
    assert main(["run", RANKING, "--engines", ENGINES, "--out", str(out / "run"),
                 "--report", str(tmp_path / "run.html")]) == 1
    assert (out / "run" / "run.json").is_file() and list((out / "run" / "findings").glob("*.yaml"))
    assert main(["run", RANKING, "--engines", ENGINES, "--report", str(tmp_path / "unsaved.html")]) == 1
    capsys.readouterr()
    code = main([*GATE, "--out", str(out / "gate"), "--report", str(tmp_path / "gate.html")])
    printed = capsys.readouterr()
    assert code == 1, printed.err[-2000:]
    assert any(f["source"] == "fuzz" for f in json.loads(printed.out)["failures"])
    assert (out / "gate" / "gate.json").is_file() and (out / "gate" / "fuzz" / "cases.jsonl").is_file()
    for report in ("run.html", "unsaved.html", "gate.html"):
        assert 'class="finding unexplained"' in (tmp_path / report).read_text(encoding="utf-8")


def test_the_spy_sees_a_read_back(no_read_back: Path, tmp_path: Path) -> None:
    """The spy of the test above is not blind: reading the directory fails it."""
    run = no_read_back / "run"
    assert main(["run", RANKING, "--engines", "reference,duckdb~ntile", "--out", str(run)]) == 1
    with pytest.raises(AssertionError, match="read back a results directory"):
        (run / "run.json").read_text()
    with pytest.raises(AssertionError, match="read back a results directory"):
        (run / "run.json").open()
    with pytest.raises(AssertionError, match="read back a results directory"):
        open(run / "run.json")  # noqa: SIM115 (it must fail before opening)
    with pytest.raises(AssertionError, match="harness.results.read.read_results"):
        reader.read_results(run)


def test_a_finding_shows_the_reference_answer_it_was_judged_against(tmp_path: Path) -> None:
    """The reference's answer travels with the result: the finding file holds it
    although the reference was not among the engines run."""
    import yaml

    out = tmp_path / "run"
    assert main(["run", str(ROOT / "cases" / "ranking" / "ntile_uneven.yaml"), "--engines", "duckdb~ntile",
                 "--out", str(out)]) == 1
    (finding,) = (out / "findings").glob("*.yaml")
    engines = yaml.safe_load(finding.read_text(encoding="utf-8"))["finding"]["engines"]
    reference, faulty = engines["reference"], engines["duckdb~ntile"]
    assert reference["verdict"] == "match" and reference["answer"]["rows"]
    assert reference["answer"]["columns"] == faulty["answer"]["columns"]
    assert reference["answer"]["rows"] != faulty["answer"]["rows"]
