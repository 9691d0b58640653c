"""`window-harness`: the parser, the dispatch to a command, the exit codes.

Each command is a module of this package with `add_parser(sub)`, which sets
the command's function as the `command` default; the options several
commands share are in `options`. Exit codes (`exit_codes`), for every
command: 0 all verdicts pass, 1 some verdict does not, 2 bad input (a
malformed case, an unknown engine, a bad option).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence

from harness.cli import (
    bisect,
    cases,
    engines,
    explain,
    export,
    fuzz,
    gate,
    import_,
    reduce,
    replay,
    report,
    run,
    spark_cluster,
)
from harness.cli.exit_codes import EXIT_BAD_INPUT, EXIT_BROKEN_PIPE, EXIT_INTERRUPTED
from harness.cli.options import engine_list, fill_default_engines, names_postgres
from harness.cli.streams import ReaderGone, escaped_output
from harness.core.errors import EngineUnavailable, InvalidInput

# In the order `window-harness --help` lists them.
COMMANDS = (run, cases, import_, fuzz, reduce, replay, explain, export, gate, bisect, report, engines, spark_cluster)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command of `argv`; its exit code. What it prints shows control
    characters escaped (`streams`): case ids, file names and engine messages are input."""
    try:
        with escaped_output():
            code = _command(argv)
            sys.stdout.flush()  # a reader that has gone shows here, not at exit
            return code
    except ReaderGone as gone:
        # The reader stopped early (`window-harness engines | head -1`): end quietly,
        # as a command killed by SIGPIPE would, and let nothing flush into the closed pipe.
        with contextlib.suppress(OSError, ValueError):  # a stream without a descriptor
            os.dup2(os.open(os.devnull, os.O_WRONLY), gone.stream.fileno())
        return EXIT_BROKEN_PIPE


def _command(argv: Sequence[str] | None) -> int:
    args = parser().parse_args(argv)
    try:
        fill_default_engines(args)
        with postgres_for_command(args):
            return args.command(args)
    except (InvalidInput, EngineUnavailable) as e:
        print(f"window-harness: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("window-harness: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="window-harness",
        description="Differential correctness and conformance testing of SQL window functions.",
    )
    sub = top.add_subparsers(required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    return top


# -- PostgreSQL: a server for the command ------------------------------------------


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
    # Without --engines (replay, reduce: their engines come from the case), each
    # postgres engine starts its own server (`options.engine_options`).
    if not local or args.engines is None or not names_postgres(engine_list(args.engines)):
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


if __name__ == "__main__":
    sys.exit(main())
