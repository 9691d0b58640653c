"""What a case exercises, as names: the vocabulary of baseline matchers (and reports).

A case's features are strings from one vocabulary (`FEATURES`):

- the dialect features (`harness.core.dialect.Feature`: `frame.groups`,
  `window.filter`, `null-treatment`, ...), found by writing the query with a
  dialect that supports everything and records what the writer asked for,
  so a feature is detected by the same code that refuses it;
- frame modes and exclusions (`frame.rows`, `frame.default`, `exclude.ties`);
- operators around the windows (`operator.join`, `operator.group-by`, ...);
- query shapes where optimizer bugs live (`shape.top-n`, `shape.qualify`,
  `shape.top-n-siblings`, `shape.limit-lookahead`, `shape.over-union`,
  `shape.shared-partition-prefix`: `shape_features`) and window keys that
  order nothing or are expressions (`window.order-null`,
  `window.order-constant`, `window.order-partition-key`,
  `window.expression-key`, `window.rows-without-order`: per expression);
- the data (`data.null`, `data.nan`, `data.infinity`, `data.negative-zero`,
  `data.empty`; `data.multi-batch`, a table of more than BATCH_ROWS rows;
  `data.long-partition`, a window partition of at least LONG_PARTITION_ROWS
  rows, counted over the table's rows before any WHERE or join).

Window expressions are also described one by one (`ExprFeatures`), so that a
wrong value can be pinned on the expression that computed it.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from harness.core.dialect import Dialect, Feature
from harness.core.functions import ARGUMENT_ORDERED_RANKING
from harness.core.model import (
    COMPARISONS,
    BinaryOp,
    BinaryOperator,
    BoundKind,
    Cast,
    Column,
    FrameMode,
    Join,
    JoinKind,
    Literal,
    NamedWindow,
    Select,
    SubqueryRef,
    UnaryOp,
    UnionAll,
    WindowExpr,
    WindowSpec,
    With,
    resolve_window,
    walk,
    window_exprs,
)
from harness.core.model import Case as CaseExpr

FRAME_MODES = ("rows", "range", "groups", "default")
EXCLUSIONS = ("no-others", "current-row", "group", "ties")
OPERATORS = ("where", "join", "left-join", "full-join", "cross-join", "group-by", "having",
             "subquery", "order-by", "limit", "distinct", "union", "with")
DATA = ("null", "nan", "infinity", "negative-zero", "empty",
        # a RANGE offset frame over an integer key whose bound (key +- offset) lies
        # past the key's type for some key of the data: compared, never stored
        "range-bound-past-key-type", "long-partition", "multi-batch")
SHAPES = ("top-n", "qualify", "top-n-siblings", "limit-lookahead", "over-union",
          "shared-partition-prefix")
WINDOW_KEYS = ("order-null", "order-constant", "order-partition-key", "expression-key",
               "rows-without-order")
RANKINGS = frozenset({"row_number", "rank", "dense_rank"})
LOOKAHEAD = frozenset({"lead", "lag", "nth_value"})
# A long partition, and an input that spans engine batches (DataFusion's
# 8,192 rows; more than four of DuckDB's 2,048-row vectors).
LONG_PARTITION_ROWS = 1024
BATCH_ROWS = 8192

FEATURES: frozenset[str] = frozenset(
    [f.value for f in Feature]
    + [f"frame.{m}" for m in FRAME_MODES]
    + [f"exclude.{e}" for e in EXCLUSIONS]
    + [f"operator.{o}" for o in OPERATORS]
    + [f"data.{d}" for d in DATA]
    + [f"shape.{s}" for s in SHAPES]
    + [f"window.{k}" for k in WINDOW_KEYS]
    + ["window.ordered", "window.partitioned", "order.nulls-default", "frame.moving-start"]
)

# Dialect features that belong to one window expression: `expr_features` names them
# for the expression it describes, so that a matcher can ask about that one alone.
EXPR_LEVEL = frozenset(f.value for f in (
    Feature.EXCLUDE, Feature.GROUPS_FRAME, Feature.DISTINCT_WINDOW_AGGREGATE,
    Feature.FILTER_WINDOW_AGGREGATE, Feature.IGNORE_NULLS, Feature.NTH_VALUE_FROM_LAST,
    Feature.ORDERED_AGGREGATE, Feature.NAMED_WINDOW, Feature.NAMED_WINDOW_REFINEMENT,
    Feature.RANKING_ORDER_BY,
))


@dataclass(frozen=True)
class ExprFeatures:
    """One window expression: its function and frame mode, and its own features."""

    function: str
    frame: str  # one of FRAME_MODES
    features: frozenset[str]


@dataclass(frozen=True, eq=False)
class _Recording(Dialect):
    """Supports everything, and notes each feature the writer asks about."""

    asked: set[str] = field(default_factory=set)

    def supports(self, feature: Feature) -> bool:
        self.asked.add(feature.value)
        return True


def dialect_features(query) -> frozenset[str]:
    """The dialect features the writer needs for `query`."""
    from harness.core.errors import HarnessError
    from harness.sql.writer import write

    recording = _Recording(name="recording")
    # A query the canonical writer cannot spell still has the features met so far.
    with contextlib.suppress(HarnessError):
        write(query, recording)
    return frozenset(recording.asked)


def expr_features(expr: WindowExpr, spec: WindowSpec,
                  windows: tuple[NamedWindow, ...] = ()) -> ExprFeatures:
    """`spec` is the expression's window with any named window resolved;
    `windows`, the WINDOW clause it was resolved in."""
    func = expr.func
    frame = spec.frame
    mode = frame.mode.value.lower() if frame is not None else "default"
    out = {f"frame.{mode}"}
    if frame is not None and frame.start.kind is not BoundKind.UNBOUNDED_PRECEDING:
        out.add("frame.moving-start")  # rows leave the frame as it moves
    if frame is not None and frame.exclusion is not None:
        out.add(Feature.EXCLUDE.value)
        out.add("exclude." + frame.exclusion.value.lower().replace(" ", "-"))
    if mode == "groups":
        out.add(Feature.GROUPS_FRAME.value)
    if spec.order_by:
        out.add("window.ordered")
        if any(k.nulls is None for k in spec.order_by):
            out.add("order.nulls-default")
    if spec.partition_by:
        out.add("window.partitioned")
    out |= key_features(spec)
    for used, feature in (
        (func.distinct, Feature.DISTINCT_WINDOW_AGGREGATE),
        (func.filter is not None, Feature.FILTER_WINDOW_AGGREGATE),
        (func.null_treatment is not None, Feature.IGNORE_NULLS),
        (func.from_last is not None, Feature.NTH_VALUE_FROM_LAST),
        (bool(func.order_by) and func.name not in ARGUMENT_ORDERED_RANKING, Feature.ORDERED_AGGREGATE),
        (bool(func.order_by) and func.name in ARGUMENT_ORDERED_RANKING, Feature.RANKING_ORDER_BY),
        (expr.window.base is not None, Feature.NAMED_WINDOW),
        (_refines(expr.window, windows), Feature.NAMED_WINDOW_REFINEMENT),
    ):
        if used:
            out.add(feature.value)
    return ExprFeatures(func.name, mode, frozenset(out))


def key_features(spec: WindowSpec) -> set[str]:
    """Keys of a resolved window that order nothing (NULL, a constant, a
    PARTITION BY key), keys that are expressions, a ROWS frame without ORDER BY."""
    out = set()
    for key in spec.order_by:
        if isinstance(key.expr, Literal):
            out.add("window.order-null" if key.expr.value is None else "window.order-constant")
        elif key.expr in spec.partition_by:
            out.add("window.order-partition-key")
    keys = [*spec.partition_by, *(k.expr for k in spec.order_by)]
    if any(isinstance(e, (BinaryOp, UnaryOp, CaseExpr, Cast)) for e in keys):
        out.add("window.expression-key")  # not a column, constant or aggregate
    if not spec.order_by and spec.frame is not None and spec.frame.mode is FrameMode.ROWS:
        out.add("window.rows-without-order")
    return out


def shape_features(query) -> frozenset[str]:
    """The query shapes of `SHAPES` that `query` has, anywhere in it:

    - `top-n`: WHERE over a derived table compares a row_number/rank/dense_rank
      column of it with a constant; `qualify`: QUALIFY does so on a ranking;
      `top-n-siblings`: either, with other windows beside the ranking;
    - `limit-lookahead`: LIMIT/OFFSET over lead/lag/nth_value whose window's
      keys (PARTITION BY, then ORDER BY) lead the query's ORDER BY;
    - `over-union`: windows over a derived table that is a UNION ALL;
    - `shared-partition-prefix`: windows of one SELECT partitioned by keys
      one of which is a proper prefix of another's.
    """
    out: set[str] = set()
    for node in walk(query):
        if not isinstance(node, Select):
            continue
        windows = window_exprs(node)
        specs = [resolve_window(w.window, node.windows, lenient=True) for w in windows]
        if node.qualify is not None and any(w.func.name in RANKINGS for w in window_exprs(node.qualify)):
            out.add("shape.qualify")
            if len([w for w in windows if w not in window_exprs(node.qualify)]) > 0:
                out.add("shape.top-n-siblings")
        ranked = _ranked_columns(node.source)
        if ranked and any(isinstance(e, Column) and e.name in ranked[1] for e in _compared(node.where)):
            out.add("shape.top-n")
            if ranked[0] > 0:
                out.add("shape.top-n-siblings")
        if node.limit is not None or node.offset is not None:
            leading = [k.expr for k in node.order_by]
            for w, spec in zip(windows, specs, strict=True):
                keys = [*spec.partition_by, *(k.expr for k in spec.order_by)]
                if w.func.name in LOOKAHEAD and spec.order_by and leading[:len(keys)] == keys:
                    out.add("shape.limit-lookahead")
        if windows and isinstance(node.source, SubqueryRef) and isinstance(node.source.query, UnionAll):
            out.add("shape.over-union")
        partitions = {s.partition_by for s in specs if s.partition_by}
        if any(a != b and b[:len(a)] == a for a in partitions for b in partitions):
            out.add("shape.shared-partition-prefix")
    return frozenset(out)


def _ranked_columns(source: object) -> tuple[int, set[str]] | None:
    """(how many other windows, the ranking columns) of a derived table's SELECT."""
    if not isinstance(source, SubqueryRef) or not isinstance(source.query, Select):
        return None
    items = source.query.items
    ranked = {i.alias for i in items if isinstance(i.expr, WindowExpr) and i.alias is not None
              and i.expr.func.name in RANKINGS}
    others = sum(1 for i in items if isinstance(i.expr, WindowExpr)) - len(ranked)
    return (others, ranked) if ranked else None


