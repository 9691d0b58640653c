"""`window-harness fuzz` and `window-harness reduce`: argument parsing and output.

The work itself is in `loop` (the campaign) and `findings`/`reduce` (the
reduction); this module only turns options into a configuration and
results into text.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from harness.core.errors import InvalidInput

PROGRESS_EVERY_TTY = 0.5
PROGRESS_EVERY_LOG = 15.0


def add_fuzz_parser(sub: argparse._SubParsersAction, engines_option, format_option) -> None:
    from harness.cli.main import add_engine_python_option, add_postgres_options

    p = sub.add_parser(
        "fuzz",
        help="run a fuzzing campaign: random cases on every engine, findings saved and reduced",
        description="Generate random schemas, data and window queries from a seed, run each "
        "case on the reference and the engines, and save every new finding (deduplicated by "
        "signature) as a case file with its reduction. Prints a live progress line and a "
        "summary. Exit 0 when there is no finding, 1 otherwise, 2 on bad input.",
    )
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--minutes", type=float, help="stop after this many minutes")
    budget.add_argument("--cases", type=int, help="stop after this many cases (default: 200)")
    p.add_argument("--seed", type=int, help="campaign seed (default: from the clock; printed)")
    engines_option(p)
    add_engine_python_option(p)
    add_postgres_options(p)
    p.add_argument("--jobs", type=int, default=1, help="shard processes, each with its own engines "
                   "(default: %(default)s)")
    p.add_argument("--out", type=Path, help="campaign directory (default: reports/fuzz-SEED)")
    p.add_argument("--resume", action="store_true", help="continue the campaign in --out")
    p.add_argument("--no-reduce", dest="reduce", action="store_false",
                   help="save findings without reducing them")
    p.add_argument("--reduce-seconds", type=float, default=60.0,
                   help="time budget per reduction (default: %(default)s)")
    p.add_argument("--timeout", type=float, default=30.0,
                   help="seconds an engine may take per query before it is killed and restarted "
                   "(default: %(default)s)")
    p.add_argument("--metamorphic-share", type=float, default=0.1,
                   help="share of cases that also get a metamorphic check on each engine "
                   "(default: %(default)s)")
    p.add_argument("--batch-size", type=int, default=20,
                   help="sibling cases per query shape, run as one batched query per engine; "
                   "1 runs every case alone (default: %(default)s)")
    p.add_argument("--unbatched-share", type=float, default=0.1,
                   help="share of cases that run alone all the same, since batching changes "
                   "the plan (default: %(default)s)")
    p.add_argument("--reruns", type=int, default=3,
                   help="identical re-runs of each finding; verdicts that change make it "
                   "nondeterministic (default: %(default)s)")
    spark = p.add_argument_group("campaigns as a Spark job")
    spark.add_argument("--on-spark", action="store_true",
                       help="run the shards as a Spark job (mapInArrow): cases are generated and run "
                       "on the reference and the non-Spark engines in the executors, Spark-under-test "
                       "runs from the driver; verdicts and findings also land as Parquet under --out")
    target = spark.add_mutually_exclusive_group()
    target.add_argument("--spark-master", metavar="URL",
                        help="the Spark master for the job and for Spark-under-test (default: local[*])")
    target.add_argument("--spark-remote", metavar="sc://HOST:PORT",
                        help="a Spark Connect server: the job and Spark-under-test run there")
    format_option(p)
    from harness.cli.main import add_report_option

    add_report_option(p)
    p.set_defaults(command=cmd_fuzz)


def cmd_fuzz(args: argparse.Namespace) -> int:
    from harness.campaign.loop import CampaignConfig, run_campaign
    from harness.cli.main import _engine_list, check_report_option, engine_options, write_report
    from harness.results.read import read_results

    if args.jobs < 1:
        raise InvalidInput("must be at least 1", "--jobs")
    if args.cases is not None and args.cases < 0:
        raise InvalidInput("must not be negative", "--cases")
    if not 0 <= args.metamorphic_share <= 1:
        raise InvalidInput("must be between 0 and 1", "--metamorphic-share")
    if not 0 <= args.unbatched_share <= 1:
        raise InvalidInput("must be between 0 and 1", "--unbatched-share")
    if args.batch_size < 1:
        raise InvalidInput("must be at least 1", "--batch-size")
    if args.reruns < 0:
        raise InvalidInput("must not be negative", "--reruns")
    if args.spark_remote and not args.spark_remote.startswith("sc://"):
        raise InvalidInput(f"{args.spark_remote!r} is not a Spark Connect URL (sc://HOST:PORT)",
                           "--spark-remote")
    check_report_option(args)
    seed = args.seed
    if seed is None and args.resume and args.out is not None and (args.out / "campaign.json").exists():
        seed = json.loads((args.out / "campaign.json").read_text())["seed"]
    if seed is None:
        seed = int(time.time() * 1000) % 1_000_000_007
    out = args.out or Path("reports") / f"fuzz-{seed}"
    cases = args.cases if args.cases is not None or args.minutes is not None else 200
    engines = tuple(_engine_list(args.engines))
    config = CampaignConfig(
        seed=seed, engines=engines, out=out, cases=cases,
        minutes=args.minutes, jobs=args.jobs, resume=args.resume, reduce=args.reduce,
        reduce_seconds=args.reduce_seconds, timeout_seconds=args.timeout,
        metamorphic_share=args.metamorphic_share, batch_size=args.batch_size,
        unbatched_share=args.unbatched_share, reruns=args.reruns,
        engine_options=engine_options(args, list(engines)),
    )
    budget = f"{args.minutes:g} minutes" if args.minutes else f"{cases} cases"
    where = " as a Spark job" if args.on_spark else ""
    print(f"fuzz: seed {seed}, engines {','.join(engines)}, {budget}, out {out}{where}",
          file=sys.stderr)
    line = _ProgressLine(sys.stderr.isatty())
    try:
        if args.on_spark:
            from harness.campaign.spark_job import run_on_spark

            result = run_on_spark(config, args.spark_master, args.spark_remote, listener=line.update)
        else:
            result = run_campaign(config, listener=line.update)
    finally:
        line.clear()
    if args.format == "json":
        json.dump({"campaign": config.as_json(), "summary": result.summary,
                   "findings": result.findings}, sys.stdout, indent=2, default=str)
        print()
    else:
        print(format_summary(result.summary, result.findings))
    if args.report:  # a resumed campaign's earlier part is on disk alone: report the directory
        write_report([read_results(result.out)], args)
    return result.exit_code


class _ProgressLine:
    """One line, rewritten in place on a terminal; a line every 15 s in a log."""

    def __init__(self, tty: bool) -> None:
        self.tty = tty
        self.last = 0.0

    def update(self, progress, elapsed: float) -> None:
        now = time.monotonic()
        if now - self.last < (PROGRESS_EVERY_TTY if self.tty else PROGRESS_EVERY_LOG):
            return
        self.last = now
        text = progress_text(progress, elapsed)
        if self.tty:
            sys.stderr.write("\r\033[K" + text[:200])
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def clear(self) -> None:
        if self.tty:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


_SHORT = {"match": "ok", "mismatch": "x", "unsupported": "u", "error": "err", "type-mismatch": "tx",
          "crash": "crash", "timeout": "to", "suspect-reference": "sr", "inconclusive": "?"}


def progress_text(progress, elapsed: float) -> str:
    cases = len(progress.done)
    rate = cases / elapsed if elapsed > 0 else 0.0
    engines = []
    for engine, counts in progress.verdicts.items():
        parts = " ".join(f"{n}{_SHORT.get(v, v)}" for v, n in sorted(counts.items()))
        engines.append(f"{engine} {parts}")
    return f"{cases} cases {rate:.1f}/s | " + " | ".join(engines) + f" | findings {len(progress.findings)}"


def format_summary(summary: dict, findings: list[dict]) -> str:
    lines = [
        f"campaign seed {summary['seed']}: {summary['cases']} cases "
        f"({summary['cases_this_run']} this run, {summary['cases_per_s']}/s over "
        f"{summary['wall_seconds']} s)",
        "",
        "verdicts per engine:",
    ]
    verdict_names = sorted({v for counts in summary["verdicts"].values() for v in counts})
    width = max((len(e) for e in summary["verdicts"]), default=6) + 2
    columns = {v: max(len(v), 6) + 2 for v in verdict_names}  # each as wide as its name
    lines.append(" " * width + "".join(f"{v:>{columns[v]}}" for v in verdict_names) + f"{'cases/s':>10}")
    for engine, counts in summary["verdicts"].items():
        rate = summary["engine_cases_per_s"].get(engine)
        lines.append(f"{engine:<{width}}" + "".join(f"{counts.get(v, 0):>{columns[v]}}" for v in verdict_names)
                     + f"{rate if rate is not None else '-':>10}")
    cov = summary["coverage"]
    lines += ["", f"grid cells exercised: {cov['grid_cells_covered']} of {cov['grid_cells_defined']}"]
    if summary.get("metamorphic"):
        held = sum(n for k, n in summary["metamorphic"].items() if k.endswith(":holds"))
        total = sum(summary["metamorphic"].values())
        lines.append(f"metamorphic checks: {total} ({held} held)")
    lines += ["", f"findings: {len(findings)} distinct signatures"]
    for f in findings:
        reduced = f" -> {f['reduced_file']} ({f['reduced_rows']} rows)" if f.get("reduced_file") else ""
        lines.append(f"  [{f['classification']}] x{f['count']} {f['signature']}")
        lines.append(f"      {Path(summary['out']) / f['file']}{reduced}")
    lines.append(f"\ncampaign directory: {summary['out']}")
    return "\n".join(lines)


def add_reduce_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "reduce",
        help="shrink a finding (or any failing case) to a minimal case file",
        description="Rerun a case file, take its finding (the signature its `finding` record "
        "names, else the first the run shows), and shrink rows, columns, window expressions, "
        "frame bounds and values while that signature holds. Ends with a plain run on every "
        "engine and writes a case file ready for cases/regressions/. Exit 0 when reduced and "
        "confirmed, 1 when the case shows no finding (or the reduction is not confirmed), "
        "2 on bad input.",
    )
    p.add_argument("path", type=Path, metavar="FINDING", help="a case file (a finding or any case)")
    p.add_argument("--engines", help="engines to run (default: those in the finding record, "
                   "else all registered)")
    p.add_argument("--seconds", type=float, default=60.0, help="time budget (default: %(default)s)")
    p.add_argument("--out", type=Path, help="where to write (default: FINDING.reduced.yaml)")
    from harness.cli.main import add_postgres_options

    add_postgres_options(p)
    p.set_defaults(command=cmd_reduce)


def cmd_reduce(args: argparse.Namespace) -> int:
    from harness.cases.case import load_case
    from harness.cases.casefile import save_case
    from harness.cli.main import _engine_list, default_engines, engine_options
    from harness.engines.registry import get_engine
    from harness.findings.finding import finding_signature, findings_of, reduce_finding
    from harness.judge.runner import run_case

    if not args.path.is_file():
        raise InvalidInput("no such case file", str(args.path))
    case = load_case(args.path)
    record = case.finding or {}
    names = _engine_list(args.engines) if args.engines else list(record.get("engines") or default_engines(args))
    options = engine_options(args, names)
    engines = [get_engine(n, **options.get(n, {})) for n in names if n != "reference"]
    try:
        for engine in engines:
            engine.start()
        findings = findings_of(run_case(case, engines))
        if not findings:
            print(f"{args.path}: no finding on {', '.join(names)}; nothing to reduce", file=sys.stderr)
            return 1
        target = next((r for r in findings if finding_signature(case, r).key == record.get("key")),
                      findings[0])
        key = finding_signature(case, target).key
        at_fault = engines if target.engine == "reference" else [e for e in engines if e.name == target.engine]
        print(f"reducing {target.engine} {target.verdict.value}: {finding_signature(case, target).text}",
              file=sys.stderr)
        outcome = reduce_finding(case, key, at_fault, engines, args.seconds)
        versions = {e.name: e.version() for e in engines}
    finally:
        for engine in engines:
            engine.close()
    out = args.out or args.path.with_name(args.path.name.removesuffix(".yaml") + ".reduced.yaml")
    save_case(outcome.case, out, {**record, **outcome.record(args.path.name, versions), "key": key})
    before = sum(t.num_rows for t in case.tables.values())
    print(f"rows {before} -> {outcome.rows}, {outcome.reduction.attempts} attempts, "
          f"{outcome.seconds:.1f} s, confirmed: {'yes' if outcome.confirmed else 'NO'}")
    print(outcome.case.sql.strip())
    print(f"written: {out}")
    return 0 if outcome.confirmed else 1
