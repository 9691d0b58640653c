"""`window-harness cases [PATH...] [--coverage]`: the corpus, or its coverage of the feature grid."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.exit_codes import EXIT_FAIL, EXIT_PASS
from harness.cli.options import FORMAT, exit_for_invalid, parent, read_cases

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

    from harness.cases.case import list_cases, load_cases
    from harness.cases.coverage import coverage, format_table, to_json

    # The listing shows ids and descriptions: it reads nothing else of a case file.
    cases, invalid = read_cases(args.paths, load_cases if args.coverage else list_cases)
    if not args.coverage:
        if args.format == "json":
            print(json.dumps([{"id": c.id, "description": c.description} for c in cases], indent=2))
        elif cases:
            print("\n".join(f"{c.id}  {c.description}" for c in cases))
        return exit_for_invalid(EXIT_PASS, invalid)
    counts = coverage(cases)
    print(to_json(counts) if args.format == "json" else format_table(counts), end="")
    return exit_for_invalid(EXIT_FAIL if any(c.status == "empty" for c in counts) else EXIT_PASS, invalid)