def _compared(where: object) -> list[object]:
    """The operands that WHERE compares with a literal (through AND)."""
    if not isinstance(where, BinaryOp):
        return []
    if where.op is BinaryOperator.AND:
        return _compared(where.left) + _compared(where.right)
    if where.op in COMPARISONS:
        if isinstance(where.right, Literal):
            return [where.left]
        if isinstance(where.left, Literal):
            return [where.right]
    return []


def _refines(spec: WindowSpec, windows: tuple[NamedWindow, ...]) -> bool:
    """Whether a window refines a named one: `OVER (w ORDER BY ...)`, or `OVER w`
    where `w AS (w1 ...)` does (`w2 AS (w1)` counts: it names w1 inside parentheses)."""
    seen: set[str] = set()
    while spec.base is not None and spec.base not in seen:
        if spec != WindowSpec(base=spec.base) or seen:
            return True
        seen.add(spec.base)
        spec = next((w.spec for w in windows if w.name == spec.base), WindowSpec())
    return False


def expression_features(query) -> dict[str, ExprFeatures]:
    """`ExprFeatures` of every window expression, by output name (as
    `window_expressions` names them)."""
    out: dict[str, ExprFeatures] = {}
    for node in walk(query):
        if isinstance(node, Select):
            for name, (expr, spec) in _select_windows(node, len(out)).items():
                out[name] = expr_features(expr, spec, node.windows)
    return out


