"""`window-harness engines`: the registered engines, their versions and profiles;
with --engine-python, what another environment's build of an engine offers."""

from __future__ import annotations

import argparse

from harness.cli.exit_codes import EXIT_PASS
from harness.cli.options import ENGINE_PYTHON, engine_options
from harness.core.errors import EngineUnavailable


def add_parser(sub: argparse._SubParsersAction) -> None:
    engines = sub.add_parser(
        "engines", parents=[ENGINE_PYTHON],
        help="list the registered engines and their versions",
        description="List the registered engines, their versions and profiles. With "
        "--engine-python ENGINE@LABEL=PATH, start that build too and report its version and "
        "what its release lacks beside the current one (the dialect it is judged by).")
    engines.set_defaults(command=cmd_engines)


def cmd_engines(args: argparse.Namespace) -> int:
    from harness.engines.registry import engine_names, get_engine, profile_entries

    labelled = [value.partition("=")[0].strip() for value in args.engine_python]
    options = engine_options(args, labelled)  # bad input fails before anything starts
    for name in engine_names():
        try:
            engine = get_engine(name)
            print(f"{name:12} {engine.version()}")
        except EngineUnavailable as e:
            print(f"{name:12} unavailable: {e.reason}")  # the name once, not again in the message
    for name in labelled:
        _report_build(name, options.get(name, {}))
    entries = [e for e in profile_entries() if e.spec != e.engine]
    if entries:
        print("\nprofiles (--engines ENGINE[PROFILE,...]; each is its own column):")
        width = max(len(e.spec) for e in entries)
        for entry in entries:
            print(f"  {entry.spec:<{width}}  {entry.description}")
    return EXIT_PASS


def _report_build(name: str, options: dict) -> None:
    """Start `name` (an ENGINE@LABEL) and print its version and the release rows
    of its dialect that hold for it. EngineUnavailable goes up: exit 2 naming it."""
    from harness.engines.registry import engine_class, get_engine

    engine = get_engine(name, **options)
    try:
        engine.start()
        version = engine.version()
        released = engine_class(name).dialect
        print(f"\n{name} {version} (interpreter {options.get('python')})")
        for what, how in engine.probed().items():
            print(f"  {what}: {how}")
        rows = released.releases_for(version)
        if not rows:
            print("  judged as the current release: its dialect's tables hold for this version")
        for row in rows:
            lacks = sorted([f.value for f in row.lacks] + [f"function.{n}" for n in row.missing_functions]
                           + [f"window.{n}-moving-frame" for n in row.no_moving_frame_start])
            changes = [f"{k}={_shown(v)}" for k, v in row.semantics.items()]
            print(f"  releases {row.versions}: " + "; ".join(
                part for part in (f"lacks {', '.join(lacks)}" if lacks else "",
                                  f"semantics {', '.join(changes)}" if changes else "",
                                  f"not implemented when it says {', '.join(map(repr, row.not_implemented))}"
                                  if row.not_implemented else "") if part))
            print(f"    measured: {row.measured}")
    finally:
        engine.close()


def _shown(value: object) -> str:
    if hasattr(value, "nulls_first_asc"):  # a NullOrdering
        first = {(True, True): "always first", (False, False): "always last",
                 (False, True): "last for ASC, first for DESC", (True, False): "first for ASC, last for DESC"}
        return "NULLs " + first[(value.nulls_first_asc, value.nulls_first_desc)]
    return str(getattr(value, "value", value))
