"""The reference bound to one query and its tables: what the comparator asks."""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

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
        self._permuted: _Kept | None = None

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
            self._permuted = _SHARED.kept(self.query, self.tables, self.profile)
        found = self._permuted.get(perms)
        if found is None:
            found = self.evaluate(by_call_index(perms))
            self._permuted.keep(perms, found)
        return found


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
