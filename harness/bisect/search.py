"""The releases to search (`--versions`) and the binary search over them.

Nothing here runs an engine: `search` asks a `probe` for the verdict at a
release (None when that release cannot be installed or started), so the logic
is tested on its own with any list of verdicts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from harness.core.errors import InvalidInput
from harness.engines.releases import release_key

OPTION = "--versions"

# What a search found (`Search.status`).
FOUND = "found"        # the verdict changes between two adjacent releases: last, first
SAME = "same"          # both ends have one verdict: nothing to bisect
SKIPPED = "skipped"    # the change is after `last` and at or before `first`, but every
                       # release between them could not be installed or started


def parse_versions(text: str, known: Sequence[str], engine: str) -> list[str]:
    """The releases `--versions` names, oldest first: `A..B` (the releases of `known`
    from A to B, both included) or a comma-separated list. InvalidInput naming
    --versions for a version that is not a release of `known`, or fewer than two
    releases (nothing to compare)."""
    order = sorted(dict.fromkeys(known), key=release_key)
    text = text.strip()
    if ".." in text:
        start, _, end = (part.strip() for part in text.partition(".."))
        if not start or not end:
            raise InvalidInput(f"expected FIRST..LAST (e.g. 1.0.0..2.0.1), got {text!r}", OPTION)
        i, j = _index(start, order, engine), _index(end, order, engine)
        if i > j:
            raise InvalidInput(f"empty range {text!r}: {start} comes after {end}", OPTION)
        chosen = order[i:j + 1]
    else:
        names = [v.strip() for v in text.split(",")]
        if not all(names):
            raise InvalidInput(f"an empty version in {text!r}", OPTION)
        chosen = sorted({order[_index(v, order, engine)] for v in names}, key=release_key)
    if len(chosen) < 2:
        raise InvalidInput(f"{text!r} names one release ({chosen[0]}); give two or more "
                           f"to compare (FIRST..LAST or a list)", OPTION)
    return chosen


def _index(version: str, order: list[str], engine: str) -> int:
    if version in order:
        return order.index(version)
    after = sum(release_key(v) < release_key(version) for v in order)
    near = order[max(after - 2, 0):after + 2]
    raise InvalidInput(f"{version!r} is not a release of {engine} (the releases around it: "
                       f"{', '.join(near)})", OPTION)


@dataclass
class Search:
    """Where the verdict changes over `versions` (oldest first)."""

    versions: list[str]
    verdicts: dict[str, str | None] = field(default_factory=dict)  # probed release -> verdict
    status: str = SAME
    last: str | None = None    # the last release with the start's verdict
    first: str | None = None   # the first release after it with another verdict

    @property
    def start(self) -> str | None:
        return self.verdicts[self.versions[0]]

    @property
    def end(self) -> str | None:
        return self.verdicts[self.versions[-1]]

    @property
    def skipped(self) -> list[str]:
        return [v for v in self.versions if v in self.verdicts and self.verdicts[v] is None]

    def changes(self) -> list[tuple[str, str]]:
        """Adjacent probed releases whose verdicts differ (every change a scan saw)."""
        seen = [v for v in self.versions if self.verdicts.get(v) is not None]
        return [(a, b) for a, b in zip(seen, seen[1:], strict=False)
                if self.verdicts[a] != self.verdicts[b]]


Probe = Callable[[str], "str | None"]


def search(versions: Sequence[str], probe: Probe, scan: bool = False) -> Search:
    """Binary search of `versions` for the first release whose verdict differs from
    the first release's. Both ends are probed first; when they agree there is
    nothing to search (`SAME`), and `scan` probes every release between them
    instead (`Search.changes` lists what it saw). A release `probe` cannot run
    (None) is skipped, as `git bisect skip` does: the nearest untried release to
    the middle is probed instead. The ends must run (the caller raises)."""
    found = Search(list(versions))
    verdict = found.verdicts
    lo, hi = 0, len(versions) - 1
    for i in (lo, hi):
        verdict[versions[i]] = probe(versions[i])
    if found.start == found.end:
        if scan:
            for v in versions[1:-1]:
                verdict[v] = probe(v)
        return found
    while True:
        between = [i for i in range(lo + 1, hi) if versions[i] not in verdict]
        if not between:
            break
        middle = (lo + hi) / 2
        i = min(between, key=lambda k: (abs(k - middle), k))
        verdict[versions[i]] = probe(versions[i])
        if verdict[versions[i]] is None:
            continue
        if verdict[versions[i]] == found.start:
            lo = i
        else:
            hi = i
    found.last, found.first = versions[lo], versions[hi]
    found.status = FOUND if hi == lo + 1 else SKIPPED
    return found
