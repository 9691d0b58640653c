"""Text from input made safe to show: on a terminal, in XML, as a shell command.

Case ids, file names, engine messages and data come from outside and may hold
anything: an escape sequence that recolours or rewrites the terminal, a
control character XML 1.0 cannot hold, shell syntax such as `$(...)` in a
file name. What the harness prints or writes for people goes through
`printable`; a command it prints for people to paste goes through
`shell_command`.
"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Iterable

# Never shown as themselves: C0 controls, DEL and C1 controls (terminal escape
# sequences start with ESC or CSI), the bidirectional overrides and isolates
# (they reorder what the reader sees), lone surrogates (a file name's undecodable
# bytes under surrogateescape; no encoder writes them) and the two non-characters
# XML forbids; and the line and paragraph separators, at which Python's
# `splitlines` (our importers' reading of a test file) starts a new line.
_HIDDEN = ("\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
           "\ud800-\udfff\ufffe\uffff")


def indented(text: str, indent: str) -> str:
    """`text` with every line after the first indented by `indent`: a message of
    several lines (an engine error with its LINE context) under a label."""
    return ("\n" + indent).join(text.splitlines()) if text else text


def first_line(text: str) -> str:
    """The first line of `text`: the short form of a message, for one-line displays."""
    return text.splitlines()[0] if text else text


def printable(text: str, keep: str = "\n\t") -> str:
    """`text` with each hidden character (above) but those in `keep` written as a
    visible escape: `\\x1b` for ESC, `\\u202e` for RIGHT-TO-LEFT OVERRIDE, and for a
    surrogate that stands for an undecodable byte of a file name, `\\xNN` for that byte.
    The result is valid in XML 1.0 when `keep` holds only tab, newline and CR."""
    return _pattern(keep).sub(_escape, text)


@functools.cache
def _pattern(keep: str) -> re.Pattern[str]:
    kept = "".join(re.escape(c) for c in keep)
    return re.compile(f"(?![{kept}])[{_HIDDEN}]" if kept else f"[{_HIDDEN}]")


def _escape(match: re.Match[str]) -> str:
    o = ord(match.group())
    if 0xDC80 <= o <= 0xDCFF:  # surrogateescape's stand-in for the byte o - 0xDC00
        o -= 0xDC00
    return f"\\x{o:02x}" if o <= 0xFF else f"\\u{o:04x}"


# -- commands to paste ----------------------------------------------------------------

_PLAIN = re.compile(f"[{_HIDDEN}]")


def shell_command(argv: Iterable[object]) -> str:
    """`argv` as one line a POSIX shell (bash, zsh) runs as exactly these words:
    each word quoted by `shlex.quote`, or, when it holds a character `printable`
    hides (a newline, ESC), as a `$'...'` word with that character escaped, so the
    line stays one line and shows no control character."""
    return " ".join(shell_quote(str(word)) for word in argv)


def shell_quote(word: str) -> str:
    if not _PLAIN.search(word):
        return shlex.quote(word)
    return "$'" + "".join(_ansi_c(c) for c in word) + "'"


def _ansi_c(c: str) -> str:
    if c in "\\'":
        return "\\" + c
    if _PLAIN.fullmatch(c):
        o = ord(c)
        if 0xDC80 <= o <= 0xDCFF:  # an undecodable byte of a file name: the byte itself
            return f"\\x{o - 0xDC00:02x}"
        # \xNN is a byte to bash: above ASCII, the character's own \uNNNN (its UTF-8)
        return f"\\x{o:02x}" if o < 0x80 else f"\\u{o:04x}"
    return c
