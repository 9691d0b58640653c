"""How much of the window SQL people write the harness can read, and what the
reference makes of it.

The corpus: tests/fixtures/realistic_sql/, queries written in the styles of
PostgreSQL, DuckDB, DataFusion and Spark users (one file per style, each query
after a `-- name: <slug>` line, ended by `;`), over the tables of tables.yaml
(the `tables:` format of a case file).

For each query: parse it with the canonical parser (`harness.sql.parse`);
when it parses, evaluate it on the reference (`reference_impl.evaluate`, the
plain query) and run it through the harness's own path for a case
(`harness.judge.runner.run_case`: instrumenter, reference as oracle), and with
`--engines` on those engines too. Prints, per style and in total, how many
parse and the outcome counts; a reference outcome that is not the harness's
own error (a crash) is a defect and is listed with its query.

    .venv/bin/python bench/realistic_sql.py                 # counts
    .venv/bin/python bench/realistic_sql.py --verbose       # + parse errors by message, crashes
    .venv/bin/python bench/realistic_sql.py --json          # one JSON object
    .venv/bin/python bench/realistic_sql.py --engines duckdb,datafusion
    .venv/bin/python bench/realistic_sql.py --limit 5        # the first 5 queries of each style

It also times each step (CPU time of this process, steadier on a shared
machine than wall time; an engine in a process of its own, Spark's JVM or
PostgreSQL, is not in it): the parse, the plain evaluation on the
reference and the case through `run_case`. The baseline is the naive way
of answering a query, the plain evaluation on the reference; the ratio is
the time of the harness's path for a case (instrumenting, the reference as
oracle, judging; the engines of `--engines` too) over it, both summed over
the queries that parse. Both run in the same loop, so a loaded or a fast
machine leaves the ratio about where it is.

To measure another checkout (the code before a change, say), put it first on
PYTHONPATH: `PYTHONPATH=/path/to/checkout .venv/bin/python bench/realistic_sql.py`;
the corpus is read from this file's tree unless `--fixtures DIR` says
otherwise. Only APIs that exist since before issue 16 are used.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "realistic_sql"
sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/calibration.py
from calibration import baseline_json  # noqa: E402

STYLES = ("postgres", "duckdb", "datafusion", "spark")
_NAME = re.compile(r"^--\s*name:\s*(\S+)\s*$")
# A parse error reads "line:column: message"; the position differs per query.
_POSITION = re.compile(r"^(?:.*?: )?\d+:\d+: ")


@dataclass(frozen=True)
class RealisticQuery:
    style: str
    name: str
    sql: str


@dataclass
class Outcome:
    """What happened to one query at each step; None where the step did not run."""

    query: RealisticQuery
    parse_error: str | None = None
    reference: str | None = None  # answered / ReferenceGap / EvaluationError / ... / crash
    reference_detail: str = ""
    harness: str | None = None  # the reference's verdict through run_case, or crash
    harness_detail: str = ""
    engines: dict[str, tuple[str, str]] = field(default_factory=dict)  # engine -> (verdict, detail)
    seconds: dict[str, float] = field(default_factory=dict)  # step -> CPU seconds


def read_queries(path: Path, style: str) -> list[RealisticQuery]:
    """The queries of one style file: each after its `-- name:` line, up to `;`.

    Other comment lines (a description) are kept out of the SQL."""
    queries, name, lines = [], None, []
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _NAME.match(line)
        if match:
            if name is not None:
                raise ValueError(f"{path}: query {name!r} has no terminating ';'")
            name, lines = match.group(1), []
            continue
        if name is None or (line.lstrip().startswith("--") and not lines):
            continue
        lines.append(line)
        if line.rstrip().endswith(";"):
            sql = "\n".join(lines).rstrip().removesuffix(";").strip()
            queries.append(RealisticQuery(style, name, sql))
            name = None
    if name is not None:
        raise ValueError(f"{path}: query {name!r} has no terminating ';'")
    return queries


def load_queries(fixtures: Path = FIXTURES) -> list[RealisticQuery]:
    return [q for style in STYLES for q in read_queries(fixtures / f"{style}.sql", style)]


def load_tables(fixtures: Path = FIXTURES):
    """(schemas, arrow tables) of tables.yaml, read by the case loader."""
    from harness.cases.tables import load_tables as load

    path = fixtures / "tables.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    return load(doc["tables"], str(path))


def parse_message(error: Exception) -> str:
    """A parse error without its position, so that equal causes group together."""
    return _POSITION.sub("", str(error).splitlines()[0] if str(error) else type(error).__name__)


def reference_outcome(query, tables) -> tuple[str, str]:
    """The plain query on the reference: answered, or which error it raised.

    Anything but the harness's own errors is a crash (a defect)."""
    from harness.core.errors import EvaluationError, HarnessError, InvalidQuery, ReferenceGap
    from reference_impl import evaluate

    try:
        evaluate(query, tables)
    except (ReferenceGap, EvaluationError, InvalidQuery) as e:
        return _base_name(e), str(e)
    except HarnessError as e:
        return f"other HarnessError ({type(e).__name__})", str(e)
    except Exception as e:  # noqa: BLE001 (a crash is what this step looks for)
        return "crash", _crash_text(e)
    return "answered", ""


