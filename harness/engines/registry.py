"""The one place engines are registered: name -> "module:Class".

Modules are imported only when an engine is asked for, so `import harness`
never imports pyspark (or starts a JVM). Adding an engine is one line here,
plus its dialect module and its engine module.

An engine may be asked for under profiles (`harness.engines.profiles`; each
engine's table in its package, gathered in `PROFILES` below):
`spark[aqe-off]`, `datafusion[partitions=2,batch_size=1]`. Its class is then
a subclass of the engine's own, made once per spec, whose `name` is the
canonical spec and whose `shares_code_with` is the base engine, so that
class-level questions (dialect, name, implementation) are answered without
constructing anything (`IsolatedEngine` asks them in the parent process).

A spec with a label, `duckdb@candidate` or `duckdb[threads=1]@candidate`, is
that engine run by another Python environment (`harness.engines.remote`):
its class is a `RemoteEngine` made once per spec, named as the spec, with
the unlabelled spec's dialect and profiles, and sharing its code with the
base engine (the released and the candidate build are one implementation
when engines outvote the reference). Constructing it needs `python=`.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from typing import Any

from harness.core.dialect import Dialect
from harness.core.errors import InvalidInput
from harness.engines.base import Engine
from harness.engines.datafusion.profiles import PROFILES as DATAFUSION_PROFILES
from harness.engines.duckdb.profiles import PROFILES as DUCKDB_PROFILES
from harness.engines.profiles import (
    DEFAULT,
    ONLY_DEFAULT,
    EngineSpec,
    ProfileTable,
    canonical,
    merge_options,
    parse_spec,
    profile_options,
)
from harness.engines.remote import RemoteEngine
from harness.engines.spark.profiles import PROFILES as SPARK_PROFILES

ENGINES: dict[str, str] = {
    "reference": "harness.engines.reference:ReferenceEngine",
    "duckdb": "harness.engines.duckdb.adapter:DuckDBEngine",
    "datafusion": "harness.engines.datafusion.adapter:DataFusionEngine",
    "spark": "harness.engines.spark.adapter:SparkEngine",
    "sqlite": "harness.engines.sqlite.adapter:SQLiteEngine",
    "postgres": "harness.engines.postgres.adapter:PostgresEngine",
}

# Each engine's profiles (`harness.engines.<name>.profiles`; data only, so
# importing them imports no engine library). An engine not listed runs
# under its own settings only.
PROFILES: dict[str, ProfileTable] = {
    "duckdb": DUCKDB_PROFILES,
    "datafusion": DATAFUSION_PROFILES,
    "spark": SPARK_PROFILES,
}


def engine_names() -> list[str]:
    return list(ENGINES)


def engine_class(name: str) -> type[Engine]:
    """The adapter class for `name`, a registered engine with optional profiles
    (`spark[aqe-off]`); imports its module, starts nothing.

    The deliberately faulty engines of `harness.engines.duckdb.faulty` are found by
    name too, but are not registered: no listing and no default run has them.
    """
    spec = parse_spec(name)
    base = _base_class(spec.base)
    spec = canonical(spec, profiles_of(_implementation(base)))
    cls = _profiled(base, spec.profiles) if spec.profiles else base
    return _labelled(cls, spec.label) if spec.label is not None else cls


def _base_class(name: str) -> type[Engine]:
    if name not in ENGINES:
        from harness.engines.duckdb.faults import FAULTY

        if name in FAULTY:
            return FAULTY[name]
        known = ", ".join(ENGINES)
        raise InvalidInput(f"unknown engine {name!r} (known: {known})", "engine")
    module, _, attr = ENGINES[name].partition(":")
    return getattr(importlib.import_module(module), attr)


def _implementation(cls: type[Engine]) -> str:
    return cls.shares_code_with or cls.name


@functools.cache
def _profiled(base: type[Engine], profiles: tuple[str, ...]) -> type[Engine]:
    """`base` under `profiles`: their options merge with the constructor's own."""
    implementation = _implementation(base)
    spec = EngineSpec(base.name, profiles)
    defaults = profile_options(spec, profiles_of(implementation))

    def __init__(self: Engine, **options: Any) -> None:
        base.__init__(self, **merge_options(defaults, options, f"an option of {spec.name!r}"))

    return type(f"{base.__name__}[{','.join(profiles)}]", (base,), {
        "__init__": __init__,
        "__module__": base.__module__,
        "__doc__": f"{base.__name__} under the profile(s) {', '.join(profiles)}.",
        "name": spec.name,
        "shares_code_with": implementation,
        "profiles": profiles,
    })


