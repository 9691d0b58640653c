"""`explain` where findings are read (issue 23, item 2): `replay` prints the
explanation of an engine's first differing cell after its diff, and the HTML
report folds each finding's first differing cell's explanation under its
answers (a <details>), the highlighted cell linking to it; nothing fetched.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

from harness.cli.main import main
from harness.report.explanations import read_back

CASES = Path(__file__).resolve().parent.parent / "cases"
EXCLUDE = CASES / "frames" / "exclude" / "ties_and_current_row_range.yaml"


def test_replay_prints_the_first_differing_cells_explanation(capsys):
    code = main(["replay", str(EXCLUDE), "--engines", "reference,duckdb~exclude-ties"])
    out = capsys.readouterr().out
    assert code == 1
    faulty = out.split("== duckdb~exclude-ties ")[1]
    why = faulty.split("why the reference differs (the first differing cell, row #1, column s_ties):\n")[1]
    assert "the reference's value: 5 (HUGEINT)" in why
    assert "[exclude] EXCLUDE TIES removes the current row's peers" in why
    assert ("first differing step: [exclude] the engine's value equals the frame with nothing excluded"
            in why)
    assert "window-harness explain " in why and "--row '#1' --column s_ties --engine 'duckdb~exclude-ties'" in why
    assert "     | " not in why.split("(with its tables")[0]  # compact: the steps' tables are left out


def test_replay_json_carries_the_explanation(capsys):
    code = main(["replay", str(EXCLUDE), "--engines", "reference,duckdb~exclude-ties", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    faulty = doc["engines"][1]
    found = faulty["explanation"]
    assert (found["row"], found["column"], found["problem"]) == ("#1", "s_ties", None)
    assert found["engine"]["differs_at"]["step"] == "exclude"
    assert [s["kind"] for s in found["derivation"]["steps"]][:3] == ["partition", "sort", "frame"]
    assert "explanation" not in doc["engines"][0]


def test_a_passing_replay_explains_nothing(capsys):
    code = main(["replay", str(EXCLUDE), "--engines", "reference,duckdb"])
    out = capsys.readouterr().out
    assert code == 0 and "why the reference differs" not in out


def test_the_report_folds_the_explanation_of_each_findings_first_differing_cell(tmp_path):
    out, report = tmp_path / "run", tmp_path / "report.html"
    code = main(["run", str(EXCLUDE), str(CASES / "offset" / "lag_ignore_nulls.yaml"),
                 "--engines", "reference,duckdb,duckdb~exclude-ties,duckdb~ignore-nulls",
                 "--out", str(out), "--report", str(report)])
    assert code == 1
    text = report.read_text(encoding="utf-8")
    sections = re.findall(r'<section class="finding unexplained".*?</section>', text, re.S)
    assert len(sections) >= 2
    for section in sections:
        details = re.findall(r'<details class="explain" id="(x-[^"]+)"><summary>(.*?)</summary><pre>(.*?)</pre>',
                             section, re.S)
        assert len(details) == 1, section[:200]
        anchor, summary, body = details[0]
        assert "first differing step: [" in summary
        assert "1. [partition]" in body and "[compute]" in body
        assert f'<a href="#{anchor}"' in section  # the highlighted cell links to it
        assert "<details class=\"explain\" id=\"" + anchor + "\" open" not in section  # folded
    assert "[exclude] the engine&#39;s value equals the frame with nothing excluded" in text
    assert "[nulls] the engine&#39;s value equals" in text
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text)  # still nothing fetched


def test_recorded_values_read_back_as_the_derivations_type():
    assert read_back("7", Decimal("5")) == Decimal("7")
    assert read_back("NaN", 1.0) != read_back("NaN", 1.0)  # a float NaN
    assert read_back("-Infinity", 1.0) == float("-inf")
    assert read_back(3.0, 5) == 3 and isinstance(read_back(3.0, 5), int)
    assert read_back(None, 5) is None and read_back("x", "y") == "x"
    assert read_back("2024-01-31", __import__("datetime").date(2024, 1, 1)).day == 31
