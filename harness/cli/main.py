"""`window-harness` commands.

Exit codes, for every command: 0 all verdicts pass, 1 some verdict does
not, 2 bad input (a malformed case, an unknown engine, a bad option).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator, Sequence

from harness.core.errors import EngineUnavailable, InvalidInput

EXIT_PASS, EXIT_FAIL, EXIT_BAD_INPUT = 0, 1, 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        fill_default_engines(args)
        with postgres_for_command(args):
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
    add_engine_python_option(run)
    add_postgres_options(run)
    _format_option(run)
    run.add_argument("--out", metavar="DIR",
                     help="also write the run to DIR: run.json (every verdict, what each case "
                     "exercises) and findings/ (the first case of each finding signature)")
    add_report_option(run)
    run.set_defaults(command=_cmd_run)
    _cases_parser(sub)
    from harness.cli.fuzz import add_fuzz_parser, add_reduce_parser
    from harness.findings.export import add_export_parser
    from harness.findings.replay import add_replay_parser

    add_fuzz_parser(sub, _engines_option, _format_option)
    add_reduce_parser(sub)
    add_replay_parser(sub)
    add_export_parser(sub)
    from harness.cli.gate import add_gate_parser

    add_gate_parser(sub, _engines_option, _format_option, add_engine_python_option)
    from harness.cli.report import add_report_parser

    add_report_parser(sub)
    engines = sub.add_parser("engines", help="list the registered engines and their versions")
    engines.set_defaults(command=_cmd_engines)
    return parser


def _engines_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--engines",
        help="comma-separated engines to run (default: every registered engine but postgres, "
        "which joins when a PostgreSQL server is configured: --postgres-dsn, "
        "$WINDOW_HARNESS_POSTGRES_DSN or --postgres-local)",
    )
    # Filled in by `main` once every option is read (`default_engines`).
    p.set_defaults(default_engines=default_engines)


def default_engines(args: argparse.Namespace) -> list[str]:
    """Every registered engine, but postgres only when a server is configured
    (--postgres-dsn, $WINDOW_HARNESS_POSTGRES_DSN, --postgres-local): without one it
    cannot run, and a default run must not fail for want of it."""
    from harness.engines.registry import engine_names

    configured = postgres_dsn(args) is not None or getattr(args, "postgres_local", False)
    return [n for n in engine_names() if configured or not _is_postgres(n)]


# -- PostgreSQL: where its server is ------------------------------------------------


def add_postgres_options(p: argparse.ArgumentParser) -> None:
    """--postgres-dsn and --postgres-local, for commands that take --engines."""
    group = p.add_argument_group("PostgreSQL (engine postgres)")
    group.add_argument("--postgres-dsn", metavar="DSN",
                       help="the PostgreSQL server to run on, as a libpq connection string "
                       "('host=... port=... dbname=... user=...' or postgresql://...); every "
                       "postgres engine works in a schema of its own there "
                       "(default: $WINDOW_HARNESS_POSTGRES_DSN)")
    group.add_argument("--postgres-local", action="store_true",
                       help="start a throwaway local PostgreSQL server for this command (initdb on a "
                       "free loopback port, from the machine's server binaries), removed afterwards")


def postgres_dsn(args: argparse.Namespace) -> str | None:
    """The server the command's postgres engines use: --postgres-dsn, else the
    environment's; None under --postgres-local (until `main` starts one) or when none."""
    from harness.engines.postgres.adapter import ENV_DSN

    if getattr(args, "postgres_local", False):
        return getattr(args, "postgres_dsn", None)
    return getattr(args, "postgres_dsn", None) or os.environ.get(ENV_DSN) or None


def _is_postgres(name: str) -> bool:
    from harness.engines.postgres.adapter import PostgresEngine
    from harness.engines.registry import engine_class

    cls = engine_class(name)
    return (cls.shares_code_with or cls.name) == PostgresEngine.name


def _names_postgres(names: list[str]) -> bool:
    try:
        return any(_is_postgres(n) for n in names)
    except InvalidInput:  # an unknown engine: the command itself says so
        return False


def fill_default_engines(args: argparse.Namespace) -> None:
    """--engines, when not given, of a command that offers it (`default_engines`)."""
    if getattr(args, "engines", None) is None and hasattr(args, "default_engines"):
        args.engines = ",".join(args.default_engines(args))


