"""A message says each thing once (issue 33, minor): no error wrapping an error
of the same text ("engine 'postgres' is not available: engine 'postgres' is not
available: ..."), no path named by the harness and again inside the OS's text.
The worker's and the campaign's doublings are tested end to end in
tests/test_engine_start.py (`_refused_once`)."""

from __future__ import annotations

from pathlib import Path

from harness.cli.main import main


def test_engines_lists_an_unavailable_engine_without_repeating_itself(monkeypatch, capsys):
    monkeypatch.delenv("WINDOW_HARNESS_POSTGRES_DSN", raising=False)
    assert main(["engines"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("postgres "))
    assert "unavailable: no server" in line and "not available" not in line, line


def test_an_interpreter_that_cannot_be_executed_is_named_once(tmp_path, capsys):
    python = tmp_path / "not-a-program"
    python.write_text("plain text, no #! line\n", encoding="utf-8")
    python.chmod(0o755)
    code = main(["run", str(Path(__file__).parent.parent / "cases" / "ranking" / "rank_ties.yaml"),
                 "--engines", "reference,duckdb@x", "--engine-python", f"duckdb@x={python}"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count(str(python)) == 1 and "cannot start it: Exec format error" in err, err
