"""What an evaluation takes and returns: the peer-order hook, the default
profile and the answer. Every operator module may import this one; the entry
point (`api.evaluate`) sits above them all."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from harness.core.model import Expr, SortKey
from harness.core.semantics import STANDARD

# A window's identity for tie handling: its resolved PARTITION BY and ORDER BY.
WindowKey = tuple[tuple[Expr, ...], tuple[SortKey, ...]]

# Chooses the order of one peer group (rows tied on the window's ORDER BY
# within one partition). Called with the window's key and the group's rows in
# input order (each row maps the window input's column names to values; a
# hidden row-id column travels along when the table has one). Returns a
# permutation of range(len(rows)): position i of the result is the index of
# the row placed i-th.
PeerOrder = Callable[[WindowKey, Sequence[Mapping[str, object]]], Sequence[int]]


# The profile used when a caller names none: the standard's choices.
DEFAULT_PROFILE = STANDARD


@dataclass
class Evaluation:
    """The reference's answer to a query.

    - `table`: the result, column names as the select list's output names
      (the alias; else the column's name; else `_col<i>`, i the 0-based
      output position).
    - `magnitudes`: for each FLOAT output column, per row, the scale against
      which float error is judged: for a float aggregate over a frame (or a
      group), the sum of |x| over the rows aggregated (divided by their count
      for avg; the mean square for var_*, its root for stddev_*), carried
      through subqueries when the column is passed on unchanged; for any
      other float value, its absolute value; None where the value is NULL.
      Non-float columns have no entry (the key is absent).
    - `peer_groups`: one (WindowKey, size) per call of the `peer_order` hook,
      in call order: the tied peer groups (size > 1) of every window used by
      at least one order-sensitive window expression. Recorded also when no
      hook is given (the calls that would have been made), so a caller can
      learn the groups first and then enumerate permutations by call index.
      Calls come window by window (in order of first appearance in the
      query, inner queries first), partition by partition (in order of first
      appearance in the window's input), peer group by peer group (in window
      order): an order fixed before any permutation is applied.
    """

    table: pa.Table
    magnitudes: dict[str, list[float | None]] = field(default_factory=dict)
    peer_groups: list[tuple[WindowKey, int]] = field(default_factory=list)

