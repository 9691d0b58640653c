"""The reference bound to one query and its tables: what the comparator asks."""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Mapping, Sequence

import pyarrow as pa

from harness.core.model import Query
from reference_impl import DEFAULT_PROFILE, Evaluation, PeerOrder, SemanticsProfile, evaluate

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
    ) -> None:
        self.query = query
        self.tables = tables
        self.profile = profile
        self._default: Evaluation | None = None
        self._permuted: dict[Permutations, Evaluation] | None = None

    def evaluate(self, peer_order: PeerOrder | None = None) -> Evaluation:
        if peer_order is not None:
            return evaluate(self.query, self.tables, profile=self.profile, peer_order=peer_order)
        if self._default is None:
            self._default = evaluate(self.query, self.tables, profile=self.profile)
        return self._default

    def evaluate_permuted(self, perms: Permutations) -> Evaluation:
        """The evaluation with the i-th peer group (in call order) put in the order
        `perms[i]`. The reference is deterministic, so it is kept, and shared with
        every oracle over the same query, tables and profile: a finding's reruns
        and its classification under the other profiles search the same orders."""
        if self._permuted is None:
            self._permuted = _SHARED.evaluations(self.query, self.tables, self.profile)
        found = self._permuted.get(perms)
        if found is None:
            found = self.evaluate(by_call_index(perms))
            _SHARED.keep(self._permuted, perms, found)
        return found


def by_call_index(perms: Sequence[Sequence[int]]) -> PeerOrder:
    """The hook that orders the i-th peer group it is called for by `perms[i]`."""
    calls = itertools.count()

    def order(key: object, group: Sequence[dict]) -> Sequence[int]:
        return perms[next(calls)]

    return order


class _SharedEvaluations:
    """Permuted evaluations of the last few (query, tables, profile), within a byte budget.

    Tables are told apart by their Arrow IPC bytes (exact, NaN included); two
    equal tables written with other chunks only miss the cache."""

    def __init__(self, slots: int, budget_bytes: int) -> None:
        self.slots = slots
        self.budget_bytes = budget_bytes
        self._by_key: OrderedDict[tuple, dict[Permutations, Evaluation]] = OrderedDict()
        self._bytes: dict[int, int] = {}  # id of an evaluations dict -> bytes it holds

    def evaluations(self, query: Query, tables: Mapping[str, pa.Table],
                    profile: SemanticsProfile) -> dict[Permutations, Evaluation]:
        key = (query, profile, tuple((name, _ipc_bytes(t)) for name, t in sorted(tables.items())))
        found = self._by_key.get(key)
        if found is None:
            found = self._by_key[key] = {}
            self._bytes[id(found)] = 0
            while len(self._by_key) > self.slots:
                _, dropped = self._by_key.popitem(last=False)
                del self._bytes[id(dropped)]
        self._by_key.move_to_end(key)
        return found

    def keep(self, into: dict[Permutations, Evaluation], perms: Permutations, evaluation: Evaluation) -> None:
        size = evaluation.table.nbytes
        if id(into) in self._bytes and self._bytes[id(into)] + size <= self.budget_bytes // self.slots:
            into[perms] = evaluation
            self._bytes[id(into)] += size


def _ipc_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


_SHARED = _SharedEvaluations(slots=8, budget_bytes=64 * 2**20)
