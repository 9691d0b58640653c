"""Error conformance: invalid queries made on purpose, and the three verdicts.

An engine must refuse a query invalid by definition (`rejected-as-expected`),
and answering it is `wrongly-accepted`; refusing a valid query in the words its
dialect declares (`refusals`) is `wrongly-rejected`. Real engines show each.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from harness.cases.axes import invalid_rows
from harness.cases.case import load_case, load_cases
from harness.core.conformance import INVALID_KINDS, KINDS_BY_NAME, invalid_kind
from harness.core.dialect import Feature
from harness.core.errors import EvaluationError
from harness.engines.registry import get_dialect
from harness.generate.cases import generate_case, generate_sibling
from harness.generate.invalid import BREAKERS, INVALID_SHARE, invalid_kind_of
from harness.judge.compare import PASSING, Verdict
from harness.judge.facts import Facts
from harness.judge.instrument import instrument, with_rowid
from harness.judge.oracle import Oracle
from harness.report.load import attribute
from harness.sql import parse

CASES = Path(__file__).resolve().parent.parent / "cases"


def _reference_refusal(case) -> str | None:
    """The reference's reason for refusing `case`, as the runner evaluates it; None if it answers."""
    plan = instrument(case.query, case.schemas)
    tables = with_rowid(case.tables) if plan.rowid_column is not None else case.tables
    try:
        Oracle(plan.unlimited, tables).evaluate()
    except EvaluationError as e:
        return str(e)
    return None


# -- the generator ------------------------------------------------------------------------


def test_every_breaker_names_a_kind_and_every_kind_has_words() -> None:
    assert set(BREAKERS) <= set(KINDS_BY_NAME)
    assert len({k.label for k in INVALID_KINDS}) == len(INVALID_KINDS)


def test_a_share_of_the_seeds_is_made_invalid_and_the_rest_is_unchanged() -> None:
    made = [generate_case(f"3/{i}") for i in range(600)]
    invalid = [g for g in made if g.case.error is not None]
    assert 0.5 * INVALID_SHARE * 600 <= len(invalid) <= 2 * INVALID_SHARE * 600
    for g in made[:200]:  # a valid case is the one the seed always gave
        if g.case.error is None:
            assert g.case.sql == generate_case(g.seed, invalid_share=0.0).case.sql


def test_every_kind_is_made_and_the_reference_refuses_each_for_a_known_reason() -> None:
    made: Counter[str] = Counter()
    refused: Counter[str] = Counter()
    for i in range(300):
        g = generate_case(f"12/{i}", invalid_share=1.0)
        kind = invalid_kind_of(g.case)
        if kind is None:
            continue  # no breaker applied to this query
        made[kind.name] += 1
        assert parse(g.case.sql, keep_invalid=True) == g.case.query, g.seed
        reason = _reference_refusal(g.case)
        assert reason is not None, f"{g.seed}: made invalid ({kind.name}) but the reference answers:\n{g.case.sql}"
        said = invalid_kind(reason)
        if said is None and "out of range for" in reason:
            continue  # a data exception of the drawn rows (a sum past DECIMAL(38,38)) came first
        assert said is not None, f"{g.seed}: an unknown reason {reason!r}"
        refused[said.name] += 1
    print(f"made: {dict(made)}; refused as: {dict(refused)}")
    assert set(made) == set(BREAKERS), f"never made: {set(BREAKERS) - set(made)}"
    assert sum(made.values()) >= 250


def test_a_sibling_without_rows_for_a_data_exception_is_valid() -> None:
    # ntile(0) raises only when a row reaches it: over an empty table the query is valid.
    shape = next(g for i in range(400) if (g := generate_case(f"12/{i}", invalid_share=1.0))
                 and invalid_kind_of(g.case) is not None and invalid_kind_of(g.case).data)
    siblings = [generate_sibling(shape, f"12/s{i}") for i in range(60)]
    empty = [s for s in siblings if all(t.num_rows == 0 for t in s.case.tables.values())]
    filled = [s for s in siblings if s not in empty]
    assert empty and filled  # both ways are exercised
    for s in empty:
        assert s.case.error is None and _reference_refusal(s.case) is None, s.seed
    for s in filled:
        assert s.case.error is not None and _reference_refusal(s.case) is not None, s.seed


# -- the verdicts, on real engines ---------------------------------------------------------


@pytest.fixture(scope="module")
def conformance_run(corpus_runs) -> list:
    cases, errors = load_cases([str(CASES / "errors"), str(CASES / "value" / "nth_value_zero.yaml")])
    assert not errors
    names = ["reference", "duckdb", "datafusion", "sqlite"]
    return list(corpus_runs.results(names, cases).values())  # test_corpus's verdicts, when it ran


def _verdict(run, case: str, engine: str):
    return next(r for r in run if r.case == case and r.engine == engine)


@pytest.mark.parametrize("engine", ["duckdb", "datafusion", "sqlite"])
@pytest.mark.parametrize("case", ["errors/ntile_negative", "errors/frame_from_unbounded_following",
                                  "errors/window_in_where", "errors/nested_window",
                                  "errors/range_offset_two_keys"])
def test_every_engine_refuses_what_no_engine_may_answer(conformance_run, case: str, engine: str) -> None:
    r = _verdict(conformance_run, case, engine)
    assert r.verdict is Verdict.REJECTED_AS_EXPECTED, (r.verdict, r.detail)
    assert r.verdict in PASSING
    assert invalid_kind(r.detail) is not None, r.detail  # the reference's reason, not the engine's
    assert r.notes and r.notes[0].startswith("the engine says: ")