@contextlib.contextmanager
def postgres_for_command(args: argparse.Namespace) -> Iterator[None]:
    """Under --postgres-local, one throwaway server for the whole command: its DSN
    goes to every postgres engine (worker processes too), and it is stopped however
    the command ends (an error, Ctrl-C, SIGTERM). Nothing for other commands, or
    when no postgres engine runs."""
    local = getattr(args, "postgres_local", False)
    if local and getattr(args, "postgres_dsn", None) is not None:
        raise InvalidInput("give one of them: --postgres-dsn names a server, --postgres-local "
                           "starts one", "--postgres-dsn, --postgres-local")
    if not local or not _names_postgres(_engine_list(args.engines)):
        yield
        return
    from harness.engines.postgres.local import LocalPostgres

    with _sigterm_unwinds(), LocalPostgres() as server:
        args.postgres_dsn = server.dsn
        yield


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """SIGTERM raises SystemExit, so `finally` blocks (stopping a server) still run.
    Only the main thread may set a handler; elsewhere it is left alone."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds, so the server is stopped on the way out


def add_engine_python_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--engine-python", action="append", default=[], metavar="NAME=PATH",
        help="run NAME, an ENGINE@LABEL spec of --engines (e.g. duckdb@candidate), with the "
        "Python interpreter PATH: another environment's bin/python, with its own build of the "
        "engine and pyarrow; the same adapter as ENGINE, compared beside it (repeatable)",
    )


def engine_options(args: argparse.Namespace, names: list[str]) -> dict[str, dict]:
    """Constructor options per engine of `names` (as --engines lists them), from the
    command line: `python` for each ENGINE@LABEL (--engine-python), and `master` for
    Spark-under-test where the command has --spark-master / --spark-remote.

    With --postgres-dsn (or $WINDOW_HARNESS_POSTGRES_DSN, or the server `main`
    starts for --postgres-local) every postgres engine gets {"dsn": DSN}; under
    --postgres-local without such a server, {"local": True}.

    E.g. {"duckdb@candidate": {"python": "/abs/venv/bin/python"}}; engines without
    options are absent. Raises InvalidInput naming --engine-python when a value is
    not NAME=PATH, NAME is not in `names` or has no @LABEL, PATH is not an executable
    file, or an @LABEL engine of `names` has no --engine-python.
    """
    from harness.engines.registry import engine_class

    options: dict[str, dict] = {name: {"python": python} for name, python
                                in _engine_pythons(getattr(args, "engine_python", None) or [], names).items()}
    master = getattr(args, "spark_remote", None) or getattr(args, "spark_master", None)
    for name in names:
        if master is not None and engine_class(name).runs_on_spark:
            options.setdefault(name, {})["master"] = master
    server = _postgres_option(args)
    for name in names:
        if server and _is_postgres(name):
            options.setdefault(name, {}).update(server)
    return options


def _postgres_option(args: argparse.Namespace) -> dict:
    """{"dsn": ...} when the server is known (--postgres-dsn, the environment, the
    command's own local server), {"local": True} for an engine to start its own."""
    dsn = postgres_dsn(args)
    if dsn is not None:
        return {"dsn": dsn}
    return {"local": True} if getattr(args, "postgres_local", False) else {}


def _engine_pythons(values: list[str], names: list[str]) -> dict[str, str]:
    """--engine-python's values checked against --engines: engine name -> interpreter."""
    import os

    from harness.engines.registry import canonical_name, label_of

    listed = {canonical_name(n): n for n in names}  # `duckdb[default]@x` is `duckdb@x`
    pythons: dict[str, str] = {}
    for value in values:
        text, _, path = (part.strip() for part in value.partition("="))
        if not text or not path:
            raise InvalidInput(f"expected NAME=PATH, got {value!r}", "--engine-python")
        name = listed.get(_canonical_or_none(text))
        if name is None:
            raise InvalidInput(f"{text!r} is not among --engines ({', '.join(names)})", "--engine-python")
        if label_of(name) is None:
            raise InvalidInput(f"{name!r} runs in this process; name an ENGINE@LABEL of --engines "
                               f"(e.g. {name}@candidate) to run it with another Python", "--engine-python")
        if name in pythons:
            raise InvalidInput(f"{name!r} is given twice", "--engine-python")
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise InvalidInput(f"{path!r} (for {name}) is not an executable file", "--engine-python")
        pythons[name] = os.path.abspath(path)  # not resolved: a venv's python is a symlink
    for name in names:
        if label_of(name) is not None and name not in pythons:
            raise InvalidInput(f"{name!r} runs in another Python environment: pass "
                               f"--engine-python {name}=PATH (that environment's bin/python)", "--engine-python")
    return pythons


def _canonical_or_none(name: str) -> str | None:
    from harness.engines.registry import canonical_name

    try:
        return canonical_name(name)
    except InvalidInput:
        return None


def add_report_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--report", metavar="FILE.html",
                   help="write the HTML conformance report of this run to FILE.html at the end "
                   "(as `window-harness report`), and print its path")


