"""Open a local HTML file in headless Chromium and report what went wrong in it.

Tests of generated HTML need a real browser to catch what a parser cannot: a
script that throws, a `console.error`, markup that an escaping bug turned into
live `<script>`. This module drives Debian's `chromium` over the Chrome
DevTools Protocol (CDP) with nothing but the standard library (a subprocess,
`urllib` for the target list, and a small RFC 6455 WebSocket client over
`socket`), so the test environment needs no driver package and no download.

    rendered = render(Path("report.html"), tmp_path / "report.png")
    assert not rendered.console_errors and not rendered.exceptions
    assert rendered.ready and not rendered.dialogs

`render` starts one browser per call in a fresh profile directory, and always
kills it and removes the directory again, also on a timeout or an error.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__ = ["BrowserError", "Rendered", "find_chromium", "render"]

ENV_VAR = "WINDOW_HARNESS_CHROMIUM"
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

# A screenshot of a runaway page would be hundreds of MB; nobody looks past this.
MAX_SCREENSHOT_SIDE = 12_000
# `document.body.innerText` is for assertions on content, not for archiving it.
MAX_TEXT_CHARS = 1_000_000
# Scripts run by `load` may still schedule work (a timer, a promise); give them this long.
SETTLE_SECONDS = 0.2
# How long Chromium may take to shut down on SIGTERM before its process group is killed.
KILL_GRACE_SECONDS = 2.0

# Headless, and quiet on a machine without network: without the background
# networking flags Chromium keeps trying (and failing) to reach Google's
# services. `--remote-debugging-port=0` lets the OS pick a free port, which
# Chromium writes to `<profile>/DevToolsActivePort`. `/dev/shm` is often tiny
# in CI containers, and Debian's launcher script fails to detect that.
CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--remote-debugging-port=0",
)


class BrowserError(RuntimeError):
    """The browser could not be started, timed out, or broke the protocol."""


@dataclass
class Rendered:
    """What a page did while it loaded, as seen from outside the page."""

    title: str = ""
    # `data-ready="1"` on <html> (or <body>): the page's own script ran to its end.
    ready: bool = False
    # `document.body.innerText`, at most MAX_TEXT_CHARS characters.
    text: str = ""
    # console.error / console.assert messages and browser log entries of level "error".
    console_errors: list[str] = field(default_factory=list)
    # Uncaught exceptions and unhandled promise rejections.
    exceptions: list[str] = field(default_factory=list)
    # Messages of alert/confirm/prompt dialogs; each was dismissed at once.
    dialogs: list[str] = field(default_factory=list)


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


def render(
    html_path: Path,
    screenshot: Path,
    *,
    width: int = 1280,
    height: int = 900,
    timeout: float = 30.0,
    max_height: int = MAX_SCREENSHOT_SIDE,
) -> Rendered:
    """Load `html_path` in a fresh headless Chromium and save a full-page PNG.

    `width` x `height` is the viewport; the screenshot is as tall as the page
    (at most `max_height` pixels). `timeout` bounds the whole call,
    browser start included; exceeding it raises BrowserError.
    """
    html_path = Path(html_path).resolve()
    if not html_path.is_file():
        raise FileNotFoundError(html_path)
    binary = find_chromium()
    if binary is None:
        raise BrowserError(f"no Chromium found: install `chromium` or set ${ENV_VAR}")
    deadline = time.monotonic() + timeout
    try:
        with _chromium(binary, deadline) as ws_url, _Cdp(ws_url, deadline) as cdp:
            rendered = _load(cdp, html_path, width, height)
            _save_screenshot(cdp, screenshot, width, height, max_height)
    except BrowserError as e:
        e.add_note(f"while rendering {html_path} with {binary} (timeout={timeout} s)")
        raise
    return rendered


# -- the page ------------------------------------------------------------------------------

_SNAPSHOT_JS = f"""JSON.stringify({{
  title: document.title,
  ready: document.documentElement.dataset.ready === "1"
      || (document.body !== null && document.body.dataset.ready === "1"),
  text: document.body === null ? "" : document.body.innerText.slice(0, {MAX_TEXT_CHARS}),
}})"""


def _load(cdp: _Cdp, html_path: Path, width: int, height: int) -> Rendered:
    """Navigate to the file, wait until it has loaded and settled, and read it."""
    rendered = Rendered()
    cdp.on("Runtime.consoleAPICalled", lambda p: _on_console(rendered, p))
    cdp.on("Runtime.exceptionThrown", lambda p: _on_exception(rendered, p))
    cdp.on("Log.entryAdded", lambda p: _on_log(rendered, p))
    cdp.on("Page.javascriptDialogOpening", lambda p: _on_dialog(cdp, rendered, p))
    for domain in ("Runtime", "Log", "Page"):
        cdp.call(f"{domain}.enable")
    # A fixed viewport (the headless window is 800x600) without scrollbars, so that
    # the page lays out, and the screenshot is, exactly `width` CSS pixels wide.
    cdp.call("Emulation.setDeviceMetricsOverride",
             {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    cdp.call("Emulation.setScrollbarsHidden", {"hidden": True})

    mark = cdp.event_count()
    navigated = cdp.call("Page.navigate", {"url": html_path.as_uri()})
    if navigated.get("errorText"):
        raise BrowserError(f"could not open {html_path}: {navigated['errorText']}")
    cdp.wait_for_event("Page.loadEventFired", since=mark)
    while _evaluate(cdp, "document.readyState") != "complete":
        cdp.pump(0.05, waiting_for='document.readyState == "complete"')
    cdp.pump(SETTLE_SECONDS, waiting_for="late scripts")

    snapshot = json.loads(_evaluate(cdp, _SNAPSHOT_JS))
    rendered.title = snapshot["title"]
    rendered.ready = snapshot["ready"]
    rendered.text = snapshot["text"]
    return rendered


def _evaluate(cdp: _Cdp, expression: str) -> Any:
    """The value of a JavaScript expression in the page (JSON-serialisable values only)."""
    reply = cdp.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
    if "exceptionDetails" in reply:
        raise BrowserError(f"evaluating {expression!r} failed: {reply['exceptionDetails']}")
    return reply["result"].get("value")


def _save_screenshot(cdp: _Cdp, path: Path, width: int, height: int, max_height: int) -> None:
    """Capture the whole page, not just the viewport, but no more than `max_height` tall."""
    metrics = cdp.call("Page.getLayoutMetrics")
    # cssContentSize is in CSS pixels; the older contentSize is in device pixels (same at 1x).
    content = metrics.get("cssContentSize") or metrics["contentSize"]
    clip = {
        "x": 0,
        "y": 0,
        "width": min(max(width, int(content["width"])), MAX_SCREENSHOT_SIDE),
        "height": min(max(height, int(content["height"])), max_height, MAX_SCREENSHOT_SIDE),
        "scale": 1,
    }
    shot = cdp.call("Page.captureScreenshot",
                    {"format": "png", "clip": clip, "captureBeyondViewport": True})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(shot["data"]))


def _on_console(rendered: Rendered, params: dict[str, Any]) -> None:
    if params.get("type") in ("error", "assert"):
        rendered.console_errors.append(" ".join(_describe(arg) for arg in params.get("args", [])))


def _on_log(rendered: Rendered, params: dict[str, Any]) -> None:
    """Errors the browser itself logs for the page, e.g. a resource that failed to load."""
    entry = params["entry"]
    if entry.get("level") == "error":
        where = f" ({entry['url']})" if entry.get("url") else ""
        rendered.console_errors.append(f"{entry.get('text', '')}{where}")


def _on_exception(rendered: Rendered, params: dict[str, Any]) -> None:
    details = params["exceptionDetails"]
    exception = details.get("exception") or {}
    rendered.exceptions.append(exception.get("description") or details.get("text", ""))


def _on_dialog(cdp: _Cdp, rendered: Rendered, params: dict[str, Any]) -> None:
    """Record the dialog and dismiss it: an open alert() blocks the page's scripts forever."""
    rendered.dialogs.append(params.get("message", ""))
    cdp.send("Page.handleJavaScriptDialog", {"accept": False})


