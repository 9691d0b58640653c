"""`window-harness cases [PATH...] [--coverage]`: the corpus, or its coverage of the feature grid."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.exit_codes import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_PASS
from harness.cli.options import FORMAT, parent, read_cases

CORPUS = Path(__file__).resolve().parents[2] / "cases"


def add_parser(sub: argparse._SubParsersAction) -> None:
    own = parent()  # before --format, as it always was
    own.add_argument("--coverage", action="store_true", help="print the coverage grid")
    cases = sub.add_parser(
        "cases",
        parents=[own, FORMAT],
        help="list the corpus's cases, or how much of the feature grid they cover",
        description="List case ids, or with --coverage print the cases per cell of the "
        "window-feature grid (see harness/cases/coverage.py). With --coverage: exit 0 when no "
        "defined cell is empty, 1 otherwise, 2 on a malformed case file.",
    )
    cases.add_argument("paths", nargs="*", metavar="PATH", default=[str(CORPUS)],
                       help="case files or directories (default: the repository's cases/)")
    cases.set_defaults(command=cmd_cases)


def cmd_cases(args: argparse.Namespace) -> int:
    import json

    from harness.cases.coverage import coverage, format_table, to_json

    cases = read_cases(args.paths)
    if cases is None:
        return EXIT_BAD_INPUT
    if not args.coverage:
        if args.format == "json":
            print(json.dumps([{"id": c.id, "description": c.description} for c in cases], indent=2))
        else:
            print("\n".join(f"{c.id}  {c.description}" for c in cases))
        return EXIT_PASS
    counts = coverage(cases)
    print(to_json(counts) if args.format == "json" else format_table(counts), end="")
    return EXIT_FAIL if any(c.status == "empty" for c in counts) else EXIT_PASS
