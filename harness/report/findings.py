"""One finding as a section of the report: its smallest case (data, canonical
SQL, each engine's SQL), each engine's answer beside the reference's with the
differing cells highlighted, the replay command and the baseline status."""

from __future__ import annotations

from harness.report.answers import answer_rows, pair_rows
from harness.report.explanations import cell_anchor, first_cell_explained
from harness.report.markup import Markup, h, render
from harness.report.model import Finding

MAX_ROWS = 40  # rows of a data table or an answer shown before the rest is folded away


def finding_section(finding: Finding) -> Markup:
    doc = finding.doc
    record = doc.get("finding") or {}
    explained = bool(finding.baseline and finding.baseline.explained)
    search = " ".join([finding.signature, finding.engine, finding.verdict, finding.detail,
                       finding.baseline.entry or "" if finding.baseline else ""]).lower()
    return h("section", {"class": f"finding {'explained' if explained else 'unexplained'}",
                         "id": finding.anchor, "data-search": search, "data-engine": finding.engine},
             h("h3", {}, finding.signature), _badge(finding), _meta(finding, record),
             _case(doc), _answers(finding, record))


def _badge(finding: Finding) -> Markup:
    status = finding.baseline
    if status is None or not status.explained:
        return h("p", {}, h("span", {"class": "badge unexplained"}, "unexplained"),
                 " no entry of the known-differences baseline explains it")
    link = h("a", {"href": status.link}, status.link) if status.link.startswith(("http://", "https://")) else status.link
    return h("p", {}, h("span", {"class": "badge explained"}, f"known: {status.entry}"),
             f" ({status.kind}) ", status.reason, " ", link if status.link else None)


def _meta(finding: Finding, record: dict) -> Markup:
    from harness.findings.replay import replay_command
    from harness.results.rundir import shown_path

    shown = shown_path(finding.replay) if finding.replay else None
    engines = [finding.engine] if finding.engine != "reference" else list(record.get("engines", {}))
    replay = replay_command(shown, engines) if shown else None
    cases = ", ".join(finding.cases[:8]) + (f", … ({finding.count} in all)" if finding.count > 8 else "")
    items = [("engine", h("b", {}, finding.engine)), ("verdict", finding.verdict),
             ("classification", finding.classification or "?"),
             *([("query", "the bare query (as written: no hidden row id or witness columns) failed "
                          "where the instrumented query passed")] if finding.facts.bare else []),
             ("occurrences", f"{finding.count}: {cases}"), ("results", h("code", {}, finding.source))]
    items.append(("case file", h("code", {}, shown) if shown else "not recorded"))
    if finding.file is not None and finding.original is not None and finding.file != finding.original:
        items.append(("reduced from", h("code", {}, shown_path(finding.original))))
    if shown:
        items.append(("replay", h("code", {}, replay)))
    detail = record.get("detail") or finding.detail
    if detail:
        items.append(("detail", h("pre", {}, detail)))
    restricted = record.get("restricted")
    if restricted:  # the case file holds the query the engine ran; the case's is kept here
        items.append(("restricted", h("div", {}, h("p", {}, restricted.get("note", "")),
                                      h("details", {}, h("summary", {}, "the case's query, before restricting"),
                                        h("pre", {}, (restricted.get("case_sql") or "").rstrip())))))
    return h("dl", {"class": "meta"}, [(h("dt", {}, k), h("dd", {}, v)) for k, v in items])


def _case(doc: dict) -> Markup:
    if not doc:
        return h("p", {"class": "note"}, "The case file was not found beside the results.")
    tables = [h("div", {}, h("h4", {}, f"table {name}"), _data_table(t)) for name, t in
              (doc.get("tables") or {}).items()]
    return h("div", {}, h("h4", {}, "Data"), h("div", {"class": "answers"}, tables),
             h("h4", {}, "Canonical SQL"), h("pre", {}, doc.get("sql", "").rstrip()),
             _engine_sql(doc.get("finding") or {}))


def _data_table(table: dict) -> Markup:
    columns = table.get("columns") or {}
    names = list(columns) if isinstance(columns, dict) else list(columns)
    head = [h("th", {}, n, h("br", {}), h("span", {"class": "muted"}, columns[n]))
            if isinstance(columns, dict) else h("th", {}, n) for n in names]
    rows = [tuple(r) for r in table.get("rows") or []]
    body = [h("tr", {}, [_value_cell(v) for v in row]) for row in rows[:MAX_ROWS]]
    rest = h("p", {"class": "note"}, f"… {len(rows) - MAX_ROWS:,} more rows") if len(rows) > MAX_ROWS else None
    return h("table", {}, h("thead", {}, h("tr", {}, head)), h("tbody", {}, body)) + render(rest)


