"""The report's inline SVG plots: well-formed, escaped, and counting what they should."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest

from harness.report.plots import (
    BAR_W,
    MAX_CIRCLES,
    MAX_LINE_POINTS,
    VERDICT_COLOURS,
    bars,
    line_chart,
    stacked_bars,
)

NS = "{http://www.w3.org/2000/svg}"
HOSTILE = "<script>alert(1)</script>\"&'"  # 28 characters: not clipped


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{NS}svg"
    return root


def by_class(root: ET.Element, cls: str) -> list[ET.Element]:
    return [e for e in root.iter() if e.get("class") == cls]


def texts(root: ET.Element, cls: str) -> list[str]:
    return [e.text or "" for e in by_class(root, cls)]


def tip(mark: ET.Element) -> str:
    title = mark.find(f"{NS}title")
    assert title is not None
    return title.text or ""


def assert_round_ticks(labels: list[str]) -> list[float]:
    """4-6 evenly spaced ticks, all multiples of a 1, 2, 2.5 or 5 x 10^k step."""
    values = [float(label.replace(",", "")) for label in labels]
    assert 4 <= len(values) <= 6, labels
    step = values[1] - values[0]
    assert all(math.isclose(b - a, step) for a, b in zip(values, values[1:], strict=False))
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert any(math.isclose(mantissa, m) for m in (1, 2, 2.5, 5)), labels
    assert all(math.isclose(v / step, round(v / step), abs_tol=1e-9) for v in values), labels
    return values


def tick_values(root: ET.Element) -> tuple[list[float], list[float]]:
    """The x and y tick values, told apart by their anchor."""
    ticks = by_class(root, "plot-tick")
    xs = [t.text or "" for t in ticks if t.get("text-anchor") == "middle"]
    ys = [t.text or "" for t in ticks if t.get("text-anchor") == "end"]
    return assert_round_ticks(xs), assert_round_ticks(ys)


ROWS = [
    ("duckdb", {"match": 1228, "mismatch": 6}),
    ("datafusion", {"mismatch": 10, "match": 500, "error": 7}),
    ("spark", {"weird-verdict": 3, "unsupported": 0}),
]


def test_stacked_bars_draws_one_segment_per_nonzero_count_with_exact_titles():
    root = parse(stacked_bars(ROWS, title="Verdicts", order=["match", "mismatch"]))
    segments = by_class(root, "plot-segment")
    assert [tip(s) for s in segments] == [
        "duckdb: match 1,228",
        "duckdb: mismatch 6",
        "datafusion: match 500",
        "datafusion: mismatch 10",
        "datafusion: error 7",
        "spark: weird-verdict 3",
    ]
    assert texts(root, "plot-value") == ["1,234", "517", "3"]
    assert texts(root, "plot-label") == ["duckdb", "datafusion", "spark"]


def test_stacked_bars_colours_order_and_legend():
    root = parse(stacked_bars(ROWS, title="Verdicts", order=["mismatch", "timeout"]))
    segments = by_class(root, "plot-segment")
    assert [tip(s).split(": ")[1].split()[0] for s in segments[2:5]] == ["mismatch", "error", "match"]
    assert segments[0].get("fill") == VERDICT_COLOURS["mismatch"]
    assert segments[-1].get("fill") == VERDICT_COLOURS["other"]
    # Segments abut: each starts where the previous one ends.
    first, second = segments[0], segments[1]
    assert float(second.get("x")) == pytest.approx(float(first.get("x")) + float(first.get("width")), abs=0.1)
    # Only the verdicts present, `order` first, then alphabetical; timeout is absent.
    assert texts(root, "plot-legend-label") == [
        "mismatch (16)", "error (7)", "match (1,728)", "weird-verdict (3)"
    ]


def test_stacked_bars_scale_to_the_largest_total_and_keep_tiny_counts_visible():
    rows = [("big", {"match": 10_000, "mismatch": 1}), ("half", {"match": 5_000})]
    root = parse(stacked_bars(rows, title="t"))
    big_match, big_mismatch, half = by_class(root, "plot-segment")
    assert float(big_mismatch.get("width")) >= 2
    assert float(big_match.get("width")) + float(big_mismatch.get("width")) <= BAR_W
    assert float(half.get("width")) / float(big_match.get("width")) == pytest.approx(0.5, abs=0.01)


def test_stacked_bars_empty_and_all_zero():
    empty = parse(stacked_bars([], title="Nothing"))
    assert texts(empty, "plot-empty") == ["no data"]
    assert by_class(empty, "plot-segment") == []
    zeros = parse(stacked_bars([("duckdb", {}), ("spark", {"match": 0})], title="Zeros"))
    assert by_class(zeros, "plot-segment") == []
    assert texts(zeros, "plot-value") == ["0", "0"]


def test_bars_largest_first_with_values():
    items = [("b", 5), ("a", 1_234_567), ("c", 5), ("d", 0)]
    root = parse(bars(items, title="Features"))
    assert texts(root, "plot-label") == ["a", "b", "c", "d"]
    assert texts(root, "plot-value") == ["1,234,567", "5", "5", "0"]
    widths = [float(b.get("width")) for b in by_class(root, "plot-bar")]
    assert widths[0] == pytest.approx(BAR_W) and widths[3] == 0
    assert tip(by_class(root, "plot-bar")[0]) == "a: 1,234,567"


def test_bars_sums_the_rest_into_one_others_bar():
    items = [(f"feature{i:02}", 100 - i) for i in range(50)]
    root = parse(bars(items, title="Features", max_items=10))
    labels = texts(root, "plot-label")
    assert len(by_class(root, "plot-bar")) == 10
    assert labels[:9] == [f"feature{i:02}" for i in range(9)]
    assert labels[9] == "41 others"
    assert texts(root, "plot-value")[9] == f"{sum(100 - i for i in range(9, 50)):,}"


def test_bars_others_only_when_needed():
    items = [(f"f{i}", i + 1) for i in range(5)]
    assert "others" not in "".join(texts(parse(bars(items, title="t", max_items=5)), "plot-label"))
    labels = texts(parse(bars(items, title="t", max_items=4)), "plot-label")
    assert labels == ["f4", "f3", "f2", "2 others"]
    with pytest.raises(ValueError):
        bars(items, title="t", max_items=0)


def test_bars_empty():
    root = parse(bars([], title="None"))
    assert texts(root, "plot-empty") == ["no data"]
    assert by_class(root, "plot-bar") == []


def test_long_labels_are_clipped_with_the_full_label_in_the_title():
    label = "partition_by_a_very_long_expression_name"
    root = parse(bars([(label, 3)], title="t"))
    [shown] = texts(root, "plot-label")
    assert len(shown) == 28 and shown.endswith("\u2026") and label.startswith(shown[:-1])
    assert tip(by_class(root, "plot-bar")[0]) == f"{label}: 3"


@pytest.mark.parametrize(
    "render, shown_as",
    [
        (lambda s: stacked_bars([(s, {s: 2})], title=s), "plot-label"),
        (lambda s: bars([(s, 2)], title=s), "plot-label"),
        (lambda s: line_chart([(s, [(0, 1)]), ("b", [(0, 0)])], title=s, x_label=s, y_label=s),
         "plot-axis-label"),
        (lambda s: line_chart([], title=s, x_label=s, y_label=s), None),
    ],
    ids=["stacked_bars", "bars", "line_chart", "line_chart_empty"],
)
def test_data_is_escaped(render, shown_as):
    svg = render(HOSTILE)
    assert "<script" not in svg
    root = parse(svg)
    assert root.get("aria-label") == HOSTILE and root.get("role") == "img"
    assert tip(root) == HOSTILE
    assert texts(root, "plot-title") == [HOSTILE]
    if shown_as:
        assert HOSTILE in texts(root, shown_as)
        marks = by_class(root, "plot-segment") + by_class(root, "plot-bar") + by_class(root, "plot-point")
        assert any(tip(m).startswith(f"{HOSTILE}: ") for m in marks)


def test_characters_xml_forbids_do_not_break_parsing():
    root = parse(bars([("nul\x00bell\x07", 1)], title="t\x1b"))
    assert texts(root, "plot-label") == ["nul\ufffdbell\ufffd"]


def test_line_chart_one_circle_per_point_and_exact_titles():
    points = [(i * 1.5, i * i) for i in range(50)]
    root = parse(line_chart([("duckdb", points)], title="t", x_label="s", y_label="cases/s"))
    circles = by_class(root, "plot-point")
    assert len(circles) == 50
    assert tip(circles[3]) == "duckdb: s 4.5, cases/s 9"
    [line] = by_class(root, "plot-line")
    assert len(line.get("points").split()) == 50
    assert by_class(root, "plot-legend") == []
    xs, ys = tick_values(root)
    assert xs[0] <= 0 and xs[-1] >= 73.5 and ys[0] <= 0 and ys[-1] >= 49 * 49


def test_line_chart_downsamples_circles_and_long_polylines():
    many = [(float(i), math.sin(i / 100)) for i in range(5000)]
    root = parse(line_chart([("a", many)], title="t", x_label="x", y_label="y"))
    circles = by_class(root, "plot-point")
    assert len(circles) == MAX_CIRCLES
    assert tip(circles[0]).startswith("a: x 0,") and tip(circles[-1]).startswith("a: x 4,999,")
    [line] = by_class(root, "plot-line")
    assert len(line.get("points").split()) == MAX_LINE_POINTS
    two = [("a", many[:1000]), ("b", many[:1000])]
    root = parse(line_chart(two, title="t", x_label="x", y_label="y"))
    assert len(by_class(root, "plot-point")) == MAX_CIRCLES
    assert [len(line.get("points").split()) for line in by_class(root, "plot-line")] == [1000, 1000]
    assert texts(root, "plot-legend-label") == ["a", "b"]


def test_line_chart_empty_series_say_no_data():
    for series in ([], [("a", [])], [("a", [(float("nan"), 1.0)])]):
        root = parse(line_chart(series, title="t", x_label="x", y_label="y"))
        assert texts(root, "plot-empty") == ["no data"]
        assert by_class(root, "plot-tick") == [] and by_class(root, "plot-point") == []


def test_line_chart_single_point_sits_in_the_middle_of_padded_axes():
    root = parse(line_chart([("a", [(3, 5)])], title="t", x_label="x", y_label="y"))
    [circle] = by_class(root, "plot-point")
    xs, ys = tick_values(root)
    assert xs[0] < 3 < xs[-1] and ys[0] < 5 < ys[-1]
    vertical = [g for g in by_class(root, "plot-gridline") if g.get("x1") == g.get("x2")]
    middle = (float(vertical[0].get("x1")) + float(vertical[-1].get("x1"))) / 2
    assert float(circle.get("cx")) == pytest.approx(middle, abs=0.1)


@pytest.mark.parametrize("y", [0.0, 7.0, -3.0, 1e6])
def test_line_chart_all_equal_values_pad_the_range(y):
    root = parse(line_chart([("a", [(0, y), (10, y), (20, y)])], title="t", x_label="x", y_label="y"))
    _, ys = tick_values(root)
    assert ys[0] < y < ys[-1]
    assert len(by_class(root, "plot-point")) == 3


@pytest.mark.parametrize(
    "lo, hi",
    [(0, 1), (0, 7), (0, 12), (0.3, 0.9), (-5, 12), (-0.02, -0.001), (13, 97), (0.001, 0.0013), (1e6, 3.3e6)],
)
def test_ticks_are_round_and_cover_the_data(lo, hi):
    root = parse(line_chart([("a", [(lo, hi), (hi, lo)])], title="t", x_label="x", y_label="y"))
    for values in tick_values(root):
        assert values[0] <= lo and values[-1] >= hi
    negative = [t for t in texts(root, "plot-tick") if t.startswith("-")]
    assert all(float(t.replace(",", "")) < 0 for t in negative)  # never "-0"