def _describe(arg: dict[str, Any]) -> str:
    """A console argument (a CDP RemoteObject) as the DevTools console would show it."""
    if "value" in arg:
        value = arg["value"]
        return value if isinstance(value, str) else json.dumps(value)
    return str(arg.get("unserializableValue") or arg.get("description") or arg.get("type", ""))


# -- the browser process ---------------------------------------------------------------------


@contextlib.contextmanager
def _chromium(binary: str, deadline: float) -> Iterator[str]:
    """Run Chromium in a fresh profile; yield its page target's WebSocket URL.

    The browser runs in its own process group so that killing the group also
    ends its renderer and helper processes; the profile directory goes with it.
    """
    workdir = Path(tempfile.mkdtemp(prefix="window-harness-chromium-"))
    profile = workdir / "profile"
    log_path = workdir / "chromium.log"
    proc: subprocess.Popen[bytes] | None = None
    try:
        command = [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"]
        with log_path.open("wb") as log:
            try:
                proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
            except OSError as e:
                raise BrowserError(f"could not start {binary}: {e}") from e
        port = _wait_for_port(proc, profile / "DevToolsActivePort", log_path, deadline)
        yield _page_target(port, deadline)
    finally:
        if proc is not None:
            _kill(proc)
        shutil.rmtree(workdir, ignore_errors=True)


def _wait_for_port(proc: subprocess.Popen[bytes], port_file: Path, log_path: Path,
                   deadline: float) -> int:
    """Chromium writes the port it listens on as the first line of DevToolsActivePort."""
    while True:
        if proc.poll() is not None:
            tail = log_path.read_text(errors="replace")[-2000:]
            raise BrowserError(f"Chromium exited with status {proc.returncode}:\n{tail}")
        with contextlib.suppress(FileNotFoundError):
            lines = port_file.read_text().splitlines()
            # The file is written, not renamed, into place: wait for the whole first line.
            if len(lines) >= 2 and lines[0].isdigit():
                return int(lines[0])
        _check(deadline, f"Chromium to write {port_file.name}")
        time.sleep(0.02)


def _page_target(port: int, deadline: float) -> str:
    """The WebSocket URL of the about:blank tab, from the DevTools HTTP endpoint."""
    while True:
        url = f"http://127.0.0.1:{port}/json/list"
        try:
            with urllib.request.urlopen(url, timeout=_remaining(deadline, url)) as response:
                targets = json.load(response)
        except TimeoutError:
            raise BrowserError(f"timed out waiting for {url}") from None
        except OSError as e:  # URLError among them
            raise BrowserError(f"could not list the browser's targets at {url}: {e}") from e
        for target in targets:
            if target.get("type") == "page" and "webSocketDebuggerUrl" in target:
                return str(target["webSocketDebuggerUrl"])
        _check(deadline, "a page target in /json/list")
        time.sleep(0.02)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """End the browser and all its helpers (our own process group, nothing else).

    SIGTERM first: Chromium then ends and reaps its helper processes itself,
    instead of leaving them as zombies for init. SIGKILL the group if it hangs.
    """
    with contextlib.suppress(ProcessLookupError):
        proc.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=KILL_GRACE_SECONDS)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _remaining(deadline: float, waiting_for: str) -> float:
    """Seconds left until `deadline`; BrowserError if there are none."""
    _check(deadline, waiting_for)
    return deadline - time.monotonic()


