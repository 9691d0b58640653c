"""Output safe for any name: control characters of case ids, file names and
engine messages shown as visible escapes on the terminal and in JUnit XML;
every printed command shell-quoted; a reader that stops early (`| head`)
ends the command quietly."""

from __future__ import annotations

import io
import os
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.cli.progress import ProgressLine
from harness.cli.streams import EscapedStream
from harness.core.text import printable, shell_command
from harness.findings.export import FORMATS, export_case
from harness.findings.replay import load_one, replay_command

ROOT = Path(__file__).resolve().parent.parent

# Expected rows that are wrong: the case fails on every engine, so its file name
# shows in the verdicts, the failures and the replay command.
WRONG = """\
description: row_number with wrong expected rows
tables:
  t:
    columns: {id: bigint, v: integer}
    rows: [[1, 10], [2, 20]]
sql: SELECT id, row_number() OVER (ORDER BY v) AS rn FROM t
expected:
  columns: [id, rn]
  rows: [[1, 2], [2, 1]]
"""

CONTROL = "b\x1b[31mred\x01\x0b\x7f\x9b"  # ESC, SOH, VT, DEL, CSI


def _case(tmp_path: Path, stem: str) -> Path:
    folder = tmp_path / "cases"
    folder.mkdir(exist_ok=True)
    path = folder / f"{stem}.yaml"
    path.write_text(WRONG, encoding="utf-8")
    return path


def _gate(tmp_path: Path, case: Path, *more: str) -> int:
    return main(["gate", "--engines", "reference", "--corpus", str(case), "--budget-seconds", "0",
                 "--out", str(tmp_path / "gate"), *more])


# -- the helpers ---------------------------------------------------------------------


def test_printable_escapes_what_drives_a_terminal_and_keeps_the_layout():
    assert printable("a\x1b[2Jb\tc\nd") == "a\\x1b[2Jb\tc\nd"
    assert printable("\r\x00\x7f\x9b\u202e\u2066") == "\\x0d\\x00\\x7f\\x9b\\u202e\\u2066"
    assert printable("über → ∑ 😀") == "über → ∑ 😀"
    assert printable("bad\udcff name") == "bad\\xff name"  # an undecodable byte of a file name
    assert printable("a\nb", keep="") == "a\\x0ab"


@pytest.mark.parametrize("word", ["a$(touch PWNED).yaml", "`touch PWNED`", "it's; touch PWNED",
                                  "x\ny", CONTROL, "sp ace", "ü\u202e", "-dash", "", "bad\udcff"])
def test_shell_command_gives_bash_back_the_same_words(tmp_path, word):
    line = shell_command(["printf", "%s\\0", word])
    assert "\n" not in line and "\x1b" not in line
    out = subprocess.run(["bash", "-c", line], cwd=tmp_path, capture_output=True, check=True).stdout
    assert out == word.encode("utf-8", "surrogateescape") + b"\0"
    assert not (tmp_path / "PWNED").exists()


# -- printed commands ----------------------------------------------------------------


def _runs_as(command: str, cwd: Path) -> list[str]:
    """The words bash gives `window-harness` when `command` is pasted into it."""
    stub = 'window-harness() { printf "%s\\0" "$@"; }\n'
    out = subprocess.run(["bash", "-c", stub + command], cwd=cwd, capture_output=True, check=True)
    return out.stdout.decode().split("\0")[:-1]


def test_a_printed_replay_command_runs_nothing_a_file_name_holds(tmp_path, capsys):
    case = _case(tmp_path, "a$(touch PWNED)")
    junit = tmp_path / "junit.xml"
    assert _gate(tmp_path, case, "--junit", str(junit)) == 1
    printed = [line.split("replay: ", 1)[1] for line in capsys.readouterr().out.splitlines()
               if "replay: window-harness" in line]
    failure = ET.parse(junit).getroot().find(".//failure").text
    printed.append(failure.split("replay: ", 1)[1].strip())
    assert len(printed) == 2
    wanted = ["replay", str(case), "--engines", "reference"]
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    for command in printed:
        assert shlex.split(command) == ["window-harness", *wanted]
        assert _runs_as(command, cwd) == wanted
        assert not list(cwd.iterdir()) and not (tmp_path / "PWNED").exists()


