"""`window-harness fuzz`: options in, a campaign configuration out, its summary as text.

The work itself is in `campaign.loop` (and `campaign.spark_job` for
--on-spark); this module only turns options into a configuration and
results into text.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from harness.cli.options import (
    ENGINE_PYTHON,
    ENGINES,
    FORMAT,
    POSTGRES,
    REPORT,
    check_out_dir,
    engine_list,
    engine_options,
    non_negative_int,
    parent,
    positive_float,
    positive_int,
    share,
    usable_cores,
)
from harness.cli.progress import ProgressLine
from harness.cli.report import check_report_option, write_report
from harness.core import stages
from harness.core.errors import CannotWrite, InvalidInput
from harness.generate.cases import LARGE_SHARE


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fuzz",
        parents=[_budget(), ENGINES, ENGINE_PYTHON, POSTGRES, _campaign(), FORMAT, REPORT],
        help="run a fuzzing campaign: random cases on every engine, findings saved and reduced",
        description="Generate random schemas, data and window queries from a seed, run each "
        "case on the reference and the engines, and save every new finding (deduplicated by "
        "signature) as a case file with its reduction. Prints a live progress line and a "
        "summary. Exit 0 when there is no finding, 1 otherwise, 2 on bad input.",
    )
    # Not a parent: argparse (3.11) moves a parent's mutually exclusive group out of
    # its argument group, so --spark-master/--spark-remote would leave this section.
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
    p.set_defaults(command=cmd_fuzz)


def _budget() -> argparse.ArgumentParser:
    """The options listed before the engines: the budget and the seed."""
    p = parent()
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--minutes", type=positive_float, help="stop after this many minutes")
    budget.add_argument("--cases", type=non_negative_int,
                        help="stop after this many cases (default: 200)")
    p.add_argument("--seed", type=non_negative_int,
                   help="campaign seed (default: from the clock; printed)")
    return p


def _campaign() -> argparse.ArgumentParser:
    """The campaign's own options, listed after the engines'."""
    p = parent()
    p.add_argument("--jobs", type=positive_int,
                   help=f"shard processes, each with its own engines (default: the usable cores, "
                   f"{usable_cores()} here; with --resume, the campaign's own)")
    p.add_argument("--out", type=Path, help="campaign directory (default: reports/fuzz-SEED)")
    p.add_argument("--resume", action="store_true", help="continue the campaign in --out")
    p.add_argument("--no-reduce", dest="reduce", action="store_false",
                   help="save findings without reducing them")
    p.add_argument("--reduce-seconds", type=positive_float, default=60.0,
                   help="time budget per reduction (default: %(default)s)")
    p.add_argument("--timeout", type=positive_float, default=30.0,
                   help="seconds an engine may take per query before it is killed and restarted "
                   "(default: %(default)s)")
    p.add_argument("--metamorphic-share", type=share, default=0.4,
                   help="share of query shapes whose first case also gets metamorphic checks on each engine, "
                   "two relations per engine drawn from those that apply (default: %(default)s)")
    p.add_argument("--batch-size", type=positive_int, default=None,
                   help="sibling cases per query shape, run as one batched query per engine; "
                   "1 runs every case alone (default: chosen per shape, 1 to 200, as many as "
                   "cost together at most four times its batched query: more with Spark, few without)")
    p.add_argument("--unbatched-share", type=share, default=0.1,
                   help="share of query shapes whose second case runs alone all the same, since "
                   "batching changes the plan (default: %(default)s)")
    p.add_argument("--bare-share", type=share, default=0.15,
                   help="share of query shapes whose first case's bare query (as written, without the "
                   "harness's row id and witness columns) runs too, since instrumenting changes the plan; "
                   "the first case of a group with a finding runs it as well (default: %(default)s)")
    p.add_argument("--large-share", type=share, default=LARGE_SHARE,
                   help="share of case seeds drawn for batch-scale tables (5,000-50,000 rows); "
                   "about half are declined (joins, queries too costly for the reference) "
                   "(default: %(default)s)")
    p.add_argument("--profile-share", type=share, default=0.05,
                   help="share of query shapes (their first case) and batch-scale cases that also run "
                   "on a batch-changing profile of one engine (default: %(default)s)")
    p.add_argument("--thread-share", type=share, default=0.02,
                   help="share of query shapes (their first case) re-run on multi-threaded profiles, "
                   "answers compared run to run (half the batch-scale cases at least) (default: %(default)s)")
    p.add_argument("--profile", type=Path, metavar="FILE",
                   help="write where the campaign's wall time went, by stage (generation, reference, "
                   "each engine, judging, confirmations and re-runs, metamorphic checks, reduction, "
                   "writing...), to FILE as JSON, and print the table on stderr")
    p.add_argument("--reruns", type=non_negative_int, default=3,
                   help="identical re-runs of each finding; verdicts that change make it "
                   "nondeterministic (default: %(default)s)")
    return p


def cmd_fuzz(args: argparse.Namespace) -> int:
    from harness.campaign.loop import CampaignConfig, run_campaign
    from harness.results.read import read_results
    from harness.results.store import recorded_jobs, recorded_seed

    if args.spark_remote and not args.spark_remote.startswith("sc://"):
        raise InvalidInput(f"{args.spark_remote!r} is not a Spark Connect URL (sc://HOST:PORT)",
                           "--spark-remote")
    check_report_option(args)
    seed, jobs = args.seed, args.jobs
    if seed is None and args.resume and args.out is not None:
        seed = recorded_seed(args.out)
    if jobs is None and args.resume and args.out is not None:
        jobs = recorded_jobs(args.out)
    jobs = jobs or usable_cores()
    if seed is None:
        seed = int(time.time() * 1000) % 1_000_000_007
    out = args.out or Path("reports") / f"fuzz-{seed}"
    check_out_dir(out)
    cases = args.cases if args.cases is not None or args.minutes is not None else 200
    engines = tuple(engine_list(args.engines))
    config = CampaignConfig(
        seed=seed, engines=engines, out=out, cases=cases,
        minutes=args.minutes, jobs=jobs, resume=args.resume, reduce=args.reduce,
        reduce_seconds=args.reduce_seconds, timeout_seconds=args.timeout,
        metamorphic_share=args.metamorphic_share, batch_size=args.batch_size,
        unbatched_share=args.unbatched_share, bare_share=args.bare_share, reruns=args.reruns,
        large_share=args.large_share, profile_share=args.profile_share, thread_share=args.thread_share,
        engine_options=engine_options(args, list(engines)), profile=args.profile is not None,
    )
    budget = f"{args.minutes:g} minutes" if args.minutes else f"{cases} cases"
    where = " as a Spark job" if args.on_spark else ""
    print(f"fuzz: seed {seed}, engines {','.join(engines)}, {budget}, out {out}{where}",
          file=sys.stderr)
    line = ProgressLine()
    clock = stages.start() if args.profile is not None else None
    t0 = time.perf_counter()
    try:
        if args.on_spark:
            from harness.campaign.spark_job import run_on_spark

            result = run_on_spark(config, args.spark_master, args.spark_remote, listener=line.campaign)
        else:
            result = run_campaign(config, listener=line.campaign)
    finally:
        line.clear()
        if clock is not None:
            _write_profile(args.profile, stages.stop(), time.perf_counter() - t0, config)
    if args.format == "json":
        json.dump({"campaign": config.as_json(), "summary": result.summary,
                   "findings": result.findings}, sys.stdout, indent=2, default=str)
        print()
    else:
        print(format_summary(result.summary, result.findings))
    if args.report:  # a resumed campaign's earlier part is on disk alone: report the directory
        write_report([read_results(result.out)], args)
    return result.exit_code


def _write_profile(path: Path, clock: stages.Profile | None, wall: float, config) -> None:
    """The campaign's stage profile as JSON, its table on stderr. With several
    jobs the shards' seconds add up to more than the wall time."""
    if clock is None:
        return
    doc = {"wall_seconds": round(wall, 3), "jobs": config.jobs, "engines": list(config.engines),
           "seed": config.seed, **clock.as_json()}
    text = stages.table(doc, wall)
    try:
        path.write_text(json.dumps({**doc, "table": text.splitlines()}, indent=2) + "\n")
    except OSError as e:
        raise CannotWrite(f"cannot write the profile: {e.strerror}", str(path)) from None
    print(f"profile (seconds by stage{', summed over ' + str(config.jobs) + ' jobs' if config.jobs > 1 else ''}):\n"
          f"{text}\nprofile: {path}", file=sys.stderr)


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
    restricted = summary.get("restricted") or {}
    lines.append(" " * width + "".join(f"{v:>{columns[v]}}" for v in verdict_names) + f"{'cases/s':>10}"
                 + (f"{'restricted':>12}" if restricted else ""))
    for engine, counts in summary["verdicts"].items():
        rate = summary["engine_cases_per_s"].get(engine)
        lines.append(f"{engine:<{width}}" + "".join(f"{counts.get(v, 0):>{columns[v]}}" for v in verdict_names)
                     + f"{rate if rate is not None else '-':>10}"
                     + (f"{restricted.get(engine, 0):>12}" if restricted else ""))
    if restricted:
        lines.append("(restricted: verdicts, counted above, on the query without the items the engine "
                     "cannot write; see cases.jsonl `restricted`)")
    undecided = summary.get("inconclusive")
    if undecided:
        per_engine = ", ".join(f"{e} {v['share']:.2%}" for e, v in undecided["per_engine"].items())
        lines += ["", f"inconclusive: {undecided['count']} of {undecided['verdicts']} engine verdicts "
                      f"({undecided['share']:.2%}; {per_engine})"]
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
