"""Where a campaign's wall time goes: a clock of nested stages.

`fuzz --profile FILE` turns it on. Code marks its stages with

    with stage("reference"):
        ...

and the time between entering and leaving is charged to the stage's path
(`("confirm", "engine spark")` for an engine query made while confirming a
finding), exclusive of the stages nested in it, so every second is charged
once and the stages add up to the time measured. Off (the default), `stage`
costs one global lookup: the campaign runs as it always did.

One clock per process: a campaign's shard processes each keep their own
and send it to the parent at the end (`Profile.merge`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Profile:
    """Seconds and entries per stage path; `started` is when the clock was turned on."""

    seconds: dict[tuple[str, ...], float] = field(default_factory=dict)
    calls: dict[tuple[str, ...], int] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)
    # The stack of open stages and when the innermost one last resumed.
    _open: list[str] = field(default_factory=list)
    _since: float = field(default_factory=time.perf_counter)

    def _charge(self, now: float) -> None:
        path = tuple(self._open) or ("other",)
        self.seconds[path] = self.seconds.get(path, 0.0) + (now - self._since)
        self._since = now

    def enter(self, name: str) -> None:
        now = time.perf_counter()
        self._charge(now)
        self._open.append(name)
        path = tuple(self._open)
        self.calls[path] = self.calls.get(path, 0) + 1

    def leave(self) -> None:
        self._charge(time.perf_counter())
        self._open.pop()

    def close(self) -> Profile:
        """Charge the time since the last stage change (to `other` when none is open)."""
        self._charge(time.perf_counter())
        return self

    def merge(self, other: dict) -> None:
        """Add another process's profile (`as_json`) to this one."""
        for row in other["stages"]:
            path = tuple(row["stage"].split(" / "))
            self.seconds[path] = self.seconds.get(path, 0.0) + row["seconds"]
            self.calls[path] = self.calls.get(path, 0) + row["calls"]

    def as_json(self) -> dict:
        rows = sorted(self.seconds.items(), key=lambda kv: -kv[1])
        return {"stages": [{"stage": " / ".join(path), "seconds": round(s, 4), "calls": self.calls.get(path, 0)}
                           for path, s in rows]}


_clock: Profile | None = None


def start() -> Profile:
    """Turn this process's clock on (afresh) and return it."""
    global _clock
    _clock = Profile()
    return _clock


def stop() -> Profile | None:
    """Turn the clock off; its profile, closed, or None when it was off."""
    global _clock
    clock, _clock = _clock, None
    return clock.close() if clock is not None else None


def running() -> bool:
    return _clock is not None


def merge(doc: dict) -> None:
    """Add another process's profile (`Profile.as_json`) to this one's clock, when it runs."""
    if _clock is not None:
        _clock.merge(doc)


@contextmanager
def stage(name: str) -> Iterator[None]:
    clock = _clock
    if clock is None:
        yield
        return
    clock.enter(name)
    try:
        yield
    finally:
        if _clock is clock:  # not stopped (or restarted) meanwhile
            clock.leave()


# The stages a campaign is split into, in the order the table lists them (a
# stage not listed here is shown after them). A stage nested in one of the
# purposes below (an engine query made while confirming a finding, the
# reference evaluated for a metamorphic twin) is charged to that purpose.
PARENT_WAIT = "waiting for shards"
PURPOSES = ("start", "generation", "steering", "confirm", "rerun", "bare", "profiles", "metamorphic", "findings",
            "reduction", "coverage", "writing")
STAGES = ("start", "generation", "steering", "instrument", "reference", "batching", "engine", "judging",
          *PURPOSES[3:], "other")


def headline(path: list[str]) -> str:
    """The row of the table a stage path is counted in: its innermost purpose,
    else its outermost stage (all engines' own queries are one row, `engine`)."""
    for name in reversed(path):
        if name in PURPOSES:
            return name
    return "engine" if path[0].startswith("engine ") else path[0]


def table(doc: dict, wall: float | None = None) -> str:
    """The profile as a table: each stage's seconds and share, then every
    engine's seconds wherever its queries were made."""
    tops: dict[str, float] = {}
    engines: dict[str, float] = {}
    total = waited = 0.0
    for row in doc["stages"]:
        path = row["stage"].split(" / ")
        if path[0] == PARENT_WAIT:  # the parent of shards, idle: not the campaign's work
            waited += row["seconds"]
            continue
        total += row["seconds"]
        top = headline(path)
        tops[top] = tops.get(top, 0.0) + row["seconds"]
        if path[-1].startswith("engine "):
            name = path[-1].removeprefix("engine ")
            engines[name] = engines.get(name, 0.0) + row["seconds"]
    order = [s for s in STAGES if s in tops] + sorted(set(tops) - set(STAGES))
    lines = [f"{'stage':<20}{'seconds':>10}{'share':>8}"]
    for name in order:
        lines.append(f"{name:<20}{tops[name]:>10.1f}{tops[name] / total if total else 0:>8.1%}")
    lines.append(f"{'total':<20}{total:>10.1f}" + (f"   (wall {wall:.1f} s)" if wall is not None else ""))
    if waited:
        lines.append(f"(the parent waited {waited:.1f} s for its shards' lines; not counted above)")
    if engines:
        lines.append("each engine's queries, wherever made (batched, alone, confirming, re-runs, bare, "
                     "metamorphic, reduction):")
        lines += [f"  {name:<32}{s:>8.1f}{s / total if total else 0:>8.1%}"
                  for name, s in sorted(engines.items(), key=lambda kv: -kv[1])]
    return "\n".join(lines)
