"""A generated report, opened in headless Chromium (Debian's, which .ci/run
installs, driven by Playwright): it renders without console errors or
exceptions, its script finishes, markup from data stays text (no dialog opens),
its filters and switches work, and a screenshot is saved to
reports/report-screenshot.png for people to look at."""

from __future__ import annotations

import shutil
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from chromium import Loaded, chromium, opened
from playwright.sync_api import Browser
from test_report import HOSTILE_CASE, ROOT, SCRIPT

from harness.cli.main import main

SCREENSHOT = ROOT / "reports" / "report-screenshot.png"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory, browser: Browser) -> Path:
    """The report of a run with findings both explained (the engines' known
    differences) and not (a faulty engine's), and a string that is markup."""
    tmp = tmp_path_factory.mktemp("report-browser")
    hostile = tmp / "cases" / "hostile_ntile.yaml"
    hostile.parent.mkdir()
    hostile.write_text(HOSTILE_CASE, encoding="utf-8")
    report = tmp / "report.html"
    main(["run", str(ROOT / "cases" / "ranking"), str(hostile), "--engines",
          "reference,duckdb,sqlite,duckdb~ntile", "--report", str(report)])
    return report


@pytest.fixture
def page(report: Path, browser: Browser) -> Iterator[Loaded]:
    with opened(browser, report, width=1280, height=900) as loaded:
        yield loaded


def test_a_report_renders_in_chromium_without_errors(page: Loaded, tmp_path: Path) -> None:
    assert page.console_errors == [] and page.exceptions == []
    assert page.ready(), "the report's script did not finish"
    assert page.dialogs == []  # the <script> in the data did not run
    text = page.text()
    assert SCRIPT in text and "Conformance matrix" in text
    assert page.page.title() == "window-harness conformance report"
    shot = tmp_path / "report.png"
    page.screenshot(shot)
    png = shot.read_bytes()
    width, height = struct.unpack(">II", png[16:24])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and width >= 1280 and height > 900  # the whole page
    SCREENSHOT.parent.mkdir(exist_ok=True)
    shutil.copyfile(shot, SCREENSHOT)


def test_the_filter_box_narrows_the_findings_and_counts_them(page: Loaded) -> None:
    findings = page.page.locator("section.finding")
    total = findings.count()
    faulty = page.page.locator("section.finding[data-engine='duckdb~ntile']")
    assert 0 < faulty.count() < total  # otherwise the filter could not be seen to work
    page.page.fill("#finding-filter", "DUCKDB~NTILE")  # case-insensitive
    assert page.page.locator("section.finding:visible").count() == faulty.count()
    assert all(faulty.nth(i).is_visible() for i in range(faulty.count()))
    assert page.page.text_content("#finding-count") == f"{faulty.count()} shown"
    page.page.fill("#finding-filter", "no finding says this")
    assert page.page.locator("section.finding:visible").count() == 0
    assert page.page.text_content("#finding-count") == "0 shown"
    page.page.fill("#finding-filter", "")
    assert page.page.locator("section.finding:visible").count() == total
    assert page.console_errors == [] and page.exceptions == []


def test_only_unexplained_hides_what_the_baseline_explains(page: Loaded) -> None:
    unexplained = page.page.locator("section.finding.unexplained").count()
    explained = page.page.locator("section.finding.explained").count()
    assert unexplained > 0 and explained > 0  # both kinds, or the switch proves nothing
    page.page.check("#only-unexplained")
    assert page.page.locator("section.finding.explained:visible").count() == 0
    assert page.page.locator("section.finding.unexplained:visible").count() == unexplained
    assert page.page.text_content("#finding-count") == f"{unexplained} shown"
    page.page.uncheck("#only-unexplained")
    assert page.page.locator("section.finding:visible").count() == unexplained + explained


def test_hide_clean_rows_hides_exactly_the_matrix_rows_where_every_engine_matches(
        page: Loaded) -> None:
    clean = page.page.locator("table.matrix tr.clean")
    rows = page.page.locator("table.matrix tbody tr")
    assert 0 < clean.count() < rows.count()
    visible = page.page.locator("table.matrix tbody tr:visible").count()
    assert visible == rows.count()
    page.page.check("#hide-clean")
    assert page.page.locator("table.matrix tr.clean:visible").count() == 0
    assert page.page.locator("table.matrix tbody tr:visible").count() == rows.count() - clean.count()
    page.page.uncheck("#hide-clean")
    assert page.page.locator("table.matrix tbody tr:visible").count() == rows.count()