def window_expressions(query) -> dict[str, tuple[WindowExpr, WindowSpec]]:
    """Window expressions by output name (the alias, else `#n` by position),
    each with its resolved window."""
    found: dict[str, tuple[WindowExpr, WindowSpec]] = {}
    for node in walk(query):
        if isinstance(node, Select):
            found.update(_select_windows(node, len(found)))
    return found


def _select_windows(node: Select, before: int) -> dict[str, tuple[WindowExpr, WindowSpec]]:
    from harness.core.model import SelectItem

    named = {item.alias: item for item in node.items if isinstance(item, SelectItem)}
    found: dict[str, tuple[WindowExpr, WindowSpec]] = {}
    for expr in window_exprs(node):
        spec = resolve_window(expr.window, node.windows, lenient=True)
        alias = next((a for a, item in named.items() if item.expr is expr), None)
        found[alias or f"#{before + len(found) + 1}"] = (expr, spec)
    return found


def operator_features(query) -> frozenset[str]:
    out: set[str] = set()
    for node in walk(query):
        if isinstance(node, Select):
            for used, name in ((node.where is not None, "where"), (bool(node.group_by), "group-by"),
                               (node.having is not None, "having"), (bool(node.order_by), "order-by"),
                               (node.limit is not None or node.offset is not None, "limit"),
                               (node.distinct, "distinct")):
                if used:
                    out.add(f"operator.{name}")
        elif isinstance(node, Join):
            out.add("operator." + {JoinKind.LEFT: "left-join", JoinKind.FULL: "full-join",
                                   JoinKind.CROSS: "cross-join"}.get(node.kind, "join"))
            out.add("operator.join")
        elif isinstance(node, SubqueryRef):
            out.add("operator.subquery")
        elif isinstance(node, UnionAll):
            out.add("operator.union")
        elif isinstance(node, With):
            out.add("operator.with")
    return frozenset(out)


