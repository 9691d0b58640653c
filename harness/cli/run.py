"""`window-harness run PATH...`: case files on engines, a verdict per case and engine."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from harness.cli.exit_codes import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_PASS
from harness.cli.options import (
    ENGINE_PYTHON,
    ENGINES,
    FORMAT,
    POSTGRES,
    REPORT,
    SPARK_THREADS,
    check_out_dir,
    engine_list,
    engine_options,
    exit_for_invalid,
    parent,
    read_cases,
)
from harness.cli.progress import ProgressLine
from harness.cli.report import check_report_option, write_report
from harness.core.errors import InvalidInput

if TYPE_CHECKING:
    from harness.cases.sqlfile import SqlFileCases


def add_parser(sub: argparse._SubParsersAction) -> None:
    out = parent()  # its own option, between the shared ones as it always was
    out.add_argument("--out", metavar="DIR",
                     help="also write the run to DIR: run.json (every verdict, what each case "
                     "exercises) and findings/ (the first case of each finding signature)")
    run = sub.add_parser(
        "run",
        parents=[ENGINES, ENGINE_PYTHON, POSTGRES, SPARK_THREADS, FORMAT, out, REPORT],
        help="run case files on engines and print a verdict per case and engine",
        description="Run case files and .sql files (or directories of them) on each engine, judge every "
        "answer against the reference, and print the verdicts. Exit 0 when every verdict "
        "is match or unsupported, 1 otherwise, 2 on bad input.",
    )
    run.add_argument("paths", nargs="+", metavar="PATH",
                     help="case files (.yaml), SQL files (.sql: setup statements and queries, each "
                     "query a case judged against the reference) or directories of them")
    run.add_argument("--tables", metavar="DIR",
                     help="tables for the .sql files: each *.parquet, *.csv (with a header), "
                     "*.arrow / *.feather / *.ipc file of DIR is a table named by the file's stem")
    run.add_argument("--bare", action="store_true",
                     help="also run each case's bare query (as written, without the harness's row id "
                     "and witness columns) and judge it on its own")
    run.set_defaults(command=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from harness.engines.registry import get_engine
    from harness.results.lock import holding

    names = engine_list(args.engines)
    options = engine_options(args, names)
    engines = [get_engine(n, **options.get(n, {})) for n in names]  # unknown names fail before any work
    cases, invalid, sql = _read_inputs(args)
    if not cases:
        _say_left_out(sql)
        return exit_for_invalid(EXIT_BAD_INPUT, invalid)
    out = _run_out(args)
    check_report_option(args)
    # One writer per directory (`harness.results.lock`): a second run on it is refused
    # before any engine starts, and the first one's run.json is never replaced under it.
    with holding(Path(out) if out is not None else None, "run"):
        return _run_and_record(args, engines, cases, invalid, sql, out)


def _run_and_record(args: argparse.Namespace, engines: list, cases: list, invalid: list,
                    sql: SqlFileCases | None, out: str | None) -> int:
    import time
    from pathlib import Path

    from harness.baseline.known import load_baseline
    from harness.judge.corpus_runner import run_corpus
    from harness.results.output import write_json, write_table

    started = time.time()
    line = ProgressLine()
    try:
        run = run_corpus(cases, engines, progress=line.cases(), bare=args.bare)
    finally:
        for engine in engines:
            engine.close()
        line.clear()
    if args.format == "json":
        write_json(run, extra=None if sql is None else {"sql_files": sql.as_json()})
    else:
        baseline, by_id = load_baseline(), {c.id: c for c in cases}
        write_table(run, known=lambda r: baseline.for_case(
            r.case, r.engine, r.verdict.value, r.detail, by_id.get(r.case), run.engines.get(r.engine, ""),
            r.facts))
        if sql is not None:
            print(sql.summary_line())
    if out is not None or args.report:
        from harness.results.rundir import UNSAVED, run_record, write_run_record

        # The report is made from the run in memory; the directory, when asked for, is
        # written for the user and never read back.
        record = run_record(Path(out) if out is not None else UNSAVED, run, cases, started=started,
                            extra={"paths": list(args.paths),
                                   **({} if sql is None else {"sql_files": sql.as_json()})})
        if out is not None:
            write_run_record(record)
            if args.format != "json":
                print(f"results: {out}")
        if args.report:
            write_report([record], args)
    _say_left_out(sql)
    return exit_for_invalid(EXIT_PASS if run.passed else EXIT_FAIL, invalid)


def _read_inputs(args: argparse.Namespace) -> tuple[list, list, SqlFileCases | None]:
    """The cases of the PATHs: each case file's, and each `.sql` file's queries over
    --tables and the file's setup (None for the third when no `.sql` file is given).
    Every invalid file or statement, and every statement not expressible, is said on
    stderr as it is found."""
    import sys

    from harness.cases.case import load_cases
    from harness.cases.sqlfile import read_sql_files, sql_paths
    from harness.cases.tablefiles import OPTION, read_table_dir

    sql_files, others = sql_paths(args.paths)
    if args.tables is not None and not sql_files:
        raise InvalidInput("its tables are for .sql files, and no PATH is one or holds one", OPTION)
    if not sql_files:
        cases, invalid = read_cases(args.paths)
        return cases, invalid, None
    sql = read_sql_files(sql_files, read_table_dir(args.tables) if args.tables is not None else None)
    for left_out in sql.left_out:
        print(f"window-harness: {left_out}", file=sys.stderr)
    yaml_cases, errors = load_cases(others) if others else ([], [])
    sql_cases, clashes = _unique_ids(yaml_cases, sql.cases)
    if not (yaml_cases or errors or sql_cases or sql.invalid or clashes):
        if not sql.left_out:
            raise InvalidInput("no query in the .sql files (and no case file)", " ".join(map(str, args.paths)))
        return [], [], sql  # every statement left out (each said above): nothing to run
    cases, invalid = read_cases(args.paths, read=lambda _: (yaml_cases + sql_cases,
                                                            errors + sql.invalid + clashes))
    return cases, invalid, sql


def _unique_ids(yaml_cases: list, sql_cases: list) -> tuple[list, list]:
    """The `.sql` files' cases whose ids no case before them has, and an error for
    each of the others (a verdict must name one case): two files of one stem."""
    from harness.core.errors import InvalidCase

    seen = {c.id: c.path for c in yaml_cases}
    kept, clashes = [], []
    for case in sql_cases:
        if case.id in seen:
            clashes.append(InvalidCase(f"duplicate case id {case.id!r} (also {seen[case.id]})", case.origin))
        else:
            seen[case.id] = case.path
            kept.append(case)
    return kept, clashes


def _say_left_out(sql: SqlFileCases | None) -> None:
    """The statements not expressible, counted again last (each was said above)."""
    import sys

    if sql is not None and sql.left_out:
        print(f"window-harness: {len(sql.left_out)} statement(s) of the .sql files not expressible, "
              "left out (reported above)", file=sys.stderr)


def _run_out(args: argparse.Namespace) -> str | None:
    """--out, checked before any engine starts: a directory that holds something
    other than an earlier run is refused, so nothing recorded is overwritten."""
    from pathlib import Path

    from harness.results.lock import refuse_foreign
    from harness.results.rundir import RUN

    if args.out is None:
        return None
    out = Path(args.out)
    check_out_dir(out)
    refuse_foreign(out, RUN, "an earlier run")
    return args.out
