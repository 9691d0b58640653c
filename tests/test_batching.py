"""Batching (`harness.campaign.batching`): the batched query, split by case, answers
every case exactly as the query does on that case alone — on the reference,
which evaluates both straight from the definitions.

Checked over generated shapes (every query shape the generator draws: plain
tables, joins, GROUP BY, subqueries, named windows, LIMIT/OFFSET) with 1-4
sibling cases each, instrumented as the runner instruments them (row ids and
witness columns), including empty tables and cases whose rows differ in size.
"""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from harness.campaign.batching import (
    CASE_ID,
    NotBatchable,
    batch_query,
    make_batch,
    split_answer,
    stack_tables,
)
from harness.core.errors import EvaluationError, ReferenceGap
from harness.core.model import Select
from harness.generate.cases import NO_LIMITS, Limits, generate_case, generate_sibling
from harness.judge.instrument import instrument, with_rowid
from harness.sql import parse
from reference_impl import evaluate


def _rows(table: pa.Table) -> list[tuple]:
    # repr: NaN equals NaN, -0.0 stays apart from 0.0, types stay apart.
    return [tuple(repr(v) for v in row.values()) for row in table.to_pylist()]


def _answer(query, tables) -> list[tuple] | str:
    try:
        return _rows(evaluate(query, tables).table)
    except (EvaluationError, ReferenceGap) as e:
        return f"no rows: {type(e).__name__}"


def _check_batch(shape_seed: str, siblings: int, limits: Limits = NO_LIMITS) -> str:
    shape = generate_case(shape_seed, limits=limits)
    cases = [shape.case] + [generate_sibling(shape, f"{shape_seed}/sibling{i}", limits=limits).case
                            for i in range(siblings)]
    plan = instrument(shape.case.query, shape.case.schemas)
    try:
        batched = batch_query(plan.query)
    except NotBatchable as e:
        return f"not batchable: {e}"
    per_case = [with_rowid(c.tables) for c in cases]
    _check_reference_batch(shape_seed, plan, per_case)
    alone = [_answer(plan.query, tables) for tables in per_case]
    if any(isinstance(a, str) for a in alone):
        return "a case is invalid alone"  # then a batch of it is no evidence either way
    together = evaluate(batched, stack_tables(per_case)).table
    assert together.column_names[-1] == CASE_ID
    for i, (answer, expected) in enumerate(zip(split_answer(together, len(cases)), alone, strict=True)):
        got = _rows(answer)
        if plan.order_keys or plan.limit is not None:
            assert got == expected, f"case {i} of {shape_seed}: rows or their order differ"
        else:
            assert Counter(got) == Counter(expected), f"case {i} of {shape_seed}: rows differ"
    return "equal"


def _check_reference_batch(shape_seed: str, plan, per_case: list) -> None:
    """What `harness.campaign.reference_batch` relies on: the reference answers the
    batch of the query without its LIMIT only when it answers every case alone,
    and each case's part has the column types of the case's own answer."""
    try:
        query = batch_query(plan.unlimited)
    except NotBatchable:
        return
    try:
        together = evaluate(query, stack_tables(per_case)).table
    except (EvaluationError, ReferenceGap):
        return
    for i, (part, tables) in enumerate(zip(split_answer(together, len(per_case)), per_case, strict=True)):
        try:
            own = evaluate(plan.unlimited, tables).table
        except (EvaluationError, ReferenceGap) as e:
            raise AssertionError(f"case {i} of {shape_seed} is invalid alone ({e}), but its batch was answered") from e
        assert part.schema.types == own.schema.types, f"case {i} of {shape_seed}: column types differ"
        assert Counter(_rows(part)) == Counter(_rows(own)), f"case {i} of {shape_seed}: rows differ"


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**6), st.integers(0, 3))
def test_batched_equals_unbatched_on_the_reference(n: int, siblings: int) -> None:
    # Small cases: a campaign never batches a batch-scale one.
    _check_batch(f"batch/{n}", siblings, Limits(large_share=0.0))


def test_batched_equals_unbatched_over_many_shapes() -> None:
    """Seeded, so the spread of shapes is known: most shapes batch, and every
    batchable one agrees (small tables, so it stays quick). Seven in ten batch
    since queries hold four to eight windows (one that cannot batch keeps the
    whole query out)."""
    outcomes = Counter(_check_batch(f"spread/{i}", 2, Limits(rows=12)).split(":")[0] for i in range(400))
    assert outcomes["equal"] >= 280, outcomes


def test_limit_is_per_case() -> None:
    query = parse("SELECT id, sum(v) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s "
                  "FROM t ORDER BY id DESC LIMIT 2 OFFSET 1")
    assert isinstance(query, Select)
    first = {"t": pa.table({"id": [1, 2, 3, 4], "v": [10, 20, 30, 40]})}
    second = {"t": pa.table({"id": [7, 8], "v": [1, 2]})}
    batch = make_batch(query, [first, second])
    one, two = batch.split(evaluate(batch.query, batch.tables).table)
    assert one.to_pylist() == [{"id": 3, "s": 50}, {"id": 2, "s": 30}]
    assert two.to_pylist() == [{"id": 7, "s": 1}]


