"""The HTML conformance report, from real results: a run with a deliberately
faulty engine, a short fuzz campaign and a gate (DuckDB, SQLite and the
reference; Spark's part is covered by .ci/run's own gate, which writes one).

The page is read back with an HTML parser: its sections, the matrix's rows
and cells, the findings with their data, SQL, answers and replay command,
and that values from data and engines arrive as text, never as markup.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from harness.cases.axes import CaseRows, unsupported_rows
from harness.cli.main import main
from harness.judge.facts import Facts
from harness.report.answers import pair_rows
from harness.report.load import attribute, throughput
from harness.report.markup import Markup, h

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = "<script>alert(1)</script>"
# ntile over rows whose string column holds markup: the faulty engine answers
# wrongly, so the value reaches the report's data table, answers and detail.
HOSTILE_CASE = f"""\
description: a string that is markup, in a case the faulty ntile gets wrong
tables:
  t:
    columns: {{id: bigint, s: varchar}}
    rows:
      - [1, '{SCRIPT}']
      - [2, 'a & b "quoted"']
      - [3, '{SCRIPT}']
      - [4, null]
      - [5, x]
sql: |
  SELECT id, s, ntile(2) OVER (ORDER BY s ASC NULLS LAST, id ASC NULLS LAST) AS n
  FROM t
  ORDER BY id ASC NULLS LAST
# sorted by s ('<' < 'a' < 'x', NULL last), then id: ids 1, 3, 2, 5, 4.
# 5 rows in 2 buckets of sizes 3, 2: ids 1, 3, 2 -> 1; ids 5, 4 -> 2.
# (A string key keeps its finding signature apart from the corpus's ntile cases.)
expected:
  columns: [id, s, n]
  rows:
    - [1, '{SCRIPT}', 1]
    - [2, 'a & b "quoted"', 1]
    - [3, '{SCRIPT}', 1]
    - [4, null, 2]
    - [5, x, 2]
"""


class Page(HTMLParser):
    """The parts of a report the tests read: elements by id, table cells, text."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.ids: dict[str, str] = {}  # id -> tag
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.scripts = 0
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if "id" in attrs:
            self.ids[attrs["id"]] = tag
        if tag == "script":
            self.scripts += 1

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def find(self, tag: str, **attrs: str) -> list[dict]:
        return [a for t, a in self.tags if t == tag and all(a.get(k) == v for k, v in attrs.items())]

    @property
    def all_text(self) -> str:
        return "".join(self.text)


@pytest.fixture(scope="module")
def run_report(tmp_path_factory) -> tuple[Path, Page, str]:
    """A run of two corpus directories and the hostile case, with a faulty ntile."""
    tmp = tmp_path_factory.mktemp("report-run")
    hostile = tmp / "cases" / "hostile_ntile.yaml"
    hostile.parent.mkdir()
    hostile.write_text(HOSTILE_CASE, encoding="utf-8")
    out, report = tmp / "run", tmp / "report.html"
    code = main(["run", str(ROOT / "cases" / "ranking"), str(ROOT / "cases" / "frames" / "groups"),
                 str(hostile), "--engines", "reference,duckdb,sqlite,duckdb~ntile",
                 "--out", str(out), "--report", str(report)])
    assert code == 1  # the faulty engine fails
    text = report.read_text(encoding="utf-8")
    return out, Page(text), text


def test_a_run_report_has_every_section_and_needs_no_network(run_report) -> None:
    _, page, text = run_report
    for section in ("summary", "plots", "matrix", "findings"):
        assert page.ids.get(section) == "section"
    assert page.scripts == 1 and not page.find("link") and not page.find("img")
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text)  # nothing fetched
    assert "<svg" in text and "Verdicts per engine" in page.all_text
    summary = page.all_text
    assert "duckdb~ntile" in summary and "FAULTY fake" in summary  # engines with versions
    assert re.search(r"Python 3\.\d+", summary)  # the host


def test_the_matrix_cell_of_the_planted_bug_is_red_and_links_to_its_finding(run_report) -> None:
    _, page, _ = run_report
    cells = [a for t, a in page.tags if t == "td" and "cell" in a.get("class", "")]
    assert any("state-unexplained" in a["class"] for a in cells)
    anchors = {a["href"][1:] for a in page.find("a") if a.get("href", "").startswith("#f-")}
    assert anchors and all(page.ids.get(anchor) == "section" for anchor in anchors)
    # the real engines' ntile rows are green: the bug is the fake's alone
    text = page.all_text
    assert "ntile" in text
    unexplained = [a for a in page.find("section") if a.get("class") == "finding unexplained"]
    assert unexplained and all(a["data-engine"] == "duckdb~ntile" for a in unexplained)
    assert page.find("section", **{"class": "finding explained", "data-engine": "sqlite"})  # ntile(0)


