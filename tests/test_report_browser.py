"""A generated report, opened in headless Chromium (Debian's, which .ci/run
installs): it renders without console errors or exceptions, its script
finishes, markup from data stays text (no dialog opens), and a screenshot is
saved to reports/report-screenshot.png for people to look at."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest
from browser import find_chromium, render
from test_report import HOSTILE_CASE, ROOT, SCRIPT

from harness.cli.main import main

SCREENSHOT = ROOT / "reports" / "report-screenshot.png"


def test_a_report_renders_in_chromium_without_errors(tmp_path: Path) -> None:
    if find_chromium() is None:
        pytest.skip("no Chromium found: install Debian's chromium (apt-get install chromium, as "
                    ".ci/run does) or set WINDOW_HARNESS_CHROMIUM")
    hostile = tmp_path / "cases" / "hostile_ntile.yaml"
    hostile.parent.mkdir()
    hostile.write_text(HOSTILE_CASE, encoding="utf-8")
    report = tmp_path / "report.html"
    main(["run", str(ROOT / "cases" / "ranking"), str(hostile), "--engines",
          "reference,duckdb,sqlite,duckdb~ntile", "--report", str(report)])
    shot = tmp_path / "report.png"
    rendered = render(report, shot, width=1280, height=900)
    assert rendered.console_errors == [] and rendered.exceptions == []
    assert rendered.ready, "the report's script did not finish"
    assert rendered.dialogs == []  # the <script> in the data did not run
    assert SCRIPT in rendered.text and "Conformance matrix" in rendered.text
    assert rendered.title == "window-harness conformance report"
    png = shot.read_bytes()
    width, height = struct.unpack(">II", png[16:24])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and width >= 1280 and height > 900  # the whole page
    SCREENSHOT.parent.mkdir(exist_ok=True)
    shutil.copyfile(shot, SCREENSHOT)