def _check(deadline: float, waiting_for: str) -> None:
    if time.monotonic() >= deadline:
        raise BrowserError(f"timed out waiting for {waiting_for}")


# -- the DevTools protocol -------------------------------------------------------------------


class _Cdp:
    """A CDP session: numbered commands with replies, and events to handlers.

    Events are handled as they arrive, also while waiting for a reply: a
    dialog must be dismissed before the page can answer anything else.
    """

    def __init__(self, ws_url: str, deadline: float) -> None:
        self._deadline = deadline
        try:
            self._ws = _WebSocket(ws_url, _remaining(deadline, "the DevTools WebSocket"))
        except TimeoutError:
            raise BrowserError("timed out waiting for the DevTools WebSocket handshake") from None
        self._next_id = 0
        self._replies: dict[int, dict[str, Any]] = {}
        self._events: list[str] = []
        self._handlers: dict[str, Callable[[dict[str, Any]], None]] = {}

    def __enter__(self) -> _Cdp:
        return self

    def __exit__(self, *exc: object) -> None:
        self._ws.close()

    def on(self, event: str, handler: Callable[[dict[str, Any]], None]) -> None:
        self._handlers[event] = handler

    def send(self, method: str, params: dict[str, Any] | None = None) -> int:
        """Send a command without waiting for its reply (safe inside an event handler)."""
        self._next_id += 1
        self._ws.send_text(json.dumps({"id": self._next_id, "method": method,
                                       "params": params or {}}))
        return self._next_id

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a command and return its result; BrowserError if it fails or times out."""
        command_id = self.send(method, params)
        while command_id not in self._replies:
            self._receive(f"the reply to {method}")
        reply = self._replies.pop(command_id)
        if "error" in reply:
            raise BrowserError(f"{method} failed: {reply['error']}")
        return dict(reply.get("result", {}))

    def event_count(self) -> int:
        return len(self._events)

    def wait_for_event(self, name: str, since: int) -> None:
        """Wait until event `name` has arrived, counting those after the `since`-th event."""
        while name not in self._events[since:]:
            self._receive(name)

    def pump(self, seconds: float, waiting_for: str) -> None:
        """Handle events for `seconds` (within the deadline)."""
        until = min(time.monotonic() + seconds, self._deadline)
        while time.monotonic() < until:
            self._receive(waiting_for, until=until)
        _check(self._deadline, waiting_for)

    def _receive(self, waiting_for: str, until: float | None = None) -> None:
        """Read one message and dispatch it; returns quietly if `until` passes first."""
        end = self._deadline if until is None else until
        try:
            message = self._ws.receive(timeout=max(end - time.monotonic(), 0.001))
        except TimeoutError:
            if until is None:
                raise BrowserError(f"timed out waiting for {waiting_for}") from None
            return
        data = json.loads(message)
        if "id" in data:
            self._replies[data["id"]] = data
            return
        self._events.append(data["method"])
        handler = self._handlers.get(data["method"])
        if handler is not None:
            handler(data.get("params", {}))


class _WebSocket:
    """A minimal RFC 6455 client: enough for CDP over a local, trusted connection.

    No Origin header is sent: Chromium (since 111) rejects WebSocket clients
    whose Origin is not listed in --remote-allow-origins, but allows those
    without one. Incoming frames are parsed only once complete, so a receive
    timeout never loses a half-read frame.
    """

    _GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    def __init__(self, url: str, timeout: float) -> None:
        parts = urlsplit(url)
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
        self._sock = socket.create_connection((host, port), timeout=timeout)
        self._buffer = bytearray()
        self._fragments: list[bytes] = []
        key = base64.b64encode(os.urandom(16))
        self._sock.sendall(
            f"GET {parts.path or '/'} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key.decode()}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        head = self._read_handshake()
        accept = base64.b64encode(hashlib.sha1(key + self._GUID).digest()).decode()
        if not head.startswith("HTTP/1.1 101") or accept not in head:
            raise BrowserError(f"WebSocket handshake refused:\n{head}")

    def _read_handshake(self) -> str:
        while b"\r\n\r\n" not in self._buffer:
            self._fill()
        head, _, rest = bytes(self._buffer).partition(b"\r\n\r\n")
        self._buffer = bytearray(rest)
        return head.decode("latin-1")

    def _fill(self) -> None:
        chunk = self._sock.recv(1 << 20)
        if not chunk:
            raise BrowserError("the browser closed the DevTools connection")
        self._buffer += chunk

    def send_text(self, text: str) -> None:
        self._send_frame(0x1, text.encode())

    def _send_frame(self, opcode: int, payload: bytes) -> None:
        """One final frame; clients must mask what they send."""
        size = len(payload)
        if size < 126:
            header = struct.pack("!BB", 0x80 | opcode, 0x80 | size)
        elif size < 1 << 16:
            header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, size)
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, size)
        mask = os.urandom(4)
        keystream = (mask * (size // 4 + 1))[:size]
        masked = (int.from_bytes(payload, "big") ^ int.from_bytes(keystream, "big"))
        self._sock.sendall(header + mask + masked.to_bytes(size, "big"))

    def receive(self, timeout: float) -> str:
        """The next complete text message; pings are answered on the way."""
        self._sock.settimeout(timeout)
        while True:
            fin, opcode, payload = self._next_frame()
            if opcode == 0x9:
                self._send_frame(0xA, payload)
            elif opcode == 0x8:
                raise BrowserError("the browser closed the DevTools connection")
            elif opcode in (0x0, 0x1, 0x2):
                self._fragments.append(payload)
                if fin:
                    message = b"".join(self._fragments)
                    self._fragments = []
                    return message.decode()

    def _next_frame(self) -> tuple[bool, int, bytes]:
        """(FIN, opcode, payload) of the next frame, read whole before any is consumed."""
        while True:
            parsed = self._parse_frame()
            if parsed is not None:
                return parsed
            self._fill()

    def _parse_frame(self) -> tuple[bool, int, bytes] | None:
        buf = self._buffer
        if len(buf) < 2:
            return None
        fin, opcode, masked, size = buf[0] & 0x80, buf[0] & 0x0F, buf[1] & 0x80, buf[1] & 0x7F
        offset = 2
        if size >= 126:
            width = 2 if size == 126 else 8
            if len(buf) < offset + width:
                return None
            size = int.from_bytes(buf[offset:offset + width], "big")
            offset += width
        mask = b""
        if masked:  # servers must not mask, but unmasking is cheap
            if len(buf) < offset + 4:
                return None
            mask, offset = bytes(buf[offset:offset + 4]), offset + 4
        if len(buf) < offset + size:
            return None
        payload = bytes(buf[offset:offset + size])
        del buf[:offset + size]
        if mask:
            keystream = (mask * (size // 4 + 1))[:size]
            payload = (int.from_bytes(payload, "big")
                       ^ int.from_bytes(keystream, "big")).to_bytes(size, "big")
        return bool(fin), opcode, payload

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._send_frame(0x8, struct.pack("!H", 1000))
        self._sock.close()
