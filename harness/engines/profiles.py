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

This module is the machinery (the spec syntax, checking and merging); each
engine's table of profiles lives in its own package
(`harness.engines.<name>.profiles`), and `harness.engines.registry` gathers
them. Each profile's description says what it was measured to change;
`tests/test_profiles.py` checks each one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
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


def config_options(settings: Mapping[str, str], **options: Any) -> dict[str, Any]:
    """A profile's options: the engine's `config` settings, and other constructor options."""
    return {"config": dict(settings), **options}


# A profile table: profile name -> Profile, `DEFAULT` first. Each engine's
# own lives in its package (`harness.engines.<name>.profiles`); the registry
# gathers them.
ProfileTable = Mapping[str, Profile]

# An engine without a table of its own runs under its own settings only.
ONLY_DEFAULT: ProfileTable = {DEFAULT: Profile("the engine's own settings")}


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


def canonical(spec: EngineSpec, table: ProfileTable) -> EngineSpec:
    """`spec` with its profiles checked against its engine's `table`, in the
    table's order, without `default` or repeats, and without two that set one
    option differently."""
    unknown = [p for p in spec.profiles if p not in table]
    if unknown:
        raise InvalidInput(
            f"engine {spec.base!r} has no profile {unknown[0]!r} (known: {', '.join(table)})", "engine")
    chosen = EngineSpec(spec.base, tuple(p for p in table if p != DEFAULT and p in spec.profiles), spec.label)
    profile_options(chosen, table)  # raises on a conflict
    return chosen


def profile_options(spec: EngineSpec, table: ProfileTable) -> dict[str, Any]:
    """The constructor options of `spec`'s profiles (from its engine's `table`), merged."""
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