def _base_name(e: Exception) -> str:
    from harness.core.errors import EvaluationError, InvalidQuery, ReferenceGap

    for base in (ReferenceGap, EvaluationError, InvalidQuery):
        if isinstance(e, base):
            return base.__name__
    return type(e).__name__


def _crash_text(e: BaseException) -> str:
    frame = traceback.extract_tb(e.__traceback__)[-1] if e.__traceback__ else None
    where = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    return f"{type(e).__name__}: {e}{where}"


def harness_outcomes(case, engines) -> dict[str, tuple[str, str]]:
    """The case through the harness's path (instrumenter, reference as oracle,
    each engine judged): verdict and detail per engine, or a crash for all."""
    from harness.judge.runner import run_case

    try:
        results = run_case(case, engines)
    except Exception as e:  # noqa: BLE001 (a crash is what this step looks for)
        from harness.core.errors import HarnessError

        label = f"error ({type(e).__name__})" if isinstance(e, HarnessError) else "crash"
        return {engine.name: (label, _crash_text(e)) for engine in engines}
    return {r.engine: (r.verdict.value, r.detail) for r in results}


def make_case(q: RealisticQuery, query, schemas, tables):
    from harness.cases.case import Case

    # A case with a `finding` and no expected rows: the reference is the oracle.
    return Case(id=f"{q.style}/{q.name}", description=q.name, tags=(q.style,), schemas=schemas,
                tables=tables, sql=q.sql, query=query, finding={})


def measure(queries: Sequence[RealisticQuery], schemas, tables, engines: Sequence = ()) -> list[Outcome]:
    from harness.engines.registry import get_engine
    from harness.sql import parse

    reference = get_engine("reference")
    outcomes = []
    for q in queries:
        out = Outcome(q)
        outcomes.append(out)
        t0 = time.process_time()
        try:
            query = parse(q.sql)
        except Exception as e:  # noqa: BLE001 (the parser's own error or a crash: both are reported)
            out.parse_error = parse_message(e) if _is_harness(e) else f"parser crash: {_crash_text(e)}"
            continue
        t1 = time.process_time()
        out.reference, out.reference_detail = reference_outcome(query, tables)
        t2 = time.process_time()
        verdicts = harness_outcomes(make_case(q, query, schemas, tables), [reference, *engines])
        t3 = time.process_time()
        out.seconds = {"parse": t1 - t0, "reference": t2 - t1, "run_case": t3 - t2}
        out.harness, out.harness_detail = verdicts.pop(reference.name)
        out.engines = verdicts
    return outcomes


def _is_harness(e: Exception) -> bool:
    from harness.core.errors import HarnessError

    return isinstance(e, HarnessError)


def summarize(outcomes: Iterable[Outcome]) -> dict:
    by_style: dict[str, dict] = {}
    outcomes = list(outcomes)
    for style in (*STYLES, "total"):
        mine = [o for o in outcomes if style in ("total", o.query.style)]
        parsed = [o for o in mine if o.parse_error is None]
        engines: dict[str, Counter] = defaultdict(Counter)
        for o in parsed:
            for name, (verdict, _) in o.engines.items():
                engines[name][verdict] += 1
        by_style[style] = {
            "queries": len(mine),
            "parsed": len(parsed),
            "parsed_share": round(len(parsed) / len(mine), 3) if mine else 0.0,
            "reference": dict(Counter(o.reference for o in parsed).most_common()),
            "harness_reference_verdict": dict(Counter(o.harness for o in parsed).most_common()),
            "engines": {name: dict(c.most_common()) for name, c in engines.items()},
        }
    errors: dict[str, list[str]] = defaultdict(list)
    for o in outcomes:
        if o.parse_error is not None:
            errors[o.parse_error].append(f"{o.query.style}/{o.query.name}")
    crashes = [
        {"query": f"{o.query.style}/{o.query.name}", "step": step, "detail": detail, "sql": o.query.sql}
        for o in outcomes
        for step, label, detail in (("reference", o.reference, o.reference_detail),
                                    ("harness", o.harness, o.harness_detail),
                                    ("parse", "crash" if (o.parse_error or "").startswith("parser crash")
                                     else None, o.parse_error or ""))
        if label == "crash"
    ]
    parsed = [o for o in outcomes if o.seconds]
    steps = {step: sum(o.seconds[step] for o in parsed) for step in ("parse", "reference", "run_case")}
    ms = {step: 1000 * total / max(1, len(parsed)) for step, total in steps.items()}
    ratio = steps["run_case"] / steps["reference"] if steps["reference"] > 0 else None
    return {
        "timing": {"queries_timed": len(parsed), "cpu_seconds": steps,
                   "cpu_ms_per_query": ms},
        **baseline_json("plain-reference", "the plain query evaluated on the reference "
                        "(reference_impl.evaluate), the naive way of answering it",
                        ms["reference"], "CPU ms per query", ratio,
                        "the harness's path for a case (run_case) over the plain evaluation, "
                        "CPU time summed over the queries that parse"),
        "styles": by_style,
        "parse_errors": [{"message": m, "count": len(qs), "queries": qs}
                         for m, qs in sorted(errors.items(), key=lambda kv: (-len(kv[1]), kv[0]))],
        "crashes": crashes,
        "gaps": [{"query": f"{o.query.style}/{o.query.name}", "outcome": o.reference, "detail": o.reference_detail}
                 for o in outcomes if o.reference not in (None, "answered", "crash")],
        "engine_verdicts": [{"query": f"{o.query.style}/{o.query.name}", "engine": name, "verdict": verdict,
                             "detail": detail}
                            for o in outcomes for name, (verdict, detail) in o.engines.items()
                            if verdict not in ("match", "unsupported")],
    }


