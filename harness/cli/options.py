"""The options several commands share, each built once as an argparse parent
parser, and what their values mean.

A command lists the parents it takes (`sub.add_parser(..., parents=[...])`);
its own options come as small parents of its own where they sit between shared
ones, so every `--help` lists its options in the order it always has.

    ENGINES        --engines (every registered engine by default, postgres
                   only when a server is configured: `default_engines`)
    ENGINE_PYTHON  --engine-python NAME=PATH, for ENGINE@LABEL engines
    POSTGRES       --postgres-dsn, --postgres-local (the group "PostgreSQL")
    SPARK_THREADS  --spark-threads N, the corpus's Spark queries at once (run, gate)
    FORMAT         --format table|json
    REPORT         --report FILE.html (checked and written by cli/report.py)

Every numeric option of every command takes one of the types below
(`positive_int`, ..., `share`): argparse refuses a value out of range (exit 2,
naming the option) before the command starts. Every output path is checked
before any work (`check_out_dir`, `check_out_file`).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from harness.cli.exit_codes import EXIT_BAD_INPUT
from harness.core.errors import InvalidInput


def parent() -> argparse.ArgumentParser:
    """An empty parent parser: options to hand to `add_parser(parents=...)`."""
    return argparse.ArgumentParser(add_help=False)


# -- numbers -------------------------------------------------------------------------


def _number(parse: Callable[[str], float], holds: Callable[[float], bool], wanted: str) -> Callable:
    """An argparse `type=`: the value `parse` reads from the option's text, refused
    (argparse: `argument --NAME: must be WANTED, not 'TEXT'`, exit 2) unless it is
    finite and `holds`."""
    def convert(text: str) -> float:
        try:
            value = parse(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and holds(value)):
            raise argparse.ArgumentTypeError(f"must be {wanted}, not {text!r}")
        return value
    convert.__name__ = wanted  # what argparse names the type in its own messages
    return convert


positive_int = _number(int, lambda v: v >= 1, "a whole number, at least 1")


def usable_cores() -> int:
    """The cores this process may run on (its affinity, as a container or
    `taskset` limits it), the default of every `--jobs`."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1
non_negative_int = _number(int, lambda v: v >= 0, "a whole number, 0 or more")
positive_float = _number(float, lambda v: v > 0, "a number above 0")
non_negative_float = _number(float, lambda v: v >= 0, "a number, 0 or more")
share = _number(float, lambda v: 0 <= v <= 1, "a share between 0 and 1")
NUMBER_TYPES = (positive_int, non_negative_int, positive_float, non_negative_float, share)

_MEMORY = re.compile(r"[1-9][0-9]*[kmgt]?", re.IGNORECASE)


def memory_amount(text: str) -> str:
    """An amount of memory as Spark reads it (`512m`, `1g`)."""
    if not _MEMORY.fullmatch(text):
        raise argparse.ArgumentTypeError(f"must be an amount of memory such as 1g or 512m, not {text!r}")
    return text


# Option types that check a text and keep it text (not numbers, not paths).
TEXT_TYPES = (memory_amount,)


# -- output paths --------------------------------------------------------------------


def check_out_dir(path: str | Path, option: str = "--out") -> None:
    """Refuse, before any work, an output directory that cannot be made or written:
    an existing file, a path through a file, a name too long, a place this user
    cannot write. Whether an existing directory may be reused is the command's rule."""
    path = Path(path)  # os.path's tests: pathlib's raise on a name too long
    if os.path.exists(path) and not os.path.isdir(path):
        raise InvalidInput(f"{path} is a file, not a directory; choose a directory", option)
    _try_writing(path, option, directory=True)


def check_out_file(path: str | Path, option: str = "--out") -> None:
    """Refuse, before any work, an output file that cannot be written: a directory,
    a path through a file, a name too long, a place this user cannot write. An
    existing file is replaced."""
    path = Path(path)
    if os.path.isdir(path):
        raise InvalidInput(f"{path} is a directory; give a file name", option)
    _try_writing(path, option, directory=False)


