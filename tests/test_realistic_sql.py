"""The realistic window SQL corpus (tests/fixtures/realistic_sql/): it loads,
it is as large and varied as promised, and nothing the parser accepts from it
makes the reference or the harness's path for a case (instrumenter, reference
as oracle) raise anything but the harness's own errors.

The figures (how much parses, the reference's verdicts) are measured by
bench/realistic_sql.py, not asserted here: they move as the model grows.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from collections import Counter
from pathlib import Path

import pytest

from harness.core.errors import HarnessError
from harness.engines.registry import get_engine
from harness.judge.runner import run_case
from harness.sql import parse

_BENCH = Path(__file__).resolve().parent.parent / "bench" / "realistic_sql.py"


def _load_bench():
    spec = importlib.util.spec_from_file_location("realistic_sql_bench", _BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


bench = _load_bench()
QUERIES = bench.load_queries()
SCHEMAS, TABLES = bench.load_tables()


def _parsed() -> list:
    out = []
    for q in QUERIES:
        try:
            out.append((q, parse(q.sql)))
        except HarnessError:
            continue
    return out


# Crashes known on this branch, each a defect to fix (not a licence): the
# groundwork commit of issue 16 reads `//` and IS [NOT] DISTINCT FROM, and the
# reference does not evaluate them yet (KeyError in reference_impl/arithmetic.py).
# Not strict: they pass once the reference learns the operators.
def _params() -> list:
    return [pytest.param(q, query, id=f"{q.style}/{q.name}") for q, query in _parsed()]


PARSED = _params()


def test_tables_load_with_nulls():
    assert {"sales", "employees", "events", "stock_prices", "sensor_readings"} <= set(TABLES)
    for name, table in TABLES.items():
        assert table.num_rows >= 9, name
    # NULLs where the queries fill, skip or rank them.
    assert TABLES["sensor_readings"].column("temperature").null_count > 0
    assert TABLES["sales"].column("amount").null_count > 0


def test_at_least_300_queries_over_four_styles():
    counts = Counter(q.style for q in QUERIES)
    assert set(counts) == set(bench.STYLES)
    assert sum(counts.values()) >= 300
    assert min(counts.values()) >= 75, counts


def test_every_query_is_unique():
    names = Counter((q.style, q.name) for q in QUERIES)
    assert [n for n, c in names.items() if c > 1] == []
    texts = Counter(" ".join(q.sql.split()).lower() for q in QUERIES)
    assert [t for t, c in texts.items() if c > 1] == []
    for q in QUERIES:
        assert q.sql and ";" not in q.sql, q.name


def test_queries_that_fail_to_parse_fail_with_the_parsers_error():
    for q in QUERIES:
        with contextlib.suppress(HarnessError):
            parse(q.sql)


@pytest.mark.parametrize(("q", "query"), PARSED)
def test_the_reference_raises_only_harness_errors(q, query):
    outcome, detail = bench.reference_outcome(query, TABLES)
    assert outcome != "crash", detail
    assert not outcome.startswith("other"), detail


@pytest.mark.parametrize(("q", "query"), PARSED)
def test_the_harness_path_raises_only_harness_errors(q, query):
    case = bench.make_case(q, query, SCHEMAS, TABLES)
    with contextlib.suppress(HarnessError):
        run_case(case, [get_engine("reference")])
