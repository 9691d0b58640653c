"""The one progress display of `run`, `fuzz` and `gate`: a line on stderr.

On a terminal the line is rewritten in place; in a log (stderr is not a
terminal) a line is written now and then, or nothing. The stages below never
print: they call back (`judge.runner.Progress` per case, `campaign.loop.Listener`
per campaign step), and the callbacks made here decide what shows.
"""

from __future__ import annotations

import sys
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
        self._last: float | None = None  # when the line last showed

    def cases(self, prefix: str = "",
              log: Callable[[int, int], str] | None = None) -> CaseProgress:
        """A `run_cases` callback: `PREFIX[i/N] CASE` on a terminal; in a log
        `log(i, N)`, or nothing without `log`."""
        def progress(done: int, total: int, case: str) -> None:
            if self.tty:
                self._draw(f"{prefix}[{done + 1}/{total}] {case}", every=0.0)
            elif log is not None:
                self._log(log(done + 1, total))
        return progress

    def campaign(self, progress: Progress, elapsed: float) -> None:
        """A `run_campaign` listener: cases/s, shapes and cells a minute, verdicts per
        engine, findings."""
        text = progress_text(progress, elapsed)
        if self.tty:
            self._draw(text, every=REDRAW_EVERY)
        else:
            self._log(text)

    def clear(self) -> None:
        if self.tty:
            write_unescaped(self.stream, _CLEAR)
            self.stream.flush()
        self._last = None

    def _due(self, every: float) -> bool:
        now = time.monotonic()
        if self._last is not None and now - self._last < every:
            return False
        self._last = now
        return True

    def _draw(self, text: str, every: float) -> None:
        if self._due(every):  # its own cursor codes, the text (a case id...) escaped
            write_unescaped(self.stream, _CLEAR + printable(text)[:WIDTH])
            self.stream.flush()

    def _log(self, text: str) -> None:
        if self._due(LOG_EVERY):
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
