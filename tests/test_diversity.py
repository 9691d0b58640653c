"""Diversity under batching: distinct shapes and grid cells per minute, and the
sibling count each shape gets from what its batched query costs."""

from __future__ import annotations

import json
from pathlib import Path

from harness.campaign.loop import CampaignConfig, run_campaign
from harness.campaign.siblings import MAX_SIBLINGS, batched_engines, sibling_count
from harness.cases.coverage import defined_cells
from harness.cli.progress import progress_text
from harness.generate.cases import generate_case
from harness.report.load import diversity
from harness.results.store import CASES

ENGINES = ("reference", "duckdb", "sqlite")


def _lines(path: Path) -> list[dict]:
    return [json.loads(t) for t in path.read_text().splitlines() if t.strip()]


def _config(out: Path, **kw) -> CampaignConfig:
    return CampaignConfig(**{"seed": 7, "engines": ENGINES, "out": out, "cases": 24, "reduce": False,
                             "isolate": False, "metamorphic_share": 0.0, **kw})


def _drawn(lines: list[dict]) -> list[tuple]:
    return [(x["index"], x["seed"], x["shape"], x["picks"], x.get("siblings"), x["cells"]) for x in lines]


def test_the_summary_and_the_progress_line_count_distinct_shapes_and_grid_cells(tmp_path):
    shown: list[str] = []
    result = run_campaign(_config(tmp_path / "c"), listener=lambda p, t: shown.append(progress_text(p, t)))
    lines = _lines(tmp_path / "c" / CASES)
    shapes = {x["shape"] for x in lines}
    cells = {tuple(c.split("|")) for x in lines for c in x["cells"]} & defined_cells()
    summary = result.summary
    assert summary["cases"] == len(lines) == 24
    assert summary["shapes"] == summary["shapes_this_run"] == len(shapes) > 1
    coverage = summary["coverage"]
    assert coverage["grid_cells_covered"] == coverage["grid_cells_this_run"] == len(cells) > 0
    # The rates are over the unrounded wall time; `wall_seconds` is rounded to 0.01 s.
    wall = summary["wall_seconds"]
    for rate, n in ((summary["shapes_per_minute"], len(shapes)), (coverage["grid_cells_per_minute"], len(cells))):
        assert n / ((wall + 0.005) / 60) - 0.1 <= rate <= n / (max(wall - 0.005, 1e-6) / 60) + 0.1
    assert json.loads((tmp_path / "c" / "summary.json").read_text())["shapes"] == len(shapes)
    assert shown[-1].startswith("24 cases ") and f", {len(shapes)} shapes " in shown[-1]
    assert f", {len(cells)} cells " in shown[-1]


def test_a_resumed_campaign_counts_its_earlier_cases_and_draws_the_same_ones(tmp_path):
    whole = run_campaign(_config(tmp_path / "whole"))
    lines = _lines(tmp_path / "whole" / CASES)
    first_group = sum(1 for x in lines if x["shape"] == lines[0]["shape"])
    assert first_group < len(lines)
    run_campaign(_config(tmp_path / "cut", cases=first_group))  # cut after its first shape
    resumed = run_campaign(_config(tmp_path / "cut", resume=True))
    assert _drawn(_lines(tmp_path / "cut" / CASES)) == _drawn(_lines(tmp_path / "whole" / CASES))
    assert resumed.summary["shapes"] == whole.summary["shapes"]
    assert resumed.summary["coverage"]["grid_cells_covered"] == whole.summary["coverage"]["grid_cells_covered"]
    assert resumed.summary["shapes_this_run"] < resumed.summary["shapes"]


def test_the_sibling_counts_are_the_same_for_a_seed_and_follow_the_cost(tmp_path):
    run_campaign(_config(tmp_path / "a"))
    run_campaign(_config(tmp_path / "b"))
    a, b = _lines(tmp_path / "a" / CASES), _lines(tmp_path / "b" / CASES)
    assert _drawn(a) == _drawn(b)
    counts = {x["shape"]: x["siblings"] for x in a}
    for x in a:  # each group: its shape's index and the next siblings-1 indices
        first = int(x["shape"].rpartition("/")[2])
        assert first <= x["index"] < first + counts[x["shape"]]
    # Without Spark a query costs a few ms: no shape gets anywhere near the cap.
    assert max(counts.values()) < MAX_SIBLINGS // 2


def test_spark_in_the_campaign_gives_a_shape_more_siblings():
    """Spark's ~150 ms a query pays for siblings; DuckDB's few ms do not (dialects
    only: no engine starts)."""
    with_spark = 0
    for i in range(0, 400, 20):
        case = generate_case(f"7/{i}").case
        cheap = sibling_count(case, ["reference", "duckdb", "datafusion", "sqlite"])
        costly = sibling_count(case, ["reference", "duckdb", "datafusion", "spark"])
        assert 1 <= cheap <= MAX_SIBLINGS and 1 <= costly <= MAX_SIBLINGS
        if "spark" in batched_engines(case, ["spark"]):  # Spark writes the batched query: it pays
            # (never fewer; more, unless the harness's own cost per case, its rows times
            # its windows, outweighs even Spark's query)
            assert costly >= cheap
            with_spark += costly > cheap
        else:
            assert costly <= cheap + 1  # no Spark query to share (Spark refuses it once)
        if not batched_engines(case, ["duckdb", "datafusion", "sqlite", "spark"]):
            assert cheap == costly == 1  # a shape that does not batch: siblings would each pay
    assert with_spark >= 2


def test_a_fixed_batch_size_keeps_every_index_and_group(tmp_path):
    run_campaign(_config(tmp_path / "c", cases=10, batch_size=4))
    lines = _lines(tmp_path / "c" / CASES)
    assert sorted(x["index"] for x in lines) == list(range(10))
    assert {x["index"]: x["shape"] for x in lines} == {i: f"7/{i - i % 4}" for i in range(10)}
    assert all("siblings" not in x for x in lines)


def test_the_diversity_series_add_up_to_the_distinct_shapes_and_cells():
    cell = "|".join(sorted(defined_cells())[0])
    other = "|".join(sorted(defined_cells())[1])
    cases = [(100.0 + i, f"7/{20 * (i // 5)}", [cell] if i < 50 else [cell, other]) for i in range(101)]
    series = diversity(cases)
    assert set(series) == {"shapes/min", "cells/min"}
    width_minutes = 2 * series["shapes/min"][0][0] / 60
    assert round(sum(y for _, y in series["shapes/min"]) * width_minutes) == 21
    assert round(sum(y for _, y in series["cells/min"]) * width_minutes) == 2
    assert diversity([]) == {}
