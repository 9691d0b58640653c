"""Render a run's verdicts for people (a table) and for programs (JSON)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable
from typing import TextIO

from harness.core.text import indented
from harness.judge.compare import PASSING, Verdict
from harness.judge.runner import Result, RunResults
from harness.judge.source import SourceResult

_ORDER = [v.value for v in Verdict]


def summary(run: RunResults) -> dict:
    verdicts = Counter(r.verdict.value for r in run.results)
    return {
        "cases": len({r.case for r in run.results}),
        "results": len(run.results),
        "passed": run.passed,
        "verdicts": {v: verdicts[v] for v in _ORDER if verdicts[v]},
        "per_engine": run.counts(),
        # Verdicts (counted above) on a query restricted to the items the engine writes.
        "restricted": run.restricted_counts(),
        "wall_seconds": round(run.wall_seconds, 2),
        "startup_seconds": {k: round(v, 2) for k, v in run.startup_seconds.items()},
        "query_seconds": {k: round(v, 2) for k, v in run.query_seconds.items()},
        # Parts of the above: the reference's evaluations (under each engine's profile),
        # and judging each engine's answers (the tie search's evaluations included).
        "reference_seconds": round(run.reference_seconds, 2),
        "judge_seconds": {k: round(v, 2) for k, v in run.judge_seconds.items()},
        # Cases whose source answer (an engine suite's recorded answer) was judged, by
        # outcome: only in a run that has them.
        **({"source_answers": run.source_counts()} if run.sources else {}),
    }


def inconclusive_share(verdicts: dict[str, dict[str, int]]) -> dict:
    """The share of verdicts the harness could not decide (`inconclusive`), over
    the engines' verdicts (the reference's own are left out), and per engine:
    `{"count", "verdicts", "share", "per_engine": {engine: {"count", "verdicts", "share"}}}`."""
    def share(count: int, total: int) -> float:
        return round(count / total, 6) if total else 0.0

    per_engine = {}
    for engine, counts in verdicts.items():
        if engine == "reference":
            continue
        count, total = counts.get(Verdict.INCONCLUSIVE.value, 0), sum(counts.values())
        per_engine[engine] = {"count": count, "verdicts": total, "share": share(count, total)}
    count = sum(e["count"] for e in per_engine.values())
    total = sum(e["verdicts"] for e in per_engine.values())
    return {"count": count, "verdicts": total, "share": share(count, total), "per_engine": per_engine}


def write_json(run: RunResults, out: TextIO | None = None, extra: dict | None = None) -> None:
    """The run as one JSON document; `extra`'s keys (a command's own, e.g. `run`'s
    `sql_files`) after the shared ones."""
    out = out or sys.stdout
    doc = {
        "engines": run.engines,
        "results": [r.as_json() for r in run.results],
        **({"sources": [source.as_json() for source in run.sources]} if run.sources else {}),
        "summary": summary(run),
        **(extra or {}),
    }
    json.dump(doc, out, indent=2, default=str)
    out.write("\n")


Known = Callable[[Result], object | None]


def write_table(run: RunResults, out: TextIO | None = None, known: Known | None = None) -> None:
    """The verdict table, counts per engine, and details of what did not pass.

    `known` gives the reviewed known difference (a baseline entry) that
    explains a result, shown beside its verdict so a reader sees at once
    which failures are explained.
    """
    out = out or sys.stdout
    engines = list(run.engines)
    cases = list(dict.fromkeys(r.case for r in run.results))
    cell = {(r.case, r.engine): r for r in run.results}
    width = max([len(c) for c in cases] + [4])
    widths = [max(len(e), 13) for e in engines]
    out.write(_row(["case", *engines], [width, *widths]))
    out.write(_row(["-" * width, *["-" * w for w in widths]], [width, *widths]))
    disagreeing = {s.case: s for s in run.sources if s.disagrees}
    for case in cases:
        marks = [cell[(case, e)].verdict.value if (case, e) in cell else "" for e in engines]
        out.write(_row([case, *marks], [width, *widths]))
        if case in disagreeing:
            out.write(f"  {SOURCE_NOTE}: {_source_line(disagreeing[case])}\n")
    out.write("\n")
    _write_counts(run, out)
    _write_restricted(run, out)
    _write_sources(run, out)
    _write_details(run, out, known or (lambda r: None))
    _write_footer(run, out)


SOURCE_NOTE = "source-disagrees"


def _source_line(source: SourceResult) -> str:
    origin = f" {source.origin}" if source.origin else ""
    return f"{source.engine}{origin}: {source.verdict.value}"


def _write_sources(run: RunResults, out: TextIO) -> None:
    """Each case whose source answer disagrees with the reference (under the source
    engine's profile), with both answers: beside the verdicts, never one of them."""
    counts = run.source_counts()
    if not counts:
        return
    out.write("Source answers (" + ", ".join(f"{v} {n}" for v, n in sorted(counts.items())) + "):\n")
    for source in (s for s in run.sources if s.disagrees):
        out.write(f"- {source.case} ({SOURCE_NOTE}, {_source_line(source)}): {indented(source.detail, '    ')}\n")
        recorded = source.source
        out.write("    source:    " + (f"error {recorded['error']!r}" if "error" in recorded
                                      else _rows_text(recorded["rows"])) + "\n")
        out.write("    reference: " + (f"error {source.reference_error}" if source.reference_rows is None
                                      else _rows_text(source.reference_rows)) + "\n")
    out.write("\n")


def _rows_text(rows: object, most: int = 5) -> str:
    shown = list(rows)[:most]  # type: ignore[call-overload]
    text = "; ".join("[" + ", ".join("NULL" if v is None else str(v) for v in row) + "]" for row in shown)
    more = len(list(rows)) - len(shown)  # type: ignore[call-overload]
    return (text or "(no rows)") + (f"; ... {more} more" if more > 0 else "")


def _row(values: list[str], widths: list[int]) -> str:
    return "  ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)).rstrip() + "\n"


def _write_counts(run: RunResults, out: TextIO) -> None:
    counts = run.counts()
    present = [v for v in _ORDER if any(c.get(v) for c in counts.values())]
    labels = {engine: f"{engine} {run.engines[engine]}" for engine in counts}
    widths = [max(len(x) for x in ["engine", *labels.values()]), *[max(len(v), 5) for v in present]]
    out.write(_row(["engine", *present], widths))
    for engine, c in counts.items():
        out.write(_row([labels[engine], *[str(c.get(v, 0)) for v in present]], widths))
    out.write("\n")


def _write_restricted(run: RunResults, out: TextIO) -> None:
    """Every verdict on a restricted query, passing or not: what was left out, and the SQL run."""
    shown = [r for r in run.results if r.facts.restricted or r.facts.respelled]
    if not shown:
        return
    out.write("Restricted or respelled (the engine ran another query than the case's, judged against "
              "the reference on that query):\n")
    for r in shown:
        out.write(f"- {r.case} on {r.engine}: {r.verdict.value}; {r.notes[0]}\n")
        if r.sql:
            out.write("    " + " ".join(r.sql.split()) + "\n")
    out.write("\n")


def _write_details(run: RunResults, out: TextIO, known: Known) -> None:
    shown = [r for r in run.results if r.verdict not in PASSING]
    # The bare query's verdicts (harness.judge.bare) where the instrumented one passed.
    shown += [r.bare for r in run.results if r.bare is not None and r.verdict in PASSING
              and r.bare.verdict not in PASSING]
    if not shown:
        return
    out.write("Not passing:\n")
    for r in shown:
        which = " (bare query)" if r.facts.bare else ""
        out.write(f"- {r.case} on {r.engine}{which}: {r.verdict.value}: {indented(r.detail, '    ')}\n")
        entry = known(r)
        if entry is not None:
            link = f" ({entry.link})" if getattr(entry, "link", None) else ""
            out.write(f"    known difference {entry.id}, {entry.kind}{link}\n")
        if r.sql:
            out.write("    " + " ".join(r.sql.split()) + "\n")
    out.write("\n")


def _write_footer(run: RunResults, out: TextIO) -> None:
    startup = ", ".join(f"{k} {v:.1f}s" for k, v in run.startup_seconds.items())
    queries = ", ".join(f"{k} {v:.1f}s" for k, v in run.query_seconds.items())
    judging = ", ".join(f"{k} {v:.1f}s" for k, v in run.judge_seconds.items()) or "none"
    out.write(f"wall time {run.wall_seconds:.1f}s; start-up: {startup}; queries: {queries} "
              f"(of which the reference's evaluations {run.reference_seconds:.1f}s; judging: {judging})\n")
    verdict = "PASS" if run.passed else "FAIL"
    out.write(f"{verdict}: every verdict is match or unsupported\n" if run.passed else
              f"{verdict}: some verdicts are neither a match, a rejection the definition requires, nor unsupported (see above)\n")