def test_an_answer_to_an_invalid_query_is_wrongly_accepted(conformance_run) -> None:
    # DataFusion answers a RANGE offset over a string key, which has no arithmetic.
    r = _verdict(conformance_run, "errors/range_offset_string_key", "datafusion")
    assert r.verdict is Verdict.WRONGLY_ACCEPTED and r.answer is not None
    assert r.verdict not in PASSING
    assert invalid_kind(r.detail) is KINDS_BY_NAME["range-offset-key-type"]


def test_an_answer_its_profile_defines_is_judged_and_said_to_be_by_design(conformance_run) -> None:
    # DuckDB answers nth_value(v, -1) with NULL (documented), where the standard raises:
    # its profile's nth_value_below_one, so the answer is judged against that reading.
    r = _verdict(conformance_run, "errors/nth_value_negative", "duckdb")
    assert r.verdict is Verdict.MATCH and r.answer is not None
    assert any(n.startswith("by design: the standard profile refuses this query (the argument of "
                            "nth_value()") and n.endswith("(nth_value_below_one)") for n in r.notes), r.notes


def test_a_valid_query_refused_in_the_declared_words_is_wrongly_rejected(conformance_run) -> None:
    r = _verdict(conformance_run, "errors/valid_empty_frame_groups", "datafusion")
    assert r.verdict is Verdict.WRONGLY_REJECTED, (r.verdict, r.detail)
    assert r.detail == Feature.FRAME_START_AFTER_END.value
    assert "Invalid window frame" in r.notes[0]
    for engine in ("duckdb", "sqlite"):  # the standard's empty frame, answered
        assert _verdict(conformance_run, "errors/valid_empty_frame_groups", engine).verdict is Verdict.MATCH


def test_the_reference_matches_every_case_it_must_refuse(conformance_run) -> None:
    assert {r.verdict for r in conformance_run if r.engine == "reference"} == {Verdict.MATCH}


def test_a_refusal_is_read_only_in_the_words_declared() -> None:
    datafusion = get_dialect("datafusion")
    words = "Error during planning: Invalid window frame: start bound (2 FOLLOWING) cannot be larger than end bound (1 FOLLOWING)"
    assert datafusion.refused_feature(words) is Feature.FRAME_START_AFTER_END
    assert datafusion.refused_feature("Error during planning: something else") is None
    assert get_dialect("duckdb").refusals == {}


def test_a_refused_feature_is_written_not_declared_unsupported() -> None:
    # Sent to the engine, so its refusal is observed (never an `unsupported` without trying).
    for name in ("datafusion", "spark"):
        dialect = get_dialect(name)
        assert not set(dialect.refusals) & dialect.unsupported


# -- where the report puts them --------------------------------------------------------------


def test_the_matrix_rows_come_from_the_reference_reason() -> None:
    case = load_case(CASES / "errors" / "ntile_negative.yaml")
    from harness.cases.axes import case_rows

    rows = case_rows(case)
    detail = "the argument of ntile() must be greater than zero, got -1"
    assert "error conformance/invalid: ntile(n) with n < 1" in attribute(
        "rejected-as-expected", Facts(invalid=detail, message="engine words"), rows)
    assert "error conformance/invalid: ntile(n) with n < 1" in attribute(
        "wrongly-accepted", Facts(invalid=detail), rows)
    assert invalid_rows("division by zero") == {
        "error conformance/invalid: other reasons (overflow, division by zero, ...)"}
    refused = attribute("wrongly-rejected", Facts(feature=Feature.FRAME_START_AFTER_END.value, message="x"),
                        case_rows(load_case(CASES / "errors" / "valid_empty_frame_groups.yaml")))
    assert "error conformance/valid: a frame that starts after it ends" in refused


# Measured on DuckDB 2.0.1, DataFusion 55.2.0, SQLite 3.40.1 (PostgreSQL 15 refuses both,
# tests/test_silent_passes.py); the wrongly-accepted ones are baseline entries.
@pytest.mark.parametrize("case, engine, verdict", [
    ("errors/framed_window_copy", "duckdb", Verdict.REJECTED_AS_EXPECTED),
    ("errors/framed_window_copy", "sqlite", Verdict.REJECTED_AS_EXPECTED),
    ("errors/framed_window_copy", "datafusion", Verdict.WRONGLY_ACCEPTED),
    ("errors/framed_window_copy_in_window_clause", "duckdb", Verdict.REJECTED_AS_EXPECTED),
    ("errors/framed_window_copy_in_window_clause", "datafusion", Verdict.WRONGLY_ACCEPTED),
    ("errors/groups_without_order_by", "datafusion", Verdict.REJECTED_AS_EXPECTED),
    ("errors/groups_without_order_by", "duckdb", Verdict.WRONGLY_ACCEPTED),
    ("errors/groups_without_order_by", "sqlite", Verdict.WRONGLY_ACCEPTED),
    ("errors/valid_named_framed_window", "datafusion", Verdict.MATCH),
])
def test_copies_of_framed_windows_and_unordered_groups(conformance_run, case, engine, verdict) -> None:
    r = _verdict(conformance_run, case, engine)
    assert r.verdict is verdict, (r.verdict, r.detail)
