"""The report's section on source answers: where an engine suite's recorded
answer disagrees with the reference (under that engine's semantics profile).

Shown beside the conformance matrix, never counted in it: a suite's recorded
answer is a third opinion, not a verdict (`harness.judge.source`).
"""

from __future__ import annotations

from collections import Counter

from harness.report.markup import Markup, h
from harness.report.model import ReportData

TITLE = "Where the source's recorded answer disagrees with the reference"
ANCHOR = "source-answers"
AGREEING = ("agrees", "not-comparable")


def source_section(data: ReportData) -> Markup | None:
    """None when no case of the report carries a source answer."""
    if not data.source_answers:
        return None
    counts = Counter(s["verdict"] for s in data.source_answers)
    shown = [s for s in data.source_answers if s["verdict"] not in AGREEING]
    intro = h("p", {"class": "note"},
              f"{len(data.source_answers):,} cases carry the answer their engine's own test suite recorded ("
              + ", ".join(f"{v} {n:,}" for v, n in sorted(counts.items())) + "). Each is compared with the "
              "reference's answer under that engine's semantics profile; a disagreement changes no verdict.")
    return h("section", {"id": ANCHOR}, h("h2", {}, f"{TITLE} ({len(shown):,})"), intro,
             [_disagreement(s) for s in shown])


def _disagreement(source: dict) -> Markup:
    origin = f" ({source['origin']})" if source.get("origin") else ""
    head = h("h3", {}, h("code", {}, source["case"]), f" — {source['engine']}{origin}: ",
             h("span", {"class": "verdict-fail"}, "source-disagrees"), f" ({source['verdict']})")
    recorded, reference = source.get("source", {}), source.get("reference", {})
    return h("div", {"class": "source-answer"}, head,
             h("p", {}, source.get("detail", "")),
             h("div", {"class": "answers"},
               _answer(f"the source ({source['engine']}, as recorded)", recorded, recorded.get("columns")),
               _answer(f"the reference (under the {source.get('profile', '?')} profile)", reference, None)))


def _answer(title: str, answer: dict, columns: list | None) -> Markup:
    if "error" in answer:
        body = h("pre", {}, f"error: {answer['error'] or '(any)'}")
    else:
        rows = answer.get("rows") or []
        head = h("thead", {}, h("tr", {}, [h("th", {}, c) for c in columns])) if columns else None
        body = h("table", {}, head, h("tbody", {}, [h("tr", {}, [h("td", {}, "NULL" if v is None else v)
                                                                  for v in row]) for row in rows]))
    return h("div", {}, h("h4", {}, title), body)
