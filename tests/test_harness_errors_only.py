"""No query the generator or the parser makes can crash the judging path.

The reference and the instrumenter may refuse a query only with the harness's
own errors (`HarnessError`: InvalidQuery, EvaluationError, ReferenceGap, ...):
anything else would be a traceback in a campaign instead of a verdict. The
reference turns its own internal failures into a ReferenceGap at its entry
point (never a pass); this test also fails on such a gap, so that the bug
behind it is seen and fixed rather than counted as a gap.

Two sources of queries: generated cases (random seeds and Hypothesis-drawn
cases, with their tables, invalid ones included), and the model strategies
the SQL round trip uses (every construct of the model, over names that are
not a schema's), read back through the canonical parser and run over tables
made up from the names they use.
"""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis_profiles import examples

from harness.core import errors
from harness.core.errors import HarnessError, InvalidQuery, ReferenceGap
from harness.core.model import Column, ColumnDef, Query, TableRef, TableSchema, walk
from harness.core.types import INT64
from harness.generate.cases import drawn_cases, generated_cases
from harness.generate.model_strategies import model_queries
from harness.judge.instrument import instrument, with_rowid
from harness.judge.oracle import Oracle
from harness.sql import parse, write

PROPERTY = settings(max_examples=examples(150), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _judge(query: Query, schemas: tuple[TableSchema, ...], tables: dict[str, pa.Table],
           well_formed: bool = False) -> None:
    """Instrument and evaluate as the runner does; only harness errors may come out.
    `well_formed`: the query reads its tables' real columns, so the instrumented
    query must be one the reference can read (no InvalidQuery either)."""
    try:
        plan = instrument(query, schemas)
        tables = with_rowid(tables) if plan.rowid_column is not None else tables
        Oracle(plan.unlimited, tables).evaluate()
    except ReferenceGap as e:
        cause = e.__cause__
        assert cause is None or isinstance(cause, HarnessError), f"internal error: {e!r}\n{write(query)}"
    except InvalidQuery as e:
        assert not well_formed, f"{e}\n{write(query)}"
    except HarnessError:
        pass


@PROPERTY
@given(generated_cases())
def test_generated_cases_raise_only_harness_errors(generated) -> None:
    case = generated.case
    _judge(case.query, case.schemas, dict(case.tables), well_formed=True)


@PROPERTY
@given(drawn_cases())
def test_drawn_cases_raise_only_harness_errors(generated) -> None:
    case = generated.case
    _judge(case.query, case.schemas, dict(case.tables), well_formed=True)


def _made_up_tables(query: Query) -> tuple[tuple[TableSchema, ...], dict[str, pa.Table]]:
    """A table for every name the query reads, with every column name it uses
    (integers, a NULL among them, ties)."""
    names = sorted({n.name for n in walk(query) if isinstance(n, TableRef)})
    columns = sorted({n.name for n in walk(query) if isinstance(n, Column)}) or ["a"]
    values = pa.array([1, 2, 2, None, 5], pa.int64())
    table = pa.table({c: values for c in columns})
    schema = tuple(ColumnDef(c, INT64) for c in columns)
    return tuple(TableSchema(n, schema) for n in names), {n: table for n in names}


@PROPERTY
@given(model_queries())
def test_parsed_model_queries_raise_only_harness_errors(query) -> None:
    try:
        query = parse(write(query))
    except HarnessError:
        return  # an unreadable query is the round trip's concern (tests/test_sql_roundtrip.py)
    schemas, tables = _made_up_tables(query)
    _judge(query, schemas, tables)


@pytest.mark.parametrize("error", [
    errors.InvalidInput("bad value", "--x"), errors.CannotWrite("the disk is full", "cases.jsonl"),
    errors.Unsupported("frame.groups", "before 1.2"), errors.EngineTimeout("duckdb", "30 s"),
    errors.EngineUnavailable("spark", "no Java"),
], ids=lambda e: type(e).__name__)
def test_an_error_crosses_to_another_process_as_it_is(error):
    """A campaign shard sends the error that stopped it (an engine that would not
    start) to the parent, which raises it: same class, message and attributes."""
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error) and str(again) == str(error) and vars(again) == vars(error)
