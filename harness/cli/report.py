"""`window-harness report RESULTS... --out FILE.html`, and the `--report` option's work."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from harness.cli.exit_codes import EXIT_PASS
from harness.cli.options import check_out_file
from harness.cli.streams import write_unescaped
from harness.core.errors import InvalidInput
from harness.core.secrets import redact
from harness.results.records import Record


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="write the HTML conformance report of run, fuzz or gate results",
        description="Read the output directories of `run --out`, `fuzz` and `gate` and write one "
        "self-contained HTML file (inline CSS, JS and SVG; no network): a summary, plots, the "
        "conformance matrix (features x engines) and every finding signature with its smallest "
        "case, each engine's answer beside the reference's, the replay command and the baseline "
        "status. Exit 0 on success, 2 on bad input.",
    )
    p.add_argument("results", nargs="+", metavar="RESULTS",
                   help="output directories of run --out, fuzz --out or gate --out")
    p.add_argument("--out", required=True, metavar="FILE.html", help="the HTML file to write")
    p.add_argument("--baseline", metavar="FILE",
                   help="known-differences baseline for the findings' status (default: the one a "
                   "gate recorded, else baseline/known-differences.yaml)")
    p.add_argument("--title", default="window-harness conformance report", help="the page's title")
    p.set_defaults(command=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    path = make_report([Path(r) for r in args.results], Path(args.out),
                       Path(args.baseline) if args.baseline else None, args.title)
    print(f"report: {path}")
    return EXIT_PASS


def check_report_option(args: argparse.Namespace) -> None:
    """--report (options.REPORT) of run, fuzz and gate, checked before any engine starts."""
    if getattr(args, "report", None):
        check_report_path(Path(args.report))


def write_report(results: Sequence[Record], args: argparse.Namespace) -> None:
    """The --report option of run, fuzz and gate: the report of their results (records
    in memory, `harness.results.records`), its path printed last (on stderr under
    --format json, which keeps stdout one document)."""
    from harness.results.lock import holding_file

    with holding_file(Path(args.report), "report", "--report"):
        path = write_report_page(results, Path(args.report))
    print(f"report: {path}", file=sys.stderr if args.format == "json" else sys.stdout)


def check_report_path(out: Path, option: str = "--report") -> None:
    """Refuse, before any work, a report path that cannot be written."""
    if os.path.isdir(out):  # pathlib's is_dir raises on a name too long
        raise InvalidInput(f"{out} is a directory; give a file name such as {out}/report.html", option)
    if out.suffix.lower() not in (".html", ".htm"):
        raise InvalidInput(f"{out}: the report is an HTML file; name it FILE.html", option)
    check_out_file(out, option)


def make_report(results: Sequence[Path], out: Path, baseline: Path | None = None,
                title: str = "window-harness conformance report") -> Path:
    """Write the report of the results directories `results` to `out` (atomically);
    returns `out`."""
    from harness.results.read import read_results

    check_report_path(out, "--out")
    if baseline is not None and not baseline.is_file():
        raise InvalidInput(f"{baseline} is not a file", "--baseline")
    for path in results:
        if not path.is_dir():
            raise InvalidInput(f"{path} is not a directory", "RESULTS")
    if sys.stderr.isatty():
        write_unescaped(sys.stderr, "reading results...\r")
    from harness.results.lock import holding_file

    with holding_file(out, "report"):  # before the reading: a second writer is refused at once
        return write_report_page([read_results(path) for path in results], out, baseline, title,
                                 untrusted=True)


def write_report_page(records: Sequence[Record], out: Path, baseline: Path | None = None,
                      title: str = "window-harness conformance report", untrusted: bool = False) -> Path:
    """Write the report of `records` (in memory, or read from disk) to `out` (atomically);
    the caller holds `out`'s lock (`results.lock.holding_file`). `untrusted`: records
    read from directories a user named (`report.load.build_report`)."""
    from harness.report.html import render_report
    from harness.report.load import build_report

    # No password or token on the page (`core.secrets.redact`, a last guard like stdout's).
    page = redact(render_report(build_report(records, baseline, untrusted), title))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(out)
    return out
