"""`window-harness export CASE --to FORMAT`: a case as a regression test in an
engine's own test format (the work: `findings.export`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.cli.exit_codes import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_PASS
from harness.cli.options import ENGINE_PYTHON
from harness.cli.streams import write_unescaped


def add_parser(sub: argparse._SubParsersAction) -> None:
    from harness.findings.export_formats import FORMATS  # the formats alone: no engine, no oracle

    p = sub.add_parser(
        "export",
        parents=[ENGINE_PYTHON],
        help="write a case or finding as a regression test in an engine's own format",
        description="Write the case as a test file for an engine's own suite: DataFusion's "
        "sqllogictest (slt) or DuckDB's .test. The expected rows are the reference's answer. "
        "With --engine-python ENGINE@LABEL=PATH (ENGINE the format's engine), the test is for "
        "that build: its release's dialect writes the SQL and gives the by-design choices, and "
        "its part of the finding record is quoted. "
        "With --check, the written file is then run record by record on the format's engine "
        "(the build, with --engine-python) and judged as the format's runner judges it. "
        "Exit 0 when written (and, with --check, every record passed), 1 when a checked record "
        "failed, 2 on bad input or a case that cannot become a sound test.",
    )
    p.add_argument("case", metavar="CASE", help="a case file")
    p.add_argument("--to", required=True, choices=sorted(FORMATS), help="the test format")
    p.add_argument("--out", default=None, metavar="FILE", help="write here (default: stdout)")
    p.add_argument("--allow-ambiguous", action="store_true",
                   help="export even when another order of tied rows gives another valid answer")
    p.add_argument("--check", action="store_true",
                   help="run the written file on the format's engine, record by record, and say what failed")
    p.set_defaults(command=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    from harness.findings.export import FORMATS, export_case
    from harness.findings.replay import load_one

    case = load_one(args.case)
    fmt = FORMATS[args.to]
    build = _build(args.engine_python, fmt.engine)
    file_name = Path(args.out).name if args.out else None
    text = export_case(case, fmt, source=args.case, file_name=file_name,
                       allow_ambiguous=args.allow_ambiguous, build=build)
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as e:
            print(f"window-harness: error: --out {args.out}: {e.strerror}", file=sys.stderr)
            return EXIT_BAD_INPUT
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        write_unescaped(sys.stdout, text)  # a test file, for a redirect: as it is
    if args.check:
        return _check(text, fmt, args)
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
