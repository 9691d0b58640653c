"""Old releases of DuckDB and DataFusion start, answer the corpus, and are
judged by what their own version supports.

Each release runs as a labelled engine (`duckdb@old`) in a cached virtualenv
of its own (`harness.engines.releases.environment`: installed from the package
registry on first use; the test skips, saying so, where it cannot be). The
releases are the oldest the README promises (DuckDB 0.7.1, DataFusion 33) and
the ones of the issue's A/B runs (DuckDB 1.0.0, DataFusion 50.0.0).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.campaign.loop import CampaignConfig, run_campaign
from harness.cases.case import load_case
from harness.cli.main import main
from harness.core.errors import EngineUnavailable
from harness.core.versions import parse_version
from harness.engines.registry import get_engine
from harness.engines.releases import environment
from harness.judge.compare import Verdict
from harness.judge.runner import run_cases

CASES = Path(__file__).resolve().parent.parent / "cases"


def _python(engine: str, version: str) -> str:
    try:
        return str(environment(engine, version))
    except EngineUnavailable as e:
        pytest.skip(f"cannot install {engine} {version}: {e}")


def _verdicts(engine: str, version: str, case_ids: list[str]) -> dict[str, tuple[Verdict, frozenset[str]]]:
    """case -> (verdict, the features left out of the query the release ran)."""
    old = get_engine(f"{engine}@old", python=_python(engine, version))
    cases = [load_case(CASES / f"{case_id}.yaml", case_id) for case_id in case_ids]
    try:
        run = run_cases(cases, [get_engine("reference"), old])
        assert parse_version(run.engines[f"{engine}@old"]) == parse_version(version)  # that release answered
    finally:
        old.close()
    return {r.case: (r.verdict, frozenset(f for _, f in r.facts.left_out or ()))
            for r in run.results if r.engine == f"{engine}@old"}


GROUPS = "frames/groups/first_last_value_vs_range"
# (engine, release, a case its release lacks a feature of and that feature,
#  cases it answers as the current release does)
RELEASES = [
    ("duckdb", "0.7.1", (GROUPS, "frame.groups"), ["defaults/null_order_unwritten", "defaults/integer_division",
                                                   "ranking/rank_ties"]),
    ("duckdb", "1.0.0", (GROUPS, "frame.groups"), ["frames/exclude/no_others", "aggregate/count_distinct"]),
    ("datafusion", "33.0.0", ("aggregate/filter_avg_sliding", "window.filter"), [GROUPS, "ranking/rank_ties"]),
    ("datafusion", "50.0.0", ("functions/quantile_cont_rows", "function.quantile_cont"),
     ["aggregate/filter_sum_count", GROUPS]),
]


@pytest.mark.parametrize(("engine", "version", "lacking", "answered"), RELEASES,
                         ids=[f"{e}-{v}" for e, v, _, _ in RELEASES])
def test_an_old_release_starts_and_is_judged_by_its_version(engine, version, lacking, answered):
    """What the release lacks is never sent, so never an error: the case is
    `unsupported`, or the release runs the rest of the query and the feature's
    columns are recorded as left out. Its by-design choices (DuckDB 0.7.1: NULLs
    first, 7 / 2 = 3) are judged under its own profile, so its answers match."""
    case, feature = lacking
    verdicts = _verdicts(engine, version, [case, *answered])
    verdict, left_out = verdicts[case]
    assert verdict is Verdict.UNSUPPORTED or (verdict is Verdict.MATCH and feature in left_out), verdicts[case]
    assert {c: v for c, (v, _) in verdicts.items() if c != case} == dict.fromkeys(answered, Verdict.MATCH), \
        verdicts


def test_engines_reports_what_an_old_build_offers(capsys):
    python = _python("datafusion", "33.0.0")
    assert main(["engines", "--engine-python", f"datafusion@old={python}"]) == 0
    out = capsys.readouterr().out.split("datafusion@old 33.0.0")[1]
    assert "this release has no version()" in out
    row = next(line for line in out.splitlines() if line.strip().startswith("releases <40: lacks"))
    assert "null-treatment" in row and "window.refine-named" in row and "semantics date_from_string" in row
    assert "measured:" in out


def test_two_builds_of_an_engine_are_not_profiles_of_one(tmp_path):
    """DuckDB 1.0.0 answers otherwise than 2.0 by right (it is older): the
    campaign never reports the two as `profiles-disagree` (the gate's A/B lists
    their differences)."""
    python = _python("duckdb", "1.0.0")
    config = CampaignConfig(seed=3, engines=("reference", "duckdb", "duckdb@old"), out=tmp_path / "fuzz",
                            cases=40, reduce=False, engine_options={"duckdb@old": {"python": python}})
    result = run_campaign(config)
    disagreements = [f for f in result.findings if f["verdict"].startswith("profiles-disagree")]
    assert not [f for f in disagreements if "duckdb@old" in f["engine"] or "duckdb@old" in f.get("detail", "")]
