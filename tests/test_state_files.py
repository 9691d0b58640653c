"""Corrupted state files are a clear error, never a traceback (issue 33, minor).

The results directories' files (run.json, gate.json, campaign.json,
summary.json, versions.json, the JSONL lines) are read back by `report` and
`fuzz --resume`; emptied, truncated or crafted, each is exit 2 naming the file
(or its directory), and no traceback. A property test swaps any field of a
real run.json for any JSON value: the report is made, or refused that way.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
CASES = str(ROOT / "cases" / "special_floats")

DEEP = "[" * 100_000 + "]" * 100_000
CORRUPTIONS = {
    "empty": "",
    "not-json": "{\"cases\": [1, 2",
    "not-utf8": b"\xff\xfe{}",
    "a-list": "[]",
    "a-number": "12",
    "huge-int": "1" * 5000,
    "deep": DEEP,
}


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    """A run directory, a campaign directory and a gate directory, as the commands write them."""
    root = tmp_path_factory.mktemp("written")
    assert main(["run", CASES, "--engines", "reference,duckdb~range-offset", "--out", str(root / "run")]) in (0, 1)
    assert main(["fuzz", "--cases", "12", "--seed", "3", "--engines", "reference,duckdb~range-offset",
                 "--jobs", "1", "--out", str(root / "fuzz")]) in (0, 1)
    assert main(["gate", "--corpus", CASES, "--engines", "reference,duckdb", "--budget-cases", "3",
                 "--jobs", "1", "--out", str(root / "gate")]) in (0, 1)
    return root


def _copy(written: Path, tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copytree(written / name, target, ignore=shutil.ignore_patterns(".lock"))
    return target


def _write(path: Path, content: str | bytes) -> None:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


def _refused(argv: list[str], named: str, capsys) -> None:
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 2, (code, captured.err[-2000:])
    assert named in captured.err and "Traceback" not in captured.err, captured.err[-2000:]


FILES = [("run", "run.json"), ("gate", "gate.json"), ("gate", "corpus/run.json"),
         ("fuzz", "campaign.json"), ("fuzz", "summary.json"), ("fuzz", "versions.json")]


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
@pytest.mark.parametrize("directory, file", FILES)
def test_a_corrupted_state_file_is_exit_2_naming_it(written, tmp_path, capsys, directory, file, kind):
    out = _copy(written, tmp_path, directory)
    _write(out / file, CORRUPTIONS[kind])
    _refused(["report", str(out), "--out", str(tmp_path / "r.html")], str(out / file), capsys)
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("kind", ["empty", "not-json", "a-list", "huge-int", "deep"])
def test_resuming_a_campaign_whose_versions_json_is_corrupted_is_exit_2(written, tmp_path, capsys, kind):
    out = _copy(written, tmp_path, "fuzz")
    _write(out / "versions.json", CORRUPTIONS[kind])
    before = (out / "cases.jsonl").read_bytes()
    _refused(["fuzz", "--cases", "14", "--seed", "3", "--engines", "reference,duckdb~range-offset",
              "--jobs", "1", "--out", str(out), "--resume"], str(out / "versions.json"), capsys)
    assert (out / "cases.jsonl").read_bytes() == before  # nothing recorded is touched


WRONG_TYPES = [
    ("run.json", ["cases"], []), ("run.json", ["results"], {}), ("run.json", ["findings"], "x"),
    ("run.json", ["summary"], 1), ("run.json", ["summary", "per_engine"], ["a"]),
    ("run.json", ["summary", "wall_seconds"], "fast"), ("run.json", ["results", 0, "verdict"], 7),
    ("run.json", ["results", 0], None), ("run.json", ["engines"], [1]),
    ("versions.json", ["duckdb"], 2), ("campaign.json", ["engines"], "reference"),
    ("summary.json", ["wall_seconds"], [1]),
]


@pytest.mark.parametrize("file, at, value", WRONG_TYPES)
def test_a_field_of_the_wrong_type_is_exit_2_naming_file_and_field(written, tmp_path, capsys, file, at, value):
    out = _copy(written, tmp_path, "run" if file == "run.json" else "fuzz")
    doc = json.loads((out / file).read_text(encoding="utf-8"))
    parent = doc
    for key in at[:-1]:
        parent = parent[key]
    parent[at[-1]] = value
    (out / file).write_text(json.dumps(doc), encoding="utf-8")
    _refused(["report", str(out), "--out", str(tmp_path / "r.html")], str(out / file), capsys)


def test_a_jsonl_line_that_is_no_object_is_exit_2_naming_file_and_line(written, tmp_path, capsys):
    out = _copy(written, tmp_path, "fuzz")
    with (out / "findings.jsonl").open("a", encoding="utf-8") as f:
        f.write("[1, 2]\n")
    _refused(["report", str(out), "--out", str(tmp_path / "r.html")], f"{out / 'findings.jsonl'}:", capsys)


def _paths(doc: object, prefix: tuple = ()) -> list[tuple]:
    """Every path to a value in the JSON document, the root's fields first."""
    found = [prefix] if prefix else []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, value in list(items)[:6]:  # a few of each level: the shapes repeat
        found += _paths(value, (*prefix, key))
    return found


JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                 max_size=3),
                    max_leaves=6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_value_in_any_field_of_run_json_is_a_report_or_exit_2(written, tmp_path, capsys, data):
    out = tmp_path / "run"
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(written / "run", out, ignore=shutil.ignore_patterns(".lock"))
    doc = json.loads((out / "run.json").read_text(encoding="utf-8"))
    at = data.draw(st.sampled_from(_paths(doc)), label="field")
    crafted = copy.deepcopy(doc)
    parent = crafted
    for key in at[:-1]:
        parent = parent[key]
    parent[at[-1]] = data.draw(JSON, label="value")
    (out / "run.json").write_text(json.dumps(crafted, allow_nan=True), encoding="utf-8")
    code = main(["report", str(out), "--out", str(tmp_path / "r.html")])  # raises on a traceback
    err = capsys.readouterr().err
    assert code in (0, 2), err
    if code == 2:
        assert str(out) in err, err
