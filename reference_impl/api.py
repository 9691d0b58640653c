"""The reference's entry point, `evaluate`. The types it takes and returns
live in `evaluation.py`, below every operator module, so that those modules
never import the entry point (re-exported here for callers)."""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa

from harness.core.depth import check_depth
from harness.core.errors import HarnessError, ReferenceGap
from harness.core.model import Query
from harness.core.semantics import SemanticsProfile
from reference_impl.evaluation import DEFAULT_PROFILE, Evaluation, PeerOrder, WindowKey
from reference_impl.query import evaluate_query

__all__ = ["DEFAULT_PROFILE", "Evaluation", "PeerOrder", "SemanticsProfile", "WindowKey", "evaluate"]


def evaluate(
    query: Query,
    tables: Mapping[str, pa.Table],
    *,
    profile: SemanticsProfile = DEFAULT_PROFILE,
    peer_order: PeerOrder | None = None,
) -> Evaluation:
    # Refused before evaluation, which recurses over the model: a model built in code
    # may be deeper than the parser lets text be (the same error as the parser's).
    check_depth(query)
    try:
        return evaluate_query(query, tables, profile=profile, peer_order=peer_order)
    except HarnessError:
        raise
    except Exception as e:
        # A failure of the reference's own code is a gap in the oracle: the
        # runner reports it as such (never a pass), and it names the cause.
        raise ReferenceGap(f"internal error of the reference: {type(e).__name__}: {e}") from e
