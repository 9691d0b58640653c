"""One writer per output for every command (issue 33, item 6).

`fuzz` and `gate` lock their directory (tests/test_output_dirs.py); here `run
--out DIR`, `import --out DIR`, and the commands writing one file (`reduce
--out`, `report --out`, `--report`, `export --out`). With the output's lock held
(taken as the commands take it, `harness.results.lock`), a second command is
refused with exit 2 naming the directory or file, and what the first wrote is
left exactly as it was.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli.main import main
from harness.results.lock import LOCK, holding, holding_file

ROOT = Path(__file__).resolve().parent.parent
CASE = ROOT / "cases" / "special_floats" / "negative_zero_peers.yaml"
SLT = ROOT / "tests" / "fixtures" / "import" / "slt"


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != LOCK and not p.name.endswith(".lock")}


def _refused(argv: list[str], held: Path, capsys) -> None:
    before = _snapshot(held.parent)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{held} is in use by another window-harness command (test, pid" in err, err
    assert _snapshot(held.parent) == before


@pytest.fixture
def earlier_run(tmp_path, capsys) -> Path:
    out = tmp_path / "results" / "run"
    assert main(["run", str(CASE), "--engines", "reference,duckdb", "--out", str(out)]) == 0
    capsys.readouterr()
    assert (out / "run.json").exists()
    return out


def test_a_second_run_on_a_directory_in_use_is_refused(earlier_run, capsys):
    with holding(earlier_run, "test"):
        _refused(["run", str(CASE), "--engines", "reference,sqlite", "--out", str(earlier_run)],
                 earlier_run, capsys)
    # Once the first is done, the directory is free again.
    assert main(["run", str(CASE), "--engines", "reference,sqlite", "--out", str(earlier_run)]) == 0


def test_an_import_into_a_directory_in_use_is_refused(tmp_path, capsys):
    out = tmp_path / "imported"
    out.mkdir()
    (out / "kept.yaml").write_text("the first command's case\n", encoding="utf-8")
    with holding(out, "test"):
        _refused(["import", str(SLT), "--format", "slt", "--out", str(out)], out, capsys)
    assert main(["import", str(SLT), "--format", "slt", "--out", str(out), "--json"]) == 0
    assert not (out / LOCK).exists()  # a corpus directory keeps no lock file


@pytest.mark.parametrize("command", ["report", "run --report", "reduce", "export"])
def test_a_second_writer_of_one_file_is_refused(earlier_run, tmp_path, capsys, command):
    target = tmp_path / "results" / ("out.html" if "report" in command else "out.yaml")
    target.write_text("the first command's file\n", encoding="utf-8")
    argv = {
        "report": ["report", str(earlier_run), "--out", str(target)],
        "run --report": ["run", str(CASE), "--engines", "reference", "--report", str(target)],
        "reduce": ["reduce", str(CASE), "--engines", "reference,duckdb", "--out", str(target)],
        "export": ["export", str(CASE), "--to", "duckdb-test", "--out", str(target)],
    }[command]
    with holding_file(target, "test"):
        _refused(argv, target, capsys)
    assert target.read_text(encoding="utf-8") == "the first command's file\n"
    assert not target.with_name(f".{target.name}.lock").exists()  # removed with its lock