def test_a_finding_shows_its_data_sql_answers_and_replay_command(run_report) -> None:
    _, page, text = run_report
    assert "Canonical SQL" in page.all_text
    assert "ntile(2) OVER (ORDER BY s ASC NULLS LAST" in page.all_text  # the hostile case's finding
    # shell-quoted: `~` is a shell character
    assert "window-harness replay " in page.all_text and "--engines 'reference,duckdb~ntile'" in page.all_text
    assert page.find("td", **{"class": "diff"})  # a differing cell is highlighted
    assert "unexplained" in page.all_text


def test_values_from_data_and_engines_render_as_text(run_report) -> None:
    _, page, text = run_report
    assert SCRIPT in page.all_text  # shown, as text
    assert "<script>alert" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert 'a &amp; b &#34;quoted&#34;' in text  # MarkupSafe's spelling of the quote


def test_the_run_directory_records_verdicts_rows_and_findings(run_report) -> None:
    import json

    out, _, _ = run_report
    doc = json.loads((out / "run.json").read_text())
    assert doc["engines"]["duckdb"] and doc["host"]["cpus"]
    assert any("function/ntile" in rows for c in doc["cases"].values() for rows in c["rows"]["exprs"].values())
    assert doc["findings"] and all((out / f["file"]).is_file() for f in doc["findings"])


def test_a_fuzz_campaign_report_plots_its_throughput(tmp_path: Path) -> None:
    out, report = tmp_path / "fuzz", tmp_path / "fuzz.html"
    code = main(["fuzz", "--cases", "40", "--seed", "5", "--engines", "reference,duckdb,sqlite",
                 "--no-reduce", "--out", str(out), "--report", str(report)])
    assert code in (0, 1)
    page = Page(report.read_text(encoding="utf-8"))
    assert "Throughput over the campaign" in page.all_text
    # Beside cases/s: new query shapes and grid cells covered per minute.
    assert all(f"<title>{name}</title>" in report.read_text(encoding="utf-8")
               for name in ("cases/s", "shapes/min", "cells/min"))
    import json

    import duckdb

    assert json.loads((out / "versions.json").read_text())["duckdb"] == duckdb.__version__
    assert duckdb.__version__ in page.all_text  # the summary names each engine's version
    assert "frame mode" in page.all_text  # the matrix has rows from the generated queries
    import re

    assert re.search(r"inconclusive \d+ of \d+ engine verdicts \(\d+\.\d\d%; duckdb \d+\.\d\d%, ",
                     page.all_text)  # the share the harness left undecided


def test_a_gate_report_shows_the_decision_and_the_baseline_status(tmp_path: Path) -> None:
    report = tmp_path / "gate.html"
    code = main(["gate", "--engines", "reference,duckdb,datafusion", "--corpus",
                 str(ROOT / "cases" / "special_floats"), "--budget-cases", "20", "--out",
                 str(tmp_path / "gate"), "--report", str(report)])
    page = Page(report.read_text(encoding="utf-8"))
    assert code == 0 and "gate: PASS" in page.all_text
    # DataFusion's -0.0 peers: a known difference, with the entry that explains it
    assert "known: datafusion-negative-zero-not-equal-to-zero" in page.all_text
    assert "gate: corpus" in page.all_text and "gate: fuzz" in page.all_text


