"""A difference pinned on a column with an awkward name is placed by that column.

The generator names columns freely (`a b`), and a verdict's display text
(`column a b: engine 1, expected 2`) cannot be read back reliably; the
pinned column travels as a typed field. Each case here has two window
expressions, `row_number()` (right) and `ntile(2)` (wrong on the faulty
engine `duckdb~ntile`, which puts the larger buckets last), the wrong one
under an awkward name. Through `run --out` and the report's reader (which
reads the directory back from disk), the difference must get

- a signature of the ntile expression alone,
- the baseline entry written for ntile, and not one written for row_number,
- the report rows of ntile, not those of row_number.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.cli.main import main
from harness.report.load import build_report
from harness.results.read import read_results

ENGINE = "duckdb~ntile"
NAMES = ["a b", "x: y", "größe_列"]


def _case_file(directory: Path, name: str) -> Path:
    # Five rows in two buckets: ntile(2) gives 1,1,1,2,2; the faulty engine 1,1,2,2,2.
    doc = {
        "description": f"ntile under the column name {name!r}",
        "tables": {"t": {"columns": {"id": "bigint"}, "rows": [[i] for i in range(1, 6)]}},
        "sql": ("SELECT id, row_number() OVER (ORDER BY id ASC NULLS LAST) AS rn, "
                f'ntile(2) OVER (ORDER BY id ASC NULLS LAST) AS "{name}" '
                "FROM t ORDER BY id ASC NULLS LAST"),
        "expected": {"columns": ["id", "rn", name],
                     "rows": [[i, i, bucket] for i, bucket in zip(range(1, 6), [1, 1, 1, 2, 2], strict=True)]},
    }
    path = directory / "names" / "awkward.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    return path


def _baseline(path: Path, function: str) -> Path:
    entry = {"id": f"planted-{function.replace('_', '-')}", "engine": "duckdb", "kind": "upstream-bug",
             "link": "https://example.org/planted", "reason": f"a planted {function} bug",
             "match": {"function": function, "verdict": "mismatch"}}
    path.write_text(yaml.safe_dump({"entries": [entry]}), encoding="utf-8")
    return path


@pytest.fixture(scope="module", params=NAMES)
def run_dir(request, tmp_path_factory) -> tuple[str, Path]:
    name = request.param
    root = tmp_path_factory.mktemp("names")
    _case_file(root / "cases", name)
    out = root / "out"
    assert main(["run", str(root / "cases"), "--engines", ENGINE, "--out", str(out)]) == 1  # a mismatch
    return name, out


def test_the_run_records_the_pinned_column(run_dir) -> None:
    name, out = run_dir
    doc = json.loads((out / "run.json").read_text(encoding="utf-8"))
    (result,) = doc["results"]
    assert result["verdict"] == "mismatch"
    assert f"column {name}: engine" in result["detail"]  # the display names it as before
    assert result["facts"]["column"] == name
    (finding,) = doc["findings"]
    assert finding["facts"]["column"] == name


def test_the_signature_is_that_of_the_column_function(run_dir) -> None:
    _, out = run_dir
    (finding,) = build_report([read_results(out)]).findings
    assert "ntile(" in finding.signature and "row_number(" not in finding.signature, finding.signature


def test_a_baseline_entry_matches_by_the_column_function(run_dir, tmp_path) -> None:
    _, out = run_dir
    (ntile,) = build_report([read_results(out)], _baseline(tmp_path / "ntile.yaml", "ntile")).findings
    assert ntile.baseline is not None and ntile.baseline.entry == "planted-ntile"
    (other,) = build_report([read_results(out)], _baseline(tmp_path / "row_number.yaml", "row_number")).findings
    assert other.baseline is not None and other.baseline.entry is None  # judged, and not explained


def test_the_report_row_is_that_of_the_column_function(run_dir) -> None:
    _, out = run_dir
    (outcome,) = [o for o in build_report([read_results(out)]).outcomes if o.engine == ENGINE]
    assert outcome.verdict == "mismatch"
    assert "function/ntile" in outcome.rows and "function/row_number" not in outcome.rows, outcome.rows
