"""The reference bound to one query and its tables: what the comparator asks."""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa

from harness.core.model import Query
from reference_impl import DEFAULT_PROFILE, Evaluation, PeerOrder, SemanticsProfile, evaluate


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

    def evaluate(self, peer_order: PeerOrder | None = None) -> Evaluation:
        if peer_order is not None:
            return evaluate(self.query, self.tables, profile=self.profile, peer_order=peer_order)
        if self._default is None:
            self._default = evaluate(self.query, self.tables, profile=self.profile)
        return self._default
