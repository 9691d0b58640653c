"""The one place engines are registered: name -> "module:Class".

Modules are imported only when an engine is asked for, so `import harness`
never imports pyspark (or starts a JVM). Adding an engine is one line here,
plus its dialect module and its engine module.
"""

from __future__ import annotations

import importlib
from typing import Any

from harness.dialects.base import Dialect
from harness.engines.base import Engine
from harness.errors import InvalidInput

ENGINES: dict[str, str] = {
    "reference": "harness.engines.reference:ReferenceEngine",
    "duckdb": "harness.engines.duckdb:DuckDBEngine",
    "datafusion": "harness.engines.datafusion:DataFusionEngine",
    "spark": "harness.engines.spark:SparkEngine",
    "sqlite": "harness.engines.sqlite:SQLiteEngine",
}


def engine_names() -> list[str]:
    return list(ENGINES)


def engine_class(name: str) -> type[Engine]:
    """The adapter class registered under `name` (imports its module, starts nothing).

    The deliberately faulty engines of `harness.engines.faulty` are found by
    name too, but are not registered: no listing and no default run has them.
    """
    if name not in ENGINES:
        from harness.engines.faulty import FAULTY

        if name in FAULTY:
            return FAULTY[name]
        known = ", ".join(ENGINES)
        raise InvalidInput(f"unknown engine {name!r} (known: {known})", "engine")
    module, _, attr = ENGINES[name].partition(":")
    return getattr(importlib.import_module(module), attr)


def get_engine(name: str, **options: Any) -> Engine:
    """A new adapter for `name`; `options` go to its constructor (e.g. Spark's master).

    Raises EngineUnavailable when the engine's library or runtime is missing.
    """
    return engine_class(name)(**options)


def get_dialect(name: str) -> Dialect:
    """The dialect an engine speaks, without starting (or even importing) the engine."""
    return engine_class(name).dialect
