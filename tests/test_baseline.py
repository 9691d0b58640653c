"""The known-differences baseline: validation, matching, derived entries, staleness.

No engine runs here: observations are built by hand from corpus cases.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.baseline.known import (
    DEFAULT_PATH,
    Observation,
    derived_entries,
    load_baseline,
    stale,
)
from harness.cases.case import load_case
from harness.core.errors import InvalidInput
from harness.core.versions import parse_version, version_range
from harness.judge.facts import Facts

CASES = Path(__file__).resolve().parent.parent / "cases"


def _write(tmp_path: Path, entries: list[dict]) -> Path:
    path = tmp_path / "baseline.yaml"
    path.write_text(yaml.safe_dump({"entries": entries}), encoding="utf-8")
    return path


def _entry(**fields) -> dict:
    base = {"id": "x", "engine": "duckdb", "kind": "upstream-bug", "reason": "because",
            "match": {"case": "edge/*", "verdict": "mismatch"}}
    base.update(fields)
    return base


def test_the_repository_baseline_loads():
    baseline = load_baseline(DEFAULT_PATH)
    assert len(baseline.entries) >= 10
    assert len({e.id for e in baseline.entries}) == len(baseline.entries)


@pytest.mark.parametrize(("fields", "where", "message"), [
    ({"colour": "red"}, "entries[0]", "unknown field"),
    ({"id": "Bad Id"}, "entries[0].id", "lower case"),
    ({"kind": "feature"}, "entries[0].kind", "is not one of unsupported, by-design, upstream-bug"),
    ({"reason": ""}, "entries[0].reason", "missing"),
    ({"engine": "oracle"}, "entries[0].engine", "unknown engine 'oracle'"),
    ({"engine": "duckdb[fast]"}, "engine", "fast"),
    ({"engine": "duckdb@candidate"}, "entries[0].engine", "not a label"),
    ({"versions": "fifty-five"}, "entries[0].versions", "not a version range"),
    ({"link": "issue 12"}, "entries[0].link", "http"),
    ({"match": "everything"}, "entries[0].match", "must be a mapping"),
    ({"match": {"case": "a/b"}}, "entries[0].match.verdict", "missing"),
    ({"match": {"case": "a/b", "verdict": "wrong"}}, "entries[0].match.verdict", "unknown verdict class"),
    ({"match": {"case": "a/b", "verdict": "match"}}, "entries[0].match.verdict", "needs no explanation"),
    ({"match": {"verdict": "mismatch"}}, "entries[0].match", "too broad"),
    ({"match": {"frame": "windows", "verdict": "mismatch"}}, "entries[0].match.frame", "unknown frame"),
    ({"match": {"function": "median_of", "verdict": "mismatch"}}, "entries[0].match.function",
     "unknown function"),
    ({"match": {"feature": "frame.sideways", "verdict": "mismatch"}}, "entries[0].match.feature",
     "unknown feature"),
    ({"match": {"error": "(unclosed", "verdict": "error"}}, "entries[0].match.error",
     "not a regular expression"),
    ({"match": {"case": ["a", 3], "verdict": "error"}}, "entries[0].match.case", "list of strings"),
    ({"match": {"case": "a/b", "verdict": "error", "colour": 1}}, "entries[0].match", "unknown field"),
])
def test_a_malformed_entry_names_the_file_entry_and_field(tmp_path, fields, where, message):
    path = _write(tmp_path, [_entry(**fields)])
    with pytest.raises(InvalidInput) as raised:
        load_baseline(path)
    text = str(raised.value)
    assert str(path) in text and where in text and message in text, text


@pytest.mark.parametrize(("match", "field", "message"), [
    ({"error": ""}, "error", "matches any message"),
    ({"error": ".*"}, "error", "matches any message"),
    ({"error": "."}, "error", "matches any message"),
    ({"error": "x|"}, "error", "matches any message"),
    ({"error": "(?i)error|.?", "function": "ntile"}, "error", "matches any message"),
    ({"case": "*"}, "case", "matches every case"),
    ({"case": ["edge/x", "?*"]}, "case", "matches every case"),
    ({"case": "fuzz/*"}, "case", "every fuzz case of a gate"),
    ({"case": "generated/*"}, "case", "every generated case"),
    ({"case": "*/*"}, "case", "every fuzz case of a gate"),
    ({"case": "[a-e]*/*"}, "case", "of the corpus's"),
    ({"case": "functions/*"}, "case", "of the corpus's"),
    ({"case": ["edge/*", "frames/*"]}, "case", "of the corpus's"),
    ({"frame": ["rows", "range", "groups", "default"]}, "frame", "every frame mode"),
    ({"feature": "*"}, "feature", "most of the known features"),
    ({"feature": ["window.filter", "*.*"]}, "feature", "most of the known features"),
])
def test_an_entry_that_matches_nearly_everything_is_refused(tmp_path, match, field, message):
    path = _write(tmp_path, [_entry(), _entry(id="broad", match={**match, "verdict": "mismatch"})])
    with pytest.raises(InvalidInput) as raised:
        load_baseline(path)
    text = str(raised.value)
    assert f"{path}: entries[1].match.{field}" in text and "too broad" in text and message in text, text


@pytest.mark.parametrize("match", [
    {"error": "^$"}, {"error": "engine nan, expected"}, {"case": "edge/*"},
    {"case": "functions/*_disc*"}, {"case": "fuzz/0/3"}, {"frame": ["rows", "range"]},
    {"feature": "window.*"},
])
def test_a_narrow_entry_is_not_refused(tmp_path, match):
    assert _one(tmp_path, match={**match, "verdict": "mismatch"}).match


def test_duplicate_ids_are_refused(tmp_path):
    path = _write(tmp_path, [_entry(), _entry()])
    with pytest.raises(InvalidInput, match=r"entries\[1\]\.id.*duplicate id 'x'"):
        load_baseline(path)


def test_what_a_dialect_declares_is_not_declared_twice(tmp_path):
    # Spark's dialect lacks GROUPS frames; the baseline may not say it again.
    path = _write(tmp_path, [_entry(engine="spark", kind="unsupported",
                                    match={"feature": "frame.groups", "verdict": "unsupported"})])
    with pytest.raises(InvalidInput, match=r"frame\.groups is already declared missing by spark's "
                       r"dialect \(harness/engines/spark/dialect\.py\); remove this entry"):
        load_baseline(path)


def test_an_unreadable_file_is_bad_input(tmp_path):
    path = tmp_path / "b.yaml"
    path.write_text("entries: [", encoding="utf-8")
    with pytest.raises(InvalidInput, match="cannot read the baseline"):
        load_baseline(path)
    with pytest.raises(InvalidInput, match="list under 'entries'"):
        load_baseline(_write_text(tmp_path, "entries: 3"))


def _write_text(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    return path


# -- matching ----------------------------------------------------------------------


def _case(case_id: str):
    return load_case(CASES / f"{case_id}.yaml")


def _one(tmp_path, **fields):
    return load_baseline(_write(tmp_path, [_entry(**fields)])).entries[0]


def test_engine_profiles_labels_and_versions(tmp_path):
    entry = _one(tmp_path, engine="datafusion[partitions=2]", versions=">=55,<56",
                 match={"case": "edge/*", "verdict": "mismatch"})
    obs = Observation("edge/x", "datafusion[partitions=2]", "mismatch", version="55.2.0")
    assert entry.explains(obs)
    assert entry.explains(Observation("edge/x", "datafusion[partitions=2]@candidate", "mismatch",
                                      version="55.0.1"))
    assert not entry.explains(Observation("edge/x", "datafusion", "mismatch", version="55.2.0"))
    assert not entry.explains(Observation("edge/x", "datafusion[partitions=2]", "mismatch",
                                          version="54.1.0"))
    assert not entry.explains(Observation("edge/x", "duckdb", "mismatch", version="55.2.0"))
    # A faulty engine is duckdb plus one planted bug: duckdb's known differences are its own.
    assert _one(tmp_path).explains(Observation("edge/x", "duckdb~ntile", "mismatch"))
    assert not _one(tmp_path).explains(Observation("edge/x", "duckdbx", "mismatch"))


def test_an_engine_run_under_a_profile_has_the_engines_version(tmp_path):
    # The gate knows the versions of the engines it started (`datafusion`, `duckdb@old`);
    # the fuzz also runs them under profiles (`datafusion[partitions=4,batch_size=100]`),
    # the same build: an entry with `versions` explains those findings too.
    from harness.baseline.explainer import Explainer

    baseline = load_baseline(_write(tmp_path, [_entry(engine="datafusion", versions=">=55,<56")]))
    explainer = Explainer(baseline, [], {"datafusion": "55.2.0", "duckdb@old": "1.0.0"})
    obs = explainer.observe("edge/x", "datafusion[partitions=4,batch_size=100]", "mismatch", "", None)
    assert obs.version == "55.2.0"
    assert explainer.explain(obs) is not None
    assert explainer.observe("edge/x", "duckdb[threads=4]@old", "mismatch", "", None).version == "1.0.0"
    assert explainer.observe("edge/x", "duckdb[threads=4]", "mismatch", "", None).version == ""


def test_function_and_frame_are_those_of_the_column_that_differed(tmp_path):
    case = _case("edge/named_window_ordered_shared")
    names = sorted({e.function for e in Observation("c", "duckdb", "mismatch", "", "", case).expressions})
    assert len(names) >= 2, names  # the test needs a query with several functions
    first, other = names[0], names[1]
    entry = _one(tmp_path, match={"function": first, "verdict": "mismatch"})
    column = next(alias for alias, (expr, _) in _window_exprs(case).items() if expr.func.name == other)
    pinned = Observation("c", "duckdb", "mismatch", "", "", case, facts=Facts(column=column))
    assert not entry.explains(pinned)  # the difference is in `other`'s column
    unpinned = Observation("c", "duckdb", "mismatch", "2 rows, expected 3", "", case)
    assert entry.explains(unpinned)  # no column named: any window expression counts


def _window_exprs(case):
    from harness.cases.features import window_expressions

    return window_expressions(case.query)


def test_features_must_all_hold_and_come_from_the_case(tmp_path):
    case = _case("special_floats/negative_zero_peers")
    entry = _one(tmp_path, match={"feature": ["data.negative-zero", "window.ordered"], "verdict": "mismatch"})
    assert entry.explains(Observation("c", "duckdb", "mismatch", "", "", case))
    narrower = _one(tmp_path, match={"feature": ["data.negative-zero", "operator.join"], "verdict": "mismatch"})
    assert not narrower.explains(Observation("c", "duckdb", "mismatch", "", "", case))


def test_error_patterns_read_the_engines_words(tmp_path):
    entry = _one(tmp_path, match={"error": "^Not implemented", "verdict": ["error", "unsupported"]})
    def said(verdict: str, message: str) -> Observation:
        return Observation("c", "duckdb", verdict, f"shown: {message}", facts=Facts(message=message))

    assert entry.explains(said("unsupported", "Not implemented Error: x"))
    assert entry.explains(said("error", "Not implemented Error: x"))
    assert not entry.explains(said("error", "Binder Error: x"))


def test_campaign_verdicts_match_by_class(tmp_path):
    entry = _one(tmp_path, match={"case": "fuzz/0/3", "verdict": "profiles-disagree"})
    assert entry.explains(Observation("fuzz/0/3", "duckdb", "profiles-disagree-values"))
    assert not entry.explains(Observation("fuzz/0/3", "duckdb", "mismatch"))


def test_derived_entries_come_from_the_dialect_tables():
    ids = {e.id for e in derived_entries(["spark", "datafusion", "sqlite"])}
    assert {"spark:frame.groups", "spark:frame.exclude", "datafusion:frame.exclude",
            "datafusion:window.string_agg-moving-frame", "sqlite:function.stddev_pop",
            "sqlite:data.nan", "datafusion:not-implemented-1"} <= ids
    entries = derived_entries(["spark"])
    groups = next(e for e in entries if e.id == "spark:frame.groups")
    assert groups.derived and groups.kind == "unsupported" and "harness/engines/spark/dialect.py" in groups.reason
    refused = Facts(feature="frame.groups")
    assert groups.explains(Observation("c", "spark", "unsupported", "frame.groups", facts=refused))
    assert groups.explains(Observation("c", "spark[aqe-off]", "unsupported", "frame.groups", facts=refused))
    assert not groups.explains(Observation("c", "spark", "error", "frame.groups", facts=Facts(message="frame.groups")))
    said = next(e for e in derived_entries(["datafusion"]) if e.id == "datafusion:not-implemented-1")
    words = "This feature is not implemented: X"
    assert said.explains(Observation("c", "datafusion", "unsupported", f"the engine says: {words}",
                                     facts=Facts(message=words)))


def test_stale_entries_apply_to_the_run_and_explained_nothing(tmp_path):
    path = _write(tmp_path, [
        _entry(id="used"),
        _entry(id="unused"),
        _entry(id="other-engine", engine="spark"),
        _entry(id="other-version", versions="<1"),
        _entry(id="cases-not-run", match={"case": "ranking/*", "verdict": "mismatch"}),
    ])
    baseline = load_baseline(path)
    old = stale(baseline, {"used"}, {"duckdb": "2.0.0", "reference": "0.1.0"}, ["edge/a"])
    assert [e.id for e in old] == ["unused"]


def test_parse_version():
    assert parse_version("3.40.1") == (3, 40, 1)
    assert parse_version("4.0.1 (Spark Connect)") == (4, 0, 1)
    assert parse_version("55.0.0") == parse_version("55") == (55,)
    assert parse_version("1.5.0.dev42") == (1, 5)  # a development build is judged as its release
    assert parse_version("unknown") is None


@pytest.mark.parametrize(("text", "inside", "outside"), [
    (">=3.40,<3.41", ["3.40.1", "3.40"], ["3.41.0", "3.39.9"]),
    ("<1.1", ["1.0.0", "0.7.1", "1.0.9"], ["1.1.0", "1.1", "2.0.1"]),
    ("==1.2", ["1.2.0", "1.2"], ["1.2.1"]),
    ("==1.2.*", ["1.2.0", "1.2.7"], ["1.3.0", "1.1.9"]),
    ("!=50.0.0", ["50.1.0", "49"], ["50", "50.0.0"]),
    (">50", ["50.0.1", "51"], ["50", "49.9"]),
])
def test_version_ranges(text, inside, outside):
    versions = version_range(text)
    assert [v for v in inside if not versions.contains(v)] == []
    assert [v for v in outside if versions.contains(v)] == []
    assert str(versions) == text


@pytest.mark.parametrize("text", ["", "1.0", "~=1.0", "<1.x", ">=1.*", "<1,,>2"])
def test_a_malformed_version_range_is_refused(text):
    with pytest.raises(ValueError, match="version range|takes"):
        version_range(text)


def test_a_suspect_reference_verdict_also_counts_as_its_verdict_against_the_reference(tmp_path):
    from harness.judge.compare import Verdict

    entry = _one(tmp_path, match={"case": "c", "verdict": "mismatch"})
    shown = "the reference disagrees with every engine that answered; against the reference: mismatch x"
    assert not entry.explains(Observation("c", "duckdb", "suspect-reference", shown))  # the display is not read
    assert entry.explains(Observation("c", "duckdb", "suspect-reference", shown,
                                      facts=Facts(against_reference=Verdict.MISMATCH)))
    assert not entry.explains(Observation("c", "duckdb", "suspect-reference", shown,
                                          facts=Facts(against_reference=Verdict.ERROR)))


def test_an_error_pattern_reads_the_typed_difference_never_a_column_name(tmp_path):
    """A wrong-value entry's `error` pattern is searched in the difference alone
    (`engine 5, expected 6`), never in the detail, where a column's name could
    hold the very words the pattern looks for."""
    entry = _one(tmp_path, match={"case": "edge/*", "verdict": "mismatch",
                                  "error": r"engine 0\.0, expected nan"})
    name = "engine 0.0, expected nan"  # a legal column name
    fooled = Observation("edge/x", "duckdb", "mismatch",
                         detail=f"column {name}: engine 5, expected 6",
                         facts=Facts(column=name, difference="engine 5, expected 6"))
    assert not entry.explains(fooled)
    real = Observation("edge/x", "duckdb", "mismatch", detail="column v: engine 0.0, expected nan",
                       facts=Facts(column="v", difference="engine 0.0, expected nan"))
    assert entry.explains(real)
    # A difference recorded without facts (an older results directory) is not read out of its text.
    assert not entry.explains(Observation("edge/x", "duckdb", "mismatch",
                                          detail="column v: engine 0.0, expected nan"))


def test_every_upstream_bug_entry_says_the_versions_it_was_observed_on():
    baseline = load_baseline(DEFAULT_PATH)
    assert [e.id for e in baseline.unranged] == []
    for entry in baseline.entries:
        if entry.kind == "upstream-bug":
            assert entry.versions is not None, entry.id