def test_the_report_command_merges_results_and_refuses_bad_input(run_report, tmp_path: Path, capsys) -> None:
    out, _, _ = run_report
    report = tmp_path / "again.html"
    assert main(["report", str(out), "--out", str(report)]) == 0
    assert f"report: {report}" in capsys.readouterr().out
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "x.html")]) == 2
    assert "holds no run.json, campaign.json or gate.json" in capsys.readouterr().err
    assert main(["report", str(out), "--out", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert main(["report", str(out), "--out", str(tmp_path / "r.txt")]) == 2
    assert main(["run", str(ROOT / "cases" / "ranking"), "--engines", "reference",
                 "--report", str(tmp_path / "r.pdf")]) == 2  # refused before any engine runs
    assert "--report" in capsys.readouterr().err


def test_declared_gaps_show_where_no_case_reached(tmp_path: Path) -> None:
    out, report = tmp_path / "run", tmp_path / "r.html"
    main(["run", str(ROOT / "cases" / "ranking" / "ntile_uneven.yaml"), "--engines", "reference,sqlite",
          "--out", str(out), "--report", str(report)])
    text = Page(report.read_text(encoding="utf-8")).all_text
    assert "the sqlite dialect has no var_pop" in text


# -- units ------------------------------------------------------------------------------


def test_markup_escapes_strings_and_keeps_its_own_tags() -> None:
    assert h("td", {"title": '"x\''}, SCRIPT) == '<td title="&#34;x&#39;">&lt;script&gt;alert(1)&lt;/script&gt;</td>'
    assert h("div", {}, Markup("<b>ok</b>"), None, [1, "<"]) == "<div><b>ok</b>1&lt;</div>"
    # A trusted attribute value stays as it is; a bare and a dropped attribute.
    assert h("input", {"value": Markup("&amp;"), "checked": True, "hidden": False}) == \
        '<input value="&amp;" checked>'


def test_a_verdict_counts_in_the_rows_it_is_about() -> None:
    rows = CaseRows(frozenset({"data/NULL"}),
                    {"a": frozenset({"function/lag"}), "b": frozenset({"function/sum", "frame mode/ROWS"})})
    assert attribute("match", Facts(), rows) == {"data/NULL", "function/lag", "function/sum", "frame mode/ROWS"}
    assert attribute("mismatch", Facts(column="b"), rows) == {"data/NULL", "function/sum", "frame mode/ROWS"}
    assert attribute("mismatch", Facts(), rows) == rows.all()  # not pinned: every row of the case
    assert attribute("error", Facts(message="boom"), rows) == rows.all()
    assert attribute("unsupported", Facts(feature="function.lag"), rows) == {"function/lag"}
    assert attribute("unsupported", Facts(feature="frame.exclude"), rows) == {"exclusion/(any)"}
    assert unsupported_rows("window.lag-without-order-by") == ("function/lag",)
    assert unsupported_rows("type.decimal") == ("column type/DECIMAL",)


def test_answers_pair_rows_and_mark_the_differing_cells() -> None:
    paired = pair_rows([(1, "a"), (2, None), (3, 0.1 + 0.2)], [(3, 0.3), (1, "b"), (2, None), (9, "z")])
    assert [(p.reference, p.engine, p.differs) for p in paired] == [
        ((1, "a"), (1, "b"), (False, True)), ((2, None), (2, None), (False, False)),
        ((3, 0.1 + 0.2), (3, 0.3), (False, False)), (None, (9, "z"), (True, True))]
    missing = pair_rows([(1,), (2,)], [(1,)])
    assert missing[1].engine is None and missing[1].differs == (True,)


def test_throughput_bins_cases_over_the_recorded_times() -> None:
    times = [100.0 + i * 0.5 for i in range(801)]  # 2 cases/s for 400 s
    points = throughput(times)
    assert len(points) == 40 and all(abs(y - 2.0) < 1e-6 for _, y in points)
    assert len(throughput(times[:101])) == 5  # 20 cases to a bin
    assert throughput([1.0]) == [] and throughput([]) == []


class _Comments(Page):
    def __init__(self, text: str) -> None:
        self.comments: list[str] = []
        super().__init__(text)

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)


def test_descriptions_names_messages_and_versions_render_as_text(tmp_path: Path) -> None:
    """The hostile bug-report case (tests/test_export_hostile.py: markup in the
    table and column names and values) as a run, its results directory then
    given hostile engine messages and versions (a directory `report` reads may
    come from anyone): all of it arrives as text, with no element or comment."""
    import json

    import yaml
    from test_export_hostile import HOSTILE_CASE, IMG

    case = tmp_path / "h<!--x.yaml"
    case.write_text(HOSTILE_CASE.split("finding:")[0], encoding="utf-8")
    out = tmp_path / "run"
    assert main(["run", str(case), "--engines", "reference,duckdb", "--out", str(out)]) == 1
    doc = json.loads((out / "run.json").read_text())
    message = f"Binder Error: <script>alert(7)</script> <!-- {IMG}"
    doc["engines"]["duckdb"] = f"2.0.1 {IMG}"
    for result in doc["results"]:
        result.update(detail=message, facts={**result["facts"], "message": message})
    (out / "run.json").write_text(json.dumps(doc), encoding="utf-8")
    for path in (out / "findings").glob("*.yaml"):
        found = yaml.safe_load(path.read_text(encoding="utf-8"))
        found["finding"]["detail"] = message
        found["finding"]["engines"]["duckdb"].update(detail=message, version=f"2.0.1 {IMG}")
        path.write_text(yaml.safe_dump(found), encoding="utf-8")
    report = tmp_path / "r.html"
    assert main(["report", str(out), "--out", str(report)]) == 0
    text = report.read_text(encoding="utf-8")
    page = _Comments(text)
    assert page.scripts == 1 and not page.find("img") and not page.comments
    shown = page.all_text
    # (the page shows no case description)
    for hostile in (IMG, "table t<b>", "m<!--", message, f"2.0.1 {IMG}"):
        assert hostile in shown, hostile
