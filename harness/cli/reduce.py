"""`window-harness reduce FINDING`: rerun a case, shrink its finding, write the reduction.

The work is in `findings.finding.reduce_finding`; this module runs the case
to pick the finding and prints the outcome.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.cli.exit_codes import EXIT_FAIL, EXIT_PASS
from harness.cli.options import (
    ENGINE_PYTHON,
    POSTGRES,
    check_out_file,
    default_engines,
    engine_list,
    engine_options,
    parent,
    positive_float,
)
from harness.core.errors import InvalidInput


def add_parser(sub: argparse._SubParsersAction) -> None:
    own = parent()  # its --engines defaults to the finding's engines, not ENGINES'
    own.add_argument("--engines", help="engines to run (default: those in the finding record, "
                     "else all registered)")
    own.add_argument("--seconds", type=positive_float, default=60.0,
                     help="time budget (default: %(default)s)")
    own.add_argument("--out", type=Path, help="where to write (default: FINDING.reduced.yaml)")
    p = sub.add_parser(
        "reduce",
        parents=[own, ENGINE_PYTHON, POSTGRES],
        help="shrink a finding (or any failing case) to a minimal case file",
        description="Rerun a case file, take its finding (the signature its `finding` record "
        "names, else the first the run shows), and shrink rows, columns, window expressions, "
        "frame bounds and values while that signature holds. Ends with a plain run on every "
        "engine and writes a case file ready for cases/regressions/. Exit 0 when reduced and "
        "confirmed, 1 when the case shows no finding (or the reduction is not confirmed), "
        "2 on bad input.",
    )
    p.add_argument("path", type=Path, metavar="FINDING", help="a case file (a finding or any case)")
    p.set_defaults(command=cmd_reduce)


def cmd_reduce(args: argparse.Namespace) -> int:
    from harness.results.lock import holding_file

    if not args.path.is_file():
        raise InvalidInput("no such case file", str(args.path))
    out = args.out or args.path.with_name(args.path.name.removesuffix(".yaml") + ".reduced.yaml")
    check_out_file(out)
    with holding_file(out, "reduce"):
        return _reduce(args, out)


def _reduce(args: argparse.Namespace, out: Path) -> int:
    from harness.cases.case import load_case
    from harness.cases.casefile import save_case
    from harness.engines.registry import get_engine
    from harness.findings.finding import finding_signature, findings_of, reduce_finding
    from harness.judge.runner import run_case

    case = load_case(args.path)
    record = case.finding or {}
    names = engine_list(args.engines) if args.engines else list(record.get("engines") or default_engines(args))
    options = engine_options(args, names)
    engines = [get_engine(n, **options.get(n, {})) for n in names if n != "reference"]
    try:
        for engine in engines:
            engine.start()
        findings = findings_of(run_case(case, engines))
        if not findings:
            print(f"{args.path}: no finding on {', '.join(names)}; nothing to reduce", file=sys.stderr)
            return EXIT_FAIL
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
    save_case(outcome.case, out, {**record, **outcome.record(args.path.name, versions), "key": key})
    before = sum(t.num_rows for t in case.tables.values())
    print(f"rows {before} -> {outcome.rows}, {outcome.reduction.attempts} attempts, "
          f"{outcome.seconds:.1f} s, confirmed: {'yes' if outcome.confirmed else 'NO'}")
    print(outcome.case.sql.strip())
    print(f"written: {out}")
    return EXIT_PASS if outcome.confirmed else EXIT_FAIL
