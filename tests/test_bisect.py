"""`window-harness bisect`: the releases it searches (`--versions`), the binary
search (on lists of verdicts), the releases' environments, bad input (exit 2
naming the field), and a real search over installed DuckDB releases."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.bisect.search import FOUND, SAME, SKIPPED, parse_versions, search
from harness.core.errors import EngineUnavailable, InvalidInput
from harness.engines.releases import (
    ENV_CACHE,
    env_dir,
    environment,
    package_of,
    parse_pip_versions,
    release_key,
    releases,
)

REPO = Path(__file__).resolve().parent.parent
DUCKDB = ["0.10.3", "1.0.0", "1.1.0", "1.1.3", "1.2.0", "1.2.1", "1.10.0", "2.0.1"]
STATS_ROWS = REPO / "cases" / "functions" / "stats_rows.yaml"


# -- the releases ----------------------------------------------------------------------


def test_pip_index_output_is_read_oldest_first():
    out = ("duckdb (2.0.1)\nAvailable versions: 2.0.1, 1.10.0, 1.9.2, 1.2.0, 0.10.3\n"
           "  INSTALLED: 2.0.1\n")
    assert parse_pip_versions(out) == ["0.10.3", "1.2.0", "1.9.2", "1.10.0", "2.0.1"]
    assert parse_pip_versions("ERROR: No matching distribution found for nosuch") == []


def test_release_order_is_numeric_not_textual():
    assert sorted(["1.10.0", "1.9.0", "1.2.0", "10.0.0"], key=release_key) == \
        ["1.2.0", "1.9.0", "1.10.0", "10.0.0"]


def test_engines_without_a_package_are_refused_naming_the_option():
    assert package_of("spark") == "pyspark"
    for engine in ("sqlite", "reference", "nosuch"):
        with pytest.raises(InvalidInput) as e:
            package_of(engine)
        assert e.value.where == "--engine" and engine in str(e.value)


# -- --versions ------------------------------------------------------------------------


def test_a_range_is_every_release_between_both_ends_included():
    assert parse_versions("1.0.0..1.2.0", DUCKDB, "duckdb") == ["1.0.0", "1.1.0", "1.1.3", "1.2.0"]
    assert parse_versions(" 1.2.1 .. 2.0.1 ", DUCKDB, "duckdb") == ["1.2.1", "1.10.0", "2.0.1"]


def test_a_list_is_sorted_and_deduplicated():
    assert parse_versions("2.0.1,1.0.0,1.10.0,1.0.0", DUCKDB, "duckdb") == ["1.0.0", "1.10.0", "2.0.1"]


@pytest.mark.parametrize("text, said", [
    ("1.0.0..1.0.7", "'1.0.7' is not a release of duckdb"),
    ("1.0.0,3.0.0", "'3.0.0' is not a release of duckdb"),
    ("2.0.1..1.0.0", "empty range"),
    ("1.2.0..1.2.0", "names one release"),
    ("1.2.0", "names one release"),
    ("1.0.0..", "expected FIRST..LAST"),
    ("1.0.0,,2.0.1", "an empty version"),
])
def test_bad_versions_name_the_option(text, said):
    with pytest.raises(InvalidInput) as e:
        parse_versions(text, DUCKDB, "duckdb")
    assert e.value.where == "--versions" and said in str(e.value)


def test_an_unknown_release_names_the_nearest():
    with pytest.raises(InvalidInput, match=r"around it: 1\.1\.0, 1\.1\.3, 1\.2\.0, 1\.2\.1\)"):
        parse_versions("1.0.0..1.1.9", DUCKDB, "duckdb")


# -- the search ------------------------------------------------------------------------


def _probe(verdicts: dict[str, str | None]):
    asked: list[str] = []

    def probe(version: str) -> str | None:
        asked.append(version)
        return verdicts[version]
    return probe, asked


def _releases(n: int) -> list[str]:
    return [f"1.{i}.0" for i in range(n)]


@pytest.mark.parametrize("first_bad", range(1, 16))
def test_the_search_finds_the_first_changed_release_in_log_probes(first_bad):
    versions = _releases(16)
    probe, asked = _probe({v: "match" if i < first_bad else "mismatch" for i, v in enumerate(versions)})
    found = search(versions, probe)
    assert (found.status, found.last, found.first) == (FOUND, versions[first_bad - 1], versions[first_bad])
    assert asked[:2] == [versions[0], versions[-1]]  # both ends first
    assert len(asked) <= 2 + 4  # log2(16) between them
    assert len(asked) == len(set(asked))


def test_a_change_from_a_failing_start_is_found_too():
    versions = _releases(5)
    probe, _ = _probe(dict(zip(versions, ["error", "error", "error", "match", "match"], strict=True)))
    found = search(versions, probe)
    assert (found.start, found.end, found.last, found.first) == ("error", "match", "1.2.0", "1.3.0")


def test_ends_that_agree_need_no_search_unless_scanned():
    versions = _releases(5)
    verdicts = dict(zip(versions, ["match", "mismatch", "mismatch", "match", "match"], strict=True))
    probe, asked = _probe(verdicts)
    found = search(versions, probe)
    assert found.status == SAME and asked == [versions[0], versions[-1]] and found.last is None
    probe, asked = _probe(verdicts)
    scanned = search(versions, probe, scan=True)
    assert scanned.status == SAME and sorted(asked) == versions
    assert scanned.changes() == [("1.0.0", "1.1.0"), ("1.2.0", "1.3.0")]


def test_a_release_that_cannot_run_is_skipped_for_its_neighbour():
    versions = _releases(9)  # the change is at 1.7.0; 1.4.0 (the middle) cannot run
    verdicts: dict[str, str | None] = {v: "match" if i < 7 else "mismatch" for i, v in enumerate(versions)}
    verdicts["1.4.0"] = None
    found = search(versions, _probe(verdicts)[0])
    assert (found.status, found.last, found.first, found.skipped) == (FOUND, "1.6.0", "1.7.0", ["1.4.0"])


def test_a_change_next_to_a_release_that_cannot_run_is_an_interval():
    versions = _releases(9)  # 1.4.0 passes, 1.5.0 cannot run, 1.6.0 fails: either is the first bad
    verdicts: dict[str, str | None] = {v: "match" if i < 5 else "mismatch" for i, v in enumerate(versions)}
    verdicts["1.5.0"] = None
    found = search(versions, _probe(verdicts)[0])
    assert (found.status, found.last, found.first, found.skipped) == (SKIPPED, "1.4.0", "1.6.0", ["1.5.0"])


# -- environments ----------------------------------------------------------------------


def test_an_environment_with_the_layout_is_used_as_it_is(tmp_path, monkeypatch):
    """`PACKAGE-VERSION/` holding the release's dist-info and pyarrow's is ready, made by
    hand or by an earlier command; one without the release is not."""
    monkeypatch.setenv(ENV_CACHE, str(tmp_path))
    env = tmp_path / "duckdb-1.0.0"
    site = env / "lib" / "python3.11" / "site-packages"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").symlink_to(sys.executable)
    for dist in ("duckdb-1.0.0.dist-info", "pyarrow-26.0.1.dist-info"):
        (site / dist).mkdir(parents=True)
    lines: list[str] = []
    assert environment("duckdb", "1.0.0", say=lines.append) == env / "bin" / "python"
    assert lines == []  # nothing installed
    monkeypatch.setenv(ENV_CACHE, "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert env_dir("spark", "3.5.9") == tmp_path / "xdg" / "window-harness" / "envs" / "pyspark-3.5.9"


def test_a_release_that_cannot_be_installed_names_engine_and_version(tmp_path, monkeypatch):
    """A version pip cannot find: EngineUnavailable naming duckdb@VERSION, the
    partial environment removed, nothing that looks ready left behind."""
    monkeypatch.setenv(ENV_CACHE, str(tmp_path))
    lines: list[str] = []
    with pytest.raises(EngineUnavailable) as e:
        environment("duckdb", "99.0.0", say=lines.append)
    assert e.value.engine == "duckdb@99.0.0" and "cannot install duckdb 99.0.0" in str(e.value)
    assert any("installing duckdb 99.0.0" in line for line in lines)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["duckdb-99.0.0.lock", "duckdb-99.0.0.log"]


# -- the command -----------------------------------------------------------------------


def _bisect(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", "bisect", *args], capture_output=True,
                          text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


@pytest.mark.parametrize("args, where", [
    (["--engine", "nosuch", "--versions", "1.0.0..2.0.1"], "--engine: 'nosuch'"),
    (["--engine", "sqlite", "--versions", "1.0.0..2.0.1"], "--engine: 'sqlite' has no releases"),
    (["--engine", "duckdb", "--versions", "1.0.0,2.0.1", "--engine-python", f"1.0.0={sys.executable}",
      "--engine-python", "2.0.1=/nonexistent/python"], "--engine-python: '/nonexistent/python'"),
    (["--engine", "duckdb", "--versions", "1.0.0,2.0.1", "--engine-python", f"spark@1.0={sys.executable}"],
     "--engine-python: 'spark@1.0' is not a release of --engine duckdb"),
    (["--engine", "duckdb", "--versions", "1.0.0", "--engine-python", f"1.0.0={sys.executable}"],
     "--versions: '1.0.0' names one release"),
])
def test_bad_options_exit_2_naming_the_field(args, where):
    done = _bisect(str(STATS_ROWS), *args)
    assert done.returncode == 2, done.stderr
    assert where in done.stderr and "Traceback" not in done.stderr


def test_an_unreadable_case_exits_2_naming_the_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"\x00\x01 not yaml")
    pythons = ["--engine-python", f"1.0.0={sys.executable}", "--engine-python", f"2.0.1={sys.executable}"]
    for path in (bad, tmp_path / "missing.yaml"):
        done = _bisect(str(path), "--engine", "duckdb", "--versions", "1.0.0,2.0.1", *pythons)
        assert done.returncode == 2, done.stderr
        assert path.name in done.stderr and "Traceback" not in done.stderr


def _registry_or_skip() -> None:
    try:
        releases("duckdb")
    except EngineUnavailable as e:
        pytest.skip(f"pip's index cannot list duckdb's releases here: {e}")


def test_a_range_past_the_registry_exits_2_naming_the_release():
    _registry_or_skip()
    done = _bisect(str(STATS_ROWS), "--engine", "duckdb", "--versions", "1.0.0..1.0.7")
    assert done.returncode == 2 and "--versions: '1.0.7' is not a release of duckdb" in done.stderr
    done = _bisect(str(STATS_ROWS), "--engine", "duckdb", "--versions", "2.0.1..1.0.0")
    assert done.returncode == 2 and "--versions: empty range" in done.stderr


def _python_of(version: str) -> str:
    """The cached environment of duckdb `version`, made when missing (about 20 s
    from pip's cache); the test skips, saying why, when it cannot be."""
    try:
        return str(environment("duckdb", version))
    except EngineUnavailable as e:
        pytest.skip(f"cannot install duckdb {version}: {e}")


def test_bisect_finds_the_release_where_corr_of_one_pair_became_nan():
    """DuckDB 1.2.0 answers corr and regr_slope over a one-pair frame with NaN
    where 1.1.3 (and the standard) give NULL: found as a regression between the
    two, with both answers and the reference's in the JSON."""
    pythons = [f"--engine-python={v}={_python_of(v)}" for v in ("1.1.3", "1.2.0")]
    done = _bisect(str(STATS_ROWS), "--engine", "duckdb", "--versions", "1.1.3,1.2.0", *pythons,
                   "--format", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert (doc["status"], doc["change"], doc["last"], doc["first"]) == (FOUND, "regression", "1.1.3", "1.2.0")
    assert (doc["start"]["verdict"], doc["end"]["verdict"]) == ("match", "mismatch")
    row5 = {v: dict(zip(a["columns"], a["rows"][4], strict=True)) for v, a in doc["answers"].items()}
    assert row5["1.1.3"]["co"] is None and row5["1.2.0"]["co"] == "NaN"
    assert doc["reference"]["rows"][4][3] is None


@pytest.mark.slow
def test_bisect_of_a_directory_prints_a_table_of_first_bad_releases(tmp_path):
    """Two cases over four releases (installed when missing): one changes at 1.2.0,
    the other agrees at both ends."""
    for path in (STATS_ROWS, REPO / "cases" / "value" / "nth_value_zero.yaml"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    versions = ("1.1.0", "1.1.3", "1.2.0", "1.2.1")
    pythons = [f"--engine-python={v}={_python_of(v)}" for v in versions]
    done = _bisect(str(tmp_path), "--engine", "duckdb", "--versions", ",".join(versions), *pythons)
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines() if line.startswith(("stats", "nth"))}
    assert rows["stats_rows"][1:] == ["match", "mismatch", "regression", "1.1.3", "1.2.0"]
    assert "nth_value_zero" not in rows
    assert "1 of 2 cases change verdict between 1.1.0 and 1.2.1; the other 1 have one verdict" in done.stdout
