"""`window-harness explain CASE --row ROW --column COL [--engine E]`: the
reference's derivation of one cell, and where an engine's value would part
from it (the work: `findings.explain`)."""

from __future__ import annotations

import argparse
import json
import sys

from harness.cli.exit_codes import EXIT_FAIL, EXIT_PASS
from harness.cli.options import ENGINE_PYTHON, POSTGRES, engine_options


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "explain",
        parents=[ENGINE_PYTHON, POSTGRES],
        help="the reference's derivation of one cell, step by step; with --engine, where the engine's value parts",
        description="Print how the reference derives one cell of a case's answer: the partition, the sort "
        "with its peer groups, the frame bounds with their arithmetic, the rows EXCLUDE and FILTER remove, "
        "the NULLs skipped, DISTINCT's set, and the function's computation. With --engine, that engine's "
        "value for the cell and the first step at which a variation of the reference gives it. "
        "Exit 0 when the engine (if any) agrees, 1 when it does not, 2 on bad input.",
    )
    p.add_argument("case", metavar="CASE", help="a case file (YAML, or .sql)")
    p.add_argument("--row", required=True, metavar="ROW",
                   help="a row of the answer, 1-based in its order (N), or an input row (#N: the N-th row "
                        "of the table as the case lists it)")
    p.add_argument("--column", required=True, metavar="COL", help="an output column: its name or 1-based number")
    p.add_argument("--engine", default=None, metavar="E", help="also run the case on this engine")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    p.set_defaults(command=cmd_explain, engines=None)


def cmd_explain(args: argparse.Namespace) -> int:
    from harness.engines.registry import get_engine
    from harness.findings.explain import explain, parse_cell
    from harness.findings.explain_text import to_json, write_text
    from harness.findings.replay import load_one

    case = load_one(args.case)
    at = parse_cell(case, args.row, args.column)
    engine = None
    if args.engine is not None:
        options = engine_options(args, [args.engine])
        engine = get_engine(args.engine, **options.get(args.engine, {}))
    try:
        found = explain(case, at, engine)
    finally:
        if engine is not None:
            engine.close()
    if args.format == "json":
        json.dump(to_json(found), sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        write_text(found, sys.stdout)
    return EXIT_FAIL if found.engine is not None and not found.engine.reference_agrees else EXIT_PASS
