"""Query shapes where optimizer bugs live (issue 19, item 3), as the generator draws them.

Each shape (`harness.cases.features.SHAPES`, and the window keys of
`WINDOW_KEYS`) appears in a seeded sample, only when its swarm flag is on;
its canonical SQL round-trips, the reference evaluates it, every engine's
dialect writes it; and the draws keep the answer determined: a row_number a
top-N filter reads is over a total order where no witness reveals the
engine's, a LIMIT over lead/lag/nth_value is ordered as the window (which
ends with the row key), and an integer expression key cannot overflow.
"""

from __future__ import annotations

from collections import Counter
from functools import cache

import pytest

from harness.cases.axes import case_rows
from harness.cases.features import FEATURES, SHAPES, WINDOW_KEYS, case_features
from harness.core.errors import EvaluationError, ReferenceGap, Unsupported
from harness.core.model import (
    BinaryOp,
    BinaryOperator,
    Cast,
    Column,
    Select,
    SubqueryRef,
    UnaryOp,
    WindowExpr,
    resolve_window,
    walk,
    window_exprs,
)
from harness.engines.registry import get_dialect
from harness.generate.cases import GeneratedCase, generate_case
from harness.generate.sources import Shape
from harness.generate.swarm import Swarm
from harness.judge.instrument import instrument, with_rowid
from harness.judge.oracle import Oracle
from harness.sql import parse, write

SEEDS = 400
NAMES = tuple(f"shape.{s}" for s in SHAPES) + tuple(f"window.{k}" for k in WINDOW_KEYS)
# The flag each shape is drawn behind (window.order-partition-key and
# shape.shared-partition-prefix also arise from plain draws of the same column).
FLAGS = {
    "shape.top-n": Swarm.TOP_N, "shape.qualify": Swarm.QUALIFY,
    "shape.limit-lookahead": Swarm.LOOKAHEAD_LIMIT, "shape.over-union": Swarm.UNION_SOURCE,
    "window.order-null": Swarm.DEGENERATE_ORDER, "window.order-constant": Swarm.DEGENERATE_ORDER,
    "window.expression-key": Swarm.EXPRESSION_KEYS, "window.rows-without-order": None,
}
DIALECTS = ("duckdb", "datafusion", "sqlite", "postgres", "spark")


@cache
def sample() -> tuple[tuple[GeneratedCase, frozenset[str]], ...]:
    out = []
    for i in range(SEEDS):
        g = generate_case(f"shapes/{i}", invalid_share=0.0)
        out.append((g, case_features(g.case) & frozenset(NAMES)))
    return tuple(out)


def by_shape() -> dict[str, list[GeneratedCase]]:
    found: dict[str, list[GeneratedCase]] = {name: [] for name in NAMES}
    for g, names in sample():
        for name in names:
            found[name].append(g)
    return found


def test_the_shapes_are_in_the_feature_vocabulary() -> None:
    assert set(NAMES) <= FEATURES


@pytest.mark.parametrize("name", NAMES)
def test_each_shape_appears_in_a_seeded_sample(name: str) -> None:
    count = len(by_shape()[name])
    assert count >= 5, (name, count)


@pytest.mark.parametrize("name", sorted(FLAGS))
def test_each_shape_is_drawn_only_behind_its_flag(name: str) -> None:
    flag = FLAGS[name]
    for g in by_shape()[name]:
        if name == "shape.top-n" and g.shape == "subquery" and Swarm.TOP_N not in g.swarm:
            # A subquery body's own WHERE over its derived table (Swarm.WHERE, older than
            # TOP_N) may compare a ranking column too (`WHERE iw1 = 22`): a top-N filter
            # drawn by chance, the same shape to an optimizer.
            assert Swarm.WHERE in g.swarm, g.seed
            continue
        if flag is not None:
            assert flag in g.swarm, (name, g.seed)
        else:  # a ROWS frame without ORDER BY: its own flag, or no window ORDER BY at all,
            # or the whole partition (which any frame draw may give: no order needed)
            assert Swarm.UNORDERED_ROWS in g.swarm or Swarm.WINDOW_ORDER_BY not in g.swarm \
                or _whole_partition_rows_without_order(g), g.seed


def _whole_partition_rows_without_order(g: GeneratedCase) -> bool:
    from harness.cases.features import window_expressions
    from harness.core.functions import frame_is_whole_partition

    return any(not spec.order_by and spec.frame is not None and frame_is_whole_partition(spec.frame)
               for _, (_, spec) in window_expressions(g.case.query).items())


