"""The campaign profile (`harness.core.stages`, `fuzz --profile FILE`)."""

from __future__ import annotations

import json
import time

from harness.cli.main import main
from harness.core import stages
from harness.core.stages import headline, stage


def test_each_second_is_charged_once_to_the_innermost_stage():
    clock = stages.start()
    try:
        with stage("confirm"):
            time.sleep(0.02)
            with stage("engine duckdb"):
                time.sleep(0.03)
        with stage("engine duckdb"):
            pass
    finally:
        doc = stages.stop().as_json()
    seconds = {row["stage"]: row["seconds"] for row in doc["stages"]}
    calls = {row["stage"]: row["calls"] for row in doc["stages"]}
    assert seconds["confirm / engine duckdb"] >= 0.03 and 0.02 <= seconds["confirm"] < 0.03 + 0.02
    assert calls == {"confirm": 1, "confirm / engine duckdb": 1, "engine duckdb": 1, **(
        {"other": 0} if "other" in calls else {})}
    total = sum(seconds.values())
    assert abs(total - (time.perf_counter() - clock.started)) < 0.05  # nothing charged twice, nothing lost


def test_stages_are_free_and_silent_when_the_clock_is_off():
    assert not stages.running()
    with stage("reference"):
        pass
    assert stages.stop() is None


def test_a_nested_stage_counts_for_its_purpose_in_the_table():
    assert headline(["findings", "reduction", "engine spark"]) == "reduction"
    assert headline(["confirm", "reference"]) == "confirm"
    assert headline(["engine spark"]) == "engine"
    assert headline(["reference"]) == "reference"
    doc = {"stages": [{"stage": "engine spark", "seconds": 3.0, "calls": 2},
                      {"stage": "metamorphic / engine spark", "seconds": 1.0, "calls": 2},
                      {"stage": "reference", "seconds": 1.0, "calls": 5}]}
    text = stages.table(doc, wall=5.0)
    assert "engine" in text and "metamorphic" in text and "(wall 5.0 s)" in text
    assert any(line.split()[:2] == ["spark", "4.0"] for line in text.splitlines())


def test_fuzz_profile_writes_where_the_time_went_across_shards(tmp_path, capsys):
    out, profile = tmp_path / "c", tmp_path / "profile.json"
    code = main(["fuzz", "--cases", "6", "--seed", "3", "--engines", "reference,duckdb", "--jobs", "2",
                 "--out", str(out), "--profile", str(profile), "--no-reduce", "--format", "json"])
    assert code in (0, 1)
    doc = json.loads(profile.read_text())
    assert doc["jobs"] == 2 and doc["seed"] == 3
    names = {row["stage"] for row in doc["stages"]}
    # Both shards' clocks came back: each started its engines and generated its cases.
    assert {"start", "generation", "writing"} <= {n.split(" / ")[0] for n in names}
    assert any(n.endswith("engine duckdb") for n in names)
    starts = next(row for row in doc["stages"] if row["stage"] == "start")
    assert starts["calls"] == 2
    assert "profile:" in capsys.readouterr().err
