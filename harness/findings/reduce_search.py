"""The reducer's search: the current case, the attempts, and delta debugging.

A pass (see `harness.findings.reduce.PASSES`) offers candidates through
`Search.attempt`, which keeps the first that still fails. `holds` is taken to
be deterministic: a candidate that failed is never tried again (candidates are
keyed by SQL, schemas and the tables' bytes).
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace

import pyarrow as pa

from harness.cases.case import Case
from harness.core.errors import HarnessError
from harness.core.model import Query, TableRef, WindowExpr, With, walk
from harness.sql.writer import write

Holds = Callable[[Case], bool]
OnStep = Callable[[str, Case], None]


class Expired(Exception):
    """The deadline passed; unwinds out of whichever pass was running."""


class Search:
    """The current case and the bookkeeping of attempts."""

    def __init__(self, case: Case, holds: Holds, deadline: float | None,
                 on_step: OnStep | None) -> None:
        self.case = case
        self.holds = holds
        self.deadline = deadline
        self.on_step = on_step
        self.kind = ""
        self.steps: Counter[str] = Counter()
        self.attempts = 0
        self.accepted = 0
        self.needs_window = any(isinstance(n, WindowExpr) for n in walk(case.query))
        # Candidates that failed, by content: greedy passes meet the same
        # candidate again after an unrelated change elsewhere was accepted.
        self.failed: set[tuple] = set()

    def attempt(self, candidate: Case | None) -> bool:
        """Try a candidate (None: none could be built); keep it when it holds."""
        if candidate is None:
            return False
        key = _content_key(candidate)
        if key in self.failed:
            return False
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise Expired
        self.attempts += 1
        if not self._holds(candidate):
            self.failed.add(key)
            return False
        self.case = candidate
        self.accepted += 1
        self.steps[self.kind] += 1
        if self.on_step is not None:
            self.on_step(self.kind, candidate)
        return True

    def _holds(self, candidate: Case) -> bool:
        try:
            return bool(self.holds(candidate))
        except Exception:  # noqa: BLE001 - the contract: a predicate that raises does not hold
            return False

    def attempt_query(self, query: Query) -> bool:
        return self.attempt(with_query(self.case, query, self.needs_window))


Pass = Callable[[Search], None]  # runs greedily on the search's current case


def _content_key(case: Case) -> tuple:
    return (case.sql, case.schemas, tuple((name, _fingerprint(t)) for name, t in case.tables.items()))


def _fingerprint(table: pa.Table) -> bytes:
    """Equal bytes mean equal cells, bit for bit (-0.0 and NaN included)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table.combine_chunks())
    return hashlib.sha256(sink.getvalue().to_pybytes()).digest()


def with_query(case: Case, query: Query, needs_window: bool) -> Case | None:
    """The case with another query, or None when the query cannot be a candidate."""
    if needs_window and not any(isinstance(n, WindowExpr) for n in walk(query)):
        return None
    known = {c.name.lower() for n in walk(query) if isinstance(n, With) for c in n.ctes}
    known |= {name.lower() for name in case.tables}
    if any(isinstance(n, TableRef) and n.name.lower() not in known for n in walk(query)):
        return None
    try:
        sql = write(query)
    except HarnessError:  # e.g. a frame whose start comes after its end by kind
        return None
    return replace(case, query=query, sql=sql)


def ddmin(search: Search, size: int, build: Callable[[list[int]], Case | None]) -> None:
    """Delta debugging over `size` elements: remove all of them, then halves,
    quarters, ... down to single elements, keeping each removal that holds.
    `build(kept)` makes the candidate from the indices kept."""
    kept = list(range(size))
    chunk = size
    while chunk >= 1 and kept:
        i = 0
        while i < len(kept):
            trial = kept[:i] + kept[i + chunk:]
            if not search.attempt(build(trial)):
                i += chunk
            else:
                kept = trial
        chunk //= 2
