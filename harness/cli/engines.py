"""`window-harness engines`: the registered engines, their versions and profiles."""

from __future__ import annotations

import argparse

from harness.cli.exit_codes import EXIT_PASS
from harness.core.errors import EngineUnavailable


def add_parser(sub: argparse._SubParsersAction) -> None:
    engines = sub.add_parser("engines", help="list the registered engines and their versions")
    engines.set_defaults(command=cmd_engines)


def cmd_engines(args: argparse.Namespace) -> int:
    from harness.engines.registry import engine_names, get_engine, profile_entries

    for name in engine_names():
        try:
            engine = get_engine(name)
            print(f"{name:12} {engine.version()}")
        except EngineUnavailable as e:
            print(f"{name:12} unavailable: {e}")
    entries = [e for e in profile_entries() if e.spec != e.engine]
    if entries:
        print("\nprofiles (--engines ENGINE[PROFILE,...]; each is its own column):")
        width = max(len(e.spec) for e in entries)
        for entry in entries:
            print(f"  {entry.spec:<{width}}  {entry.description}")
    return EXIT_PASS
