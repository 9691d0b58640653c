"""How a bisect reads: one case in full (the two releases around the change, with
their answers and diffs as `replay` prints them, and the reference's), a corpus
as a table, and the JSON of either."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from harness.bisect.run import FIX, REGRESSION, CaseBisect
from harness.bisect.search import FOUND, SAME, SKIPPED
from harness.findings.replay_text import engine_json, write_engine
from harness.findings.show import text_table


def _names(b: CaseBisect) -> tuple[str, str]:
    """What the release before the change and the one after it are called."""
    if b.change == REGRESSION:
        return "last good", "first bad"
    if b.change == FIX:
        return "last bad", "first good"
    return f"last {b.search.start}", f"first {b.search.end}"


def summary(b: CaseBisect) -> str:
    s, engine = b.search, b.engine
    first, last = s.versions[0], s.versions[-1]
    if s.status == SAME:
        line = f"{s.start} on {engine} {first} and on {last}: nothing to bisect"
        changes = b.search.changes()
        if changes:
            line += "; in between: " + ", ".join(
                f"{s.verdicts[a]} on {a}, {s.verdicts[b_]} on {b_}" for a, b_ in changes)
        return line
    before, after = _names(b)
    head = f"{b.change}: {s.start} on {engine} {first}, {s.end} on {last}; "
    if s.status == FOUND:
        return head + (f"{before} {s.last} ({s.start}), {after} {s.first} "
                       f"({s.verdicts[s.first]})")
    return head + (f"the change is after {s.last} and at or before {s.first} "
                   f"({s.verdicts[s.first]}); the releases between could not be run: "
                   f"{', '.join(s.skipped)}")


def write_case(b: CaseBisect, out: TextIO) -> None:
    case, s = b.case, b.search
    out.write(f"case {case.id}" + (f" ({case.path})" if case.path else "") + "\n")
    out.write(f"  {case.description}\n")
    probed = [f"{v} {s.verdicts[v] or 'could not run'}" for v in s.versions if v in s.verdicts]
    out.write(f"  probed {len(probed)} of {len(s.versions)} releases: {', '.join(probed)}\n")
    out.write(f"  {summary(b)}\n")
    shown = [s.last, s.first] if s.status in (FOUND, SKIPPED) else [s.versions[0], s.versions[-1]]
    if b.reference is not None:
        out.write("\n")
        write_engine(b.reference, case, out)
    before, after = _names(b) if s.status != SAME else ("start", "end")
    for label, version in zip((before, after), shown, strict=True):
        replayed = b.probes.get(version)
        if replayed is not None:
            out.write(f"\n-- {label}: {b.engine} {version}\n")
            write_engine(replayed, case, out)


def write_table(found: Sequence[CaseBisect], out: TextIO) -> None:
    """The cases whose verdict changes (at the ends, or in between under --scan), one
    row each; the others are counted."""
    if not found:
        return
    s = found[0].search
    first, last = s.versions[0], s.versions[-1]
    changed = [b for b in found if b.search.status != SAME]
    scanned = [b for b in found if b.search.status == SAME and b.search.changes()]
    if changed:
        rows = [[b.case.id, b.search.start or "", b.search.end or "", b.change or "-",
                 b.search.last or "-", b.search.first or "-"] for b in changed]
        header = ["case", first, last, "change", "last good", "first bad"]
        out.writelines(f"{line}\n" for line in text_table(header, rows, ""))
        out.write("(last good / first bad: the last release with the verdict of "
                  f"{first}, the first with another; for a fix, the other way round)\n\n")
    out.write(f"{len(changed)} of {len(found)} cases change verdict between {first} and {last}; "
              f"the other {len(found) - len(changed)} have one verdict at both ends\n")
    for b in [*scanned, *(b for b in changed if b.search.status == SKIPPED)]:
        out.write(f"  {b.case.id}: {summary(b)}\n")


def to_json(b: CaseBisect) -> dict:
    s = b.search
    return {
        "case": b.case.id,
        "path": str(b.case.path) if b.case.path else None,
        "engine": b.engine,
        "versions": s.versions,
        "status": s.status,
        "change": b.change,
        "start": {"version": s.versions[0], "verdict": s.start},
        "end": {"version": s.versions[-1], "verdict": s.end},
        "last": s.last,
        "first": s.first,
        "skipped": s.skipped,
        "changes": [{"last": a, "first": b_} for a, b_ in s.changes()],
        "probes": [{"version": v, "verdict": s.verdicts[v]} for v in s.versions if v in s.verdicts],
        "answers": {v: engine_json(r) for v, r in b.probes.items()
                    if r is not None and v in (s.last, s.first)},
        "reference": engine_json(b.reference) if b.reference is not None else None,
    }
