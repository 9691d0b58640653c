"""What one evaluation carries through every operator."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pyarrow as pa

from harness.core.semantics import SemanticsProfile
from reference_impl.evaluation import PeerOrder, WindowKey
from reference_impl.relation import Relation


@dataclass
class Context:
    tables: Mapping[str, pa.Table]
    profile: SemanticsProfile
    peer_order: PeerOrder | None
    # Every tied peer group met by an order-sensitive window, in hook-call order.
    peer_groups: list[tuple[WindowKey, int]] = field(default_factory=list)
    # Common table expressions in scope (WITH), by name.
    ctes: dict[str, Relation] = field(default_factory=dict)