def _try_writing(path: Path, option: str, directory: bool) -> None:
    """Make, and remove at once, what writing `path` makes first: the first missing
    directory on the way, or the file itself; where all of it exists, an entry in the
    directory or an append to the file (its content untouched). Permission bits
    alone do not tell (root, read-only mounts, /proc, a name too long)."""
    target = Path(os.path.abspath(path))
    existing = target
    while not os.path.exists(existing):
        existing = existing.parent
    if existing != target and not os.path.isdir(existing):
        raise InvalidInput(f"cannot write {path}: {existing} is a file, not a directory", option)
    try:
        if existing == target and directory:
            os.rmdir(tempfile.mkdtemp(prefix=".window-harness-", dir=target))
        elif existing == target:
            open(target, "a").close()  # noqa: SIM115 (opened only to see that it can be)
        elif directory or existing != target.parent:
            first = existing / target.relative_to(existing).parts[0]
            first.mkdir()
            first.rmdir()
        else:
            target.touch(exist_ok=False)
            target.unlink()
    except OSError as e:
        raise InvalidInput(f"cannot write {path} ({e.strerror})", option) from None


# -- the engines ---------------------------------------------------------------------


def default_engines(args: argparse.Namespace) -> list[str]:
    """Every registered engine this installation can run: postgres only when a server
    is configured (--postgres-dsn, $WINDOW_HARNESS_POSTGRES_DSN, --postgres-local), and
    no engine whose library (its pip extra) is not installed. A default run must not
    fail for want of either; a note on stderr names the engines left out for want of
    their library and the extra that adds them. Naming such an engine in --engines is
    an error instead (exit 2)."""
    from harness.engines.registry import engine_class, engine_names

    configured = postgres_dsn(args) is not None or getattr(args, "postgres_local", False)
    wanted = [n for n in engine_names() if configured or not is_postgres(n)]
    missing = [n for n in wanted if not engine_class(n).installed()]
    if missing:
        print(f"window-harness: note: leaving out {', '.join(missing)}, not installed "
              f"(pip install 'window-harness[{','.join(missing)}]')", file=sys.stderr)
    return [n for n in wanted if n not in missing]


def _engines() -> argparse.ArgumentParser:
    p = parent()
    p.add_argument(
        "--engines",
        help="comma-separated engines to run (default: every registered engine whose library "
        "is installed, but postgres only when a PostgreSQL server is configured: "
        "--postgres-dsn, $WINDOW_HARNESS_POSTGRES_DSN or --postgres-local)",
    )
    # Filled in by `main` once every option is read (`fill_default_engines`).
    p.set_defaults(default_engines=default_engines)
    return p


def fill_default_engines(args: argparse.Namespace) -> None:
    """--engines, when not given, of a command that takes ENGINES (`default_engines`)."""
    if getattr(args, "engines", None) is None and hasattr(args, "default_engines"):
        args.engines = ",".join(args.default_engines(args))


def engine_list(text: str) -> list[str]:
    """Engine names split at the commas outside brackets: a profile spec may
    hold several, e.g. `duckdb,datafusion[partitions=2,batch_size=1]`."""
    names = [n.strip() for n in re.split(r",(?![^\[]*\])", text) if n.strip()]
    if not names:
        raise InvalidInput("no engine given", "--engines")
    if len(set(names)) != len(names):
        raise InvalidInput(f"an engine is listed twice: {text}", "--engines")
    return names


def _engine_python() -> argparse.ArgumentParser:
    p = parent()
    p.add_argument(
        "--engine-python", action="append", default=[], metavar="NAME=PATH",
        help="run NAME, an ENGINE@LABEL spec of --engines (e.g. duckdb@candidate), with the "
        "Python interpreter PATH: another environment's bin/python, with its own build of the "
        "engine and pyarrow; the same adapter as ENGINE, compared beside it (repeatable)",
    )
    return p


def engine_options(args: argparse.Namespace, names: list[str]) -> dict[str, dict]:
    """Constructor options per engine of `names` (as --engines lists them), from the
    command line: `python` for each ENGINE@LABEL (--engine-python), and `master` for
    Spark-under-test where the command has --spark-master / --spark-remote, `threads`
    where it has --spark-threads.

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
    threads = getattr(args, "spark_threads", None)
    for name in names:
        if master is not None and engine_class(name).runs_on_spark:
            options.setdefault(name, {})["master"] = master
        if threads is not None and engine_class(name).runs_on_spark:
            options.setdefault(name, {})["threads"] = threads
    server = _postgres_option(args)
    for name in names:
        if server and is_postgres(name):
            options.setdefault(name, {}).update(server)
    return options


def _engine_pythons(values: list[str], names: list[str]) -> dict[str, str]:
    """--engine-python's values checked against --engines: engine name -> interpreter."""
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