def check_report_option(args: argparse.Namespace) -> None:
    """--report, checked before any engine starts."""
    from pathlib import Path

    from harness.cli.report import check_report_path

    if getattr(args, "report", None):
        check_report_path(Path(args.report))


def write_report(results: list, args: argparse.Namespace) -> None:
    """The --report option of run, fuzz and gate: the report of what they wrote, its
    path printed last (on stderr under --format json, which keeps stdout one document)."""
    from pathlib import Path

    from harness.cli.report import make_report

    path = make_report([Path(r) for r in results], Path(args.report))
    print(f"report: {path}", file=sys.stderr if args.format == "json" else sys.stdout)


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
    import shutil
    import tempfile
    import time
    from pathlib import Path

    from harness.baseline.known import load_baseline
    from harness.cases.case import load_cases
    from harness.engines.registry import get_engine
    from harness.judge.runner import run_cases
    from harness.results.output import write_json, write_table

    names = _engine_list(args.engines)
    options = engine_options(args, names)
    engines = [get_engine(n, **options.get(n, {})) for n in names]  # unknown names fail before any work
    cases, errors = load_cases(args.paths)
    if errors:
        for e in errors:
            print(f"window-harness: invalid case: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not cases:
        raise InvalidInput("no case files found", " ".join(args.paths))
    out = _run_out(args)
    check_report_option(args)
    started = time.time()
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
        baseline, by_id = load_baseline(), {c.id: c for c in cases}
        write_table(run, known=lambda r: baseline.for_case(
            r.case, r.engine, r.verdict.value, r.detail, by_id.get(r.case), run.engines.get(r.engine, ""),
            r.facts))
    if out is not None or args.report:
        from harness.results.rundir import write_run_dir

        directory = Path(out or tempfile.mkdtemp(prefix="window-harness-run-"))
        try:
            write_run_dir(directory, run, cases, started=started, extra={"paths": list(args.paths)})
            if out is not None and args.format != "json":
                print(f"results: {directory}")
            if args.report:
                write_report([directory], args)
        finally:
            if out is None:  # the report holds what it needs from the run
                shutil.rmtree(directory, ignore_errors=True)
    return EXIT_PASS if run.passed else EXIT_FAIL


def _run_out(args: argparse.Namespace) -> str | None:
    """--out, checked before any engine starts: a directory that holds something
    other than an earlier run is refused, so nothing recorded is overwritten."""
    from pathlib import Path

    from harness.results.rundir import RUN

    if args.out is None:
        return None
    out = Path(args.out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / RUN).exists())):
        raise InvalidInput(f"{out} exists and does not hold an earlier run; choose another "
                           "directory", "--out")
    return args.out


def _progress(done: int, total: int, case: str) -> None:
    sys.stderr.write(f"\r\033[K[{done + 1}/{total}] {case}")
    sys.stderr.flush()


def _cases_parser(sub: argparse._SubParsersAction) -> None:
    from pathlib import Path

    cases = sub.add_parser(
        "cases",
        help="list the corpus's cases, or how much of the feature grid they cover",
        description="List case ids, or with --coverage print the cases per cell of the "
        "window-feature grid (see harness/cases/coverage.py). With --coverage: exit 0 when no "
        "defined cell is empty, 1 otherwise, 2 on a malformed case file.",
    )
    default = Path(__file__).resolve().parents[2] / "cases"
    cases.add_argument("paths", nargs="*", metavar="PATH", default=[str(default)],
                       help="case files or directories (default: the repository's cases/)")
    cases.add_argument("--coverage", action="store_true", help="print the coverage grid")
    _format_option(cases)
    cases.set_defaults(command=_cmd_cases)


def _cmd_cases(args: argparse.Namespace) -> int:
    import json

    from harness.cases.case import load_cases
    from harness.cases.coverage import coverage, format_table, to_json

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