def test_the_matrix_has_a_row_per_shape() -> None:
    rows: set[str] = set()
    for g, names in sample():
        if names:
            rows |= case_rows(g.case).everything
    assert {r for r in rows if r.startswith("query shape/")} >= {
        "query shape/top-N filter over a derived table", "query shape/top-N filter in QUALIFY",
        "query shape/LIMIT over lead/lag/nth_value ordered as the query",
        "query shape/windows over UNION ALL", "query shape/windows sharing a PARTITION BY prefix"}
    assert {"window/ORDER BY NULL", "window/ORDER BY a constant", "window/expression as a key",
            "window/ROWS frame without ORDER BY", "window/ORDER BY a PARTITION BY key"} <= rows


@pytest.mark.parametrize("name", NAMES)
def test_each_shape_round_trips_and_the_reference_evaluates_it(name: str) -> None:
    for g in by_shape()[name][:15]:
        assert parse(g.case.sql) == g.case.query, g.seed
        plan = instrument(g.case.query, g.case.schemas)
        tables = with_rowid(g.case.tables) if plan.rowid_column is not None else g.case.tables
        try:
            Oracle(plan.unlimited, tables).evaluate()
        except EvaluationError:
            pass  # a data exception (a sum past DECIMAL(38,38)): evaluated, engines must refuse it too
        except ReferenceGap as e:
            pytest.fail(f"{g.seed}: the reference cannot evaluate {g.case.sql}: {e}")


@pytest.mark.parametrize("name", NAMES)
def test_every_dialect_writes_each_shape(name: str) -> None:
    """At least one case of each shape is written by every dialect (the others
    may hold a construct the dialect lacks, which swarm testing keeps to a share)."""
    for dialect in DIALECTS:
        written = 0
        for g in by_shape()[name][:40]:
            try:
                write(g.case.query, get_dialect(dialect))
                written += 1
            except Unsupported:
                pass
        if name == "shape.qualify" and dialect in ("sqlite", "postgres", "spark"):
            continue  # QUALIFY is DuckDB's (and DataFusion's)
        assert written, (name, dialect)


def test_a_top_n_row_number_never_leaves_ties_to_decide_the_rows_kept() -> None:
    """Without a witness a row_number under a filter ends its ORDER BY with the row key."""
    for g in by_shape()["shape.top-n"] + by_shape()["shape.qualify"]:
        for node in walk(g.case.query):
            if not isinstance(node, Select):
                continue
            rankings = window_exprs(node.qualify) if node.qualify is not None else \
                [i.expr for i in node.items if isinstance(i.expr, WindowExpr) and i.alias == "rn"]
            for w in rankings:
                if w.func.name != "row_number":
                    continue
                spec = resolve_window(w.window, node.windows)
                assert _ends_with_a_row_key([k.expr for k in spec.order_by], node), g.seed


def test_a_limit_over_a_lookahead_is_ordered_as_its_window() -> None:
    for g in by_shape()["shape.limit-lookahead"]:
        query = g.case.query
        assert isinstance(query, Select) and query.limit is not None
        window = next(i.expr for i in reversed(query.items) if isinstance(i.expr, WindowExpr)
                      and i.expr.func.name in ("lead", "lag", "nth_value"))
        keys = [*window.window.partition_by, *(k.expr for k in window.window.order_by)]
        assert [k.expr for k in query.order_by][:len(keys)] == keys, g.seed
        assert _ends_with_a_row_key(keys, query), g.seed


def _ends_with_a_row_key(keys: list, select: Select) -> bool:
    """The keys hold the row key: every GROUP BY key of a grouped query, else an `id`."""
    if select.group_by:
        return all(k in keys for k in select.group_by)
    return any(isinstance(k, Column) and k.name == "id" for k in keys)


def test_integer_expression_keys_cannot_overflow() -> None:
    """A negation or a sum of integers reads them as BIGINT from a narrower
    type, or as a remainder; the siblings of a batched case bring extremes."""
    seen = Counter()
    for g in by_shape()["window.expression-key"]:
        for node in walk(g.case.query):
            if isinstance(node, UnaryOp) or (isinstance(node, BinaryOp) and node.op is BinaryOperator.ADD):
                operands = [node.operand] if isinstance(node, UnaryOp) else [node.left, node.right]
                for operand in operands:
                    if isinstance(operand, Column):
                        t = next((c.type for s in g.case.schemas for c in s.columns if c.name == operand.name),
                                 None)
                        assert t is None or not t.is_integer, (g.seed, g.case.sql)
                    seen[type(operand).__name__] += 1
    assert seen[Cast.__name__] + seen[BinaryOp.__name__] > 0, seen


def test_union_sources_tag_each_branch() -> None:
    cases = [g for g, _ in sample() if g.shape == Shape.UNION.value]
    assert cases
    for g in cases:
        query = g.case.query
        source = query.source if isinstance(query, Select) else None
        while isinstance(source, SubqueryRef) and isinstance(source.query, Select):
            source = source.query.source  # under a top-N filter
        assert isinstance(source, SubqueryRef), g.seed
        assert "UNION ALL" in g.case.sql and "2 AS src" in g.case.sql, g.seed
