"""Version-aware dialects: a build is judged by what its own release supports.

`Dialect.at(version)` applies the `Release` rows whose range holds the
version; the baseline derives version-scoped `unsupported` entries from
them; and the gate's A/B never calls an older release's missing feature a
regression (`harness.gate.judge.ABDifference`).
"""

from __future__ import annotations

import pytest

from harness.baseline.known import Observation, derived_entries
from harness.core.dialect import Feature
from harness.core.errors import Unsupported
from harness.core.semantics import IntegerDivision
from harness.engines.registry import engine_names, get_dialect
from harness.gate.judge import ab_differences
from harness.judge.facts import Facts
from harness.sql.parser import parse
from harness.sql.writer import write

GROUPS = "SELECT id, sum(v) OVER (ORDER BY id GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s FROM t"


@pytest.mark.parametrize("engine", engine_names())
def test_every_release_row_parses_and_narrows_its_dialect(engine):
    dialect = get_dialect(engine)
    for release in dialect.releases:
        assert release.measured.strip(), f"{engine} {release.versions}: say what was measured"
        inside = next(v for v in ("0.1", "0.7.1", "1.0", "33", "3.5.9", "50", "54") if release.holds_for(v))
        narrowed = dialect.at(inside)
        assert narrowed is not dialect and narrowed.version == inside
        assert release.lacks <= narrowed.unsupported
        assert release.missing_functions <= narrowed.missing_functions
        for knob, value in release.semantics.items():
            assert getattr(narrowed.semantics, knob) == value


def test_the_current_release_is_the_dialect_itself():
    duckdb = get_dialect("duckdb")
    assert duckdb.at("2.0.1") is duckdb
    assert duckdb.at("1.2.2").supports(Feature.GROUPS_FRAME)


def test_an_old_release_lacks_what_it_was_measured_to_lack():
    old = get_dialect("duckdb").at("1.0.0")
    assert not old.supports(Feature.GROUPS_FRAME) and "count_if" in old.missing_functions
    assert old.supports(Feature.EXCLUDE)  # since 0.10
    oldest = get_dialect("duckdb").at("0.7.1")
    assert not oldest.supports(Feature.EXCLUDE)
    assert oldest.semantics.null_ordering.nulls_first(descending=False)  # NULLs first before 0.8
    assert oldest.semantics.integer_division is IntegerDivision.TRUNCATE
    assert get_dialect("datafusion").at("50.0.0").supports(Feature.FILTER_WINDOW_AGGREGATE)
    assert not get_dialect("datafusion").at("49.0.0").supports(Feature.FILTER_WINDOW_AGGREGATE)


def test_rendering_for_an_old_release_raises_unsupported_instead_of_sending_the_query():
    query = parse(GROUPS)
    assert "GROUPS BETWEEN" in write(query, get_dialect("duckdb").at("2.0.1"))
    with pytest.raises(Unsupported) as raised:
        write(query, get_dialect("duckdb").at("1.1.3"))
    assert raised.value.feature == Feature.GROUPS_FRAME.value


def test_derived_entries_explain_an_old_release_only_within_its_range():
    entries = {e.id: e for e in derived_entries(["duckdb", "duckdb@old"])}
    groups = entries["duckdb:frame.groups@<1.2"]

    def observed(version: str) -> Observation:
        return Observation("frames/groups/x", "duckdb@old", "unsupported", "frame.groups", version,
                           facts=Facts(feature="frame.groups"))

    assert groups.explains(observed("1.0.0"))
    assert not groups.explains(observed("2.0.1"))  # the current release has GROUPS: unexplained there


@pytest.mark.parametrize(("a_version", "b_version", "b_verdict", "regression"), [
    ("2.0.1", "1.0.0", "unsupported", False),  # an older release lacks the feature: its age
    ("2.0.1", "2.1.0", "unsupported", True),  # a newer build lost a feature
    ("2.0.1", "1.0.0", "mismatch", True),  # an older release answers wrongly: a difference to see
    ("2.0.1", "1.0.0", "error", True),
    ("2.0.1", "?", "unsupported", True),  # an unknown version is never assumed older
])
def test_an_older_release_unsupported_is_no_ab_regression(a_version, b_version, b_verdict, regression):
    verdicts = [("frames/groups/x", {"duckdb": ("match", ""), "duckdb@old": (b_verdict, "frame.groups")})]
    [difference] = ab_differences("corpus", verdicts, [("duckdb", "duckdb@old")],
                                  {"duckdb": a_version, "duckdb@old": b_version})
    assert difference.regression is regression
