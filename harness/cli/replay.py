"""`window-harness replay CASE`: rerun one case file and show each engine's SQL,
answer and diff against the reference (the work: `findings.replay`)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from harness.cases.case import Case
from harness.cli.exit_codes import EXIT_FAIL, EXIT_PASS
from harness.cli.options import (
    ENGINE_PYTHON,
    FORMAT,
    POSTGRES,
    default_engines,
    engine_options,
    parent,
)
from harness.core.errors import InvalidInput

_REFERENCE = "reference"


def add_parser(sub: argparse._SubParsersAction) -> None:
    own = parent()  # its --engines defaults to the finding's engines, not ENGINES'
    own.add_argument("--engines", default=None,
                     help="comma-separated engines (default: the reference and the engines the "
                          "finding record names, an ENGINE@LABEL among them when --engine-python "
                          "names it, else every registered engine)")
    p = sub.add_parser(
        "replay",
        parents=[own, ENGINE_PYTHON, FORMAT, POSTGRES],
        help="rerun one case or finding file and show each engine's SQL, answer and diff",
        description="Rerun a case file (a corpus case or a finding) and print, per engine, "
        "its verdict, the SQL it ran, its answer and a diff against the reference. "
        "Exit 0 when every verdict is match or unsupported, 1 otherwise, 2 on bad input.",
    )
    p.add_argument("case", metavar="CASE", help="a case file")
    p.set_defaults(command=cmd_replay)


def cmd_replay(args: argparse.Namespace) -> int:
    from harness.engines.registry import get_engine
    from harness.findings.replay import load_one, replay
    from harness.findings.replay_text import to_json, write_text

    case = load_one(args.case)
    names = replay_engines(args.engines, case, default_engines(args), args.engine_python)
    options = engine_options(args, names)
    engines = [get_engine(name, **options.get(name, {})) for name in names]
    try:
        rep = replay(case, engines)
    finally:
        for engine in engines:
            engine.close()
    if args.format == "json":
        json.dump(to_json(rep), sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        write_text(rep, sys.stdout)
    return EXIT_PASS if rep.passed else EXIT_FAIL


def replay_engines(text: str | None, case: Case, default: list[str],
                   engine_python: Sequence[str] = ()) -> list[str]:
    """`--engines`, else the reference and the finding's engines (an ENGINE@LABEL
    only when --engine-python names it), else `default`."""
    from harness.cli.options import engine_list
    from harness.engines.registry import engine_names, label_of
    from harness.findings.replay import finding_engines

    if text is not None:
        return engine_list(text)
    known = engine_names()
    given = {value.partition("=")[0].strip() for value in engine_python}
    named = [n for n in finding_engines(case.finding)
             if n in known or (_labelled(n, label_of) and n in given)]
    return list(dict.fromkeys([_REFERENCE, *named])) if named else default


def _labelled(name: str, label_of) -> bool:
    try:
        return label_of(name) is not None
    except InvalidInput:
        return False
