"""Engine profiles: named configurations that steer an engine onto other physical operators.

A plan-dependent bug (a window operator that loses state across batches, a
join strategy that drops a row) shows only under the configuration that
picks the faulty operator. A profile is data: what it is for, and the
constructor options it gives the engine's adapter. Users write the profiles
after the engine's name, `spark[sort-merge-join]`,
`datafusion[partitions=2,batch_size=1]`; `harness.engines.registry` turns
such a spec into an adapter whose `name` is the spec (its own column in
every result) and whose implementation is still the base engine (profiles of
one engine are one opinion when engines outvote the reference).

A spec may end with a label, `duckdb@candidate`, `duckdb[threads=1]@candidate`
(LABEL: letters, digits, `_`, `.`, `-`): the same adapter under the same
profiles, run by another Python environment (`harness.engines.remote`), so
that a locally built engine is compared with the released one.

Each profile's description says what it was measured to change (Spark 4.3.0,
DataFusion 55, DuckDB 2.0); `tests/test_profiles.py` checks each one.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.core.errors import InvalidInput

DEFAULT = "default"


@dataclass(frozen=True)
class Profile:
    description: str
    # Constructor options of the adapter; a mapping (e.g. `config`) merges key by key.
    options: Mapping[str, Any] = field(default_factory=dict)
    # Messages (substrings) of errors the profile raises by design where the
    # plain engine answers, e.g. a small memory pool running out. A sibling
    # comparison does not count them as disagreements.
    tolerated_errors: tuple[str, ...] = ()


def _config(settings: Mapping[str, str], **options: Any) -> dict[str, Any]:
    return {"config": dict(settings), **options}


_NO_AQE = {"spark.sql.adaptive.enabled": "false"}

# DuckDB spills to `.tmp` under the working directory by default; keep its
# spill files out of whatever directory the harness was started in.
_DUCKDB_SPILL_DIR = str(Path(tempfile.gettempdir()) / "window-harness-duckdb-spill")

PROFILES: dict[str, dict[str, Profile]] = {
    "spark": {
        DEFAULT: Profile("Spark's own settings: AQE on; tables under 10 MB are broadcast in joins"),
        "aqe-off": Profile(
            "adaptive query execution off: the plan is fixed before running "
            "(no AdaptiveSparkPlan, no runtime join conversion or partition coalescing)",
            _config(_NO_AQE),
        ),
        "broadcast-join": Profile(
            "equi-joins as BroadcastHashJoin for tables up to 1 GB (AQE off, so the plan "
            "cannot change at runtime); FULL joins stay SortMergeJoin",
            _config({**_NO_AQE, "spark.sql.autoBroadcastJoinThreshold": "1g"}),
        ),
        "sort-merge-join": Profile(
            "equi-joins as SortMergeJoin: no broadcast (also none chosen by AQE at "
            "runtime), sort-merge preferred, AQE's shuffled-hash conversion off",
            _config({
                "spark.sql.autoBroadcastJoinThreshold": "-1",
                "spark.sql.adaptive.autoBroadcastJoinThreshold": "-1",
                "spark.sql.join.preferSortMergeJoin": "true",
                "spark.sql.adaptive.maxShuffledHashJoinLocalMapThreshold": "0",
            }),
        ),
        "shuffle-hash-join": Profile(
            "equi-joins as ShuffledHashJoin: no broadcast, and AQE turns each "
            "SortMergeJoin whose shuffle partitions fit 1 GB into a shuffled hash join "
            "(the planner's own switch, forceApplyShuffledHashJoin, is not a runtime conf)",
            _config({
                "spark.sql.autoBroadcastJoinThreshold": "-1",
                "spark.sql.adaptive.autoBroadcastJoinThreshold": "-1",
                "spark.sql.adaptive.maxShuffledHashJoinLocalMapThreshold": "1g",
            }),
        ),
        "window-spill": Profile(
            "the window operator's row buffer spills to disk after every row. Small "
            "partitions only: each spill file holds ~2 MB of reader buffers per frame "
            "iterator (SPARK-22987), so a partition of ~100 rows (~40 with several "
            "frames) exhausts the 1 GB driver heap and the JVM dies",
            _config({
                "spark.sql.windowExec.buffer.in.memory.threshold": "1",
                "spark.sql.windowExec.buffer.spill.threshold": "1",
            }),
        ),
        "window-buffer": Profile(
            "the window operator's row buffer moves from its in-memory array to the "
            "sorter-backed store after one row, without spilling (safe at any size)",
            _config({"spark.sql.windowExec.buffer.in.memory.threshold": "1"}),
        ),
        "codegen-off": Profile(
            "interpreted execution: no whole-stage code generation and no generated "
            "expression code (factoryMode NO_CODEGEN, 0 classes compiled per query)",
            _config({
                "spark.sql.codegen.wholeStage": "false",
                "spark.sql.codegen.factoryMode": "NO_CODEGEN",
            }),
        ),
    },
    "datafusion": {
        DEFAULT: Profile("DataFusion's own settings: target_partitions = the CPU count, batch_size 8192"),
        # DataFusion repartitions only an input with more rows than batch_size
        # (measured: 400 rows stay in one partition at batch_size 8192, 30 rows
        # are hash-repartitioned at batch_size 1): for small tables, combine
        # these with batch_size=1, as DataFusion's own tests do.
        "partitions=1": Profile(
            "one partition: no RepartitionExec, every window partition in one stream",
            _config({"datafusion.execution.target_partitions": "1"}),
        ),
        "partitions=2": Profile(
            "two partitions: window input hash-repartitioned by PARTITION BY "
            "(only inputs of more rows than batch_size)",
            _config({"datafusion.execution.target_partitions": "2"}),
        ),
        "partitions=4": Profile(
            "four partitions: window input hash-repartitioned by PARTITION BY "
            "(only inputs of more rows than batch_size)",
            _config({"datafusion.execution.target_partitions": "4"}),
        ),
        "batch_size=1": Profile(
            "one row per batch: the streaming window operator carries its state "
            "across a batch boundary at every row",
            _config({"datafusion.execution.batch_size": "1"}),
        ),
        "small-memory": Profile(
            "a 4 MB fair spill pool (sorts reserve 256 KB to spill), so sorts spill "
            "from some ten thousand rows; a query that needs more fails, by design",
            _config({"datafusion.execution.sort_spill_reservation_bytes": str(256 * 1024)},
                    memory_pool_bytes=4 * 1024 * 1024),
            tolerated_errors=("Resources exhausted",),
        ),
    },
    "duckdb": {
        DEFAULT: Profile("DuckDB's own settings: one thread per CPU, 80% of RAM"),
        "threads=1": Profile("one thread: no parallel window partitions or sort merges",
                             _config({"threads": "1"})),
        "threads=4": Profile("four threads, however many CPUs there are",
                             _config({"threads": "4"})),
        "small-memory": Profile(
            "a 64 MB memory limit (spilling to the system temp directory); a query "
            "that needs more fails, by design",
            _config({"memory_limit": "64MB", "temp_directory": _DUCKDB_SPILL_DIR}),
            tolerated_errors=("Out of Memory Error",),
        ),
    },
}

# An engine without a table of its own runs under its own settings only.
_ONLY_DEFAULT = {DEFAULT: Profile("the engine's own settings")}


def profiles_of(implementation: str) -> dict[str, Profile]:
    """The profile table of an engine (by its implementation: a faulty DuckDB
    runs under DuckDB's profiles)."""
    return PROFILES.get(implementation, _ONLY_DEFAULT)


@dataclass(frozen=True)
class EngineSpec:
    """An engine as users write it: `base`, `base[profile,profile...]`, either
    with `@label` (run by another Python environment)."""

    base: str
    profiles: tuple[str, ...] = ()
    label: str | None = None

    @property
    def name(self) -> str:
        name = f"{self.base}[{','.join(self.profiles)}]" if self.profiles else self.base
        return f"{name}@{self.label}" if self.label is not None else name


_SPEC = re.compile(r"([^\[\],@]+)(?:\[([^\[\]]*)\])?(?:@([A-Za-z0-9_.-]+))?")


def parse_spec(text: str) -> EngineSpec:
    """The syntax only; `canonical` checks the names against the engine's table."""
    match = _SPEC.fullmatch(text.strip())
    if match is None:
        raise InvalidInput(f"malformed engine {text!r} (expected NAME or NAME[PROFILE,...], "
                           "optionally followed by @LABEL of letters, digits, _ . -)", "engine")
    base, inner, label = match.group(1).strip(), match.group(2), match.group(3)
    if inner is None:
        return EngineSpec(base, (), label)
    names = tuple(p.strip() for p in inner.split(","))
    if not all(names):
        raise InvalidInput(f"an empty profile name in {text!r}", "engine")
    return EngineSpec(base, names, label)


def canonical(spec: EngineSpec, implementation: str) -> EngineSpec:
    """`spec` with its profiles checked, in the table's order, without `default`
    or repeats, and without two that set one option differently."""
    table = profiles_of(implementation)
    unknown = [p for p in spec.profiles if p not in table]
    if unknown:
        raise InvalidInput(
            f"engine {spec.base!r} has no profile {unknown[0]!r} (known: {', '.join(table)})", "engine")
    chosen = EngineSpec(spec.base, tuple(p for p in table if p != DEFAULT and p in spec.profiles), spec.label)
    profile_options(chosen, implementation)  # raises on a conflict
    return chosen


def profile_options(spec: EngineSpec, implementation: str) -> dict[str, Any]:
    """The constructor options of `spec`'s profiles, merged."""
    table = profiles_of(implementation)
    options: dict[str, Any] = {}
    for name in spec.profiles:
        options = merge_options(options, table[name].options, f"profile {name!r} of {spec.base!r}")
    return options


def merge_options(first: Mapping[str, Any], second: Mapping[str, Any], what: str) -> dict[str, Any]:
    """`first` and `second` together; mappings merge key by key. A key the two
    set differently is an error: a spec's name must say what it runs."""
    out = dict(first)
    for key, value in second.items():
        if key not in out:
            out[key] = dict(value) if isinstance(value, Mapping) else value
        elif isinstance(out[key], Mapping) and isinstance(value, Mapping):
            out[key] = merge_options(out[key], value, what)
        elif out[key] != value:
            raise InvalidInput(
                f"{what} sets {key} to {value!r}, which another profile or option sets to {out[key]!r}",
                "engine")
    return out
