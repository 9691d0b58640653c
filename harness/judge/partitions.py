"""The comparator's fast path at scale: decide partitions in Arrow, search only the rest.

An answer that is not the reference's bit for bit (`identical_answer`) is
first compared column by column (`harness.judge.columnar`), aligned by row
id, with the reference's default evaluation. Every cell provably equal:
a match, as the row-by-row comparator would say. Else, in a query whose
rows each fall into one partition of every window (one table, no subquery,
no LIMIT, OFFSET or QUALIFY, every window PARTITION BY the same columns of
that table; see `local_key`), each partition is a unit of the peer search
(`harness.judge.peer_search`, one column within one partition) and is
decided here as it decides one, by the first of its first two candidates
that reproduces all its cells: the default order, then the engine's own
order of the peers (its row_number witness), the latter evaluated only over
the partitions the former left, and only for the order-sensitive columns.
A cell that depends on no peer order must equal the default evaluation's.

The partitions left undecided are judged by the row-by-row comparator and
its tie search, over just their rows: the engine's rows of those partitions
(by row id) against the reference evaluated over the input rows of those
partitions. Window values depend only on their partition's rows, so that is
the same evaluation restricted, and what it decides for them is what it
would decide over the whole answer; the partitions decided here it would
decide the same (its first candidates are these two). So the verdict is
the row-by-row one; only the note on which orders matched may be shorter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import pyarrow as pa
import pyarrow.compute as pc

from harness.core.model import (
    SUBQUERY_EXPRS,
    Column,
    Select,
    Star,
    SubqueryRef,
    TableRef,
    resolve_window,
    walk,
    window_exprs,
)
from harness.judge.columnar import aligned, any_set, column_masks
from harness.judge.instrument import ROWID, Plan, sensitive_window_keys, window_key
from harness.judge.oracle import Oracle
from harness.judge.peer_search import plain_columns
from reference_impl import PeerOrder

ANOTHER_ORDER = "matched under another order of tied rows"
OWN_ORDERS = ("each order-sensitive expression matched under its own order of tied rows "
              "(searched partition by partition)")


@dataclass(frozen=True)
class LocalKey:
    """The one table a query reads and the columns every window partitions it by."""

    table: str
    columns: tuple[str, ...]


@dataclass(frozen=True)
class Decided:
    """What the fast path decided: `undecided` partitions (a table of their key
    values, None when every partition was decided) and which of the two
    candidates decided the others (0 the default order, 1 the engine's)."""

    candidates: frozenset[int]
    undecided: pa.Table | None


def local_key(plan: Plan, tables: dict[str, pa.Table]) -> LocalKey | None:
    """The query's partitioning when each row's window values depend only on
    the input rows of its partition, with a key Arrow groups as SQL does
    (integers, strings, booleans, dates: no float, whose -0.0 and 0.0 are one
    partition); else None."""
    query = plan.query
    if not isinstance(query, Select) or not isinstance(query.source, TableRef) or plan.rowid_column is None:
        return None
    if query.group_by or query.having is not None or query.distinct or query.qualify is not None:
        return None
    if plan.limit is not None or plan.offset is not None:
        return None
    if any(isinstance(n, (*SUBQUERY_EXPRS, SubqueryRef)) for n in walk(query)):
        return None
    specs = [resolve_window(w.window, query.windows, lenient=True) for i in query.items for w in window_exprs(i.expr)]
    keys = {s.partition_by for s in specs}
    if len(keys) != 1 or not all(isinstance(e, Column) for e in next(iter(keys))):
        return None
    table = tables.get(query.source.name)
    columns = tuple(e.name for e in next(iter(keys)))
    if table is None or ROWID not in table.column_names or len(columns) != 1 \
            or any(c not in table.column_names for c in columns):
        return None  # one key column: `restrict` keeps a NULL key's partition, a join would not
    if not all(_groups_as_sql(table.schema.field(c).type) for c in columns):
        return None
    return LocalKey(query.source.name, columns)


def _groups_as_sql(t: pa.DataType) -> bool:
    return (pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t)
            or pa.types.is_boolean(t) or pa.types.is_date32(t))


def witness_applies(plan: Plan) -> bool:
    """Whether the peer search splits this query into units that are its
    partitions and tries the engine's witness second: every window the select
    list holds is one an order-sensitive column reads, and the engine's
    row_number of each was returned (`peer_search._layout` refuses a window
    no such column reads)."""
    keys_of = sensitive_window_keys(plan.query)
    if not keys_of or not plan.witness_columns:
        return False
    hidden = [k.column for k in plan.order_keys or () if k.column >= plan.visible]
    if not plain_columns(plan.query, hidden):
        return False  # the search goes over the whole query, one order for all partitions
    wanted = set().union(*keys_of.values())
    query = plan.query
    shown = {window_key(resolve_window(w.window, query.windows, lenient=True))
             for item in query.items for w in window_exprs(item.expr)}
    return shown <= wanted and wanted <= {k for k, _ in plan.witness_columns}


