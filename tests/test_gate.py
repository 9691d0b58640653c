"""`window-harness gate` end to end, on real engines (Spark is left to .ci/run's own
gate step, which runs the whole corpus on every engine).

- with the repository's baseline, the gate passes;
- without the entry that explains a difference, it fails, naming the case
  and the engine and showing the diff;
- a deliberately faulty engine fails it;
- stale entries are listed, and fail it under --strict-baseline;
- bad input exits 2; JUnit XML has one testcase per case x engine.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from harness.baseline.known import DEFAULT_PATH
from harness.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
SPECIAL = str(ROOT / "cases" / "special_floats")
EDGE = str(ROOT / "cases" / "edge")


def _gate(tmp_path: Path, *args: str) -> list[str]:
    return ["gate", "--out", str(tmp_path / "gate"), *args]


def _baseline_without(tmp_path: Path, entry_id: str) -> Path:
    doc = yaml.safe_load(DEFAULT_PATH.read_text(encoding="utf-8"))
    kept = [e for e in doc["entries"] if e["id"] != entry_id]
    assert len(kept) == len(doc["entries"]) - 1
    path = tmp_path / "baseline.yaml"
    path.write_text(yaml.safe_dump({"entries": kept}), encoding="utf-8")
    return path


def test_the_gate_passes_with_the_baseline_and_writes_junit(tmp_path, capsys):
    junit = tmp_path / "junit.xml"
    code = main(_gate(tmp_path, "--engines", "reference,duckdb,datafusion,sqlite", "--corpus", SPECIAL,
                      "--corpus", EDGE, "--budget-cases", "40", "--seed", "0", "--junit", str(junit),
                      "--format", "json"))
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, json.dumps(doc["failures"], indent=1)[:3000]
    assert doc["passed"] and not doc["failures"] and doc["fuzz_cases"] == 40
    explained = {item["explained_by"] for item in doc["explained"]}
    assert {"datafusion-negative-zero-not-equal-to-zero",
            "datafusion-refined-named-window-drops-partition"} <= explained
    assert (tmp_path / "gate" / "gate.json").exists() and (tmp_path / "gate" / "corpus" / "run.json").exists()

    root = ET.parse(junit).getroot()
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {"corpus", "fuzz", "baseline"}
    corpus_cases = doc["corpus_cases"]
    assert int(suites["corpus"].get("tests")) == corpus_cases * 4
    assert int(suites["fuzz"].get("tests")) == 40 * 4
    assert int(root.get("failures")) == 0
    skipped = [c for c in suites["corpus"].iter("testcase") if c.find("skipped") is not None]
    names = {(c.get("classname"), c.get("name")) for c in skipped}
    assert ("corpus.special_floats", "negative_zero_peers [datafusion]") in names
    message = next(c for c in skipped if c.get("name") == "negative_zero_peers [datafusion]").find("skipped")
    assert "datafusion-negative-zero-not-equal-to-zero" in message.get("message")


def test_removing_an_entry_fails_the_gate_naming_case_engine_and_diff(tmp_path, capsys):
    baseline = _baseline_without(tmp_path, "datafusion-negative-zero-not-equal-to-zero")
    junit = tmp_path / "junit.xml"
    code = main(_gate(tmp_path, "--engines", "reference,datafusion", "--corpus", SPECIAL,
                      "--budget-seconds", "0", "--baseline", str(baseline), "--junit", str(junit)))
    out = capsys.readouterr().out
    assert code == 1
    assert "- corpus special_floats/negative_zero_peers on datafusion: mismatch" in out
    assert "diff against the reference" in out and "→" in out
    assert "replay: window-harness replay" in out and "negative_zero_peers.yaml" in out
    assert f"add an entry to {baseline}" in out
    assert "gate: FAIL (2 unexplained)" in out  # both -0.0 cases
    failures = [c for c in ET.parse(junit).getroot().iter("testcase") if c.find("failure") is not None]
    assert {c.get("name") for c in failures} == {"negative_zero_peers [datafusion]",
                                                 "nan_negzero_partition_keys [datafusion]"}
    assert "diff against the reference" in failures[0].find("failure").text


def test_a_faulty_engine_fails_the_gate(tmp_path, capsys):
    code = main(_gate(tmp_path, "--engines", "reference,duckdb~range-offset", "--budget-cases", "20",
                      "--seed", "0", "--format", "json"))
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    assert doc["failures"] and {f["engine"] for f in doc["failures"]} == {"duckdb~range-offset"}
    assert all(f["explained_by"] is None for f in doc["failures"])


def test_stale_entries_are_listed_and_fail_under_strict(tmp_path, capsys):
    path = tmp_path / "baseline.yaml"
    path.write_text(yaml.safe_dump({"entries": [
        {"id": "negzero", "engine": "datafusion", "kind": "upstream-bug", "reason": "-0.0 is not 0.0",
         "match": {"feature": "data.negative-zero", "verdict": "mismatch"}},
        {"id": "never-seen", "engine": "datafusion", "kind": "upstream-bug", "reason": "a crash once",
         "match": {"case": "special_floats/*", "verdict": "crash"}},
        {"id": "not-this-engine", "engine": "spark", "kind": "upstream-bug", "reason": "not run",
         "match": {"case": "special_floats/*", "verdict": "crash"}},
    ]}), encoding="utf-8")
    args = ["--engines", "reference,datafusion", "--corpus", SPECIAL, "--budget-seconds", "0",
            "--baseline", str(path)]
    assert main(_gate(tmp_path, *args)) == 0
    out = capsys.readouterr().out
    assert "STALE baseline entries: 1" in out and "never-seen (datafusion, upstream-bug)" in out
    assert "not-this-engine" not in out.split("STALE")[1]
    assert main(_gate(tmp_path, *args, "--strict-baseline")) == 1
    out = capsys.readouterr().out
    assert "gate: FAIL (1 stale baseline entry)" in out
    # None of the three says which versions it was observed on: --strict-baseline warns of each.
    warning = out.split("WARNING: 3 upstream-bug entries say no `versions:`")[1].split("results:")[0]
    assert all(name in warning for name in ("negzero", "never-seen", "not-this-engine"))


def test_an_entry_explains_only_the_versions_it_was_observed_on(tmp_path, capsys):
    """An upstream-bug entry observed on other releases of the engine does not
    explain this release's difference: it fails the gate, as no entry at all would."""
    path = tmp_path / "baseline.yaml"

    def gate_with(versions: str) -> int:
        path.write_text(yaml.safe_dump({"entries": [
            {"id": "negzero", "engine": "datafusion", "versions": versions, "kind": "upstream-bug",
             "link": "https://example.org/negzero", "reason": "-0.0 is not 0.0",
             "match": {"feature": "data.negative-zero", "verdict": "mismatch"}}]}), encoding="utf-8")
        return main(_gate(tmp_path, "--engines", "reference,datafusion", "--corpus", SPECIAL,
                          "--budget-seconds", "0", "--baseline", str(path)))

    assert gate_with(">=50,<1000") == 0
    capsys.readouterr()
    assert gate_with("<50") == 1  # observed on older releases only
    assert "FAILURES" in capsys.readouterr().out
    assert gate_with(">=1000") == 1  # observed on newer releases only


