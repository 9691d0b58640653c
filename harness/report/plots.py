"""Inline SVG plots for the HTML conformance report.

Pure functions from data to SVG markup: no script, no external fonts or URLs, so the
report stays one self-contained file. Every element is built by the report's one element
builder (`markup.h`, MarkupSafe underneath), so everything taken from data (labels, names,
titles) is escaped: case and engine names end up here verbatim. Text styling is
`plot-*` classes and presentation attributes, both overridden by the page's CSS; data
marks carry their fill inline so a plot reads without it. Every mark has a `<title>`
child with its exact value, which browsers show as a hover tooltip.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from harness.report.markup import Markup, h

WIDTH = 720  # viewBox width; the page may scale it down
TITLE_H = 32  # the visible title above every plot
ROW_H = 22  # one horizontal bar per row
BAR_H = 16
LABEL_W = 216  # fits LABEL_MAX characters of right-aligned 12px sans-serif
VALUE_W = 72  # room for the number printed after the longest bar
BAR_W = WIDTH - LABEL_W - VALUE_W
LABEL_MAX = 28
MIN_SEGMENT = 2.0  # a single mismatch among thousands of matches must stay visible
LEGEND_COL_W = 176
LEGEND_ROW_H = 18
MAX_CIRCLES = 200  # per chart, shared among its series
MAX_LINE_POINTS = 2000  # per polyline
BAR_COLOUR = "#4575b4"
OTHERS_COLOUR = "#bdbdbd"

VERDICT_COLOURS: dict[str, str] = {
    # Pass and fail differ in hue and in lightness, for red-green colour blindness.
    "match": "#1a9850",
    "rejected-as-expected": "#66bd63",
    "wrongly-accepted": "#a50026",
    "wrongly-rejected": "#f46d43",
    "mismatch": "#d73027",
    "type-mismatch": "#f4a582",
    "error": "#fd8d3c",
    "crash": "#762a83",
    "timeout": "#c2a5cf",
    "unsupported": "#bdbdbd",
    "suspect-reference": "#fee08b",
    "inconclusive": "#d8a200",
    "nondeterministic": "#4575b4",
    "batched-only": "#01665e",
    "explained": "#80cdc1",
    "other": "#525252",  # any verdict name not listed above
}

# Okabe-Ito colours: distinguishable under the common colour-vision deficiencies.
SERIES_COLOURS = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#000000")

# XML 1.0 forbids these even as character references, and escaping keeps them.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _el(tag: str, attrs: Mapping[str, object], *children: object) -> Markup:
    """An SVG element, by `markup.h` (which escapes); plain strings in its attributes
    and children first lose the characters XML forbids, so the SVG also parses as XML."""
    return h(tag, {name: _xml(value) for name, value in attrs.items()}, *map(_xml, children))


def _xml(value: object) -> object:
    if isinstance(value, str) and not isinstance(value, Markup):
        return _NOT_XML.sub("\ufffd", value)
    return value


def _fmt(value: float) -> str:
    """A number for people: thousands separators, whole numbers from 100 up, three
    significant figures below (1,234; 0.5; 12.3)."""
    if not math.isfinite(value):
        return str(value)
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    digits = min(9, max(0, 2 - math.floor(math.log10(abs(value)))))
    text = f"{value:,.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _n(value: float) -> str:
    """A coordinate: one decimal is finer than a pixel and keeps the markup short."""
    return f"{value:.1f}".removesuffix(".0")


def _clip(label: str, limit: int = LABEL_MAX) -> str:
    """Shorten to `limit` characters with an ellipsis; the full label is in a <title>."""
    return label if len(label) <= limit else label[: limit - 1] + "\u2026"


def _colour(verdict: str) -> str:
    return VERDICT_COLOURS.get(verdict, VERDICT_COLOURS["other"])


def _text(x: float, y: float, text: str, cls: str, anchor: str = "start",
          **extra: str) -> Markup:
    """A <text>; `extra` attributes (fill, transform) follow the position."""
    return _el("text", {"class": cls, "x": _n(x), "y": _n(y), "text-anchor": anchor, **extra}, text)


def _rect(cls: str, x: float, y: float, w: float, height: float, fill: str, tip: str) -> Markup:
    return _el("rect", {"class": cls, "x": _n(x), "y": _n(y), "width": _n(w), "height": _n(height),
                        "fill": fill}, _el("title", {}, tip))


def _svg(kind: str, title: str, height: float, body: Sequence[Markup]) -> Markup:
    """The root element: sized by viewBox, labelled for screen readers, titled on screen."""
    tall = _n(height)
    return _el("svg", {"xmlns": "http://www.w3.org/2000/svg", "class": f"plot plot-{kind}",
                       "role": "img", "aria-label": title, "viewBox": f"0 0 {WIDTH} {tall}",
                       "width": WIDTH, "height": tall, "font-family": "sans-serif", "font-size": 12},
               _el("title", {}, title),
               _el("text", {"class": "plot-title", "x": 8, "y": 20, "font-size": 14,
                            "font-weight": "bold"}, title),
               body)


def _empty(kind: str, title: str) -> Markup:
    """A plot with nothing to draw says so, rather than showing empty axes."""
    note = _text(WIDTH / 2, TITLE_H + 22, "no data", "plot-empty", "middle", fill="#767676")
    return _svg(kind, title, TITLE_H + 40, [note])


def _legend(entries: Sequence[tuple[str, str]], top: float) -> tuple[Markup, float]:
    """(label, colour) swatches flowing left to right in fixed columns; returns the markup
    and its height."""
    per_row = (WIDTH - 16) // LEGEND_COL_W
    parts = []
    for i, (label, colour) in enumerate(entries):
        x = 8 + (i % per_row) * LEGEND_COL_W
        y = top + (i // per_row) * LEGEND_ROW_H
        parts.append(_rect("plot-swatch", x, y, 12, 12, colour, label))
        parts.append(_text(x + 17, y + 10, _clip(label, 24), "plot-legend-label"))
    return _el("g", {"class": "plot-legend"}, parts), math.ceil(len(entries) / per_row) * LEGEND_ROW_H


def _row(label: str, tip: str, y: float, marks: Sequence[Markup], value_x: float,
         value: str) -> Markup:
    """One horizontal bar: clipped label, its marks, and the number after them. The group's
    <title> gives the full label to the label and number, which have no <title> of their own."""
    return _el("g", {"class": "plot-row"},
               _el("title", {}, tip),
               _text(LABEL_W - 6, y + 12, _clip(label), "plot-label", "end"),
               marks,
               _text(value_x + 4, y + 12, value, "plot-value"))


def stacked_bars(
    rows: Sequence[tuple[str, Mapping[str, int]]], *, title: str, order: Sequence[str] = ()
) -> Markup:
    """Horizontal stacked bars, one per row (e.g. per engine: verdict -> count).

    Segment order follows `order` then the rest alphabetically; a legend lists
    the verdicts present, with their sums. Bars are absolute counts scaled to the
    largest row total, so engines that ran fewer cases show shorter bars; the
    total is printed at the bar's end. A non-zero count is never thinner than
    MIN_SEGMENT, so one mismatch among thousands of matches stays visible."""
    if not rows:
        return _empty("stacked", title)
    present = {v for _, counts in rows for v, n in counts.items() if n > 0}
    verdicts = [v for v in dict.fromkeys(order) if v in present]
    verdicts += sorted(present.difference(verdicts))
    totals = [sum(n for n in counts.values() if n > 0) for _, counts in rows]
    # Reserve the minimum widths so that even the widest bar stays inside its area.
    scale = (BAR_W - MIN_SEGMENT * len(verdicts)) / max(max(totals), 1)
    body = []
    for i, ((name, counts), total) in enumerate(zip(rows, totals, strict=True)):
        y, x, marks = TITLE_H + i * ROW_H, float(LABEL_W), []
        for verdict in verdicts:
            count = counts.get(verdict, 0)
            if count > 0:
                width = max(count * scale, MIN_SEGMENT)
                tip = f"{name}: {verdict} {_fmt(count)}"
                marks.append(_rect("plot-segment", x, y + 3, width, BAR_H, _colour(verdict), tip))
                x += width
        body.append(_row(name, f"{name}: total {_fmt(total)}", y, marks, x, _fmt(total)))
    sums = {v: sum(max(c.get(v, 0), 0) for _, c in rows) for v in verdicts}
    legend_top = TITLE_H + len(rows) * ROW_H + 10
    entries = [(f"{v} ({_fmt(sums[v])})", _colour(v)) for v in verdicts]
    legend, legend_h = _legend(entries, legend_top)
    return _svg("stacked", title, legend_top + legend_h + 6, [*body, legend])


def bars(items: Sequence[tuple[str, int]], *, title: str, max_items: int = 40) -> Markup:
    """Horizontal bars of counts, largest first (e.g. cases per feature exercised), labels left,
    value at the bar end; beyond max_items the rest are summed into one 'N others' bar.

    At most `max_items` bars are drawn: when there are more items, the largest
    `max_items - 1` keep their own bar and the others (two or more) share the last one."""
    if max_items < 1:
        raise ValueError(f"max_items must be at least 1, not {max_items}")
    if not items:
        return _empty("bars", title)
    ranked = sorted(items, key=lambda item: (-item[1], item[0]))
    shown = [(label, count, BAR_COLOUR) for label, count in ranked]
    if len(ranked) > max_items:
        rest = ranked[max_items - 1 :]
        others = (f"{len(rest)} others", sum(count for _, count in rest), OTHERS_COLOUR)
        shown = [*shown[: max_items - 1], others]
    scale = BAR_W / max(max(count for _, count, _ in shown), 1)
    body = []
    for i, (label, count, colour) in enumerate(shown):
        y, width = TITLE_H + i * ROW_H, max(count, 0) * scale
        tip = f"{label}: {_fmt(count)}"
        mark = _rect("plot-bar", LABEL_W, y + 3, width, BAR_H, colour, tip)
        body.append(_row(label, tip, y, [mark], LABEL_W + width, _fmt(count)))
    return _svg("bars", title, TITLE_H + len(shown) * ROW_H + 8, body)


def _tick_decimals(step: float) -> int:
    """Decimals that show every multiple of `step` exactly (0.25 -> 2, 2.5 -> 1, 20 -> 0)."""
    decimals = max(0, -math.floor(math.log10(step)))
    return decimals + (not math.isclose(step * 10**decimals, round(step * 10**decimals)))


def _ticks(lo: float, hi: float) -> tuple[list[float], int]:
    """4-6 round ticks (multiples of 1, 2, 2.5 or 5 x 10^k) covering [lo, hi], preferring 5,
    and the decimals their labels need. Consecutive candidate steps differ by at most 2x,
    so one of them always gives 3-5 intervals."""
    if hi - lo <= abs(hi) * 1e-12:  # one value: pad, or there is no scale to draw
        pad = abs(lo) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    exp = math.floor(math.log10(hi - lo))

    def covering(step: float) -> tuple[list[float], int]:
        first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
        decimals = _tick_decimals(step)
        return [round(i * step, decimals) for i in range(first, last + 1)], decimals

    steps = [m * 10.0**e for e in range(exp - 2, exp + 2) for m in (1, 2, 2.5, 5)]
    return min((covering(s) for s in steps), key=lambda t: (abs(len(t[0]) - 5), len(t[0])))


def _thin(points: Sequence[tuple[float, float]], limit: int) -> list[tuple[float, float]]:
    """At most `limit` (>= 2) points, evenly spaced by index, keeping the first and last."""
    if len(points) <= limit:
        return list(points)
    return [points[round(i * (len(points) - 1) / (limit - 1))] for i in range(limit)]


class _Frame:
    """The plot area and the data range mapped onto it (SVG y grows downwards)."""

    left, right, top, bottom = 88.0, WIDTH - 24.0, TITLE_H + 8.0, TITLE_H + 268.0

    def __init__(self, points: Sequence[tuple[float, float]]) -> None:
        self.xt, self.x_decimals = _ticks(min(x for x, _ in points), max(x for x, _ in points))
        self.yt, self.y_decimals = _ticks(min(y for _, y in points), max(y for _, y in points))

    def px(self, x: float) -> float:
        lo, hi = self.xt[0], self.xt[-1]
        return self.left + (x - lo) / (hi - lo) * (self.right - self.left)

    def py(self, y: float) -> float:
        lo, hi = self.yt[0], self.yt[-1]
        return self.bottom - (y - lo) / (hi - lo) * (self.bottom - self.top)


def _line(cls: str, x1: float, y1: float, x2: float, y2: float) -> Markup:
    return _el("line", {"class": cls, "x1": _n(x1), "y1": _n(y1), "x2": _n(x2), "y2": _n(y2)})


def _axes(f: _Frame, x_label: str, y_label: str) -> list[Markup]:
    """Grid lines at the ticks, their labels, and the two axis titles."""
    lines = [_line("plot-gridline", f.px(x), f.top, f.px(x), f.bottom) for x in f.xt]
    lines += [_line("plot-gridline", f.left, f.py(y), f.right, f.py(y)) for y in f.yt]
    out = [_el("g", {"class": "plot-grid", "stroke": "#d9d9d9", "stroke-width": 1}, lines)]
    for x in f.xt:
        out.append(_text(f.px(x), f.bottom + 16, f"{x:,.{f.x_decimals}f}", "plot-tick", "middle"))
    for y in f.yt:
        out.append(_text(f.left - 6, f.py(y) + 4, f"{y:,.{f.y_decimals}f}", "plot-tick", "end"))
    out.append(_text((f.left + f.right) / 2, f.bottom + 36, x_label, "plot-axis-label", "middle"))
    mid = (f.top + f.bottom) / 2
    rotate = f"rotate(-90 16 {_n(mid)})"
    out.append(_text(16, mid, y_label, "plot-axis-label", "middle", transform=rotate))
    return out


def _series(f: _Frame, name: str, points: Sequence[tuple[float, float]], colour: str,
            circles: int, x_label: str, y_label: str) -> Markup:
    """One series: its polyline and up to `circles` points, each with its exact value."""
    coords = " ".join(f"{_n(f.px(x))},{_n(f.py(y))}" for x, y in _thin(points, MAX_LINE_POINTS))
    line = _el("polyline", {"class": "plot-line", "points": coords, "fill": "none",
                            "stroke": colour, "stroke-width": 1.5}, _el("title", {}, name))
    marks = [_el("circle", {"class": "plot-point", "cx": _n(f.px(x)), "cy": _n(f.py(y)), "r": 2.5,
                            "fill": colour},
                 _el("title", {}, f"{name}: {x_label} {_fmt(x)}, {y_label} {_fmt(y)}"))
             for x, y in _thin(points, circles)]
    return _el("g", {"class": "plot-series"}, line, marks)


def line_chart(
    series: Sequence[tuple[str, Sequence[tuple[float, float]]]],
    *,
    title: str,
    x_label: str,
    y_label: str,
) -> Markup:
    """One or more named series of (x, y) points (e.g. 'cases/s' over 'seconds since start'); axes
    with 4-6 round ticks, a polyline per series plus small circles, a legend when more than one.

    Points are drawn in x order; non-finite ones are dropped. The circles are
    thinned evenly to share MAX_CIRCLES among the series (they are hover targets,
    not the data); each polyline to MAX_LINE_POINTS, more than the plot has pixels."""
    clean = []
    for name, points in series:
        kept = [(float(x), float(y)) for x, y in points if math.isfinite(x) and math.isfinite(y)]
        if kept:
            clean.append((name, sorted(kept, key=lambda p: p[0])))
    if not clean:
        return _empty("line", title)
    frame = _Frame([p for _, points in clean for p in points])
    colours = [SERIES_COLOURS[i % len(SERIES_COLOURS)] for i in range(len(clean))]
    circles = max(2, MAX_CIRCLES // len(clean))
    body = _axes(frame, x_label, y_label)
    for (name, points), colour in zip(clean, colours, strict=True):
        body.append(_series(frame, name, points, colour, circles, x_label, y_label))
    height = frame.bottom + 48
    if len(clean) > 1:
        entries = [(name, c) for (name, _), c in zip(clean, colours, strict=True)]
        legend, legend_h = _legend(entries, height)
        body.append(legend)
        height += legend_h
    return _svg("line", title, height + 4, body)
