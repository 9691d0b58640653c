"""The reference implementation: evaluates the query model over Arrow tables,
row by row, straight from the SQL standard's definitions. It is the oracle.

Public API (stable; the comparator and the runner depend on it):

    evaluate(query, tables, *, profile=DEFAULT_PROFILE, peer_order=None) -> Evaluation

- `query`: a `harness.core.model.Query`.
- `tables`: name -> pyarrow.Table.
- `profile`: the semantics profile for by-design differences (default null
  order when a query leaves it unwritten, ...).
- `peer_order`: a hook that chooses the order of tied rows (peers) for the
  window functions whose value depends on it (see `PeerOrder`). Without it,
  peers keep their input order (a stable sort).
"""

from reference_impl.api import (
    DEFAULT_PROFILE,
    Evaluation,
    PeerOrder,
    SemanticsProfile,
    WindowKey,
    evaluate,
)

__all__ = [
    "DEFAULT_PROFILE",
    "Evaluation",
    "PeerOrder",
    "SemanticsProfile",
    "WindowKey",
    "evaluate",
]
