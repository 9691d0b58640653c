"""The coverage grid: its not-defined rules, counting, the JSON shape, the CLI, the corpus."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from harness.cases.case import load_cases
from harness.cases.coverage import (
    BOUND_KINDS,
    FRAME_MODES,
    KEY_FIELDS,
    Cell,
    bound_pair_reason,
    coverage,
    grid,
    summary,
)
from harness.cli.main import main
from harness.core.functions import FUNCTIONS, FunctionKind

CASES_DIR = Path(__file__).resolve().parent.parent / "cases"


def _case(tmp_path: Path, name: str, sql: str) -> Path:
    """A case file over t(id bigint, k integer, x date, v integer); coverage never reads
    the expected rows, so they are a placeholder."""
    path = tmp_path / f"{name}.yaml"
    header = textwrap.dedent(f"""\
        description: {name}
        tables:
          t:
            columns: {{id: bigint, k: integer, x: date, v: integer}}
            rows: [[1, 1, 2024-01-01, 1]]
        expected: {{columns: [placeholder], rows: []}}
        sql: |
        """)
    path.write_text(header + textwrap.indent(textwrap.dedent(sql), "  "), encoding="utf-8")
    return path


def _counts(tmp_path: Path) -> dict[tuple[str, ...], int]:
    cases, errors = load_cases([tmp_path])
    assert not errors
    return {c.cell.key: c.cases for c in coverage(cases)}


def _frame_key(fn: str, mode: str, start: str, end: str) -> tuple[str, ...]:
    return Cell("frame", fn, mode, start, end, "none").key


# ---------------------------------------------------------------------------
# The grid


LEGAL = [(s, e) for s in BOUND_KINDS for e in BOUND_KINDS if bound_pair_reason(s, e) is None]


def test_thirteen_bound_pairs_are_legal():
    assert len(LEGAL) == 13
    assert ("unbounded-preceding", "unbounded-following") in LEGAL
    assert ("following", "following") in LEGAL
    assert ("preceding", "preceding") in LEGAL


@pytest.mark.parametrize(
    ("start", "end"),
    [
        *[("unbounded-following", e) for e in BOUND_KINDS],
        *[(s, "unbounded-preceding") for s in BOUND_KINDS],
        ("current-row", "preceding"),
        ("following", "preceding"),
        ("following", "current-row"),
    ],
)
def test_forbidden_bound_pairs_are_not_defined(start, end):
    assert bound_pair_reason(start, end)
    cells = [c for c in grid() if c.family == "frame" and (c.start, c.end) == (start, end)]
    assert cells and all(c.reason for c in cells)


def test_grid_follows_the_function_table():
    over = [s for s in FUNCTIONS.values() if s.kind is not FunctionKind.SCALAR]
    framed = [s.name for s in over if s.uses_frame and s.full_grid]
    per_mode = [s.name for s in over if s.uses_frame and not s.full_grid]
    cells = grid()
    frame_fns = {c.function for c in cells if c.family == "frame" and c.frame_mode in FRAME_MODES
                 and c.reason is None}
    assert frame_fns == set(framed) | set(per_mode)
    assert sum(c.family == "exclusion" for c in cells) == len(framed) * 3 * 4
    for name in per_mode:  # one cell per frame mode, any bounds
        mine = [c for c in cells if c.function == name]
        assert [(c.frame_mode, c.start, c.end) for c in mine] == [(m, "any", "any") for m in FRAME_MODES]
    assert sum(c.family == "range-keys" for c in cells) == 6 * 2 * 2  # interval keys since issue 19
    # Per frame-reading function: 3 modes x 25 pairs, plus the two default-frame cells.
    assert sum(c.family == "frame" and c.function == framed[0] for c in cells) == 77
    for spec in over:
        if not spec.uses_frame:
            mine = [c for c in cells if c.function == spec.name]
            assert [c.frame_mode for c in mine if c.reason is None] == ["none"]
            assert {c.reason for c in mine if c.reason} == {"ignores the frame"}


def test_a_new_function_appears_in_the_grid():
    spec = FUNCTIONS["sum"]
    functions = {**FUNCTIONS, "my_agg": type(spec)("my_agg", spec.kind, 1, 1, spec.result,
                                                  uses_frame=True)}
    names = {c.function for c in grid(functions)}
    assert "my_agg" in names


# ---------------------------------------------------------------------------
# Counting


def test_counting_on_a_tiny_case_set(tmp_path):
    _case(tmp_path, "a", """\
        SELECT sum(v) OVER (ORDER BY k ASC NULLS LAST
                            ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s1,
               sum(v) OVER (ORDER BY id ASC NULLS LAST
                            ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS s2,
               rank() OVER (ORDER BY k ASC NULLS LAST) AS r
        FROM t
        """)
    _case(tmp_path, "b", """\
        SELECT count(*) OVER w AS c, sum(v) OVER (w ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s
        FROM t
        WINDOW w AS (ORDER BY k ASC NULLS LAST)
        """)
    _case(tmp_path, "c", """\
        SELECT m FROM (
          SELECT max(v) OVER (ORDER BY x DESC NULLS FIRST
                              RANGE BETWEEN INTERVAL '1' DAY PRECEDING AND CURRENT ROW
                              EXCLUDE TIES) AS m,
                 min(v) OVER () AS n
          FROM t) AS sub
        """)
    counts = _counts(tmp_path)
    # Two expressions of case a match one cell; case b's matches through its named window.
    assert counts[_frame_key("sum", "ROWS", "preceding", "current-row")] == 2
    assert counts[Cell("frame", "rank", "none", "none", "none", "none").key] == 1
    assert counts[Cell("frame", "count", "default", "default", "default", "none",
                       direction="order-by").key] == 1
    # Case c: inside a subquery; EXCLUDE goes to the exclusion family, the key to range-keys.
    assert counts[Cell("exclusion", "max", "RANGE", exclusion="ties").key] == 1
    assert counts[_frame_key("max", "RANGE", "preceding", "current-row")] == 0
    assert counts[Cell("range-keys", "any", "RANGE", key_type="date", direction="desc",
                       nulls="first").key] == 1
    assert counts[Cell("frame", "min", "default", "default", "default", "none",
                       direction="no-order-by").key] == 1
    assert sum(counts.values()) == 7


def test_an_engine_default_null_order_is_no_range_key_cell(tmp_path):
    _case(tmp_path, "a", """\
        SELECT sum(v) OVER (ORDER BY k RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) AS s FROM t
        """)
    counts = _counts(tmp_path)
    assert not any(n for key, n in counts.items() if key[0] == "range-keys")
    assert counts[_frame_key("sum", "RANGE", "preceding", "current-row")] == 1


# ---------------------------------------------------------------------------
# Output and the command line


def test_json_shape(tmp_path, capsys):
    _case(tmp_path, "a", "SELECT sum(v) OVER () AS s FROM t\n")
    assert main(["cases", "--coverage", "--format", "json", str(tmp_path)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"cells", "summary"}
    assert set(doc["summary"]) == {"covered", "empty", "not-defined"}
    assert sum(doc["summary"].values()) == len(doc["cells"]) == len(grid())
    for cell in doc["cells"]:
        extra = {"reason"} if cell["status"] == "not-defined" else set()
        assert set(cell) == {*KEY_FIELDS, "cases", "status", *extra}
        assert cell["status"] in ("covered", "empty", "not-defined")
        assert isinstance(cell["cases"], int)
    assert doc["summary"]["covered"] == 1


def test_table_names_empty_cells_and_summary(tmp_path, capsys):
    _case(tmp_path, "a", "SELECT sum(v) OVER () AS s FROM t\n")
    assert main(["cases", "--coverage", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "empty cells" in out and "summary: covered 1," in out
    assert "function=sum frame_mode=ROWS start=preceding end=following" in out


def test_malformed_case_exits_2_naming_the_file(tmp_path, capsys):
    (tmp_path / "broken.yaml").write_text("description: [unclosed\n", encoding="utf-8")
    assert main(["cases", "--coverage", str(tmp_path)]) == 2
    assert "broken.yaml" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# The corpus


def test_corpus_has_no_empty_defined_cell():
    cases, errors = load_cases([CASES_DIR])
    assert not errors
    counts = coverage(cases)
    empty = [c.cell for c in counts if c.status == "empty"]
    assert not empty, "\n".join(str(c) for c in empty[:20])
    assert summary(counts)["covered"] > 0


def test_a_per_mode_function_has_one_cell_per_frame_mode(tmp_path):
    _case(tmp_path, "m", """\
        SELECT median(v) OVER (ORDER BY k ASC NULLS LAST
                               RANGE BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE TIES) AS m,
               median(v) OVER (ORDER BY k ASC ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) AS r
        FROM t
        """)
    counts = _counts(tmp_path)
    assert counts[Cell("frame", "median", "RANGE", exclusion="none").key] == 1
    assert counts[Cell("frame", "median", "ROWS", exclusion="none").key] == 1
    assert counts[Cell("frame", "median", "GROUPS", exclusion="none").key] == 0
