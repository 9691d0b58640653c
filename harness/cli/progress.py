"""The one progress display of `run`, `fuzz` and `gate`: a line on stderr.

On a terminal the line is rewritten in place; in a log (stderr is not a
terminal) a line is written now and then, or nothing. The stages below never
print: they call back (`judge.runner.Progress` per case, `campaign.loop.Listener`
per campaign step), and the callbacks made here decide what shows. The gate's
corpus and fuzz parts run at once (the campaign's calls come from a thread of
its own): the line then shows both, `corpus [i/N] CASE | fuzz ...`.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from harness.cli.streams import write_unescaped
from harness.core.text import printable

if TYPE_CHECKING:  # types only: `--help` need not import the stages
    from harness.judge.runner import Progress as CaseProgress
    from harness.results.store import Progress

REDRAW_EVERY = 0.5  # a campaign's line on a terminal: at most this often (it changes per case)
LOG_EVERY = 15.0  # in a log: at most a line this often
WIDTH = 200  # a terminal line longer than this would wrap and no longer be rewritten in place
_CLEAR = "\r\033[K"

_SHORT = {"match": "ok", "mismatch": "x", "unsupported": "u", "error": "err", "type-mismatch": "tx",
          "crash": "crash", "timeout": "to", "suspect-reference": "sr", "inconclusive": "?"}


class ProgressLine:
    """One progress line. After `clear` (the command printing something else)
    the next update shows at once."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self._lock = threading.Lock()  # the gate's two parts report from two threads
        self._parts: dict[str, str] = {}  # what each part last said ("cases", "campaign")
        self._last: dict[str, float] = {}  # when each part last showed

    def cases(self, prefix: str = "",
              log: Callable[[int, int], str] | None = None) -> CaseProgress:
        """A `run_cases` callback: `PREFIX[i/N] CASE` on a terminal; in a log
        `log(i, N)`, or nothing without `log`. The part ends with the last case."""
        def progress(done: int, total: int, case: str) -> None:
            if self.tty:
                self._show("cases", f"{prefix}[{done + 1}/{total}] {case}", every=0.0)
            elif log is not None:
                self._show("cases", log(done + 1, total), every=LOG_EVERY)
            if done + 1 == total:
                with self._lock:
                    self._parts.pop("cases", None)
        return progress

    def campaign(self, progress: Progress, elapsed: float) -> None:
        """A `run_campaign` listener: cases/s, shapes and cells a minute, verdicts per
        engine, findings."""
        self._show("campaign", progress_text(progress, elapsed), REDRAW_EVERY if self.tty else LOG_EVERY)

    def clear(self) -> None:
        with self._lock:
            if self.tty:
                write_unescaped(self.stream, _CLEAR)
                self.stream.flush()
            self._last.clear()

    def _show(self, part: str, text: str, every: float) -> None:
        """On a terminal the line of every part, redrawn; in a log this part's own line."""
        with self._lock:
            self._parts[part] = text
            now, last = time.monotonic(), self._last.get(part)
            if last is not None and now - last < every:
                return
            self._last[part] = now
            if self.tty:  # its own cursor codes, the text (a case id...) escaped
                write_unescaped(self.stream, _CLEAR + printable(" | ".join(self._parts.values()))[:WIDTH])
            else:
                self.stream.write(text + "\n")
            self.stream.flush()


def progress_text(progress: Progress, elapsed: float) -> str:
    """`N cases R/s, S shapes R/min, C cells R/min | ENGINE VERDICTS | findings F`: the
    campaign's cases, distinct query shapes and grid cells covered (a resumed
    campaign's earlier ones too), each with this command's own rate."""
    from harness.cases.coverage import defined_cells

    defined = defined_cells()
    cells = sum(1 for c in progress.cells if tuple(c.split("|")) in defined)
    run_cells = sum(1 for c in progress.run_cells if tuple(c.split("|")) in defined)
    seconds = elapsed if elapsed > 0 else float("inf")
    diversity = (f"{len(progress.done)} cases {progress.run_cases / seconds:.1f}/s, "
                 f"{len(progress.shape_seeds)} shapes {60 * len(progress.run_shapes) / seconds:.0f}/min, "
                 f"{cells} cells {60 * run_cells / seconds:.0f}/min")
    engines = []
    for engine, counts in progress.verdicts.items():
        parts = " ".join(f"{n}{_SHORT.get(v, v)}" for v, n in sorted(counts.items()))
        engines.append(f"{engine} {parts}")
    return f"{diversity} | " + " | ".join(engines) + f" | findings {len(progress.findings)}"
