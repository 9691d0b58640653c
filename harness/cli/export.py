"""`window-harness export CASE --to FORMAT`: a case as a regression test in an
engine's own test format (the work: `findings.export`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from harness.cli.exit_codes import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_PASS
from harness.cli.options import ENGINE_PYTHON, POSTGRES, engine_list, engine_options
from harness.cli.streams import write_unescaped

if TYPE_CHECKING:
    from harness.cases.case import Case


def add_parser(sub: argparse._SubParsersAction) -> None:
    from harness.findings.export_formats import FORMATS  # the formats alone: no engine, no oracle

    p = sub.add_parser(
        "export",
        parents=[ENGINE_PYTHON, POSTGRES],
        help="write a case or finding as a regression test in an engine's own format, or as a bug report",
        description="Write the case as a test file for an engine's own suite: DataFusion's "
        "sqllogictest (slt) or DuckDB's .test. The expected rows are the reference's answer. "
        "With --engine-python ENGINE@LABEL=PATH (ENGINE the format's engine), the test is for "
        "that build: its release's dialect writes the SQL and gives the by-design choices, and "
        "its part of the finding record is quoted. "
        "With --check, the written file is then run record by record on the format's engine "
        "(the build, with --engine-python) and judged as the format's runner judges it. "
        "--to issue writes a Markdown bug report for --engine's tracker instead: versions, a "
        "reproduction in its own SQL, its actual output (run now) and the expected output, the "
        "reference's derivation of the first differing cell, the other engines' answers and the "
        "proposed regression test. "
        "Exit 0 when written (and, with --check, every record passed), 1 when a checked record "
        "failed, 2 on bad input or a case that cannot become a sound test (for an issue: the "
        "engine gives the reference's answer).",
    )
    p.add_argument("case", metavar="CASE", help="a case file")
    p.add_argument("--to", required=True, choices=[*sorted(FORMATS), ISSUE],
                   help="the test format, or `issue`: a bug report in Markdown")
    p.add_argument("--engine", default=None, metavar="E",
                   help="with --to issue: the engine the report is for (default: the finding's engine)")
    p.add_argument("--others", default=None, metavar="ENGINES",
                   help="with --to issue, for a case without a finding record naming other engines: "
                        "the engines to run for context (comma-separated; default: none)")
    p.add_argument("--out", default=None, metavar="FILE", help="write here (default: stdout)")
    p.add_argument("--allow-ambiguous", action="store_true",
                   help="export even when another order of tied rows gives another valid answer")
    p.add_argument("--check", action="store_true",
                   help="run the written test file on the format's engine, record by record, and say "
                        "what failed (not with --to issue)")
    p.set_defaults(command=cmd_export, engines=None)


ISSUE = "issue"


def cmd_export(args: argparse.Namespace) -> int:
    from harness.core.errors import InvalidInput
    from harness.findings.export import FORMATS, export_case
    from harness.findings.replay import load_one

    case = load_one(args.case)
    if args.to == ISSUE:
        if args.check:
            raise InvalidInput("--check runs a test file: not with --to issue", "--check")
        return _write(args.out, _issue(args, case))
    fmt = FORMATS[args.to]
    build = _build(args.engine_python, fmt.engine)
    file_name = Path(args.out).name if args.out else None
    text = export_case(case, fmt, source=args.case, file_name=file_name,
                       allow_ambiguous=args.allow_ambiguous, build=build)
    code = _write(args.out, text)
    if code == EXIT_PASS and args.check:
        return _check(text, fmt, args)
    return code


def _issue(args: argparse.Namespace, case: Case) -> str:
    from harness.core.errors import InvalidInput
    from harness.engines.registry import get_engine
    from harness.findings.issue import build_issue
    from harness.findings.issue_text import to_markdown

    name = args.engine or (case.finding or {}).get("engine")
    if not isinstance(name, str):
        raise InvalidInput("no finding record names the engine: give --engine E", "--engine")
    others = [n for n in engine_list(args.others) if n != name] if args.others else []
    options = engine_options(args, [name, *others])
    engines = [get_engine(n, **options.get(n, {})) for n in (name, *others)]
    try:
        return to_markdown(build_issue(case, engines[0], engines[1:], source=args.case))
    finally:
        for engine in engines:
            engine.close()


def _write(out: str | None, text: str) -> int:
    if out:
        from harness.results.lock import holding_file

        try:
            with holding_file(Path(out), "export"):
                Path(out).write_text(text, encoding="utf-8")
        except OSError as e:
            print(f"window-harness: error: --out {out}: {e.strerror}", file=sys.stderr)
            return EXIT_BAD_INPUT
        print(f"wrote {out}", file=sys.stderr)
    else:
        write_unescaped(sys.stdout, text)  # a test file, for a redirect: as it is
    return EXIT_PASS


def _check(text: str, fmt, args: argparse.Namespace) -> int:
    """Run the exported text on the format's engine (or the build); report on stderr."""
    import tempfile

    from harness.cli.options import engine_options
    from harness.engines.registry import get_engine
    from harness.findings.export_run import run_test_file

    name = args.engine_python[0].partition("=")[0].strip() if args.engine_python else fmt.engine
    options = engine_options(args, [name])
    engine = get_engine(name, **options.get(name, {}))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ("check" + fmt.suffix)
        path.write_text(text, encoding="utf-8")
        try:
            ran = run_test_file(path, fmt, engine)
            version = engine.version()
        finally:
            engine.close()
    for failure in ran.failures:
        print(f"check: {failure}", file=sys.stderr)
    verdict = "passed" if ran.passed else "FAILED"
    print(f"check on {name} {version}: {len(ran.records)} records, {verdict}", file=sys.stderr)
    return EXIT_PASS if ran.passed else EXIT_FAIL


def _build(values: list[str], engine: str):
    """The build --engine-python names (one ENGINE@LABEL of the format's engine),
    started once to learn its version and its release's dialect; None without."""
    from harness.cli.options import engine_options
    from harness.core.errors import InvalidInput
    from harness.engines.registry import engine_class, get_engine
    from harness.findings.export import Build

    if not values:
        return None
    if len(values) > 1:
        raise InvalidInput("give one build to export for", "--engine-python")
    name = values[0].partition("=")[0].strip()
    try:
        base = engine_class(name).shares_code_with or engine_class(name).name
    except InvalidInput:
        base = None
    if base is None or base.partition("@")[0].partition("[")[0] != engine:
        raise InvalidInput(f"{name!r} is not a build of {engine}, the engine of this format "
                           f"(e.g. {engine}@candidate)", "--engine-python")
    options = engine_options(argparse.Namespace(engine_python=values), [name])
    built = get_engine(name, **options.get(name, {}))
    try:
        built.start()
        return Build(built.name, options[name]["python"], built.version(), built.dialect)
    finally:
        built.close()
