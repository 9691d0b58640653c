"""The headless-Chromium helper (tests/browser.py) finds what it is meant to find.

Each check has a page that should pass it and, where the check could be
vacuous, a page that must fail it: a dialog test that never sees a dialog
proves nothing. Each test starts its own browser (about 1 s).
"""

from __future__ import annotations

import base64
import hashlib
import re
import socket
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from browser import BrowserError, Rendered, _WebSocket, find_chromium, render

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

Page = Callable[..., Rendered]


@pytest.fixture
def chromium() -> str:
    """The browser binary; skips the test when there is none."""
    found = find_chromium()
    if found is None:
        pytest.skip("no Chromium found: install Debian's chromium (apt-get install chromium) "
                    "or set WINDOW_HARNESS_CHROMIUM")
    return found


@pytest.fixture
def page(tmp_path: Path, chromium: str) -> Page:
    """render(body, head=..., **options): render a document, screenshot in tmp_path/page.png."""

    def render_page(body: str, *, head: str = "", **options: Any) -> Rendered:
        html = tmp_path / "page.html"
        html.write_text(f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">{head}'
                        f"</head><body>{body}</body></html>\n", encoding="utf-8")
        return render(html, tmp_path / "page.png", **options)

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
    with pytest.raises(BrowserError, match="timed out waiting for Page.loadEventFired"):
        page("<script>while (true) {}</script>", timeout=2)
    assert time.monotonic() - started < 5


def test_a_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        render(tmp_path / "absent.html", tmp_path / "absent.png")


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


# -- the WebSocket client, against a scripted server -----------------------------------------


def test_the_websocket_client_handles_pings_fragments_large_and_split_frames() -> None:
    """What Chromium rarely does but may: all of it in one conversation."""
    big = "x" * 70_000  # a 64-bit payload length
    half_timed_out = threading.Event()
    from_client: list[tuple[int, bytes]] = []

    def serve(listener: socket.socket) -> None:
        conn, _ = listener.accept()
        with conn:
            handshake(conn)
            frame = b"\x81\x7f" + struct.pack("!Q", len(big)) + big.encode()
            conn.sendall(b"\x89\x02hi"  # ping
                         + b"\x01\x03abc" + b"\x80\x03def"  # "abcdef" in two fragments
                         + frame[:40_000])
            half_timed_out.wait(5)
            conn.sendall(frame[40_000:])
            from_client.extend(read_client_frame(conn) for _ in range(3))

    with socket.create_server(("127.0.0.1", 0)) as listener:
        server = threading.Thread(target=serve, args=(listener,), daemon=True)
        server.start()
        ws = _WebSocket(f"ws://127.0.0.1:{listener.getsockname()[1]}/devtools/page/1", 5)
        assert ws.receive(timeout=5) == "abcdef"
        with pytest.raises(TimeoutError):  # mid-frame: the half read so far must be kept
            ws.receive(timeout=0.2)
        half_timed_out.set()
        assert ws.receive(timeout=5) == big
        ws.send_text("é" * 40_000)
        ws.close()
        server.join(5)
    assert from_client == [(0xA, b"hi"), (0x1, ("é" * 40_000).encode()), (0x8, b"\x03\xe8")]


def handshake(conn: socket.socket) -> None:
    request = b""
    while b"\r\n\r\n" not in request:
        request += conn.recv(4096)
    match = re.search(rb"Sec-WebSocket-Key: (\S+)", request)
    assert match is not None
    guid = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
    accept = base64.b64encode(hashlib.sha1(match[1] + guid).digest())
    conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                 b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n")


def read_client_frame(conn: socket.socket) -> tuple[int, bytes]:
    """(opcode, payload) of one final frame, which a client must mask."""
    first, second = recv_exactly(conn, 2)
    assert first & 0x80 and second & 0x80
    size = second & 0x7F
    if size == 126:
        size = struct.unpack("!H", recv_exactly(conn, 2))[0]
    elif size == 127:
        size = struct.unpack("!Q", recv_exactly(conn, 8))[0]
    mask = recv_exactly(conn, 4)
    payload = bytes(b ^ mask[i % 4] for i, b in enumerate(recv_exactly(conn, size)))
    return first & 0x0F, payload


def recv_exactly(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        assert chunk, "the client hung up"
        data += chunk
    return data
