"""The reference evaluated once for a batch of sibling cases, then split by case.

Sibling cases share a query and differ in rows. Engines answer them with one
batched query (`harness.campaign.batching`); the reference can too: the
batched form of each instrumented query, over the siblings' stacked tables,
evaluated once per semantics profile, and split by the case id. Each part
holds the rows the case alone gives (`tests/test_batching.py` proves it on
generated shapes, column types included), so the comparator takes it as the
reference's answer (`Oracle.answer`): an engine's answer identical to it is
a match at once, and anything else is judged in full against the case's own
evaluation, made only then (`harness.judge.compare.compare`).

Where the batch gives nothing the case is evaluated alone as before: a
shape that does not batch, a batch the reference cannot finish in the time
limit, and a case the reference refuses (invalid by definition, a gap): a
refused batch is split in halves until the cases it refuses are alone, so
one invalid sibling costs its siblings a few more evaluations, not theirs.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from harness.campaign.batching import NotBatchable, batch_query, split_answer, stack_tables
from harness.cases.case import Case
from harness.core.errors import EvaluationError, ReferenceGap, ReferenceTimeout
from harness.core.semantics import SemanticsProfile
from harness.core.stages import stage
from harness.judge.instrument import Plan, with_rowid
from harness.judge.oracle import Oracle
from harness.judge.runner import Batched, effective_knobs


class BatchedReference:
    """One evaluation per (instrumented query, profile knobs) for the whole batch."""

    def __init__(self, cases: Sequence[Case]) -> None:
        self.cases = list(cases)
        self._parts: dict[tuple, list[pa.Table | None] | None] = {}
        self._plans: list[Plan] = []

    def source(self, index: int) -> Batched:
        """What case `index` asks for its rows under a profile (see `runner.Batched`)."""
        return lambda plan, profile: self.answer(index, plan, profile)

    def answer(self, index: int, plan: Plan, profile: SemanticsProfile) -> pa.Table | None:
        # Siblings share their plan objects (`runner._prepare`): keyed by the plan's
        # identity, kept alive by `_plans`, a query tree is not hashed per sibling.
        key = (id(plan), effective_knobs(profile, plan.unlimited))
        if key not in self._parts:
            self._plans.append(plan)
            self._parts[key] = self._evaluate(plan, profile)
        parts = self._parts[key]
        return None if parts is None else parts[index]

    def _evaluate(self, plan: Plan, profile: SemanticsProfile) -> list[pa.Table | None] | None:
        if len(self.cases) < 2:
            return None
        try:
            query = batch_query(plan.unlimited)
        except NotBatchable:
            return None
        per_case = [with_rowid(c.tables) if plan.rowid_column is not None else dict(c.tables)
                    for c in self.cases]
        return self._parts_of(query, per_case, profile)

    def _parts_of(self, query, per_case: list[dict], profile: SemanticsProfile) -> list[pa.Table | None]:
        """Each case's part of the batch; where the reference refuses the batch (some
        case invalid by definition, a gap), the halves are tried, down to the cases
        alone: None for those, which are then evaluated as they always were."""
        if len(per_case) == 1:
            return [None]
        try:
            with stage("reference"):
                answer = Oracle(query, stack_tables(per_case), profile).evaluate().table
            return list(split_answer(answer, len(per_case)))
        except ReferenceTimeout:
            return [None] * len(per_case)  # the halves would take as long in all
        except (NotBatchable, EvaluationError, ReferenceGap):
            half = len(per_case) // 2
            return self._parts_of(query, per_case[:half], profile) + self._parts_of(query, per_case[half:], profile)