def print_report(summary: dict, verbose: bool, top: int) -> None:
    print(f"{'style':<11} {'parsed':>12}  reference (plain query) | reference verdict via run_case")
    for style, s in summary["styles"].items():
        counts = ", ".join(f"{k} {v}" for k, v in s["reference"].items()) or "-"
        verdicts = ", ".join(f"{k} {v}" for k, v in s["harness_reference_verdict"].items()) or "-"
        print(f"{style:<11} {s['parsed']:>4}/{s['queries']:<4} {100 * s['parsed_share']:5.1f}%  {counts} | {verdicts}")
        for name, c in s["engines"].items():
            print(f"{'':<30}{name}: " + ", ".join(f"{k} {v}" for k, v in c.items()))
    t = summary["timing"]["cpu_ms_per_query"]
    ratio = summary["ratio"]
    print(f"\nCPU per query ({summary['timing']['queries_timed']} that parse): parse {t['parse']:.1f} ms, "
          f"plain evaluation on the reference (the baseline) {t['reference']:.1f} ms, run_case "
          f"{t['run_case']:.1f} ms; ratio {'-' if ratio is None else f'{ratio:.1f}'} (run_case / plain)")
    print(f"\ncrashes (non-harness exceptions): {len(summary['crashes'])}")
    for c in summary["crashes"]:
        print(f"  {c['query']} [{c['step']}]: {c['detail']}")
        if verbose:
            print("    " + c["sql"].replace("\n", "\n    "))
    if verbose:
        print(f"\nfirst parse error per query, top {top} messages:")
        for e in summary["parse_errors"][:top]:
            print(f"  {e['count']:>3}  {e['message']}")
            print(f"       {', '.join(e['queries'][:6])}{' ...' if e['count'] > 6 else ''}")
        print("\nreference errors on parsed queries:")
        for g in summary["gaps"]:
            print(f"  {g['query']}: {g['outcome']}: {g['detail'][:160]}")
        if summary["engine_verdicts"]:
            print("\nengine verdicts other than match and unsupported:")
        for v in summary["engine_verdicts"]:
            print(f"  {v['query']} {v['engine']}: {v['verdict']}: {v['detail'][:160]}")


def start_engines(names: str, postgres_local: bool = False) -> list:
    from harness.engines.registry import get_engine

    engines = [get_engine(n, local=True) if postgres_local and n == "postgres" else get_engine(n)
               for n in (n.strip() for n in names.split(",")) if n]
    for e in engines:
        e.start()
    return engines


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fixtures", type=Path, default=FIXTURES, help="the corpus folder")
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    ap.add_argument("--verbose", action="store_true", help="parse errors by message, reference errors")
    ap.add_argument("--top", type=int, default=15, help="how many parse-error messages --verbose lists")
    ap.add_argument("--engines", default="", help="also run the parsed queries on these engines, e.g. duckdb,datafusion")
    ap.add_argument("--postgres-local", action="store_true",
                    help="the postgres engine on its own throwaway local server")
    ap.add_argument("--limit", type=int, default=None, help="only the first N queries of each style")
    args = ap.parse_args(argv)
    queries = load_queries(args.fixtures)
    if args.limit is not None:
        queries = [q for style in STYLES for q in [q for q in queries if q.style == style][:args.limit]]
    schemas, tables = load_tables(args.fixtures)
    engines = start_engines(args.engines, args.postgres_local)
    try:
        summary = summarize(measure(queries, schemas, tables, engines))
    finally:
        for e in engines:
            e.close()
    import harness

    summary["harness"] = {"version": harness.__version__, "path": str(Path(harness.__file__).parent.parent)}
    if args.json:
        json.dump(summary, sys.stdout, indent=1, default=str)
        print()
    else:
        print(f"harness from {summary['harness']['path']}")
        print_report(summary, args.verbose, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