def test_windows_joins_and_groups_never_cross_cases() -> None:
    query = parse("SELECT t.k, count(*) AS n, sum(count(*)) OVER () AS total "
                  "FROM t JOIN u ON t.k = u.k GROUP BY t.k")
    tables = [{"t": pa.table({"k": [1, 2]}), "u": pa.table({"k": [1, 1]})},
              {"t": pa.table({"k": [1]}), "u": pa.table({"k": [1, 2]})},
              {"t": pa.table({"k": pa.array([], pa.int64())}), "u": pa.table({"k": [1]})}]
    batch = make_batch(query, tables)
    answers = batch.split(evaluate(batch.query, batch.tables).table)
    assert [a.to_pylist() for a in answers] == [
        [{"k": 1, "n": 2, "total": 2}], [{"k": 1, "n": 1, "total": 1}], []]


@pytest.mark.parametrize("sql, reason", [
    ("SELECT count(*) AS n FROM t", "aggregate without GROUP BY"),
    ("SELECT id, row_number() OVER (ORDER BY id) AS r FROM t LIMIT 2", "LIMIT without ORDER BY"),
    ("SELECT * FROM (SELECT id FROM t) AS q", "SELECT *"),
])
def test_shapes_that_would_change_meaning_are_refused(sql: str, reason: str) -> None:
    with pytest.raises(NotBatchable, match=reason.split()[0]):
        batch_query(parse(sql))


def test_split_refuses_rows_of_unknown_cases() -> None:
    answer = pa.table({"x": [1, 2], CASE_ID: [0, 5]})
    with pytest.raises(NotBatchable, match="unknown cases"):
        split_answer(answer, 2)


def test_stacked_tables_are_one_chunk_even_with_empty_cases() -> None:
    """PySpark 4.3.0 loads a pyarrow table only up to its first empty chunk
    (a middle chunk of 0 rows drops every row after it), so a case with no
    rows must not leave one behind."""
    full, empty = {"t": pa.table({"x": [1, 2]})}, {"t": pa.table({"x": pa.array([], pa.int64())})}
    stacked = stack_tables([full, empty, full])["t"]
    assert stacked.num_rows == 4
    assert [len(c) for c in stacked.column("x").chunks] == [4]


# -- on the engines ---------------------------------------------------------------------


def _siblings(g: int, count: int) -> list:
    shape = generate_case(f"engines/{g}", limits=Limits(rows=15, windows=3))
    return [shape.case] + [generate_sibling(shape, f"engines/{g}/{i}", limits=Limits(rows=15, windows=3)).case
                           for i in range(count - 1)]


def test_run_batch_gives_each_engine_its_verdicts_alone(sql_engine, engines) -> None:
    """Every engine's batched verdicts equal its verdicts on each case alone,
    and most of them really came from the batched query."""
    from harness.campaign.batch_runner import run_batch
    from harness.judge.runner import run_case

    run_on = [engines.get("reference"), sql_engine]
    from_batch = total = 0
    for g in range(12):
        cases = _siblings(g, 4)
        for case, run in zip(cases, run_batch(cases, run_on), strict=True):
            alone = run_case(case, run_on)
            assert [r.verdict for r in run.results] == [r.verdict for r in alone], (case.sql, run.results)
            from_batch += sql_engine.name in run.batched
            total += 1
    assert from_batch >= total // 2, (from_batch, total)


SOURCE_TABLES = [{"t": pa.table({"id": [1, 2, 3], "v": [10, 20, 30]})},
                 {"t": pa.table({"id": [4], "v": [7]})},
                 {"t": pa.table({"id": pa.array([], pa.int64()), "v": pa.array([], pa.int64())})}]


@pytest.mark.parametrize("sql", [
    "SELECT t.id, g.x, sum(g.x) OVER (PARTITION BY t.id ORDER BY g.x ASC) AS s "
    "FROM t CROSS JOIN generate_series(1, 2) AS g(x)",
    "SELECT t.id, v.y, rank() OVER (ORDER BY v.y DESC, t.id ASC) AS r "
    "FROM t JOIN (VALUES (10, 'a'), (7, 'b'), (30, 'c')) AS v(x, y) ON t.v = v.x",
    "SELECT t.id, r.x FROM t LEFT JOIN range(2, 4) AS r(x) ON t.id = r.x",
    "SELECT a, sum(b) OVER (ORDER BY a ASC) AS s FROM (SELECT id, v FROM t) AS q(a, b)",
    "SELECT id, count(*) OVER () AS n FROM (SELECT id FROM t WHERE v > 5)",
])
def test_constant_sources_and_renamed_derived_tables_are_batched(sql: str) -> None:
    query = parse(sql)
    batch = make_batch(query, SOURCE_TABLES)
    answers = batch.split(evaluate(batch.query, batch.tables).table)
    for answer, tables in zip(answers, SOURCE_TABLES, strict=True):
        assert Counter(_rows(answer)) == Counter(_rows(evaluate(query, tables).table))


@pytest.mark.parametrize("sql", [
    "SELECT x, sum(x) OVER (ORDER BY x ASC) AS s FROM generate_series(1, 5) AS g(x)",
    "SELECT x FROM (VALUES (1), (2)) AS v(x)",
    "SELECT g.x, t.id FROM generate_series(1, 5) AS g(x) LEFT JOIN t ON g.x = t.id",
    "SELECT t.id FROM (SELECT id FROM t) CROSS JOIN (SELECT id AS j FROM t) AS u",
])
def test_sources_the_rewrite_cannot_handle_run_alone(sql: str) -> None:
    with pytest.raises(NotBatchable):
        batch_query(parse(sql))
