"""`window-harness run PATH...`: case files on engines, a verdict per case and engine."""

from __future__ import annotations

import argparse

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


def add_parser(sub: argparse._SubParsersAction) -> None:
    out = parent()  # its own option, between the shared ones as it always was
    out.add_argument("--out", metavar="DIR",
                     help="also write the run to DIR: run.json (every verdict, what each case "
                     "exercises) and findings/ (the first case of each finding signature)")
    run = sub.add_parser(
        "run",
        parents=[ENGINES, ENGINE_PYTHON, POSTGRES, SPARK_THREADS, FORMAT, out, REPORT],
        help="run case files on engines and print a verdict per case and engine",
        description="Run case files (or directories of them) on each engine, judge every "
        "answer against the reference, and print the verdicts. Exit 0 when every verdict "
        "is match or unsupported, 1 otherwise, 2 on bad input.",
    )
    run.add_argument("paths", nargs="+", metavar="PATH", help="case files or directories")
    run.add_argument("--bare", action="store_true",
                     help="also run each case's bare query (as written, without the harness's row id "
                     "and witness columns) and judge it on its own")
    run.set_defaults(command=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    import time
    from pathlib import Path

    from harness.baseline.known import load_baseline
    from harness.engines.registry import get_engine
    from harness.judge.corpus_runner import run_corpus
    from harness.results.output import write_json, write_table

    names = engine_list(args.engines)
    options = engine_options(args, names)
    engines = [get_engine(n, **options.get(n, {})) for n in names]  # unknown names fail before any work
    cases, invalid = read_cases(args.paths)
    if not cases:
        return exit_for_invalid(EXIT_BAD_INPUT, invalid)
    out = _run_out(args)
    check_report_option(args)
    started = time.time()
    line = ProgressLine()
    try:
        run = run_corpus(cases, engines, progress=line.cases(), bare=args.bare)
    finally:
        for engine in engines:
            engine.close()
        line.clear()
    if args.format == "json":
        write_json(run)
    else:
        baseline, by_id = load_baseline(), {c.id: c for c in cases}
        write_table(run, known=lambda r: baseline.for_case(
            r.case, r.engine, r.verdict.value, r.detail, by_id.get(r.case), run.engines.get(r.engine, ""),
            r.facts))
    if out is not None or args.report:
        from harness.results.rundir import UNSAVED, run_record, write_run_record

        # The report is made from the run in memory; the directory, when asked for, is
        # written for the user and never read back.
        record = run_record(Path(out) if out is not None else UNSAVED, run, cases, started=started,
                            extra={"paths": list(args.paths)})
        if out is not None:
            write_run_record(record)
            if args.format != "json":
                print(f"results: {out}")
        if args.report:
            write_report([record], args)
    return exit_for_invalid(EXIT_PASS if run.passed else EXIT_FAIL, invalid)


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