def engine_order(actual: pa.Table, plan: Plan) -> PeerOrder:
    """The peer order the engine's row_number witnesses name, as `compare._rn_order`."""
    ids = actual.column(plan.rowid_column).to_pylist()
    positions = {key: dict(zip(ids, actual.column(c).to_pylist(), strict=True))
                 for key, c in plan.witness_columns}
    return order_by_positions(positions)


def order_by_positions(positions: dict[object, dict[object, object]]) -> PeerOrder:
    """Each peer group of a window in the order of its rows' positions (row id -> position)."""

    def order(key: object, group: Sequence[dict]) -> Sequence[int]:
        seen = positions.get(key, {})
        return sorted(
            range(len(group)),
            key=lambda i: (seen.get(group[i].get(ROWID)) is None, seen.get(group[i].get(ROWID)) or 0, i),
        )

    return order


def sensitive_only(plan: Plan) -> Select:
    """The query with only its order-sensitive user columns and the row id: the
    witness evaluation needs nothing else (each column's values are its own)."""
    query = plan.query
    assert isinstance(query, Select)
    kept = sorted(plan.sensitive_columns) + [plan.rowid_column]
    return replace(query, items=tuple(query.items[c] for c in kept), order_by=())


def narrowed(tables: dict[str, pa.Table], key: LocalKey, query: Select) -> dict[str, pa.Table]:
    """The query's table with only the columns it reads (and the row id): the
    reference turns every column of its input into Python values."""
    if any(isinstance(n, Star) for n in walk(query)):
        return tables
    table = tables[key.table]
    read = {n.name.lower() for n in walk(query) if isinstance(n, Column)} | {ROWID}
    # Lower case both sides: a superset of what the reference's name lookup finds.
    return {**tables, key.table: table.select([c for c in table.column_names if c.lower() in read])}


def partition_of(table: pa.Table, key: LocalKey, ids: pa.ChunkedArray) -> pa.Table:
    """The partition key of each row id, as columns `__k0`... (no name of the user's)."""
    where = pc.index_in(ids, value_set=table.column(ROWID).combine_chunks())
    source = table.select(list(key.columns)).take(where)
    return source.rename_columns([f"__k{i}" for i in range(len(key.columns))])


def restrict(tables: dict[str, pa.Table], key: LocalKey, values: pa.Table) -> dict[str, pa.Table]:
    """The input tables with only the rows of these partitions (`__k0` of
    `values`), in input order, so the reference's default order of peers is
    kept. A NULL key is a partition too (`skip_nulls=False`)."""
    table = tables[key.table]
    kept = pc.is_in(table.column(key.columns[0]), value_set=values.column(0).combine_chunks(), skip_nulls=False)
    return {**tables, key.table: table.filter(kept)}


def rows_of_partitions(actual: pa.Table, rowid: int, tables: dict[str, pa.Table], key: LocalKey) -> pa.Table:
    """The engine's rows whose row id is among the restricted input's."""
    return actual.filter(pc.is_in(actual.column(rowid), value_set=tables[key.table].column(ROWID).combine_chunks()))


def decide(actual: pa.Table, plan: Plan, oracle: Oracle, judged: Sequence[int]) -> Decided | None:
    """The partitions decided as the peer search would (module docstring), or
    None when the answer is not for this path (the row-by-row comparator then
    judges all of it)."""
    default = oracle.evaluate()
    both = aligned(actual, default.table, plan.rowid_column)
    if both is None:
        return None
    mine, theirs, order = both
    masks = column_masks(mine, theirs, order, judged, default.magnitudes)
    if masks is None:
        return None
    if not any(any_set(m) for m in masks.values()):
        return Decided(frozenset({0}), None)
    key = local_key(plan, dict(oracle.tables))
    if key is None:
        return None
    parts = partition_of(oracle.tables[key.table], key, mine.column(plan.rowid_column))
    sensitive = [c for c in judged if c in plan.sensitive_columns]
    fixed = [c for c in judged if c not in plan.sensitive_columns]
    flags = _partition_flags(parts, {f"d{c}": masks[c] for c in sensitive}, [masks[c] for c in fixed])
    if witness_applies(plan) and sensitive:
        return _with_witness(actual, plan, oracle, key, flags, sensitive)
    return _decided(flags, _any_column(flags, [*(f"d{c}" for c in sensitive), "fixed"]), frozenset({0}))


