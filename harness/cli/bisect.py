"""`window-harness bisect CASE... --engine ENGINE --versions A..B`: the first
release of ENGINE whose verdict on a case differs from the verdict at A (the
work: `harness.bisect`)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from harness.cli.exit_codes import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_PASS
from harness.cli.options import FORMAT, exit_for_invalid, parent, read_cases
from harness.core.errors import InvalidInput

_DESCRIPTION = """\
Run a case on releases of ENGINE (each the labelled engine ENGINE@VERSION, in a
cached virtualenv made from the package registry on first use, or the
interpreter --engine-python names), judged against the reference, and find by
binary search the first release whose verdict differs from the verdict at the
range's first release. Both ends are run first; when they agree there is
nothing to bisect (--scan runs every release between them instead). For one
case file it prints the last release with the first verdict and the first
with another, each with its answer and diff against the reference; for a
directory or several cases, a table: case, the verdict at each end, last
good, first bad. Exit 0 when every case was bisected (its change found, or
both ends agree), 1 when some change could not be pinned to one release
because the releases around it could not be installed or started, 2 on bad
input (an unknown engine or release, an empty range, an unreadable case, a
release at either end that cannot be installed)."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    own = parent()
    own.add_argument("paths", nargs="+", metavar="CASE", help="case files or directories of them")
    own.add_argument("--engine", required=True,
                     help="the engine whose releases to search: duckdb, datafusion or spark")
    own.add_argument("--versions", required=True, metavar="FIRST..LAST|V1,V2,...",
                     help="the releases to search, oldest first: FIRST..LAST is every release of "
                     "the engine's package on pip's index from FIRST to LAST, both included "
                     "(e.g. 1.0.0..2.0.1); a comma-separated list names them one by one")
    own.add_argument("--engine-python", action="append", default=[], metavar="VERSION=PATH",
                     help="run release VERSION with the Python interpreter PATH (an environment "
                     "holding that release and pyarrow) instead of installing it (repeatable)")
    own.add_argument("--scan", action="store_true",
                     help="when both ends have one verdict, run every release between them and "
                     "report any change seen (a regression fixed again within the range)")
    p = sub.add_parser(
        "bisect",
        parents=[own, FORMAT],
        help="find the first release of an engine whose verdict on a case changes",
        description=_DESCRIPTION,
    )
    p.set_defaults(command=cmd_bisect)


def cmd_bisect(args: argparse.Namespace) -> int:
    from harness.bisect.run import Bisector, Releases
    from harness.bisect.search import SKIPPED, parse_versions
    from harness.bisect.text import to_json, write_case, write_table
    from harness.engines.releases import package_of, releases

    engine = args.engine.strip()
    package_of(engine, "--engine")
    pythons = engine_pythons(args.engine_python, engine)
    listed = [v.strip() for v in args.versions.split(",")]
    if ".." not in args.versions and all(v in pythons for v in listed):
        known = list(pythons)  # every release is given: no registry needed
    else:
        known = [*releases(engine), *pythons]
    versions = parse_versions(args.versions, known, engine)
    extra = [v for v in pythons if v not in versions]
    if extra:
        raise InvalidInput(f"{', '.join(extra)} is not among the releases of --versions "
                           f"({', '.join(versions)})", "--engine-python")
    cases, invalid = read_cases(args.paths)
    if not cases:
        return exit_for_invalid(EXIT_BAD_INPUT, invalid)
    one = len(args.paths) == 1 and len(cases) == 1 and not os.path.isdir(args.paths[0])

    bisector = Bisector(Releases(engine, pythons), versions, scan=args.scan)
    try:
        found = [bisector.bisect(cases[0])] if one else bisector.bisect_all(cases)
    finally:
        bisector.releases.close()

    if args.format == "json":
        doc = to_json(found[0]) if one else [to_json(b) for b in found]
        json.dump(doc, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    elif one:
        write_case(found[0], sys.stdout)
    else:
        write_table(found, sys.stdout)
    code = EXIT_FAIL if any(b.search.status == SKIPPED for b in found) else EXIT_PASS
    return exit_for_invalid(code, invalid)


def engine_pythons(values: list[str], engine: str) -> dict[str, str]:
    """--engine-python's values: release -> interpreter. A value is VERSION=PATH or
    ENGINE@VERSION=PATH; InvalidInput naming --engine-python otherwise."""
    from harness.core.versions import parse_version

    pythons: dict[str, str] = {}
    for value in values:
        text, _, path = (part.strip() for part in value.partition("="))
        name, at, version = text.rpartition("@")
        if not at:
            name, version = engine, text
        if not version or not path:
            raise InvalidInput(f"expected VERSION=PATH, got {value!r}", "--engine-python")
        if name != engine:
            raise InvalidInput(f"{text!r} is not a release of --engine {engine}", "--engine-python")
        if parse_version(version) is None:
            raise InvalidInput(f"{version!r} is not a version (e.g. 1.2.0)", "--engine-python")
        if version in pythons:
            raise InvalidInput(f"{version} is given twice", "--engine-python")
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise InvalidInput(f"{path!r} (for {version}) is not an executable file", "--engine-python")
        pythons[version] = os.path.abspath(path)
    return pythons