@pytest.mark.parametrize(("args", "message"), [
    (["--engines", "reference,oracle"], "unknown engine 'oracle'"),
    (["--engines", "reference,duckdb@candidate"], "--engine-python"),
])
def test_bad_options_exit_2(tmp_path, capsys, args, message):
    assert main(_gate(tmp_path, *args)) == 2
    assert message in capsys.readouterr().err


def test_a_malformed_baseline_exits_2_naming_file_entry_and_field(tmp_path, capsys):
    path = tmp_path / "baseline.yaml"
    path.write_text(yaml.safe_dump({"entries": [{"id": "a", "engine": "duckdb", "kind": "bug",
                                                 "reason": "r", "match": {"case": "x", "verdict": "mismatch"}}]}))
    assert main(_gate(tmp_path, "--baseline", str(path), "--budget-seconds", "0")) == 2
    assert f"{path}: entries[0].kind: 'bug' is not one of" in capsys.readouterr().err


def test_the_gate_does_not_replace_a_directory_it_did_not_write(tmp_path, capsys):
    keep = tmp_path / "gate" / "precious.txt"
    keep.parent.mkdir()
    keep.write_text("mine")
    assert main(_gate(tmp_path, "--engines", "reference", "--budget-seconds", "0")) == 2
    assert "does not hold an earlier gate's results" in capsys.readouterr().err
    assert keep.read_text() == "mine"


