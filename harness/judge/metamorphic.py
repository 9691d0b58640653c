"""Metamorphic relations: oracles that need no reference implementation.

A reference can share a blind spot with the engines it judges. A metamorphic
relation instead says that two queries (over the same table, or over a table
derived from it) must give equal answers on the compared rows and columns, and
is checked on ONE engine alone, against itself:

- partition-restriction: restricting the input to one partition (WHERE p = v,
  or p IS NULL) leaves that partition's window values unchanged;
- frame-modes: ROWS, GROUPS and RANGE frames select the same rows when the
  ORDER BY key is unique and the offsets map (GROUPS n = ROWS n; RANGE n*c = ROWS
  n on a derived key that takes consecutive multiples of c);
- desc-mirror: a window over keys sorted one way equals the window over the
  reversed order with the frame mirrored (n PRECEDING <-> n FOLLOWING), for
  order-insensitive aggregates; first_value <-> last_value and lag <-> lead;
- exclude-no-others: EXCLUDE NO OTHERS changes nothing;
- first-value-nth-value: first_value(x) = nth_value(x, 1) over the same window
  (last_value(x) = nth_value(x, 1) FROM LAST likewise);
- value-at-current-row: last_value(x) over a frame ending at CURRENT ROW, and
  first_value(x) over one starting there, is x itself (total order);
- batching: stacking the table with a shuffled copy tagged b = 1 (the original
  rows b = 0) and putting b first in every PARTITION BY leaves the b = 0 rows'
  answers unchanged.

Every query is deterministic, so a tie can never cause a false violation: each
window ORDER BY ends with the unique `id` (aggregates' own ORDER BY too),
except where a single-key RANGE offset forbids it, and there only functions
whose value does not depend on the order of peers are used. Floats are compared
within `harness.judge.cells.float_tolerance` of a magnitude that bounds every frame's
sum of |x| (the whole argument column), since the two sides may sum in
different orders; sums whose order could overflow are not drawn.

Outcomes (`Status`): holds, violated (the answers differ, or one side has rows
the other lacks), unsupported (either side raised Unsupported, or the
reference's ReferenceGap), error (exactly one side failed: the relation says the
queries are equivalent, so this is a finding too), both-error (both sides
failed: nothing was compared; it is not a pass, and the differential oracle,
not this one, judges whether the engine should have run the query).

The parts: `metamorphic_check` runs a check's two queries and compares the
answers (`Check`, `Status`, `check`, `compare`); `metamorphic_draw` draws
deterministic windows, calls and frames from a `Subject`; `metamorphic_build`
turns drawn pairs of expressions into a `Check`; `metamorphic_windows` and
`metamorphic_inputs` hold the relations themselves. This module registers
them (`RELATIONS`) and re-exports the public names of the parts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from random import Random

from harness.cases.case import Case
from harness.core.dialect import Dialect
from harness.engines.base import Engine
from harness.judge.metamorphic_build import (
    ATTEMPTS,
    MAX_EXPRESSIONS,
    Build,
    Pair,
    collect,
    conj,
    fresh_name,
    renders,
    same,
    same_table,
    scale_of,
    select,
    side,
)
from harness.judge.metamorphic_check import (
    ID,
    Check,
    Difference,
    FloatScale,
    MetamorphicOutcome,
    Status,
    cell_equal,
    check,
    compare,
)
from harness.judge.metamorphic_draw import (
    ASC_LAST,
    ID_KEY,
    Subject,
    bound_kinds,
    deterministic,
    integer,
    is_total,
    literal,
    predicate,
    random_call,
    random_frame,
    random_keys,
    random_partition,
    random_window_expr,
    subject_of,
    total,
)
from harness.judge.metamorphic_inputs import batched, batching, partition_restriction
from harness.judge.metamorphic_windows import (
    OffsetMap,
    OrderPlan,
    desc_mirror,
    exclude_no_others,
    first_value_nth_value,
    frame_modes,
    mirrored_call,
    mirrored_frame,
    reversed_key,
    value_at_current_row,
)
from harness.sql.canonical import CANONICAL

__all__ = [
    # this module: the registry
    "RELATIONS", "Relation", "check_all", "relation",
    # metamorphic_check
    "ID", "Check", "Difference", "FloatScale", "MetamorphicOutcome", "Status", "cell_equal", "check",
    "compare",
    # metamorphic_draw
    "ASC_LAST", "ID_KEY", "Subject", "bound_kinds", "deterministic", "integer", "is_total", "literal",
    "predicate", "random_call", "random_frame", "random_keys", "random_partition",
    "random_window_expr", "subject_of", "total",
    # metamorphic_build
    "ATTEMPTS", "MAX_EXPRESSIONS", "Build", "Pair", "collect", "conj", "fresh_name", "renders", "same",
    "same_table", "scale_of", "select", "side",
    # the relations (metamorphic_inputs, metamorphic_windows)
    "OffsetMap", "OrderPlan", "batched", "batching", "desc_mirror", "exclude_no_others",
    "first_value_nth_value", "frame_modes", "mirrored_call", "mirrored_frame",
    "partition_restriction", "reversed_key", "value_at_current_row",
]


@dataclass(frozen=True)
class Relation:
    name: str
    description: str
    draw: Callable[[Subject], Check | None]

    def derive(self, case: Case, rng: Random, dialect: Dialect = CANONICAL) -> Check | None:
        """A check of this relation on `case`'s table, preferring queries that
        render in `dialect`; None when the relation does not apply."""
        subject = subject_of(case, rng, dialect)
        return None if subject is None else self.draw(subject)


def check_all(case: Case, engine: Engine, rng: Random) -> list[MetamorphicOutcome]:
    """Every relation that applies to `case`, checked on `engine`."""
    outcomes = []
    for relation in RELATIONS:
        chk = relation.derive(case, Random(f"{rng.random()}/{relation.name}"), engine.dialect)
        if chk is not None:
            outcomes.append(check(chk, engine))
    return outcomes


RELATIONS: tuple[Relation, ...] = (
    Relation("partition-restriction", "restricting the input to one partition leaves its results unchanged",
             partition_restriction),
    Relation("frame-modes", "ROWS, GROUPS and RANGE agree on a unique key when the offsets map", frame_modes),
    Relation("desc-mirror", "a window over the reversed order with the frame mirrored gives the same values",
             desc_mirror),
    Relation("exclude-no-others", "EXCLUDE NO OTHERS equals no EXCLUDE", exclude_no_others),
    Relation("first-value-nth-value", "first_value(x) equals nth_value(x, 1) over the same window",
             first_value_nth_value),
    Relation("value-at-current-row", "last_value(x) over a frame ending at the current row is x",
             value_at_current_row),
    Relation("batching", "a window over a batched input equals the unbatched one", batching),
)


def relation(name: str) -> Relation:
    return next(r for r in RELATIONS if r.name == name)
