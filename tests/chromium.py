"""Open a local HTML file in the machine's Chromium, driven by Playwright, and
report what went wrong in it.

Tests of generated HTML need a real browser to catch what a parser cannot: a
script that throws, a `console.error`, markup that an escaping bug turned into
live `<script>`. Playwright drives Debian's `chromium` through
`executable_path`, so no browser is downloaded (`playwright install` is never
run) and no network is needed.

    with chromium() as browser:
        rendered = render(browser, Path("report.html"), tmp_path / "report.png")
    assert not rendered.console_errors and not rendered.exceptions
    assert rendered.ready and not rendered.dialogs

`chromium()` skips the test, saying how to get one, where no Chromium is
installed. Each page opens in a fresh browser context (its own profile), closed
again however the test ends.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Dialog, Error, Page, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

ENV_VAR = "WINDOW_HARNESS_CHROMIUM"
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
NO_CHROMIUM = (f"no Chromium found: install Debian's chromium (apt-get install chromium, as "
               f".ci/run does) or set {ENV_VAR}")

# A screenshot of a runaway page would be hundreds of MB; nobody looks past this.
MAX_SCREENSHOT_SIDE = 12_000
# `document.body.innerText` is for assertions on content, not for archiving it.
MAX_TEXT_CHARS = 1_000_000
# Scripts run by `load` may still schedule work (a timer, a promise); give them this long.
SETTLE_MS = 200
# /dev/shm is often tiny in CI containers (Playwright already runs without the
# sandbox, which needs privileges a container as root lacks).
CHROMIUM_ARGS = ["--disable-dev-shm-usage"]
READY_JS = """document.documentElement.dataset.ready === "1"
  || (document.body !== null && document.body.dataset.ready === "1")"""


class BrowserError(RuntimeError):
    """The page did not load in time."""


def find_chromium() -> str | None:
    """The browser to use: $WINDOW_HARNESS_CHROMIUM, else the first known name on PATH."""
    explicit = os.environ.get(ENV_VAR)
    if explicit:
        return explicit
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


@contextlib.contextmanager
def chromium() -> Iterator[Browser]:
    """The machine's Chromium, headless; skips the calling test where there is none."""
    binary = find_chromium()
    if binary is None:
        pytest.skip(NO_CHROMIUM)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=binary, headless=True,
                                             args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class Loaded:
    """A page, and what it did from the start of its loading on, as seen from outside it."""

    page: Page
    # console.error / console.assert messages, and errors the browser logs for the page
    # (a resource that failed to load, with its URL).
    console_errors: list[str] = field(default_factory=list)
    # Uncaught exceptions and unhandled promise rejections.
    exceptions: list[str] = field(default_factory=list)
    # Messages of alert/confirm/prompt dialogs; each was dismissed at once.
    dialogs: list[str] = field(default_factory=list)

    def on_console(self, message: ConsoleMessage) -> None:
        if message.type in ("error", "assert"):
            # A message from elsewhere than the page's own script (a resource that
            # failed to load) names where.
            url = message.location.get("url", "")
            where = f" ({url})" if url and url != self.page.url else ""
            self.console_errors.append(f"{message.text}{where}")

    def on_dialog(self, dialog: Dialog) -> None:
        """Record and dismiss: an open alert() would block the page's scripts forever."""
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def ready(self) -> bool:
        """`data-ready="1"` on <html> (or <body>): the page's own script ran to its end."""
        return bool(self.page.evaluate(READY_JS))

    def text(self) -> str:
        return self.page.evaluate("document.body === null ? '' : document.body.innerText")[
            :MAX_TEXT_CHARS]

    def screenshot(self, path: Path, max_height: int = MAX_SCREENSHOT_SIDE) -> None:
        """The whole page, not just the viewport, but no more than `max_height` tall."""
        viewport = self.page.viewport_size or {"width": 0, "height": 0}
        width, height = self.page.evaluate("[document.documentElement.scrollWidth, "
                                           "document.documentElement.scrollHeight]")
        clip = {"x": 0, "y": 0,
                "width": min(max(viewport["width"], width), MAX_SCREENSHOT_SIDE),
                "height": min(max(viewport["height"], height), max_height, MAX_SCREENSHOT_SIDE)}
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=path, full_page=True, clip=clip)


@contextlib.contextmanager
def opened(browser: Browser, html_path: Path, *, width: int = 1280, height: int = 900,
           timeout: float = 30.0) -> Iterator[Loaded]:
    """`html_path` loaded in a fresh context with a `width` x `height` viewport, its
    scripts settled; BrowserError when it has not loaded within `timeout` seconds."""
    html_path = Path(html_path).resolve()
    if not html_path.is_file():
        raise FileNotFoundError(html_path)
    context = browser.new_context(viewport={"width": width, "height": height},
                                  device_scale_factor=1)
    try:
        page = context.new_page()
        loaded = Loaded(page)
        page.on("console", loaded.on_console)
        page.on("pageerror", lambda error: loaded.exceptions.append(_describe(error)))
        page.on("dialog", loaded.on_dialog)
        try:
            page.goto(html_path.as_uri(), timeout=timeout * 1000, wait_until="load")
        except PlaywrightTimeout:
            raise BrowserError(f"timed out waiting for {html_path} to load "
                               f"(timeout={timeout} s)") from None
        page.wait_for_timeout(SETTLE_MS)
        yield loaded
    finally:
        context.close()


def _describe(error: Error) -> str:
    return f"{error.name}: {error.message}" if error.name else error.message


@dataclass(frozen=True)
class Rendered:
    """What a page did while it loaded (`render`)."""

    title: str
    ready: bool
    text: str
    console_errors: list[str]
    exceptions: list[str]
    dialogs: list[str]


def render(browser: Browser, html_path: Path, screenshot: Path, *, width: int = 1280,
           height: int = 900, timeout: float = 30.0,
           max_height: int = MAX_SCREENSHOT_SIDE) -> Rendered:
    """Load `html_path` (as `opened`), save a full-page PNG at most `max_height` tall,
    and say what the page did."""
    with opened(browser, html_path, width=width, height=height, timeout=timeout) as page:
        page.screenshot(screenshot, max_height)
        return Rendered(page.page.title(), page.ready(), page.text(), page.console_errors,
                        page.exceptions, page.dialogs)
