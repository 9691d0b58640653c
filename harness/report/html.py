"""The report as one self-contained HTML page: summary, plots, matrix, findings.

Inline CSS, JS and SVG only (no network, no CDN), so the file can be mailed,
attached to a CI run or opened years later. Every value that comes from data,
SQL or an engine goes through `markup.h` and is escaped.
"""

from __future__ import annotations

import time
from collections import Counter
from importlib import resources

from harness.core.errors import InvalidInput
from harness.report import plots
from harness.report.findings import finding_section
from harness.report.markup import Markup, h
from harness.report.matrix import Cell, Matrix, build_matrix
from harness.report.model import ReportData
from harness.report.source_answers import ANCHOR, source_section

VERDICT_ORDER = ("match", "rejected-as-expected", "mismatch", "type-mismatch", "wrongly-accepted",
                 "wrongly-rejected", "error", "crash", "timeout", "unsupported", "suspect-reference",
                 "nondeterministic", "inconclusive")
CELL_MARKS = (("match", "✓"), ("rejected", "⊘"), ("mismatch", "✗"), ("accepted", "✗⊘"),
              ("refused", "⊗"), ("error", "!"), ("unsupported", "–"),
              ("inconclusive", "?"))  # mismatch counts type-mismatch too; error, crash and timeout
MARK_LABELS = {"rejected": "rejected as expected (invalid query)",
               "accepted": "wrongly accepted (invalid query answered)",
               "refused": "wrongly rejected (valid query refused)"}
STATE_LABELS = {
    "match": "every verdict a match", "partial": "matches, some cases unsupported",
    "unexplained": "a difference the baseline does not explain",
    "explained": "a known difference (baseline)", "unsupported": "unsupported",
    "inconclusive": "inconclusive (the reference could not judge)",
}


