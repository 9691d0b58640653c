"""How many sibling cases a query shape gets: as many as its batched query pays for.

A group of n siblings (one query shape, rows of their own) costs about

    Q + n * c

where Q is the fixed cost of one batched query on every engine that can run
the shape (Spark's ~150 ms a query, a few ms for DuckDB, DataFusion, SQLite
in their worker processes), paid once per shape, and c what one more case
adds: its rows drawn, its share of the reference's one evaluation of the
batch (`harness.campaign.reference_batch`), each engine's share of the
batched answer and its judging. The checks of the plan itself (a sibling
unbatched, the bare query, other profiles, the metamorphic relations) are
drawn per shape, not per case, so they cost a shape the same whatever its
sibling count. A shape gets

    n = 1 + floor(QUERY_MULTIPLE * Q / c)      (at most MAX_SIBLINGS)

siblings: together they cost at most QUERY_MULTIPLE times the query they
share. With Spark, Q is large and c small (a sibling's rows are a few dozen
on the median), so a shape gets many; without it, Q is a few ms and a shape
gets a few: many shapes a minute either way. A shape that does not batch
(`NotBatchable`), or that no engine can run batched, gets one case: its
siblings would each pay Q.

The count is a function of the shape's query and rows and the campaign's
engines only, never of the clock: a rerun with the same seed, and `--resume`,
draw the same cases (the count is also written on each case line,
`siblings`, and a resume reads it back). `--batch-size B` fixes the count
at B instead (the behaviour before the cost model).

The engines' constants were measured with `bench/sibling_cost.py` (30 shapes
of seed 7, 8 siblings each, the engines in their worker processes as a
campaign runs them, on a shared 2-core machine under load, so rounded down to
the lowest of two runs); Spark's per-query cost is the ~150 ms measured on an
idle machine (under load it measured 0.2-1.5 s, which would only raise its
count). The harness's own per-case constants were measured on 16 shapes of
seed 21 with 100 siblings each, the reference evaluated once per batch.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.cases.case import Case

MAX_SIBLINGS = 200  # the most siblings a shape gets, and the stride of case indices per shape
# How many times its batched query a shape's siblings may cost together.
QUERY_MULTIPLE = 4.0

# Seconds of one batched query, per engine family, fixed whatever its size.
QUERY_SECONDS = {"spark": 0.150, "duckdb": 0.018, "datafusion": 0.010, "sqlite": 0.006, "postgres": 0.010}
DEFAULT_QUERY_SECONDS = 0.010  # an engine not measured (a server engine, another build)
# Seconds each more case adds to one engine's batched query (its rows, splitting, judging).
CASE_SECONDS = {"spark": 0.009, "duckdb": 0.0022, "datafusion": 0.0012, "sqlite": 0.0005, "postgres": 0.002}
DEFAULT_CASE_SECONDS = 0.002
# The harness's own seconds per case: the sibling's rows drawn, its share of
# the reference's evaluation of the batch and its judging: a fixed part and a
# part per row times window expression.
HARNESS_SECONDS = 0.001
HARNESS_SECONDS_PER_ROW_WINDOW = 0.0001


def family(engine: str) -> str:
    """`duckdb` for `duckdb[threads=4]`, `duckdb@candidate`, `duckdb~flaky`."""
    return re.split(r"[\[@~]", engine, maxsplit=1)[0]


def sibling_count(case: Case, engines: Sequence[str], limit: int = MAX_SIBLINGS) -> int:
    """The siblings (the shape's own case included) a shape gets; see the module doc."""
    runs = batched_engines(case, engines)
    if not runs:
        return 1
    query = sum(QUERY_SECONDS.get(family(e), DEFAULT_QUERY_SECONDS) for e in runs)
    per_case = harness_seconds(case) + sum(CASE_SECONDS.get(family(e), DEFAULT_CASE_SECONDS) for e in runs)
    return max(1, min(limit, 1 + int(QUERY_MULTIPLE * query / per_case)))


def harness_seconds(case: Case) -> float:
    from harness.core.model import Select, walk, window_exprs

    rows = sum(t.num_rows for t in case.tables.values())
    windows = sum(len(window_exprs(n)) for n in walk(case.query) if isinstance(n, Select))
    return HARNESS_SECONDS + HARNESS_SECONDS_PER_ROW_WINDOW * rows * max(1, windows)


def batched_engines(case: Case, engines: Sequence[str]) -> list[str]:
    """The engines (not the reference) that can write the shape's batched query:
    the case's own, or the one restricted to the items the engine writes
    (`harness.judge.restrict`), which is what the engine then runs."""
    from harness.campaign.batching import NotBatchable, batch_query
    from harness.core.errors import HarnessError
    from harness.engines.registry import engine_class, get_dialect
    from harness.judge.instrument import instrument
    from harness.judge.restrict import restrict
    from harness.sql.writer import write

    if case.error is not None:
        return []  # a query that must be refused: each engine refuses it once
    out = []
    for engine in engines:
        if engine_class(engine).is_reference:
            continue
        dialect = get_dialect(engine)
        try:
            restricted = restrict(case.query, lambda q, d=dialect: write(q, d))
            query = case.query if restricted is None else restricted.query
            write(batch_query(instrument(query, case.schemas).query), dialect)
        except (NotBatchable, HarnessError):  # Unsupported, InvalidQuery: the engine answers the shape once
            continue
        out.append(engine)
    return out
