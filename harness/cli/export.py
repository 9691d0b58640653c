"""`window-harness export CASE --to FORMAT`: a case as a regression test in an
engine's own test format (the work: `findings.export`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.cli.exit_codes import EXIT_BAD_INPUT, EXIT_PASS
from harness.cli.streams import write_unescaped


def add_parser(sub: argparse._SubParsersAction) -> None:
    from harness.findings.export_formats import FORMATS  # the formats alone: no engine, no oracle

    p = sub.add_parser(
        "export",
        help="write a case or finding as a regression test in an engine's own format",
        description="Write the case as a test file for an engine's own suite: DataFusion's "
        "sqllogictest (slt) or DuckDB's .test. The expected rows are the reference's answer. "
        "Exit 0 when written, 2 on bad input or a case that cannot become a sound test.",
    )
    p.add_argument("case", metavar="CASE", help="a case file")
    p.add_argument("--to", required=True, choices=sorted(FORMATS), help="the test format")
    p.add_argument("--out", default=None, metavar="FILE", help="write here (default: stdout)")
    p.add_argument("--allow-ambiguous", action="store_true",
                   help="export even when another order of tied rows gives another valid answer")
    p.set_defaults(command=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    from harness.findings.export import FORMATS, export_case
    from harness.findings.replay import load_one

    case = load_one(args.case)
    file_name = Path(args.out).name if args.out else None
    text = export_case(case, FORMATS[args.to], source=args.case, file_name=file_name,
                       allow_ambiguous=args.allow_ambiguous)
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as e:
            print(f"window-harness: error: --out {args.out}: {e.strerror}", file=sys.stderr)
            return EXIT_BAD_INPUT
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        write_unescaped(sys.stdout, text)  # a test file, for a redirect: as it is
    return EXIT_PASS