# -- A/B regressions are reduced (issue 20, item 4) ----------------------------------


def test_an_ab_regression_is_reduced_while_the_released_engine_still_matches(tmp_path):
    """The gate's reduction of a fuzz A/B regression: shrunk while the other build (here
    the faulty ntile) keeps its finding and the released engine keeps matching, within
    its budget, written beside the finding file, and recorded on the difference."""
    import pyarrow as pa

    from harness.cases.case import Case, load_case
    from harness.cases.casefile import SavedCase
    from harness.core.model import ColumnDef, TableSchema
    from harness.core.types import INT64
    from harness.engines.registry import get_engine
    from harness.findings.finding import finding_signature, findings_of
    from harness.gate.judge import ABDifference
    from harness.gate.run import reduce_regressions
    from harness.judge.runner import run_case
    from harness.sql import parse

    sql = "SELECT id, x, ntile(4) OVER (ORDER BY x, id) AS nt FROM t ORDER BY id"  # an uneven split
    table = pa.table({"id": pa.array(range(1, 31), pa.int64()), "x": pa.array([i % 7 for i in range(30)], pa.int64())})
    schema = TableSchema("t", (ColumnDef("id", INT64), ColumnDef("x", INT64)))
    case = Case(id="fuzz", description="ntile over 30 rows", tags=(), schemas=(schema,),
                tables={"t": table}, sql=sql, query=parse(sql), finding={})
    engines = [get_engine(n) for n in ("reference", "duckdb", "duckdb~ntile")]
    try:
        for e in engines:
            e.start()
        found = [r for r in findings_of(run_case(case, engines)) if r.engine == "duckdb~ntile"]
        assert found
        key = finding_signature(case, found[0]).key
        file = str(tmp_path / "findings" / f"{key}.yaml")
        regression = ABDifference("fuzz", "fuzz/0/7", "duckdb", "duckdb~ntile", "match", "mismatch", file=file)
        other = ABDifference("fuzz", "fuzz/0/8", "duckdb", "duckdb~ntile", "mismatch", "match", file=file)
        out = reduce_regressions([regression, other], engines, {file: SavedCase.of(case, {"key": key})},
                                 seconds=20)
    finally:
        for e in engines:
            e.close()
    assert out[1] == other  # not a regression: left alone
    done = out[0]
    assert done.reduced == str(tmp_path / "findings" / f"{key}.reduced.yaml")
    assert "confirmed: yes" in done.reduction and done.reduction.startswith("rows 30 -> ")
    reduced = load_case(Path(done.reduced))
    assert reduced.tables["t"].num_rows < 30
    verdicts = {r.engine: r.verdict.value for r in run_case(reduced, [get_engine("duckdb"),
                                                                      get_engine("duckdb~ntile")])}
    assert verdicts == {"duckdb": "match", "duckdb~ntile": "mismatch"}
    assert done.as_json()["reduced"] and done.as_json()["reduction"] == done.reduction


def test_the_gate_reduces_no_regression_when_told_so(tmp_path):
    from harness.gate.judge import ABDifference
    from harness.gate.run import reduce_regressions

    regression = ABDifference("fuzz", "fuzz/0/7", "duckdb", "duckdb~ntile", "match", "mismatch",
                              file=str(tmp_path / "f.yaml"))
    assert reduce_regressions([regression], [], {}, seconds=0) == [regression]