def _partition_flags(parts: pa.Table, named: dict[str, pa.Array], fixed: Sequence[pa.Array]) -> pa.Table:
    """Per partition (its key `__k0`...): whether each named mask is set in some
    row of it, and whether any of the `fixed` masks is (`fixed`)."""
    table = parts
    for name, mask in named.items():
        table = table.append_column(name, mask)
    if fixed:
        table = table.append_column("fixed", _or_all(fixed, parts.num_rows))
    flags = [n for n in table.column_names if n not in parts.column_names]
    grouped = table.group_by(parts.column_names, use_threads=False).aggregate([(n, "any") for n in flags])
    return grouped.rename_columns([n.removesuffix("_any") for n in grouped.column_names])


def _or_all(masks: Sequence[pa.Array], length: int) -> pa.Array:
    out = pa.array([False] * length)
    for m in masks:
        out = pc.or_(out, m.combine_chunks() if isinstance(m, pa.ChunkedArray) else m)
    return out


def _any_column(flags: pa.Table, names: Sequence[str]) -> pa.Array:
    return _or_all([pc.fill_null(flags.column(n), False) for n in names if n in flags.column_names],
                   flags.num_rows)


def _decided(flags: pa.Table, bad: pa.Array, candidates: frozenset[int]) -> Decided:
    undecided = flags.select([n for n in flags.column_names if n.startswith("__k")]).filter(bad)
    return Decided(candidates, undecided if undecided.num_rows else None)


def _with_witness(actual: pa.Table, plan: Plan, oracle: Oracle, key: LocalKey, flags: pa.Table,
                  sensitive: Sequence[int]) -> Decided | None:
    """The partitions the default order left, tried under the engine's order:
    the order-sensitive columns only, over those partitions' rows only."""
    left = flags.filter(_any_column(flags, [f"d{c}" for c in sensitive]))
    tables = restrict(dict(oracle.tables), key, left)
    query = sensitive_only(plan)
    witness = Oracle(query, narrowed(tables, key, query), oracle.profile).evaluate(engine_order(actual, plan))
    mine = rows_of_partitions(actual.select([*sensitive, plan.rowid_column]), len(sensitive), tables, key)
    both = aligned(mine, witness.table, len(sensitive))
    if both is None:
        return None
    mine, theirs, order = both
    masks = column_masks(mine, theirs, order, range(len(sensitive)), witness.magnitudes)
    if masks is None:
        return None
    parts = partition_of(oracle.tables[key.table], key, mine.column(len(sensitive)))
    again = _partition_flags(parts, {f"w{c}": masks[i] for i, c in enumerate(sensitive)}, [])
    merged = flags.join(again, parts.column_names, join_type="left outer")
    undecided = [pc.and_(pc.fill_null(merged.column(f"d{c}"), False), pc.fill_null(merged.column(f"w{c}"), False))
                 for c in sensitive]
    bad = _or_all([*undecided, *([merged.column("fixed")] if "fixed" in merged.column_names else [])],
                  merged.num_rows)
    return _decided(merged, bad, _candidates(merged, sensitive))


def _candidates(merged: pa.Table, sensitive: Sequence[int]) -> frozenset[int]:
    """Which candidate decided the units (a sensitive column in a partition):
    the default where it had no difference, the witness where it had."""
    found = set()
    for c in sensitive:
        differs = pc.fill_null(merged.column(f"d{c}"), False)
        if not pc.all(differs).as_py():
            found.add(0)
        if pc.any(pc.and_(differs, pc.invert(pc.fill_null(merged.column(f"w{c}"), False)))).as_py():
            found.add(1)
    return frozenset(found)


def order_note(candidates: frozenset[int] | set[object]) -> tuple[str, ...]:
    """The peer search's note on the candidates that decided its units."""
    if candidates <= {0}:
        return ()
    return (ANOTHER_ORDER,) if len(candidates) == 1 else (OWN_ORDERS,)


def merged_notes(notes: Sequence[str], candidates: frozenset[int]) -> tuple[str, ...]:
    """The row-by-row judgement's notes on the undecided partitions, its note
    on orders merged with the candidates that decided the others."""
    orders = {n for n in notes if n == ANOTHER_ORDER or n.startswith("each order-sensitive expression")}
    if not orders:
        return (*notes, *order_note(candidates))
    theirs = {"another"} if orders == {ANOTHER_ORDER} else {"one", "another"}
    return (*(n for n in notes if n not in orders), *order_note(candidates | theirs))
