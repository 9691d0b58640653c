"""The rows of the conformance matrix: what a case exercises, axis by axis.

A row is `"axis/value"` (`"function/lag"`, `"frame bound/n PRECEDING"`,
`"null ordering/DESC NULLS FIRST"`). Each case is described once, when it
runs, as the rows of the query and its data (`case`) and the rows of each
window expression (`exprs`, by output column), so the report can pin a wrong
value on the expression that computed it rather than on everything the case
holds. Nothing here is hand-kept per engine: which rows an engine lacks comes
from its dialect's feature table (`declared_rows`), and which rows an
`unsupported` verdict refused comes from the feature it names
(`unsupported_rows`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import pyarrow as pa

from harness.cases.features import (
    dialect_features,
    expression_features,
    key_features,
    operator_features,
    shape_features,
    window_expressions,
)
from harness.core.conformance import invalid_kind
from harness.core.dialect import Dialect, Feature
from harness.core.errors import InvalidInput
from harness.core.model import BoundKind, WindowExpr, WindowSpec
from harness.core.types import TypeKind

# The matrix's axes, in the order the report shows them.
AXES = ("function", "frame mode", "frame bound", "exclusion", "null ordering", "order key type",
        "modifier", "named window", "window", "query shape", "operator", "data", "column type",
        "error conformance", "other")

BOUNDS = {
    BoundKind.UNBOUNDED_PRECEDING: "UNBOUNDED PRECEDING", BoundKind.PRECEDING: "n PRECEDING",
    BoundKind.CURRENT_ROW: "CURRENT ROW", BoundKind.FOLLOWING: "n FOLLOWING",
    BoundKind.UNBOUNDED_FOLLOWING: "UNBOUNDED FOLLOWING",
}
# Dialect features and the rows they stand for. A feature that is a whole
# axis (EXCLUDE) stands for every row of it.
FEATURE_ROWS: dict[str, tuple[str, ...]] = {
    Feature.GROUPS_FRAME.value: ("frame mode/GROUPS",),
    Feature.RANGE_OFFSET.value: ("frame bound/RANGE offset",),
    Feature.RANGE_INTERVAL.value: ("frame bound/RANGE INTERVAL offset",),
    Feature.RANGE_MIXED_INTERVAL_UNITS.value: ("frame bound/RANGE INTERVAL offset",
                                               "error conformance/valid: RANGE offsets of two interval units"),
    Feature.EXCLUDE.value: ("exclusion/*",),
    Feature.FRAME_ON_RANKING.value: ("frame bound/frame on a ranking function",),
    # Valid queries some engines refuse (`refusals`): also rows of error conformance.
    Feature.FRAME_START_AFTER_END.value: ("frame bound/start after end (empty)",
                                          "error conformance/valid: a frame that starts after it ends"),
    Feature.RANGE_WITHOUT_ORDER_BY.value: ("frame bound/RANGE without ORDER BY",
                                           "error conformance/valid: RANGE without ORDER BY"),
    Feature.IGNORE_NULLS.value: ("modifier/IGNORE NULLS",),
    Feature.NTH_VALUE_FROM_LAST.value: ("modifier/FROM LAST",),
    Feature.DISTINCT_WINDOW_AGGREGATE.value: ("modifier/DISTINCT",),
    Feature.FILTER_WINDOW_AGGREGATE.value: ("modifier/FILTER",),
    Feature.ORDERED_AGGREGATE.value: ("modifier/ORDER BY in aggregate",),
    Feature.NULLS_ORDER.value: ("null ordering/*",),
    Feature.NAMED_WINDOW.value: ("named window/WINDOW clause",),
    Feature.NAMED_WINDOW_REFINEMENT.value: ("named window/refines a named window",),
    Feature.LIMIT_OFFSET.value: ("operator/limit-offset",),
    Feature.FULL_JOIN.value: ("operator/full-join",),
    Feature.INTERVAL_LITERAL.value: ("data/INTERVAL literal",),
    Feature.NAN_LITERAL.value: ("data/NaN",),
    Feature.OFFSET_BEYOND_INT.value: ("frame bound/offset past INTEGER (near 2^63)",),
    Feature.FOLLOWING_FRAME_TO_HUGE_OFFSET.value: ("frame bound/n FOLLOWING to 2^31-1 FOLLOWING or more",),
    Feature.LAG_ROW_OFFSET.value: ("modifier/lag or lead offset per row",),
    Feature.LAG_ROW_DEFAULT.value: ("modifier/lag or lead default per row",),
    Feature.LAG_NULL_OFFSET.value: ("modifier/lag or lead NULL offset",),
    Feature.RANKING_ORDER_BY.value: ("modifier/ORDER BY inside a ranking function",),
}
SHAPE_ROWS = {
    "shape.top-n": "query shape/top-N filter over a derived table",
    "shape.qualify": "query shape/top-N filter in QUALIFY",
    "shape.top-n-siblings": "query shape/top-N filter with other windows beside the ranking",
    "shape.limit-lookahead": "query shape/LIMIT over lead/lag/nth_value ordered as the query",
    "shape.over-union": "query shape/windows over UNION ALL",
    "shape.shared-partition-prefix": "query shape/windows sharing a PARTITION BY prefix",
}
KEY_ROWS = {
    "window.order-null": "window/ORDER BY NULL",
    "window.order-constant": "window/ORDER BY a constant",
    "window.order-partition-key": "window/ORDER BY a PARTITION BY key",
    "window.expression-key": "window/expression as a key",
    "window.rows-without-order": "window/ROWS frame without ORDER BY",
}
DATA_ROWS = {"data.null": "data/NULL", "data.nan": "data/NaN", "data.infinity": "data/±Infinity",
             "data.negative-zero": "data/-0.0", "data.empty": "data/empty table",
             "data.long-partition": "data/long partitions (>= 1024 rows)",
             "data.multi-batch": "data/multi-batch input (> 8192 rows)"}
INVALID_QUERY = "error conformance/invalid: other reasons (overflow, division by zero, ...)"
KIND_LABELS = {
    TypeKind.BOOL: "BOOLEAN", TypeKind.INT8: "TINYINT", TypeKind.INT16: "SMALLINT",
    TypeKind.INT32: "INTEGER", TypeKind.INT64: "BIGINT", TypeKind.INT128: "HUGEINT",
    TypeKind.FLOAT32: "REAL", TypeKind.FLOAT64: "DOUBLE PRECISION", TypeKind.DECIMAL: "DECIMAL",
    TypeKind.STRING: "VARCHAR", TypeKind.DATE: "DATE", TypeKind.TIMESTAMP: "TIMESTAMP",
    TypeKind.INTERVAL: "INTERVAL", TypeKind.LIST: "ARRAY",
}


@dataclass(frozen=True)
class CaseRows:
    """What one case exercises: rows of the query and data, and of each window expression."""

    case: frozenset[str]
    exprs: dict[str, frozenset[str]]

    @cached_property  # every verdict of the case asks for it
    def everything(self) -> frozenset[str]:
        return self.case.union(*self.exprs.values())

    def all(self) -> frozenset[str]:
        return self.everything

    def as_json(self) -> dict:
        return {"case": sorted(self.case), "exprs": {k: sorted(v) for k, v in self.exprs.items()}}

    @classmethod
    def from_json(cls, doc: dict | None) -> CaseRows:
        doc = doc or {}
        return cls(frozenset(doc.get("case", ())),
                   {k: frozenset(v) for k, v in doc.get("exprs", {}).items()})


def case_rows(case) -> CaseRows:
    """The rows `case` exercises (its query, its tables' columns and values)."""
    from harness.cases.features import partition_features

    partitions = frozenset(DATA_ROWS[f] for f in partition_features(case))
    return CaseRows(query_rows(case) | table_rows(case.tables.values()) | partitions, expr_rows(case))


def query_rows(case) -> frozenset[str]:
    """The query's rows outside its window expressions: operators and the dialect
    features that belong to no one expression."""
    rows = {"operator/" + f.removeprefix("operator.") for f in operator_features(case.query)}
    rows |= {SHAPE_ROWS[f] for f in shape_features(case.query)}
    per_expr = set().union(*(f.features for f in expression_features(case.query).values()))
    for feature in dialect_features(case.query) - per_expr:
        rows.update(r for r in FEATURE_ROWS.get(feature, ()) if not r.endswith("*"))
    return frozenset(rows)


def expr_rows(case) -> dict[str, frozenset[str]]:
    schemas = tuple(case.schemas)
    described = expression_features(case.query)
    out = {}
    for name, (expr, spec) in window_expressions(case.query).items():
        rows = set(window_rows(expr, spec, schemas))
        for feature in described[name].features:
            rows.update(r for r in FEATURE_ROWS.get(feature, ()) if not r.endswith("*"))
        out[name] = frozenset(rows)
    return out


def window_rows(expr: WindowExpr, spec: WindowSpec, schemas: tuple = ()) -> Iterable[str]:
    from harness.cases.coverage import expr_type

    yield f"function/{expr.func.name}"
    frame = spec.frame
    yield f"frame mode/{frame.mode.value if frame is not None else 'default (no frame clause)'}"
    if frame is not None:
        yield f"frame bound/{BOUNDS[frame.start.kind]}"
        yield f"frame bound/{BOUNDS[frame.end.kind]}"
        if frame.start.kind is not BoundKind.UNBOUNDED_PRECEDING:
            yield "frame bound/moving start"
        if frame.exclusion is not None:
            yield f"exclusion/{frame.exclusion.value}"
    for key in spec.order_by:
        direction = "DESC" if key.descending else "ASC"
        yield f"null ordering/{direction} {key.nulls.value if key.nulls else '(default)'}"
        key_type = expr_type(key.expr, schemas)
        yield f"order key type/{type_label(key_type) if key_type else 'expression'}"
    yield "window/PARTITION BY" if spec.partition_by else "window/no PARTITION BY"
    yield "window/ORDER BY" if spec.order_by else "window/no ORDER BY"
    yield from sorted(KEY_ROWS[f] for f in key_features(spec))


def table_rows(tables: Iterable[pa.Table]) -> frozenset[str]:
    from harness.cases.features import data_features
    from harness.core.types import from_arrow

    tables = list(tables)
    rows = {DATA_ROWS[f] for f in data_features(tables)}
    for table in tables:
        for field in table.schema:
            if field.name.startswith("__wh_"):
                continue
            try:
                rows.add(f"column type/{type_label(from_arrow(field.type))}")
            except InvalidInput:  # a type the harness cannot name is still a type
                rows.add(f"column type/{field.type}")
    return frozenset(rows)


def invalid_rows(reason: str) -> frozenset[str]:
    """The error-conformance row of a query invalid by definition, from the
    reference's reason (a verdict's detail says it)."""
    kind = invalid_kind(reason)
    return frozenset({f"error conformance/invalid: {kind.label}" if kind else INVALID_QUERY})


def unsupported_rows(feature: str) -> tuple[str, ...]:
    """The rows an `unsupported` verdict's feature refuses (patterns: `axis/*` is the axis);
    `other/...` for a refusal in the engine's own words."""
    if feature in FEATURE_ROWS:
        return FEATURE_ROWS[feature]
    if feature in DATA_ROWS:
        return (DATA_ROWS[feature],)
    head, _, name = feature.partition(".")
    if head == "function":
        return (f"function/{name}",)
    if head == "window" and (name.endswith("-without-order-by") or name.endswith("-moving-frame")):
        return (f"function/{name.split('-', 1)[0]}",)  # window.lag-without-order-by
    if head in ("type", "data"):
        return (f"column type/{_type_label(name)}",)
    return (f"other/{feature if len(feature) <= 60 else feature[:57] + '...'}",)


def _type_label(name: str) -> str:
    """`decimal` (from `type.decimal`) -> `DECIMAL`, as `type_label` names the kind."""
    from harness.core.types import TypeKind

    try:
        return KIND_LABELS.get(TypeKind({"boolean": "bool"}.get(name, name)), name)
    except ValueError:
        return name


def type_label(t) -> str:
    """A type's row label: its kind, without precision and scale (DECIMAL, not DECIMAL(10,2))."""
    return KIND_LABELS.get(t.kind) or t.kind.value.upper()


def matches(row: str, pattern: str) -> bool:
    return row == pattern or (pattern.endswith("/*") and row.startswith(pattern[:-1]))


def declared_rows(dialect: Dialect) -> dict[str, str]:
    """Row pattern -> the dialect declaration that makes it unsupported (for the matrix)."""
    out: dict[str, str] = {}
    for feature in sorted(dialect.unsupported, key=lambda f: f.value):
        for row in FEATURE_ROWS.get(feature.value, (f"other/{feature.value}",)):
            out[row] = f"declared missing by the {dialect.name} dialect ({feature.value})"
    for name in sorted(dialect.missing_functions):
        out[f"function/{name}"] = f"the {dialect.name} dialect has no {name}"
    for name in sorted(dialect.unrepresentable):
        for row in unsupported_rows(name):
            out.setdefault(row, f"the {dialect.name} engine cannot hold {name.partition('.')[2]} values")
    return out


def axis_of(row: str) -> str:
    return row.partition("/")[0]