def _value_cell(value: object, differs: bool = False, explained_at: str | None = None) -> Markup:
    """A cell; `explained_at`: the id of its explanation, which the cell links to."""
    text = "NULL" if value is None else _show(value)
    shown = h("a", {"href": f"#{explained_at}", "title": "why: the reference's derivation"}, text) \
        if explained_at else text
    if value is None:
        return h("td", {"class": "null diff" if differs else "null"}, shown)
    return h("td", {"class": "diff" if differs else None}, shown)


def _show(value: object) -> str:
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join("NULL" if v is None else _show(v) for v in value) + "]"
    return str(value)


def _engine_sql(record: dict) -> Markup | None:
    engines = {name: e for name, e in _engine_records(record).items() if e.get("sql")}
    if not engines:
        return None
    return h("details", {}, h("summary", {}, "each engine's SQL"),
             [(h("h4", {}, f"{name} ({e.get('version', '?')})"), h("pre", {}, e["sql"].rstrip()))
              for name, e in engines.items()])


def _engine_records(record: dict) -> dict:
    """Each engine's record; for a finding of the bare query, its run of the bare query
    (`harness.judge.bare`) where it has one."""
    engines = record.get("engines") or {}
    if not (record.get("facts") or {}).get("bare"):
        return engines
    return {name: e.get("bare") or e for name, e in engines.items()}


def _answers(finding: Finding, record: dict) -> Markup | None:
    engines = _engine_records(record)
    reference = answer_rows((engines.get("reference") or {}).get("answer"))
    if not engines:
        return None
    blocks, explanations = [], []
    if reference is not None:
        blocks.append(_answer_block("reference", reference[0], [(r, ()) for r in reference[1]]))
    for name, e in engines.items():
        if name == "reference":
            continue
        answer = answer_rows(e.get("answer"))
        label = f"{name}: {e.get('verdict', '?')}"
        if answer is None:
            blocks.append(h("div", {}, h("h4", {}, label),
                            h("pre", {}, e.get("detail") or "no answer recorded")))
        elif reference is None:
            blocks.append(_answer_block(label, answer[0], [(r, ()) for r in answer[1]]))
        else:
            paired = pair_rows(reference[1], answer[1])
            if answer[0] == reference[0] and not any(any(p.differs) for p in paired):
                blocks.append(h("div", {}, h("h4", {}, label),
                                h("p", {"class": "note"}, "the same rows as the reference")))
                continue
            why = _why(finding, name, paired)
            first = _first_differing(paired) if why is not None else None
            blocks.append(_answer_block(label, answer[0], [(p.engine, p.differs) for p in paired],
                                        first and (*first, cell_anchor(finding.anchor, name))))
            explanations.append(why)
    return h("div", {}, h("h4", {}, "Answers (differing cells highlighted against the reference)"),
             h("div", {"class": "answers"}, blocks), explanations)


def _differing_cells(paired: list) -> list[tuple[int, int, object, object]]:
    """(reference row, column, reference value, engine value) of each differing cell of paired rows."""
    return [(i, j, p.reference[j], p.engine[j]) for i, p in enumerate(paired)
            if p.reference is not None and p.engine is not None
            for j, differs in enumerate(p.differs) if differs and j < len(p.reference) and j < len(p.engine)]


def _first_differing(paired: list) -> tuple[int, int] | None:
    cells = _differing_cells(paired)
    return (cells[0][0], cells[0][1]) if cells else None


def _why(finding: Finding, engine: str, paired: list) -> Markup | None:
    """The folded explanation of the engine's first differing cell (`report.explanations`)."""
    return first_cell_explained(finding.case, engine, _differing_cells(paired),
                                cell_anchor(finding.anchor, engine))


def _answer_block(label: str, columns: list[str], rows: list[tuple[tuple | None, tuple]],
                  linked: tuple[int, int, str] | None = None) -> Markup:
    """An answer; rows in the reference's order, a row the engine is missing as a gap.
    `linked`: (row, column, anchor) of a cell whose explanation is shown below."""
    differing = [i for i, (_, d) in enumerate(rows) if any(d)]
    keep = set(range(len(rows))) if len(rows) <= MAX_ROWS else set(differing[:MAX_ROWS])
    body = []
    for i, (row, differs) in enumerate(rows):
        if i not in keep:
            continue
        if row is None:
            body.append(h("tr", {"class": "missing"},
                          h("td", {"colspan": max(len(columns), 1)}, "(row missing)")))
        else:
            cells = [_value_cell(v, bool(differs) and differs[j],
                                 linked[2] if linked and (i, j) == linked[:2] else None) for j, v in enumerate(row)]
            body.append(h("tr", {}, cells))
    hidden = len(rows) - len(keep)
    note = h("p", {"class": "note"}, f"{hidden:,} equal rows not shown") if hidden else None
    return h("div", {}, h("h4", {}, label),
             h("table", {}, h("thead", {}, h("tr", {}, [h("th", {}, c) for c in columns])),
               h("tbody", {}, body)), note)
