"""The reference bound to one query and its tables: what the comparator asks.

Each evaluation is bounded by the `time_limit` in force, as each engine
query is by --timeout: the reference is pure Python in this process, so a
SIGALRM stops it (Python runs the handler in the main thread, between
bytecodes), and the evaluation raises ReferenceTimeout, which the runner
reports as the reference's `timeout` verdict. Off the main thread, where no
signal handler runs, evaluations are not bounded.
"""

from __future__ import annotations

import contextlib
import itertools
import signal
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field

import pyarrow as pa

from harness.core.errors import ReferenceTimeout
from harness.core.model import Query
from reference_impl import DEFAULT_PROFILE, Evaluation, PeerOrder, SemanticsProfile, evaluate

AGAIN = 0.05  # seconds between an alarm's rings once its time is up (see `_alarm`)

# One permutation of each peer group, in the reference's call order (see `by_call_index`).
Permutations = tuple[tuple[int, ...], ...]


class Oracle:
    """Evaluates one query on the reference, under any order of tied rows.

    The evaluation under the default order (input order among peers) is
    computed once and kept; the comparator asks for others while it searches
    for a witness order.
    """

    def __init__(
        self,
        query: Query,
        tables: Mapping[str, pa.Table],
        profile: SemanticsProfile = DEFAULT_PROFILE,
        answer: pa.Table | None = None,
    ) -> None:
        self.query = query
        self.tables = tables
        self.profile = profile
        self._default: Evaluation | None = None
        self._permuted: _Kept | None = None
        # The reference's rows for these tables, known without evaluating this
        # query: this case's part of the evaluation of its sibling batch (the
        # same rows; `harness.campaign.reference_batch`).
        self._answer = answer

    def answer(self) -> pa.Table:
        """The reference's rows: the batch's part where one was given (the same
        rows, by `tests/test_batching.py`), else the evaluation's. What needs
        more (magnitudes, peer groups, other orders) calls `evaluate`."""
        return self._answer if self._answer is not None else self.evaluate().table

    def evaluate(self, peer_order: PeerOrder | None = None) -> Evaluation:
        if peer_order is not None:
            _searching()
            return _bounded(lambda: evaluate(self.query, self.tables, profile=self.profile,
                                             peer_order=peer_order))
        if self._default is None:
            self._default = _bounded(lambda: evaluate(self.query, self.tables, profile=self.profile))
        return self._default

    def evaluate_permuted(self, perms: Permutations) -> Evaluation:
        """The evaluation with the i-th peer group (in call order) put in the order
        `perms[i]`. The reference is deterministic, so it is kept, and shared with
        every oracle over the same query, tables and profile: a finding's reruns
        and its classification under the other profiles search the same orders."""
        if self._permuted is None:
            self._permuted = _SHARED.kept(self.query, self.tables, self.profile)
        found = self._permuted.get(perms)
        if found is None:
            found = self.evaluate(by_call_index(perms))
            self._permuted.keep(perms, found)
        return found


# -- the time limit ---------------------------------------------------------------

_LIMIT: ContextVar[float | None] = ContextVar("reference_time_limit", default=None)

# One judgement's search over orders of tied rows re-evaluates the reference
# once per order it tries: cheap on a few rows, seconds each on a batch-scale
# case. Past this many seconds of one search, the verdict is `inconclusive`.
SEARCH_SECONDS = 10.0
_SEARCH_DEADLINE: ContextVar[float | None] = ContextVar("peer_search_deadline", default=None)


def _searching() -> None:
    """An evaluation under another order of tied rows: past the search's deadline, stop."""
    deadline = _SEARCH_DEADLINE.get()
    if deadline is not None and time.monotonic() > deadline:
        raise ReferenceTimeout("the search over orders of tied rows took too long")


@contextlib.contextmanager
def search_limit(seconds: float | None = None) -> Iterator[None]:
    """Bound the re-evaluations under other peer orders made inside (`evaluate_permuted`)
    to `seconds` (SEARCH_SECONDS) in all: past it they raise ReferenceTimeout."""
    token = _SEARCH_DEADLINE.set(time.monotonic() + (SEARCH_SECONDS if seconds is None else seconds))
    try:
        yield
    finally:
        _SEARCH_DEADLINE.reset(token)


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Bound each reference evaluation made inside to `seconds` (None: unbounded);
    see the module docstring."""
    token = _LIMIT.set(seconds)
    try:
        yield
    finally:
        _LIMIT.reset(token)


def _bounded(run: Callable[[], Evaluation]) -> Evaluation:
    seconds = _LIMIT.get()
    if (seconds is None or threading.current_thread() is not threading.main_thread()
            or signal.getitimer(signal.ITIMER_REAL)[0] > 0):  # an outer alarm governs
        return run()
    with _alarm(seconds):
        return run()


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    """ReferenceTimeout raised where the code inside is after `seconds`.

    The alarm rings again every AGAIN seconds until the code ends: a handler
    that runs inside a garbage-collection callback or a `__del__` has its
    exception swallowed ("Exception ignored in ..."), and a one-shot alarm
    lost that way would leave the evaluation unbounded. Once the code is
    done, a late ring raises nothing."""
    armed = True

    def ring(signum: int, frame: object) -> None:
        if armed:
            raise ReferenceTimeout(f"did not finish within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, ring)
    try:
        # Inside the try: a ring as soon as the timer is set (a tiny limit) still
        # reaches the clean-up below.
        signal.setitimer(signal.ITIMER_REAL, seconds, AGAIN)
        yield
    finally:
        armed = False  # first: CPython checks for signals at calls, none before this
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def by_call_index(perms: Sequence[Sequence[int]]) -> PeerOrder:
    """The hook that orders the i-th peer group it is called for by `perms[i]`."""
    calls = itertools.count()

    def order(key: object, group: Sequence[dict]) -> Sequence[int]:
        return perms[next(calls)]

    return order


@dataclass
class _Kept:
    """Permuted evaluations of one (query, tables, profile), up to a byte budget."""

    budget_bytes: int
    evaluations: dict[Permutations, Evaluation] = field(default_factory=dict)
    nbytes: int = 0

    def get(self, perms: Permutations) -> Evaluation | None:
        return self.evaluations.get(perms)

    def keep(self, perms: Permutations, evaluation: Evaluation) -> None:
        size = evaluation.table.nbytes
        if self.nbytes + size <= self.budget_bytes:
            self.evaluations[perms] = evaluation
            self.nbytes += size


class _SharedEvaluations:
    """The kept evaluations of the last few (query, tables, profile).

    Tables are told apart by their Arrow IPC bytes (exact, NaN included); two
    equal tables written with other chunks only miss."""

    def __init__(self, slots: int, budget_bytes: int) -> None:
        self.slots = slots
        self.budget_bytes = budget_bytes  # for each slot
        self._by_key: OrderedDict[tuple, _Kept] = OrderedDict()

    def kept(self, query: Query, tables: Mapping[str, pa.Table], profile: SemanticsProfile) -> _Kept:
        key = (query, profile, tuple((name, _ipc_bytes(t)) for name, t in sorted(tables.items())))
        try:
            hash(key)
        except TypeError:  # a model node holding a mutable value: kept by this oracle only
            return _Kept(self.budget_bytes)
        found = self._by_key.get(key)
        if found is None:
            found = self._by_key[key] = _Kept(self.budget_bytes)
            while len(self._by_key) > self.slots:
                self._by_key.popitem(last=False)
        self._by_key.move_to_end(key)
        return found


def _ipc_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


_SHARED = _SharedEvaluations(slots=8, budget_bytes=8 * 2**20)