def test_the_reproduce_line_of_an_export_is_quoted(tmp_path, capsys):
    case = tmp_path / "a$(touch PWNED).yaml"
    case.write_text(WRONG.replace("[[1, 2], [2, 1]]", "[[1, 1], [2, 2]]"), encoding="utf-8")
    assert main(["export", str(case), "--to", "duckdb-test"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "Reproduce:" in x)
    command = line.split("Reproduce: ", 1)[1]
    assert _runs_as(command, tmp_path) == ["replay", str(case), "--engines", "reference,duckdb"]
    assert not (tmp_path / "PWNED").exists()


def test_a_replay_command_stays_one_line_whatever_the_name():
    command = replay_command(f"cases/{CONTROL}\n.yaml", ["duckdb"])
    assert "\n" not in command and "\x1b" not in command and command.count("$'") == 1


# -- JUnit XML -----------------------------------------------------------------------


def test_junit_xml_holds_control_characters_of_a_case_id_as_escapes(tmp_path, capsys):
    junit = tmp_path / "junit.xml"
    assert _gate(tmp_path, _case(tmp_path, CONTROL), "--junit", str(junit)) == 1
    root = ET.parse(junit).getroot()  # well-formed XML 1.0
    names = [case.get("name") for case in root.iter("testcase")]
    assert names == ["b\\x1b[31mred\\x01\\x0b\\x7f\\x9b [reference]"]
    failure = root.find(".//failure")
    assert "\\x1b" in failure.text


# -- the terminal --------------------------------------------------------------------


@pytest.mark.parametrize("command", ["run", "gate", "replay", "cases", "missing"])
def test_terminal_output_shows_control_characters_escaped(tmp_path, capsys, command):
    case = _case(tmp_path, CONTROL)
    argv = {"run": ["run", str(case), "--engines", "reference"],
            "gate": ["gate", "--engines", "reference", "--corpus", str(case), "--budget-seconds", "0",
                     "--out", str(tmp_path / "gate")],
            "replay": ["replay", str(case), "--engines", "reference"],
            "cases": ["cases", str(case)],
            "missing": ["run", str(case) + "\x1b]0;title\x07", "--engines", "reference"]}[command]
    main(argv)
    out, err = capsys.readouterr()
    for stream in (out, err):
        assert not any(c in stream for c in "\x1b\x01\x0b\x7f\x9b\x07"), stream
    assert "b\\x1b[31mred\\x01\\x0b\\x7f\\x9b" in out + err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_line_escapes_the_case_id_but_not_its_own_codes():
    terminal = _Terminal()
    ProgressLine(EscapedStream(terminal)).cases()(0, 3, "a\x1b[2Jb")
    assert terminal.getvalue() == "\r\x1b[K[1/3] a\\x1b[2Jb"


def test_export_to_stdout_writes_the_test_file_as_it_is(tmp_path, capsys):
    """A test file written to stdout is data for a redirect, not text for people: a
    value's control character stays itself."""
    case = tmp_path / "data.yaml"
    case.write_text(DATA, encoding="utf-8")
    assert main(["export", str(case), "--to", "slt"]) == 0
    fmt = FORMATS["slt"]
    assert capsys.readouterr().out == export_case(load_one(str(case)), fmt, source=str(case))
    assert "a\x01b" in export_case(load_one(str(case)), fmt, source=str(case))


DATA = """\
description: a value with a control character
tables:
  t:
    columns: {id: bigint, s: varchar}
    rows: [[1, "a\\x01b"]]
sql: SELECT id, s, row_number() OVER (ORDER BY id) AS rn FROM t
expected:
  columns: [id, s, rn]
  rows: [[1, "a\\x01b", 1]]
"""


# -- a reader that goes away -----------------------------------------------------------


@pytest.mark.parametrize("argv", [["cases", str(ROOT / "cases")], ["--help"]])
def test_a_closed_stdout_ends_the_command_quietly(argv):
    """`window-harness cases | head -1`: the reader is gone before the command writes."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-m", "harness", *argv], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env)
    child.stdout.close()
    err = child.stderr.read().decode()
    assert child.wait() == 141 and err == ""