def data_features(tables: Iterable[pa.Table]) -> frozenset[str]:
    out: set[str] = set()
    for table in tables:
        if table.num_rows == 0:
            out.add("data.empty")
        if table.num_rows > BATCH_ROWS:
            out.add("data.multi-batch")
        for column in table.columns:
            if column.null_count:
                out.add("data.null")
            if pa.types.is_floating(column.type):
                out |= _float_features(column)
    return frozenset(out)


def _float_features(column: pa.ChunkedArray) -> set[str]:
    out = set()
    if pc.any(pc.is_nan(column)).as_py():
        out.add("data.nan")
    if pc.any(pc.is_inf(column)).as_py():
        out.add("data.infinity")
    for value in column.to_pylist():  # -0.0 == 0.0 for compute kernels: look at the sign
        if value == 0.0 and math.copysign(1.0, value) < 0:
            out.add("data.negative-zero")
            break
    return out


def partition_features(case) -> frozenset[str]:
    """`data.long-partition` when a window of the query has a partition of at
    least LONG_PARTITION_ROWS rows in the case's tables: partitions by plain
    columns counted in the table that holds them, a window without PARTITION
    BY being one partition of the largest table (expression keys: not counted)."""
    tables = list(case.tables.values())
    if max((t.num_rows for t in tables), default=0) < LONG_PARTITION_ROWS:
        return frozenset()
    for _expr, spec in window_expressions(case.query).values():
        if _longest_partition(spec, tables) >= LONG_PARTITION_ROWS:
            return frozenset({"data.long-partition"})
    return frozenset()


def _longest_partition(spec: WindowSpec, tables: list[pa.Table]) -> int:
    from harness.core.model import Column

    if not spec.partition_by:
        return max(t.num_rows for t in tables)
    if not all(isinstance(k, Column) for k in spec.partition_by):
        return 0
    names = list(dict.fromkeys(k.name for k in spec.partition_by))
    table = next((t for t in tables if all(n in t.column_names for n in names)), None)
    if table is None or table.num_rows == 0:
        return 0
    counts = table.select(names).group_by(names).aggregate([([], "count_all")])
    return pc.max(counts.column("count_all")).as_py()


def query_features(case) -> frozenset[str]:
    """What `case` exercises outside its window expressions: operators, shapes,
    data, and the dialect features that are not one expression's."""
    out = ((dialect_features(case.query) - EXPR_LEVEL) | operator_features(case.query)
           | shape_features(case.query) | data_features(case.tables.values()) | partition_features(case))
    if _range_bound_past_key_type(case):
        out |= {"data.range-bound-past-key-type"}
    return out


_INT_BITS = {pa.int8(): 8, pa.int16(): 16, pa.int32(): 32, pa.int64(): 64}


def _range_bound_past_key_type(case) -> bool:
    """Does a RANGE frame offset over an integer key (a column of that name in
    some table of the case) reach past the key's type from the data's smallest
    or largest key? (`k BIGINT = 2^63 - 1` with `1 FOLLOWING`, `k = 1` with
    `9223372036854775807 FOLLOWING`.) By name: a derived table that renames a
    column is not followed."""
    from harness.core.model import Column, FrameMode
    from harness.sql.frames import offset_value

    for _, (_, spec) in window_expressions(case.query).items():
        frame = spec.frame
        if frame is None or frame.mode is not FrameMode.RANGE or len(spec.order_by) != 1:
            continue
        key = spec.order_by[0].expr
        if not isinstance(key, Column):
            continue
        offsets = [offset_value(b.offset) for b in (frame.start, frame.end) if b.offset is not None]
        offsets = [v for v in offsets if type(v) is int]
        if not offsets:
            continue
        for table in case.tables.values():
            if key.name not in table.column_names or table.column(key.name).type not in _INT_BITS:
                continue
            column = table.column(key.name)
            bits = _INT_BITS[column.type]
            low, high = pc.min(column).as_py(), pc.max(column).as_py()
            if low is None:
                continue
            largest = max(offsets)
            if high + largest > 2 ** (bits - 1) - 1 or low - largest < -(2 ** (bits - 1)):
                return True
    return False


def case_features(case) -> frozenset[str]:
    """Everything `case` exercises, query and data alike."""
    per_expr = set()
    for described in expression_features(case.query).values():
        per_expr |= described.features
    return query_features(case) | per_expr
