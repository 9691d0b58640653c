"""What the command prints, made safe once: stdout and stderr escape control
characters, so no case id, file name or engine message can drive the terminal,
and hide any password or token (`core.secrets.redact`: a last guard, the
places that format a DSN or URL hide it themselves);
and a reader that goes away (`| head`) ends the command quietly.

`main` wraps both streams for the whole command (argparse's messages too), so
no printer needs to remember. Output that is data rather than text for people
(`export` without --out: a test file meant for a redirect) and the progress
line's own cursor codes go through `write_unescaped`.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable, Iterator
from typing import TextIO

from harness.core.secrets import redact
from harness.core.text import printable


class ReaderGone(Exception):
    """A write to stdout or stderr found the pipe closed: its reader stopped reading.
    Only these streams raise it, so a broken pipe to an engine's worker stays an error."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__("the reader of the output went away")
        self.stream = stream


class EscapedStream:
    """A text stream that writes `printable(text)` to the stream it wraps: newlines
    and tabs as they are, every other control character as a visible escape."""

    def __init__(self, stream: TextIO) -> None:
        self.unescaped = stream

    def write(self, text: str) -> int:
        self.write_unescaped(printable(redact(text)))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def write_unescaped(self, text: str) -> None:
        try:
            self.unescaped.write(text)
        except BrokenPipeError:
            raise ReaderGone(self.unescaped) from None

    def flush(self) -> None:
        try:
            self.unescaped.flush()
        except BrokenPipeError:
            raise ReaderGone(self.unescaped) from None

    def __getattr__(self, name: str) -> object:  # isatty, fileno, encoding...
        return getattr(self.unescaped, name)


def write_unescaped(stream: TextIO, text: str) -> None:
    """`text` as it is, past the escaping of an `EscapedStream`."""
    if isinstance(stream, EscapedStream):
        stream.write_unescaped(text)
    else:
        stream.write(text)


@contextlib.contextmanager
def escaped_output() -> Iterator[None]:
    """sys.stdout and sys.stderr escaped for the block, put back afterwards."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = EscapedStream(sys.stdout), EscapedStream(sys.stderr)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
