"""`window-harness gate`: options in, exit code out (the work: `gate.run`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from harness.cli.exit_codes import EXIT_BAD_INPUT
from harness.cli.options import (
    ENGINE_PYTHON,
    ENGINES,
    FORMAT,
    POSTGRES,
    REPORT,
    SPARK_THREADS,
    check_out_dir,
    check_out_file,
    engine_list,
    engine_options,
    exit_for_invalid,
    non_negative_float,
    non_negative_int,
    parent,
    positive_float,
    positive_int,
    read_cases,
    usable_cores,
)
from harness.cli.progress import ProgressLine
from harness.cli.report import check_report_option, write_report
from harness.gate import AB_REDUCE_SECONDS, AB_REDUCE_TOTAL

CORPUS = Path(__file__).resolve().parents[2] / "cases"


def add_parser(sub: argparse._SubParsersAction) -> None:
    sub.add_parser(
        "gate",
        parents=[ENGINES, ENGINE_PYTHON, POSTGRES, SPARK_THREADS, _gate(), FORMAT, REPORT],
        help="CI gate: the corpus plus a seeded fuzz budget, failing only on what the "
        "known-differences baseline does not explain",
        description="Run the conformance corpus and a seeded fuzz campaign of --budget-seconds "
        "on the engines, and judge every verdict against the known-differences baseline: a "
        "match passes; an `unsupported` passes when the engine's dialect declares it; any other "
        "verdict passes only when a baseline entry explains it. Engines run as an A/B pair "
        "(`duckdb,duckdb@candidate` with --engine-python) are also compared with each other: "
        "a case the other build fails where the released one matched is a regression. "
        "Exit 0 when everything is a match or explained, 1 on an unexplained verdict or an A/B "
        "regression (or a stale entry under --strict-baseline), 2 on bad input.",
    ).set_defaults(command=cmd_gate)


def _gate() -> argparse.ArgumentParser:
    """The gate's own options, listed between the engines' and --format."""
    p = parent()
    p.add_argument("--baseline", type=Path, help="the known-differences file "
                   "(default: the repository's baseline/known-differences.yaml)")
    p.add_argument("--budget-seconds", type=non_negative_float, default=60.0,
                   help="seconds of fuzzing, beside the corpus; 0 runs the corpus alone "
                   "(default: %(default)s)")
    p.add_argument("--budget-cases", type=non_negative_int, metavar="N",
                   help="also stop the fuzz after N cases, whichever comes first: a budget that "
                   "does not depend on the machine's speed")
    p.add_argument("--jobs", type=positive_int,
                   help="fuzz shard processes, each with its own engines, run beside the corpus, "
                   f"which takes a core of its own (default: the usable cores less one, at least 1; "
                   f"{fuzz_jobs()} here)")
    p.add_argument("--seed", type=non_negative_int, default=0,
                   help="fuzz campaign seed; a fixed one keeps the gate deterministic "
                   "(default: %(default)s)")
    p.add_argument("--corpus", action="append", type=Path, metavar="PATH",
                   help="case files or directories (repeatable; default: the repository's cases/)")
    p.add_argument("--junit", type=Path, metavar="FILE",
                   help="write JUnit XML: one testcase per case x engine")
    p.add_argument("--strict-baseline", action="store_true",
                   help="fail when a baseline entry explained nothing in this run (stale)")
    p.add_argument("--out", type=Path, default=Path("reports") / "gate",
                   help="results directory; an earlier gate's is replaced (default: %(default)s)")
    p.add_argument("--ab-reduce-seconds", type=non_negative_float, default=AB_REDUCE_TOTAL, metavar="SECONDS",
                   help="seconds to reduce the fuzz part's A/B regressions in, all together (each at "
                   f"most {AB_REDUCE_SECONDS:g} s); the reduced case files are printed and kept in "
                   "gate.json; 0 reduces none (default: %(default)s)")
    p.add_argument("--timeout", type=positive_float, default=30.0,
                   help="seconds an engine may take per query (default: %(default)s)")
    return p


def cmd_gate(args: argparse.Namespace) -> int:
    from harness.baseline.known import DEFAULT_PATH, load_baseline
    from harness.engines.registry import get_dialect
    from harness.gate.junit import write_junit
    from harness.gate.run import GateConfig, run_gate
    from harness.gate.text import write_text

    check_out_dir(args.out)
    if args.junit:
        check_out_file(args.junit, "--junit")
    check_report_option(args)
    names = engine_list(args.engines)
    for name in names:
        get_dialect(name)  # an unknown engine or profile fails before any work
    options = engine_options(args, names)
    baseline = load_baseline(args.baseline or DEFAULT_PATH)
    paths = args.corpus or [CORPUS]
    cases, invalid = read_cases(paths)
    if not cases:
        return exit_for_invalid(EXIT_BAD_INPUT, invalid)
    config = GateConfig(
        engines=tuple(names), cases=tuple(cases), baseline=baseline, out=args.out, seed=args.seed,
        budget_seconds=args.budget_seconds, budget_cases=args.budget_cases, jobs=args.jobs or fuzz_jobs(),
        strict_baseline=args.strict_baseline,
        engine_options=options, timeout_seconds=args.timeout, whole_corpus=not args.corpus,
        postgres_args=_postgres_args(args), ab_reduce_seconds=args.ab_reduce_seconds,
    )
    line = ProgressLine()

    def say(text: str) -> None:
        line.clear()  # a message replaces the progress line; the next progress shows at once
        print(f"gate: {text}", file=sys.stderr, flush=True)

    budget = f"{args.budget_seconds:g} s" + (f" or {args.budget_cases} cases" if args.budget_cases is not None else "")
    say(f"seed {args.seed}, engines {','.join(names)}, {len(cases)} corpus cases, fuzz budget "
        f"{budget}, baseline {baseline.path}, out {args.out}")
    try:
        result = run_gate(config, say, progress=line.cases("corpus ", _corpus_log),
                          listener=line.campaign)
    finally:
        line.clear()
    if args.junit:
        write_junit(result, args.junit, invalid)
    if args.format == "json":
        json.dump(result.as_json(), sys.stdout, indent=2, default=str)
        print()
    else:
        write_text(result, sys.stdout)
        if args.junit:
            print(f"junit: {args.junit}")
    if args.report:
        write_report([result.record()], args)
    return exit_for_invalid(result.exit_code, invalid)


def fuzz_jobs() -> int:
    """The gate's default fuzz shards: every usable core but the one the corpus
    runs on (measured on two cores: one shard beside the corpus took 76 s and ran
    264 fuzz cases; two took 73 s and ran 178, the three Spark JVMs competing)."""
    return max(1, usable_cores() - 1)


def _postgres_args(args: argparse.Namespace) -> tuple[str, ...]:
    """The PostgreSQL options of this command, as the replay and reduce commands the
    gate prints need them: --postgres-local (its server is gone by then: each
    command starts its own), else the --postgres-dsn given; nothing when the server
    comes from the environment, which the printed commands read too."""
    if args.postgres_local:
        return ("--postgres-local",)
    return ("--postgres-dsn", args.postgres_dsn) if args.postgres_dsn else ()


def _corpus_log(done: int, total: int) -> str:
    return f"gate: corpus: {done}/{total} cases"