# -- PostgreSQL: where its server is ------------------------------------------------


def _postgres() -> argparse.ArgumentParser:
    p = parent()
    group = p.add_argument_group("PostgreSQL (engine postgres)")
    group.add_argument("--postgres-dsn", metavar="DSN",
                       help="the PostgreSQL server to run on, as a libpq connection string "
                       "('host=... port=... dbname=... user=...' or postgresql://...); every "
                       "postgres engine works in a schema of its own there "
                       "(default: $WINDOW_HARNESS_POSTGRES_DSN)")
    group.add_argument("--postgres-local", action="store_true",
                       help="start a throwaway local PostgreSQL server for this command (initdb on a "
                       "free loopback port, from the machine's server binaries), removed afterwards")
    return p


def postgres_dsn(args: argparse.Namespace) -> str | None:
    """The server the command's postgres engines use: --postgres-dsn, else the
    environment's; None under --postgres-local (until `main` starts one) or when none."""
    from harness.engines.postgres.adapter import ENV_DSN

    if getattr(args, "postgres_local", False):
        return getattr(args, "postgres_dsn", None)
    return getattr(args, "postgres_dsn", None) or os.environ.get(ENV_DSN) or None


def _postgres_option(args: argparse.Namespace) -> dict:
    """{"dsn": ...} when the server is known (--postgres-dsn, the environment, the
    command's own local server), {"local": True} for an engine to start its own."""
    dsn = postgres_dsn(args)
    if dsn is not None:
        return {"dsn": dsn}
    return {"local": True} if getattr(args, "postgres_local", False) else {}


def is_postgres(name: str) -> bool:
    """Whether `name` answers from the server --postgres-dsn / --postgres-local names."""
    from harness.engines.registry import engine_class

    return engine_class(name).needs_server


def names_postgres(names: list[str]) -> bool:
    try:
        return any(is_postgres(n) for n in names)
    except InvalidInput:  # an unknown engine: the command itself says so
        return False


# -- Spark: how many of a batch's queries at once ---------------------------------------


def _spark_threads() -> argparse.ArgumentParser:
    p = parent()
    p.add_argument("--spark-threads", type=positive_int, metavar="N",
                   help="corpus cases Spark runs at once, each from a thread of its own in a "
                   "session of its own (default: 4; 1 runs them one after another)")
    return p


# -- output --------------------------------------------------------------------------


def _format() -> argparse.ArgumentParser:
    p = parent()
    p.add_argument("--format", choices=["table", "json"], default="table", help="output format")
    return p


def _report() -> argparse.ArgumentParser:
    p = parent()
    p.add_argument("--report", metavar="FILE.html",
                   help="write the HTML conformance report of this run to FILE.html at the end "
                   "(as `window-harness report`), and print its path")
    return p


ENGINES = _engines()
ENGINE_PYTHON = _engine_python()
POSTGRES = _postgres()
SPARK_THREADS = _spark_threads()
FORMAT = _format()
REPORT = _report()


def read_cases(paths: Sequence[str | Path], read: Callable | None = None) -> tuple[list, list[InvalidInput]]:
    """The cases of the PATH arguments (read by `read`: `load_cases` unless given), and
    the errors of the invalid files: each is reported on stderr, and the command goes on
    with the others and ends with `exit_for_invalid` (exit 2). No case file at all is
    bad input."""
    from harness.cases.case import load_cases

    cases, errors = (read or load_cases)(paths)
    for e in errors:
        print(f"window-harness: invalid case: {e}", file=sys.stderr)
    if not cases and not errors:
        raise InvalidInput("no case files found", " ".join(map(str, paths)))
    return cases, errors


def exit_for_invalid(code: int, invalid: Sequence[InvalidInput]) -> int:
    """The command's exit code after `read_cases`: 2 when some case file was invalid
    (said again last, so it is not lost above the command's own output)."""
    if not invalid:
        return code
    print(f"window-harness: {len(invalid)} invalid case file(s) left out, reported above",
          file=sys.stderr)
    return EXIT_BAD_INPUT
