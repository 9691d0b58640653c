"""Engine versions and version ranges, with no dependency: engine children run
in environments that hold only the engine and pyarrow (`harness.engines.remote`),
and the dialects' release tables are read there too.

Engines print versions their own way (`3.40.1`, `55.2.0`, `4.0.1 (Spark
Connect)`, `v1.0.0`, `1.5.0.dev42`); their leading release numbers are what a
range is about. A range is PEP 440's comparison subset: clauses `<`, `<=`,
`>`, `>=`, `==` or `!=` and a release number, joined by commas (`>=50,<55`);
`==1.2` is 1.2.0 alone and `==1.2.*` every 1.2.x, as in PEP 440.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

Version = tuple[int, ...]

_VERSION = re.compile(r"\s*v?(\d+(?:\.\d+)*)")
_CLAUSE = re.compile(r"\s*(<=|>=|==|!=|<|>)\s*v?(\d+(?:\.\d+)*)(\.\*)?\s*$")
_OPS: dict[str, Callable[[Version, Version], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


def parse_version(text: str) -> Version | None:
    """An engine's version string as its release numbers, trailing zeros dropped
    (`3.40.1` -> (3, 40, 1), `4.0.1 (Spark Connect)` -> (4, 0, 1), `55.0` -> (55,))."""
    found = _VERSION.match(text or "")
    return _release(found.group(1)) if found else None


def _release(text: str) -> Version:
    numbers = [int(n) for n in text.split(".")]
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers.pop()
    return tuple(numbers)


def version_text(version: Version) -> str:
    return ".".join(map(str, version))


@dataclass(frozen=True)
class VersionRange:
    """Clauses that must all hold (see the module docstring)."""

    text: str
    clauses: tuple[tuple[str, Version, bool], ...]  # (operator, release, prefix match)

    def contains(self, version: str | Version) -> bool:
        v = parse_version(version) if isinstance(version, str) else version
        return v is not None and all(_holds(v, op, bound, prefix) for op, bound, prefix in self.clauses)

    def __str__(self) -> str:
        return self.text


def _holds(v: Version, op: str, bound: Version, prefix: bool) -> bool:
    if op in ("==", "!="):
        same = v[:len(bound)] == bound if prefix else _padded(v, bound)
        return same if op == "==" else not same
    return _OPS[op](*_aligned(v, bound))


def _aligned(a: Version, b: Version) -> tuple[Version, Version]:
    n = max(len(a), len(b))
    return a + (0,) * (n - len(a)), b + (0,) * (n - len(b))


def _padded(a: Version, b: Version) -> bool:
    x, y = _aligned(a, b)
    return x == y


def version_range(text: str) -> VersionRange:
    """A version range such as `<1.1` or `>=50,<55`; ValueError naming it when it is not one."""
    clauses = []
    for part in str(text).split(","):
        found = _CLAUSE.match(part)
        if not found:
            raise ValueError(f"{text!r} is not a version range such as '>=55,<56'")
        op, number, star = found.groups()
        if star and op not in ("==", "!="):
            raise ValueError(f"{text!r}: a '.*' range takes '==' or '!='")
        bound = tuple(int(n) for n in number.split(".")) if star else _release(number)
        clauses.append((op, bound, bool(star)))
    return VersionRange(str(text).strip(), tuple(clauses))


def in_range(version: str, versions: VersionRange) -> bool:
    """Whether the engine version string `version` is in `versions`."""
    return versions.contains(version)
