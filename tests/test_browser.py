"""The headless-Chromium helper (tests/chromium.py, Playwright on the machine's
Chromium) finds what it is meant to find.

Each check has a page that should pass it and, where the check could be
vacuous, a page that must fail it: a dialog test that never sees a dialog
proves nothing. The module shares one browser; each page gets a fresh context.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from chromium import BrowserError, Rendered, chromium, find_chromium, render
from playwright.sync_api import Browser

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

Page = Callable[..., Rendered]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """The machine's Chromium; skips the tests where there is none."""
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(tmp_path: Path, browser: Browser) -> Page:
    """render(body, head=..., **options): render a document, screenshot in tmp_path/page.png."""

    def render_page(body: str, *, head: str = "", **options: Any) -> Rendered:
        html = tmp_path / "page.html"
        html.write_text(f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">{head}'
                        f"</head><body>{body}</body></html>\n", encoding="utf-8")
        return render(browser, html, tmp_path / "page.png", **options)

    return render_page


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk, after checking the signature."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


READY = '<script>document.documentElement.dataset.ready = "1";</script>'


def test_a_clean_page_renders_ready_with_a_screenshot(page: Page, tmp_path: Path) -> None:
    rendered = page(
        f"<h1>Window functions</h1><table><tr><td>rank()</td><td>ok</td></tr></table>{READY}",
        head="<title>Report</title><style>body { font: 14px sans-serif; color: #222 }</style>",
    )
    assert rendered.console_errors == []
    assert rendered.exceptions == []
    assert rendered.dialogs == []
    assert rendered.ready
    assert rendered.title == "Report"
    assert "rank()" in rendered.text
    shot = tmp_path / "page.png"
    assert shot.stat().st_size > 0
    assert png_size(shot) == (1280, 900)


def test_a_page_without_the_ready_marker_is_not_ready(page: Page) -> None:
    assert not page("<p>no script</p>").ready


def test_console_error_is_reported(page: Page) -> None:
    rendered = page(f'<script>console.error("boom");</script>{READY}')
    assert rendered.console_errors == ["boom"]
    assert rendered.exceptions == []
    assert rendered.ready


def test_a_missing_resource_is_reported_as_a_console_error(page: Page) -> None:
    rendered = page(f'<img src="missing.png" alt="">{READY}')
    assert len(rendered.console_errors) == 1
    assert "missing.png" in rendered.console_errors[0]


def test_an_uncaught_exception_is_reported_and_the_page_is_not_ready(page: Page) -> None:
    rendered = page('<script>throw new Error("kaput");'
                    'document.documentElement.dataset.ready = "1";</script>')
    assert len(rendered.exceptions) == 1
    assert "kaput" in rendered.exceptions[0]
    assert not rendered.ready


def test_an_unhandled_promise_rejection_is_reported(page: Page) -> None:
    rendered = page(f'<script>Promise.reject(new Error("later"));</script>{READY}')
    assert len(rendered.exceptions) == 1
    assert "later" in rendered.exceptions[0]


def test_escaped_script_text_is_shown_not_run(page: Page) -> None:
    rendered = page("<table><tr><td>&lt;script&gt;alert(1)&lt;/script&gt;</td></tr>"
                    f"</table>{READY}")
    assert rendered.dialogs == []
    assert "<script>alert(1)</script>" in rendered.text
    assert rendered.ready


def test_an_unescaped_script_opens_a_dialog_which_is_dismissed(page: Page) -> None:
    # Without the dismissal the page would block in alert() and never become ready.
    rendered = page(f"<table><tr><td><script>alert(1)</script></td></tr></table>{READY}")
    assert rendered.dialogs == ["1"]
    assert rendered.ready


def test_a_tall_page_is_captured_whole_up_to_the_cap(page: Page, tmp_path: Path) -> None:
    rendered = page(f'<div style="height: 3000px">tall</div>{READY}')
    assert rendered.ready
    assert png_size(tmp_path / "page.png") == (1280, 3000 + 2 * 8)  # the body's margin

    page('<div style="height: 50000px"></div>')
    assert png_size(tmp_path / "page.png") == (1280, 12_000)


def test_the_viewport_has_the_given_size(page: Page, tmp_path: Path) -> None:
    rendered = page("<script>document.title = innerWidth + 'x' + innerHeight</script>",
                    width=640, height=480)
    assert rendered.title == "640x480"
    assert png_size(tmp_path / "page.png") == (640, 480)


def test_a_page_that_never_loads_times_out_with_a_clear_error(page: Page) -> None:
    started = time.monotonic()
    with pytest.raises(BrowserError, match="timed out waiting for .*page.html to load"):
        page("<script>while (true) {}</script>", timeout=2)
    assert time.monotonic() - started < 5


def test_a_missing_file_is_an_error(tmp_path: Path, browser: Browser) -> None:
    with pytest.raises(FileNotFoundError):
        render(browser, tmp_path / "absent.html", tmp_path / "absent.png")


def test_the_environment_variable_chooses_the_browser(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WINDOW_HARNESS_CHROMIUM", "/opt/some/chrome")
    assert find_chromium() == "/opt/some/chrome"


def test_without_the_variable_the_first_known_name_on_path_is_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("WINDOW_HARNESS_CHROMIUM", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_chromium() is None
    for name in ("google-chrome", "chromium-browser"):
        (tmp_path / name).write_text("#!/bin/sh\n")
        (tmp_path / name).chmod(0o755)
    assert find_chromium() == str(tmp_path / "chromium-browser")


def test_without_chromium_a_browser_test_skips_saying_how_to_get_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("WINDOW_HARNESS_CHROMIUM", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(pytest.skip.Exception, match="no Chromium found: install Debian's chromium"), \
            chromium():
        pass
