"""`window-harness export CASE --to FORMAT`: a case as a regression test in an
engine's own test format (the work: `findings.export`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.cli.exit_codes import EXIT_BAD_INPUT, EXIT_PASS
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
        "Exit 0 when written, 2 on bad input or a case that cannot become a sound test.",
    )
    p.add_argument("case", metavar="CASE", help="a case file")
    p.add_argument("--to", required=True, choices=sorted(FORMATS), help="the test format")
    p.add_argument("--out", default=None, metavar="FILE", help="write here (default: stdout)")
    p.add_argument("--allow-ambiguous", action="store_true",
                   help="export even when another order of tied rows gives another valid answer")
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
    return EXIT_PASS


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