def test_printed_commands_carry_the_engine_python_and_postgres_options_they_need(tmp_path):
    """Each printed command passes the --engine-python of the labelled engines it
    names (only those: replay refuses one not among --engines) and the gate's
    PostgreSQL option when it names a postgres engine; a corpus case reduces
    under the gate's directory."""
    import shlex

    from harness.baseline.known import load_baseline
    from harness.gate.run import GateConfig

    config = GateConfig(engines=("reference", "duckdb", "duckdb@old", "postgres"), cases=(),
                        baseline=load_baseline(), out=tmp_path / "gate",
                        engine_options={"duckdb@old": {"python": "/envs/old/bin/python"},
                                        "postgres": {"local": True}},
                        postgres_args=("--postgres-local",))
    old = shlex.split(config.replay_command("f.yaml", "duckdb@old"))
    assert old == ["window-harness", "replay", "f.yaml", "--engines", "reference,duckdb@old",
                   "--engine-python", "duckdb@old=/envs/old/bin/python"]
    assert shlex.split(config.replay_command("f.yaml", "postgres"))[3:] == [
        "--engines", "reference,postgres", "--postgres-local"]
    pg = shlex.split(config.reduce_command("f.yaml", "postgres", tmp_path / "r.yaml"))
    assert pg == ["window-harness", "reduce", "f.yaml", "--engines", "reference,postgres",
                  "--postgres-local", "--out", str(tmp_path / "r.yaml")]
    assert "--postgres-local" not in config.replay_command("f.yaml", "duckdb")
    everyone = shlex.split(config.reduce_command("f.yaml", "reference"))
    assert everyone[everyone.index("--engines") + 1] == "reference,duckdb,duckdb@old,postgres"
    assert "duckdb@old=/envs/old/bin/python" in everyone and "--postgres-local" in everyone


def test_a_reference_outvoted_by_a_known_overflow_of_every_engine_is_explained(tmp_path):
    """The fuzz part's reference finding over values near 1e307 (every engine's
    DOUBLE accumulator overflows, DuckDB's to NaN on some runs, to inf on others):
    the reviewed reference entry explains it whatever each engine answered; an
    engine's unexplained wrong value on the same case is still not explained."""
    from harness.baseline.explainer import Explainer
    from harness.baseline.known import derived_entries, load_baseline
    from harness.cases.case import load_case
    from harness.cases.casefile import SavedCase
    from harness.gate.judge import fuzz_items

    case = load_case(Path("cases/regressions/stddev_pop_square_overflows.yaml"))
    explainer = Explainer(load_baseline(DEFAULT_PATH), derived_entries(["duckdb"]), {"duckdb": "2.0.1"})

    def finding(difference: str) -> dict:
        detail = f"the reference disagrees with every engine that answered; against the reference: {difference}"
        facts = {"column": "s", "difference": difference, "against_reference": "mismatch"}
        record = {"engines": {"duckdb": {"verdict": "suspect-reference", "detail": detail, "facts": facts}}}
        return {"engine": "reference", "verdict": "suspect-reference", "first_case": 3, "detail": detail,
                "facts": facts, "file": "f.yaml", "signature": "s", "key": "k", "saved": SavedCase.of(case, record)}

    def explained(difference: str) -> str | None:
        f = finding(difference)
        [item] = fuzz_items([f], tmp_path, 0, explainer, {"f.yaml": f.pop("saved")})
        return item.entry.id if item.entry is not None else None

    assert explained("engine nan, expected 1.0010415475915505e+154") == "every-engine-variance-intermediate-overflow"
    assert explained("engine inf, expected 1.0010415475915505e+154") == "every-engine-variance-intermediate-overflow"
    assert explained("engine 3.0, expected 1.0010415475915505e+154") is None


@pytest.mark.parametrize("match", [{"error": ""}, {"error": ".*"}, {"case": "*"}])
def test_an_entry_that_matches_everything_cannot_hide_a_planted_bug(tmp_path, capsys, match):
    """The three broad forms of issue 33 each explained the planted ntile bug of
    `duckdb~ntile` (the gate passed); now the baseline is refused (exit 2,
    naming the file and entry), and the repository's own finds the bug."""
    path = tmp_path / "broad.yaml"
    path.write_text(yaml.safe_dump({"entries": [
        {"id": "everything", "engine": "duckdb", "kind": "by-design", "reason": "hides it all",
         "match": {**match, "verdict": ["mismatch", "error"]}}]}), encoding="utf-8")
    args = ["--engines", "reference,duckdb~ntile", "--corpus", str(ROOT / "cases" / "ranking"),
            "--budget-seconds", "0"]
    assert main(_gate(tmp_path, *args, "--baseline", str(path))) == 2
    err = capsys.readouterr().err
    assert f"{path}: entries[0].match." in err and "too broad" in err
    assert main(_gate(tmp_path, *args)) == 1
    assert "duckdb~ntile" in capsys.readouterr().out
