"""The fuzz loop end to end on real engines: output, resume, reproducibility, exit codes."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from harness.campaign.loop import CampaignConfig, run_campaign
from harness.cli.main import main
from harness.results.store import CASES, FINDINGS

ENGINES = "reference,duckdb,datafusion"


def _lines(path: Path) -> list[dict]:
    return [json.loads(t) for t in path.read_text().splitlines() if t.strip()]


def test_fuzz_prints_one_json_document_with_the_summary(tmp_path, capsys):
    code = main(["fuzz", "--cases", "25", "--seed", "11", "--engines", ENGINES,
                 "--out", str(tmp_path / "c"), "--format", "json", "--no-reduce"])
    doc = json.loads(capsys.readouterr().out)
    summary = doc["summary"]
    assert summary["cases"] == 25
    assert summary["cases_per_s"] > 0
    assert summary["findings"] == len(doc["findings"])
    assert code == (1 if doc["findings"] else 0)
    for engine in ("reference", "duckdb", "datafusion"):
        assert sum(summary["verdicts"][engine].values()) == 25
    assert summary["coverage"]["grid_cells_covered"] > 0
    assert len(_lines(tmp_path / "c" / CASES)) == 25
    undecided = summary["inconclusive"]  # over the engines' verdicts, the reference's left out
    # The campaign's engines, and the profiled ones a share of cases drew (`datafusion[batch_size=7]`).
    engines = set(summary["verdicts"]) - {"reference"}
    assert {"duckdb", "datafusion"} <= engines == set(undecided["per_engine"])
    assert undecided["verdicts"] == sum(sum(summary["verdicts"][e].values()) for e in engines)
    assert undecided["count"] == sum(summary["verdicts"][e].get("inconclusive", 0) for e in engines)


def test_the_summary_gives_the_inconclusive_share_per_engine():
    from harness.cli.fuzz import format_summary
    from harness.results.output import inconclusive_share

    verdicts = {"reference": {"match": 400}, "duckdb": {"match": 399, "inconclusive": 1},
                "spark": {"match": 300, "unsupported": 100}}
    undecided = inconclusive_share(verdicts)
    assert undecided == {"count": 1, "verdicts": 800, "share": 0.00125, "per_engine": {
        "duckdb": {"count": 1, "verdicts": 400, "share": 0.0025},
        "spark": {"count": 0, "verdicts": 400, "share": 0.0}}}
    summary = {"seed": 1, "cases": 400, "cases_this_run": 400, "cases_per_s": 1.0, "wall_seconds": 400,
               "verdicts": verdicts, "inconclusive": undecided, "engine_cases_per_s": {},
               "coverage": {"grid_cells_covered": 1, "grid_cells_defined": 2}, "out": "c"}
    assert "inconclusive: 1 of 800 engine verdicts (0.12%; duckdb 0.25%, spark 0.00%)" in format_summary(summary, [])


def test_the_same_seed_gives_the_same_cases_and_verdicts(tmp_path):
    def run(out: Path) -> list[tuple]:
        run_campaign(CampaignConfig(seed=5, engines=("duckdb",), out=out, cases=20, reduce=False,
                                    isolate=False, metamorphic_share=0))
        return [(x["index"], x["seed"], x["picks"], x["verdicts"], x["cells"])
                for x in _lines(out / CASES)]

    assert run(tmp_path / "a") == run(tmp_path / "b")


def test_resume_continues_after_a_kill_and_never_redoes_a_case(tmp_path):
    out = tmp_path / "c"
    # A fixed batch size: every index below --cases is a case (the torn one, 10, too).
    config = CampaignConfig(seed=3, engines=("duckdb",), out=out, cases=10, reduce=False,
                            isolate=False, metamorphic_share=0, batch_size=4)
    run_campaign(config)
    # A kill -9 mid-write leaves a torn last line: it is dropped, the case rerun.
    cases = out / CASES
    cases.write_text(cases.read_text() + '{"index": 10, "verd')
    result = run_campaign(CampaignConfig(**{**config.__dict__, "cases": 16, "resume": True}))
    indices = [x["index"] for x in _lines_tolerant(cases)]
    assert sorted(indices) == list(range(16))
    assert result.summary["cases"] == 16 and result.summary["cases_this_run"] == 6


def _lines_tolerant(path: Path) -> list[dict]:
    out = []
    for text in path.read_text().splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            out.append(json.loads(text))
    return out


def test_an_existing_campaign_is_never_overwritten(tmp_path, capsys):
    out = str(tmp_path / "c")
    assert main(["fuzz", "--cases", "2", "--seed", "1", "--engines", "duckdb", "--out", out]) in (0, 1)
    capsys.readouterr()
    assert main(["fuzz", "--cases", "2", "--seed", "1", "--engines", "duckdb", "--out", out]) == 2
    assert "pass --resume" in capsys.readouterr().err
    assert main(["fuzz", "--cases", "4", "--seed", "2", "--engines", "duckdb", "--out", out,
                 "--resume"]) == 2
    assert "seed=1" in capsys.readouterr().err


def test_an_unknown_engine_exits_2_naming_it(tmp_path, capsys):
    # Out-of-range numbers are argparse's to refuse: tests/test_cli_options.py.
    assert main(["fuzz", "--out", str(tmp_path / "c"), "--engines", "duckdb,nosuch"]) == 2
    assert "nosuch" in capsys.readouterr().err


def test_findings_are_deduplicated_by_signature_and_saved_as_case_files(tmp_path):
    """A planted bug met many times is one finding with a count, saved once."""
    out = tmp_path / "c"
    # A seed whose 120 cases meet the planted bug (a new swarm flag shifts every
    # seed's stream: seed 2 met it before Swarm.CONSTANT_SOURCES, 3 after it; since
    # the query shapes of issue 19, seed 1 meets it 21 times as 3 findings).
    result = run_campaign(CampaignConfig(seed=1, engines=("duckdb~tie-value",), out=out, cases=120,
                                         reduce=False, isolate=False, metamorphic_share=0))
    occurrences = [x for x in _lines(out / FINDINGS) if x.get("event") != "reduced"]
    assert occurrences, "the planted bug was not found"
    keys = {x["key"] for x in occurrences}
    assert len(keys) == len(result.findings) <= len(occurrences)
    for finding in result.findings:
        assert (out / finding["file"]).is_file()
        assert finding["count"] == sum(1 for x in occurrences if x["key"] == finding["key"])


def test_a_reduction_never_runs_past_the_campaigns_minutes(tmp_path):
    """Under --minutes a reduction ends with the campaign: one that would start with
    less than MIN_REDUCE_SECONDS left is not begun (the finding is saved unreduced)."""
    from harness.findings.finding import MIN_REDUCE_SECONDS

    out = tmp_path / "c"
    minutes = 0.9 * MIN_REDUCE_SECONDS / 60  # the whole campaign is shorter than one reduction
    # Siblings batched: the group is judged at once, then recorded while time is left.
    result = run_campaign(CampaignConfig(seed=1, engines=("duckdb~tie-value",), out=out, minutes=minutes,
                                         reduce=True, isolate=False, metamorphic_share=0, batch_size=4))
    assert result.findings, "the planted bug was not found"
    for finding in result.findings:
        assert (out / finding["file"]).is_file()
    assert not [x for x in _lines(out / FINDINGS) if x.get("event") == "reduced"]
    assert not list(out.rglob("*.reduced.yaml"))


def test_jobs_shard_the_indices_and_give_the_same_verdicts(tmp_path):
    def verdicts(out: Path, jobs: int, batch_size: int | None) -> dict:
        run_campaign(CampaignConfig(seed=9, engines=("duckdb",), out=out, cases=12, jobs=jobs,
                                    reduce=False, steer=False, metamorphic_share=0, batch_size=batch_size))
        return {x["index"]: (x["seed"], x["verdicts"]) for x in _lines(out / CASES)}

    # A fixed batch size: the same indices, whatever the shards.
    assert verdicts(tmp_path / "one", 1, 4) == verdicts(tmp_path / "two", 2, 4)
    # Counts chosen per shape: each shard runs its share of --cases from its own
    # groups, so the indices depend on the shards; a case run by both is the same.
    one, two = verdicts(tmp_path / "one-c", 1, None), verdicts(tmp_path / "two-c", 2, None)
    assert len(one) == len(two) == 12 and all(one[i] == two[i] for i in one.keys() & two.keys())


def test_a_violated_metamorphic_relation_is_a_finding_with_both_queries(tmp_path):
    """SQLite 3.40's sliding aggregates break relations no reference is needed for."""
    from harness.cases.case import load_case

    out = tmp_path / "c"
    # Two cases a shape: 75 shapes, each checked once (on its first case).
    result = run_campaign(CampaignConfig(seed=99, engines=("sqlite",), out=out, cases=150,
                                         reduce=False, isolate=False, metamorphic_share=1.0, batch_size=2))
    assert sum(n for k, n in result.summary["metamorphic"].items() if k.endswith(":holds")) > 50
    found = [f for f in result.findings if f["classification"] == "metamorphic"]
    assert found, result.summary["metamorphic"]
    case = load_case(out / found[0]["file"])
    assert case.finding["left_sql"] and case.finding["right_sql"]
    assert case.finding["relation"] in found[0]["signature"]
    # The relations derive from the query: a shape is checked once, on its first case.
    lines = [json.loads(t) for t in (out / CASES).read_text().splitlines()]
    checked = {x["index"] for x in lines if x["metamorphic"]}
    assert checked and all(x["seed"] == x["shape"] for x in lines if x["index"] in checked)
    assert any(x["seed"] != x["shape"] for x in lines)  # siblings there were, unchecked


