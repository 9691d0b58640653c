"""`window-harness import PATH... --format slt|pg-regress|spark-golden --out DIR`:
an engine's own test files as cases, one per window query (`harness.importers`)."""

from __future__ import annotations

import argparse
import json
import sys

from harness.cli.exit_codes import EXIT_FAIL, EXIT_PASS
from harness.cli.options import POSTGRES, check_out_dir, engine_options, parent, postgres_dsn

# The engine that runs each format's setup unless --setup-engine names one: DuckDB
# accepts most suites' CREATE TABLE / INSERT; PostgreSQL's own when a server is given.
SETUP_ENGINE = {"slt": "duckdb", "pg-regress": "duckdb", "spark-golden": "duckdb"}


def add_parser(sub: argparse._SubParsersAction) -> None:
    from harness.importers import FORMATS

    own = parent()
    own.add_argument("paths", nargs="+", metavar="PATH", help="test files or directories of them")
    own.add_argument("--format", required=True, choices=list(FORMATS), dest="source_format",
                     help="the test files' format: slt (DataFusion .slt, DuckDB .test), pg-regress "
                     "(sql/NAME.sql with expected/NAME.out), spark-golden (inputs/NAME.sql with "
                     "results/NAME.sql.out)")
    own.add_argument("--out", required=True, metavar="DIR",
                     help="where the cases go, mirroring the test files' layout")
    own.add_argument("--setup-engine", metavar="ENGINE",
                     help="the engine that runs the files' setup to materialise the tables "
                     "(default: postgres for pg-regress when a server is given, else duckdb)")
    own.add_argument("--source-engine", metavar="ENGINE",
                     help="the engine whose suite recorded the answers (default: by the format: "
                     "duckdb for .test, datafusion for .slt, postgres, spark)")
    own.add_argument("--json", action="store_true", help="print the counts as one JSON document")
    cmd = sub.add_parser(
        "import", parents=[own, POSTGRES],
        help="import an engine's own test suite as cases, one per window query",
        description="Read an engine's test files, keep each window query with the tables it reads "
        "(materialised by running the file's setup on an engine) and write one case per query, with "
        "the answer the suite recorded as source_answer. Exit 0 when something was imported, 1 when "
        "nothing could be, 2 on bad input.",
    )
    cmd.set_defaults(command=cmd_import, engines=None, default_engines=lambda a: [setup_engine(a)])


def setup_engine(args: argparse.Namespace) -> str:
    if args.setup_engine:
        return args.setup_engine
    if args.source_format == "pg-regress" and (args.postgres_local or postgres_dsn(args)):
        return "postgres"
    return SETUP_ENGINE[args.source_format]


def cmd_import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from harness.engines.registry import get_engine
    from harness.importers import import_paths
    from harness.results.lock import holding

    check_out_dir(args.out)
    name = args.engines
    engine = get_engine(name, **engine_options(args, [name]).get(name, {}))
    try:
        with holding(Path(args.out), "import", remove=True):
            counts = import_paths(args.paths, args.source_format, Path(args.out), engine, args.source_engine)
    finally:
        engine.close()
    if args.json:
        json.dump(counts.as_json(), sys.stdout, indent=2)
        print()
    else:
        _print(counts, args)
    return EXIT_PASS if counts.imported else EXIT_FAIL


def _print(counts, args: argparse.Namespace) -> None:  # noqa: ANN001 (ImportCounts, imported lazily)
    print(f"read {counts.files} file(s) ({args.source_format}): {counts.records} records, "
          f"{counts.window_queries} window queries")
    print(f"imported: {counts.imported} case(s) under {args.out} "
          f"(tables materialised on {counts.materialised_on})")
    for title, counter in (("not expressible", counts.not_expressible),
                           ("setup failures", counts.setup_failures),
                           ("skipped records", counts.skipped)):
        print(f"{title}: {sum(counter.values())}")
        for reason, n in counter.most_common():
            # not expressible: by construct, with the reason it was first not expressible for
            why = f": {counts.reasons[reason]}" if counts.reasons.get(reason, reason) != reason else ""
            print(f"  {n:5}  {reason}{why}  (first: {counts.first[reason]})")