def render_report(data: ReportData, title: str = "window-harness conformance report") -> str:
    matrix = build_matrix(data)
    body = [
        _header(data, title),
        h("nav", {"class": "toc"}, [h("a", {"href": f"#{a}"}, t) for a, t in
                                    (("summary", "Summary"), ("plots", "Plots"),
                                     ("matrix", "Conformance matrix"), ("findings", "Findings"),
                                     *([(ANCHOR, "Source answers")] if data.source_answers else ()))]),
        h("main", {}, _summary(data), _plots(data), _matrix(matrix), _findings(data), source_section(data)),
    ]
    return Markup("<!DOCTYPE html>\n") + h(
        "html", {"lang": "en"},
        h("head", {}, h("meta", {"charset": "utf-8"}),
          h("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}),
          h("title", {}, title), h("style", {}, Markup(_static("report.css")))),
        h("body", {}, body, h("script", {}, Markup(_static("report.js")))),
    ) + Markup("\n")


def _static(name: str) -> str:
    return resources.files("harness.report").joinpath("static", name).read_text(encoding="utf-8")


# -- header and summary ------------------------------------------------------------------


def _header(data: ReportData, title: str) -> Markup:
    from harness import __version__

    gates = [s.passed for s in data.sources if s.passed is not None]
    decision = None
    if gates:
        ok = all(gates)
        decision = h("span", {"class": "verdict-pass" if ok else "verdict-fail"},
                     "gate: PASS" if ok else "gate: FAIL")
    unexplained = sum(1 for f in data.findings if not (f.baseline and f.baseline.explained))
    line = [f"{len(data.engines)} engines · {sum(s.cases for s in data.sources):,} cases · "
            f"{len(data.findings)} finding signatures ({unexplained} unexplained)"]
    if decision is not None:
        line += [" · ", decision]
    made = time.strftime("%Y-%m-%d %H:%M")
    return h("header", {"class": "top"}, h("h1", {}, title),
             h("p", {}, line), h("p", {}, f"made {made} by window-harness {__version__}"))


def _summary(data: ReportData) -> Markup:
    return h("section", {"id": "summary"}, h("h2", {}, "Summary"), _sources_table(data),
             _engines_table(data), _inconclusive(data), [h("p", {"class": "note"}, f"{s.path}: {n}")
                                    for s in data.sources for n in s.notes], _restricted(data))


def _restricted(data: ReportData) -> Markup | None:
    """Verdicts on restricted queries: how many per engine, and the first few with
    what was left out and the SQL the engine ran (nothing is dropped silently)."""
    sources = [s for s in data.sources if s.restricted]
    if not sources:
        return None
    blocks = []
    for s in sources:
        counts = ", ".join(f"{engine} {n:,}" for engine, n in s.restricted.items())
        examples = [h("div", {}, h("p", {}, h("b", {}, f"{case} on {engine}: {verdict}"), f" — {note}"),
                      h("pre", {}, sql.rstrip())) for case, engine, verdict, note, sql in s.restricted_examples]
        blocks.append(h("details", {}, h("summary", {}, f"{s.path}: restricted verdicts: {counts}"), examples))
    return h("div", {}, h("h3", {}, "Restricted queries"),
             h("p", {"class": "note"}, "An engine whose dialect cannot write some window items of a query "
               "ran it without them, judged against the reference on that same restricted query; the "
               "matrix counts the left-out items as unsupported on that engine."), blocks)


def _inconclusive(data: ReportData) -> Markup:
    """The share of each results directory's engine verdicts left undecided."""
    from harness.results.output import inconclusive_share

    lines = []
    for s in data.sources:
        undecided = inconclusive_share({e: dict(c) for e, c in s.verdicts.items()})
        if undecided["verdicts"]:
            per_engine = ", ".join(f"{e} {v['share']:.2%}" for e, v in undecided["per_engine"].items())
            lines.append(h("p", {"class": "inconclusive"},
                           f"{s.path}: inconclusive {undecided['count']} of {undecided['verdicts']} "
                           f"engine verdicts ({undecided['share']:.2%}; {per_engine})"))
    return lines


def _sources_table(data: ReportData) -> Markup:
    head = ["results", "kind", "cases", "seed", "duration", "started", "harness", "host"]
    rows = []
    for s in data.sources:
        host = s.host or {}
        host_text = ", ".join(str(v) for v in (host.get("os"), host.get("machine"),
                                               f"{host['cpus']} CPUs" if host.get("cpus") else None,
                                               f"Python {host['python']}" if host.get("python") else None) if v)
        rows.append([h("code", {}, s.path), s.kind, _num(s.cases), "" if s.seed is None else str(s.seed),
                     _duration(s.wall_seconds), s.started.replace("T", " "), s.harness_version,
                     host_text or "?"])
    return _table(head, rows, numeric={2})


def _engines_table(data: ReportData) -> Markup:
    from harness.engines.profiles import parse_spec

    totals: dict[str, Counter] = {}
    for s in data.sources:
        for engine, counts in s.verdicts.items():
            totals.setdefault(engine, Counter()).update(counts)
    verdicts = [v for v in VERDICT_ORDER if any(c[v] for c in totals.values())]
    verdicts += sorted({v for c in totals.values() for v in c} - set(verdicts))
    rows = []
    for engine, version in data.engines.items():
        try:
            spec = parse_spec(engine)
            profile_text = ", ".join(spec.profiles) or "default"
            if spec.label:
                profile_text += f" (build @{spec.label})"
        except InvalidInput:  # a spec this checkout cannot read is still shown
            profile_text = "?"
        counts = totals.get(engine, Counter())
        rows.append([h("b", {}, engine), version, profile_text, _num(sum(counts.values())),
                     *[_num(counts[v]) for v in verdicts]])
    return _table(["engine", "version", "profiles", "verdicts", *verdicts], rows,
                  numeric=set(range(3, 4 + len(verdicts))))


def _table(head: list, rows: list[list], numeric: set[int] = frozenset(), **attrs) -> Markup:
    return h("table", attrs,
             h("thead", {}, h("tr", {}, [h("th", {"class": "num" if i in numeric else None}, c)
                                         for i, c in enumerate(head)])),
             h("tbody", {}, [h("tr", {}, [h("td", {"class": "num" if i in numeric else None}, c)
                                          for i, c in enumerate(row)]) for row in rows]))


def _num(n: int) -> str:
    return f"{n:,}"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    minutes, s = divmod(round(seconds), 60)
    return f"{minutes} min {s:02d} s" if minutes else f"{seconds:.1f} s"


# -- plots ----------------------------------------------------------------------------------


def _plots(data: ReportData) -> Markup:
    totals: dict[str, Counter] = {}
    for s in data.sources:
        for engine, counts in s.verdicts.items():
            totals.setdefault(engine, Counter()).update(counts)
    figures = [_figure(plots.stacked_bars(list(totals.items()), title="Verdicts per engine",
                                          order=VERDICT_ORDER),
                       "Every verdict of every engine, over all results.")]
    series = _throughput_series([s for s in data.sources if s.throughput])
    if series:
        figures.append(_figure(plots.line_chart(series, title="Throughput over the campaign",
                                                x_label="seconds since the first case",
                                                y_label="cases/s, shapes/min, cells/min"),
                               "Cases finished per second (all engines of a case count once); "
                               "new query shapes and new grid cells covered per minute."))
    figures.append(_figure(plots.bars(data.exercised.most_common(), title="Features exercised"),
                           "Cases that exercised each row of the matrix (the most exercised first)."))
    return h("section", {"id": "plots"}, h("h2", {}, "Plots"), h("div", {"class": "plots"}, figures))


def _throughput_series(sources: list) -> list[tuple[str, list[tuple[float, float]]]]:
    """cases/s, shapes/min and cells/min of each campaign (named by its path when several)."""
    series = []
    for s in sources:
        prefix = f"{s.path}: " if len(sources) > 1 else ""
        series.append((f"{prefix}cases/s", s.throughput))
        series += [(f"{prefix}{name}", points) for name, points in s.diversity.items()]
    return series


def _figure(svg: Markup, caption: str) -> Markup:
    return h("figure", {}, svg, h("figcaption", {}, caption))


# -- the matrix -------------------------------------------------------------------------------


def _matrix(matrix: Matrix) -> Markup:
    legend = h("p", {"class": "legend"}, [h("span", {}, h("i", {"class": f"state-{state}"}), label)
                                          for state, label in STATE_LABELS.items()])
    marks = h("p", {"class": "legend"}, [h("span", {}, h("b", {"class": f"c-{bucket}"}, mark), " ",
                                           MARK_LABELS.get(bucket, bucket))
                                         for bucket, mark in CELL_MARKS])
    control = h("label", {}, h("input", {"type": "checkbox", "id": "hide-clean"}),
                " hide rows where every engine matches")
    head = h("tr", {}, h("th", {}, "feature"), [h("th", {}, e) for e in matrix.engines])
    body = []
    for axis, rows in matrix.by_axis():
        body.append(h("tr", {"class": "axis"},
                      h("td", {"class": "axis", "colspan": len(matrix.engines) + 1}, axis)))
        for row in rows:
            cells = [matrix.cell(row, e) for e in matrix.engines]
            clean = all(c.state in ("match", "empty") for c in cells)
            body.append(h("tr", {"class": "clean" if clean else None},
                          h("td", {"class": "row"}, row.partition("/")[2]),
                          [_cell(c) for c in cells]))
    intro = h("p", {"class": "note"},
              "Each row is something a case exercised; each cell counts that engine's verdicts "
              "on those cases (a wrong value counts in the rows of the expression that computed "
              "it; an unsupported verdict in the rows of the feature refused; an error in every row of "
              "its case). Grey italics: what the engine's dialect declares missing. A blank cell: "
              "no verdict of that engine counted there. The links lead to the findings behind a cell.")
    return h("section", {"id": "matrix"}, h("h2", {}, "Conformance matrix"), intro, legend, marks, control,
             h("table", {"class": "matrix"}, h("thead", {}, head), h("tbody", {}, body)))


def _cell(cell: Cell) -> Markup:
    counts = [h("span", {"class": f"c-{bucket}", "title": bucket}, f"{mark}{cell.counts[bucket]:,}")
              for bucket, mark in CELL_MARKS if cell.counts[bucket]]
    links = [h("a", {"href": f"#{f.anchor}", "title": f.signature}, f"[{i + 1}]")
             for i, f in enumerate(cell.findings[:6])]
    more = f" +{len(cell.findings) - 6}" if len(cell.findings) > 6 else ""
    return h("td", {"class": f"cell state-{cell.state}", "title": STATE_LABELS.get(cell.state, "")},
             h("div", {"class": "counts"}, counts) if counts else None,
             h("div", {"class": "links"}, links, more) if links else None,
             h("div", {"class": "declared"}, cell.declared) if cell.declared else None)


# -- findings ---------------------------------------------------------------------------------


def _findings(data: ReportData) -> Markup:
    ordered = sorted(data.findings, key=lambda f: (bool(f.baseline and f.baseline.explained),
                                                   f.engine, -f.count))
    controls = h("div", {"class": "controls"},
                 h("input", {"type": "search", "id": "finding-filter",
                             "placeholder": "filter: engine, function, verdict, text"}),
                 h("label", {}, h("input", {"type": "checkbox", "id": "only-unexplained"}),
                   " only unexplained"),
                 h("span", {"id": "finding-count", "class": "muted"}, f"{len(ordered)} shown"))
    intro = h("p", {"class": "note"},
              "One section per signature (engine, verdict class, and the function, frame and "
              "types of the expression that differed, or the normalised error), unexplained "
              "first. Each shows its smallest case: the reduction when there is one.")
    if not ordered:
        return h("section", {"id": "findings"}, h("h2", {}, "Findings"),
                 h("p", {}, "No findings: every verdict was a match, unsupported or inconclusive."))
    return h("section", {"id": "findings"}, h("h2", {}, f"Findings ({len(ordered)})"), intro, controls,
             [finding_section(f) for f in ordered])