def test_a_signature_met_again_is_counted_not_saved_again(tmp_path):
    from harness.results.store import CampaignStore

    store = CampaignStore(tmp_path / "c", {"seed": 1, "engines": ["duckdb"]}, resume=False)
    line = {"key": "k1", "signature": "duckdb | mismatch | rank()", "engine": "duckdb",
            "verdict": "mismatch", "classification": "engine-vs-all-others", "case": 3,
            "file": "findings/k1.yaml"}
    assert store.record_finding(line) is True
    store.record_case({"index": 3, "seed": "1/3", "verdicts": {"duckdb": "mismatch"}})
    assert store.record_finding({**line, "case": 9}) is False
    store.record_case({"index": 9, "seed": "1/9", "verdicts": {"duckdb": "mismatch"}})
    store.close()
    resumed = CampaignStore(tmp_path / "c", {"seed": 1, "engines": ["duckdb"]}, resume=True)
    tally = resumed.progress.findings["k1"]
    assert (tally.count, tally.first_case) == (2, 3)
    resumed.close()


@pytest.mark.parametrize("message, normalised", [
    ("[DATATYPE_MISMATCH.RANGE_FRAME_WITHOUT_ORDER] Cannot resolve \"(PARTITION BY k2 RANGE ...)\"",
     "[DATATYPE_MISMATCH.RANGE_FRAME_WITHOUT_ORDER]"),
    ("Out of Range Error: Overflow in subtraction of INT64 (-9223372036854775808 - 3)!",
     "Out of Range Error: Overflow in subtraction of INTN (-N - N)!"),
    ("Binder Error: Referenced column \"nope\" not found", "Binder Error: Referenced column ? not found"),
])
def test_an_error_signature_keeps_what_names_the_problem(message, normalised):
    from harness.findings.signature import normalise_error

    assert normalise_error(message) == normalised
