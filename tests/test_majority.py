"""The majority view's `implementation-defined`: an answer another profile's reference gives.

No engine runs: each engine answer is the reference's own under a chosen
profile, so the right classification is known. The classification tries each
profile whose knobs this query touches differently once (profiles alike on
those knobs give the same answer); these tests hold it to what trying every
profile gives.
"""

from __future__ import annotations

import pyarrow as pa

from harness.cases.case import Case
from harness.core.model import ColumnDef, TableSchema
from harness.core.types import from_arrow
from harness.engines.registry import get_dialect
from harness.findings.majority import ENGINE_VS_REFERENCE, IMPLEMENTATION_DEFINED, classify
from harness.judge.compare import Verdict
from harness.judge.instrument import instrument, with_rowid
from harness.judge.oracle import Oracle
from harness.judge.runner import Result
from harness.sql import parse

# k's NULL sorts last for DuckDB, first for SQLite: lag(id) differs around it.
SQL = "SELECT id, lag(id) OVER (ORDER BY k) AS prev FROM t ORDER BY id"
T = pa.table({"id": pa.array([1, 2, 3, 4], pa.int64()), "k": pa.array([3, None, 1, 2], pa.int64())})
CASE = Case(id="majority/null_order", description="", tags=(),
            schemas=(TableSchema("t", tuple(ColumnDef(f.name, from_arrow(f.type)) for f in T.schema)),),
            tables={"t": T}, sql=SQL, query=parse(SQL))


def _answer_under(engine: str) -> pa.Table:
    """The reference's answer (hidden columns included) under `engine`'s profile."""
    plan = instrument(CASE.query, CASE.schemas)
    return Oracle(plan.unlimited, with_rowid(CASE.tables), get_dialect(engine).semantics).evaluate().table


def _finding(answer: pa.Table) -> Result:
    return Result(CASE.id, "duckdb", Verdict.MISMATCH, answer=answer)


def test_an_answer_another_profile_gives_is_implementation_defined():
    sqlite_answer = _answer_under("sqlite")
    assert sqlite_answer.column("prev").to_pylist() != _answer_under("duckdb").column("prev").to_pylist()
    assert classify(CASE, _finding(sqlite_answer), []) == IMPLEMENTATION_DEFINED


def test_an_answer_no_profile_gives_is_not():
    wrong = _answer_under("sqlite")
    prev = wrong.column("prev").to_pylist()
    prev[0] = 9  # there is no row 9: no profile's answer
    wrong = wrong.set_column(1, wrong.field(1), pa.array(prev, pa.int64()))
    assert classify(CASE, _finding(wrong), []) == ENGINE_VS_REFERENCE