@functools.cache
def _labelled(cls: type[Engine], label: str) -> type[Engine]:
    """`cls` run by another Python: answers class-level questions as `cls` does,
    under its own name `{cls.name}@{label}`."""
    if cls.is_reference:
        raise InvalidInput(f"{cls.name!r} is the oracle and runs in the harness's own process; "
                           f"it takes no @{label}", "engine")
    if cls.render is not Engine.render:
        # The child gets SQL text: an adapter that renders its own way (the
        # faulty engines' planted rewrites) would lose that in the parent.
        raise InvalidInput(f"{cls.name!r} renders queries its own way, which another "
                           f"Python environment cannot do; it takes no @{label}", "engine")
    return type(f"{cls.__name__}@{label}", (RemoteEngine,), {
        "__module__": RemoteEngine.__module__,
        "__doc__": f"{cls.__name__} run by another Python environment, labelled {label!r}.",
        "name": f"{cls.name}@{label}",
        "dialect": cls.dialect,
        "shares_code_with": _implementation(cls),
        "profiles": cls.profiles,
        # Spark-under-test gets --spark-master / --spark-remote (its child passes it to its own Spark).
        "runs_on_spark": cls.runs_on_spark,
        "needs_server": cls.needs_server,
        "target": cls.name,
    })


def label_of(name: str) -> str | None:
    """The label of a spec (`duckdb@candidate` -> `candidate`), None without one;
    syntax only, so it needs no engine library."""
    return parse_spec(name).label


def canonical_name(name: str) -> str:
    """`name` as results show it: `spark[default]` -> `spark`, profiles in table order,
    the label kept (`duckdb[default]@candidate` -> `duckdb@candidate`)."""
    return engine_class(name).name


def get_engine(name: str, **options: Any) -> Engine:
    """A new adapter for `name`; `options` go to its constructor (e.g. Spark's
    master) and merge with its profiles' options (a `config` key by key). A
    labelled spec also takes `python` (the other environment's interpreter,
    required) and `timeout` (seconds per query); see `harness.engines.remote`.

    Raises EngineUnavailable when the engine's library or runtime is missing.
    """
    return engine_class(name)(**options)


def get_dialect(name: str) -> Dialect:
    """The dialect an engine speaks, without starting (or even importing) the engine."""
    return engine_class(name).dialect


# -- profiles -------------------------------------------------------------------------


def profiles_of(implementation: str) -> ProfileTable:
    """The profile table of an engine (by its implementation: a faulty DuckDB
    runs under DuckDB's profiles)."""
    return PROFILES.get(implementation, ONLY_DEFAULT)


def profile_names(base: str) -> list[str]:
    """The profiles `base` (a registered or faulty engine) can run under, `default` first."""
    return list(profiles_of(_implementation(_base_class(base))))


@dataclass(frozen=True)
class ProfileEntry:
    """One engine under one profile: the spec users type, and what it does."""

    spec: str  # `duckdb[threads=1]`; the default profile is the bare engine name
    engine: str
    profile: str
    description: str


def profile_entries() -> list[ProfileEntry]:
    """Every registered engine under each of its profiles (for `window-harness engines`)."""
    entries = []
    for engine in engine_names():  # a registered engine is its own implementation
        for profile, p in profiles_of(engine).items():
            spec = EngineSpec(engine, () if profile == DEFAULT else (profile,)).name
            entries.append(ProfileEntry(spec, engine, profile, p.description))
    return entries


def tolerated_errors(name: str) -> tuple[str, ...]:
    """Error messages (substrings) `name`'s profiles raise by design (see Profile)."""
    cls = engine_class(name)
    table = profiles_of(_implementation(cls))
    return tuple(m for p in cls.profiles for m in table[p].tolerated_errors)
