"""`window-harness export CASE --to FORMAT`: a case as a regression test in an
engine's own test format, ready to hand upstream.

The expected rows are the reference's answer (the oracle), never the engine's,
computed under the engine's semantics profile. The parts: `export_formats`
(the formats as data, and how each prints a value), `export_expect` (the
expected answer, and whether it is the only valid one), `export_file` (the
file's text); this module is the command.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from harness.core.errors import InvalidInput
from harness.findings.export_expect import Expectation, expectation
from harness.findings.export_file import export_case, finding_record
from harness.findings.export_formats import (
    FORMATS,
    TestFormat,
    duckdb_cell,
    plain_decimal,
    shortest_float32,
    slt_cell,
    slt_letter,
)
from harness.findings.replay import load_one

__all__ = [
    "EXIT_BAD_INPUT", "EXIT_PASS", "FORMATS", "Expectation", "TestFormat", "add_export_parser",
    "cmd_export", "duckdb_cell", "expectation", "export_case", "finding_record", "plain_decimal",
    "shortest_float32", "slt_cell", "slt_letter",
]

EXIT_PASS, EXIT_BAD_INPUT = 0, 2


def add_export_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
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
    return p


def cmd_export(args: argparse.Namespace, out: TextIO | None = None) -> int:
    fmt = FORMATS[args.to]
    try:
        case = load_one(args.case)
        file_name = Path(args.out).name if args.out else None
        text = export_case(case, fmt, source=args.case, file_name=file_name,
                           allow_ambiguous=args.allow_ambiguous)
    except InvalidInput as e:
        print(f"window-harness: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as e:
            print(f"window-harness: error: --out {args.out}: {e.strerror}", file=sys.stderr)
            return EXIT_BAD_INPUT
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        (out or sys.stdout).write(text)
    return EXIT_PASS
