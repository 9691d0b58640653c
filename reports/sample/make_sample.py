"""Remake the sample report and its screenshot (run from the repository root):

    .venv/bin/python reports/sample/make_sample.py

It runs the README's main command with the CI's fuzz budget, writing the gate's
results to reports/sample/gate (not committed) and the report to
reports/sample/report.html, then renders the report in headless Chromium
(tests/browser.py) and saves the top of the page as reports/sample/screenshot.png.
"""

import subprocess
import sys
from pathlib import Path

SAMPLE = Path("reports/sample")

subprocess.run([sys.executable, "-m", "harness", "gate", "--budget-seconds", "120", "--budget-cases",
                "200", "--out", str(SAMPLE / "gate"), "--report", str(SAMPLE / "report.html")], check=False)
sys.path.insert(0, "tests")
from browser import render  # noqa: E402 (the tests' helper)

rendered = render(SAMPLE / "report.html", SAMPLE / "screenshot.png", width=1400, height=900, max_height=4200)
print(f"rendered: ready={rendered.ready} console errors={rendered.console_errors} "
      f"exceptions={rendered.exceptions}; screenshot: {SAMPLE / 'screenshot.png'}")
