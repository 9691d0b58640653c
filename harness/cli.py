"""`window-harness` commands.

Exit codes, for every command: 0 all verdicts pass, 1 some verdict does
not, 2 bad input (a malformed case, an unknown engine, a bad option).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence

from harness.errors import EngineUnavailable, InvalidInput

EXIT_PASS, EXIT_FAIL, EXIT_BAD_INPUT = 0, 1, 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.command(args)
    except (InvalidInput, EngineUnavailable) as e:
        print(f"window-harness: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("window-harness: interrupted", file=sys.stderr)
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="window-harness",
        description="Differential correctness and conformance testing of SQL window functions.",
    )
    sub = parser.add_subparsers(required=True, metavar="COMMAND")
    run = sub.add_parser(
        "run",
        help="run case files on engines and print a verdict per case and engine",
        description="Run case files (or directories of them) on each engine, judge every "
        "answer against the reference, and print the verdicts. Exit 0 when every verdict "
        "is match or unsupported, 1 otherwise, 2 on bad input.",
    )
    run.add_argument("paths", nargs="+", metavar="PATH", help="case files or directories")
    _engines_option(run)
    _format_option(run)
    run.set_defaults(command=_cmd_run)
    _cases_parser(sub)
    from harness.campaign.commands import add_fuzz_parser, add_reduce_parser
    from harness.campaign.export import add_export_parser
    from harness.campaign.replay import add_replay_parser

    add_fuzz_parser(sub, _engines_option, _format_option)
    add_reduce_parser(sub)
    add_replay_parser(sub)
    add_export_parser(sub)
    engines = sub.add_parser("engines", help="list the registered engines and their versions")
    engines.set_defaults(command=_cmd_engines)
    return parser


def _engines_option(p: argparse.ArgumentParser) -> None:
    from harness.engines.registry import engine_names

    p.add_argument(
        "--engines",
        default=",".join(engine_names()),
        help="comma-separated engines to run (default: %(default)s)",
    )


def _format_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=["table", "json"], default="table", help="output format")


def _engine_list(text: str) -> list[str]:
    """Engine names split at the commas outside brackets: a profile spec may
    hold several, e.g. `duckdb,datafusion[partitions=2,batch_size=1]`."""
    names = [n.strip() for n in re.split(r",(?![^\[]*\])", text) if n.strip()]
    if not names:
        raise InvalidInput("no engine given", "--engines")
    if len(set(names)) != len(names):
        raise InvalidInput(f"an engine is listed twice: {text}", "--engines")
    return names


def _cmd_run(args: argparse.Namespace) -> int:
    from harness.baseline import load_baseline
    from harness.cases import load_cases
    from harness.engines.registry import get_engine
    from harness.output import write_json, write_table
    from harness.runner import run_cases

    names = _engine_list(args.engines)
    engines = [get_engine(n) for n in names]  # unknown names fail before any work
    cases, errors = load_cases(args.paths)
    if errors:
        for e in errors:
            print(f"window-harness: invalid case: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not cases:
        raise InvalidInput("no case files found", " ".join(args.paths))
    try:
        run = run_cases(cases, engines, progress=_progress if sys.stderr.isatty() else None)
    finally:
        for engine in engines:
            engine.close()
        if sys.stderr.isatty():
            sys.stderr.write("\r\033[K")
    if args.format == "json":
        write_json(run)
    else:
        write_table(run, known=load_baseline())
    return EXIT_PASS if run.passed else EXIT_FAIL


def _progress(done: int, total: int, case: str) -> None:
    sys.stderr.write(f"\r\033[K[{done + 1}/{total}] {case}")
    sys.stderr.flush()


def _cases_parser(sub: argparse._SubParsersAction) -> None:
    from pathlib import Path

    cases = sub.add_parser(
        "cases",
        help="list the corpus's cases, or how much of the feature grid they cover",
        description="List case ids, or with --coverage print the cases per cell of the "
        "window-feature grid (see harness/coverage.py). With --coverage: exit 0 when no "
        "defined cell is empty, 1 otherwise, 2 on a malformed case file.",
    )
    default = Path(__file__).resolve().parent.parent / "cases"
    cases.add_argument("paths", nargs="*", metavar="PATH", default=[str(default)],
                       help="case files or directories (default: the repository's cases/)")
    cases.add_argument("--coverage", action="store_true", help="print the coverage grid")
    _format_option(cases)
    cases.set_defaults(command=_cmd_cases)


def _cmd_cases(args: argparse.Namespace) -> int:
    import json

    from harness.cases import load_cases
    from harness.coverage import coverage, format_table, to_json

    cases, errors = load_cases(args.paths)
    if errors:
        for e in errors:
            print(f"window-harness: invalid case: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not cases:
        raise InvalidInput("no case files found", " ".join(args.paths))
    if not args.coverage:
        if args.format == "json":
            print(json.dumps([{"id": c.id, "description": c.description} for c in cases], indent=2))
        else:
            print("\n".join(f"{c.id}  {c.description}" for c in cases))
        return EXIT_PASS
    counts = coverage(cases)
    print(to_json(counts) if args.format == "json" else format_table(counts), end="")
    return EXIT_FAIL if any(c.status == "empty" for c in counts) else EXIT_PASS


def _cmd_engines(args: argparse.Namespace) -> int:
    from harness.engines.registry import engine_names, get_engine, profile_entries

    for name in engine_names():
        try:
            engine = get_engine(name)
            print(f"{name:12} {engine.version()}")
        except EngineUnavailable as e:
            print(f"{name:12} unavailable: {e}")
    entries = [e for e in profile_entries() if e.spec != e.engine]
    if entries:
        print("\nprofiles (--engines ENGINE[PROFILE,...]; each is its own column):")
        width = max(len(e.spec) for e in entries)
        for entry in entries:
            print(f"  {entry.spec:<{width}}  {entry.description}")
    return EXIT_PASS


if __name__ == "__main__":
    sys.exit(main())
