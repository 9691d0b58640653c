"""Build a `ReportData` from results (`harness.results.records`: what `run --out`,
`fuzz --out` and `gate --out` hold, in memory or read by `harness.results.read`):
sources, one outcome per verdict with the matrix rows it counts in, and the
findings grouped by signature with their baseline status.

Nothing is re-run: a report is made from what was recorded, so it can be made
on another machine, or long after the engines are gone.
"""

from __future__ import annotations

import contextlib
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from harness.baseline.known import Baseline
from harness.cases.axes import CaseRows, invalid_rows, matches, unsupported_rows
from harness.cases.case import Case
from harness.core.errors import HarnessError, InvalidInput
from harness.judge.facts import NO_FACTS, Facts, recorded
from harness.judge.restrict_inner import READS
from harness.report.model import BaselineStatus, Finding, ReportData, Source
from harness.results.records import CampaignRecord, GateRecord, Record, RunRecord

THROUGHPUT_BINS = 40
CASES_PER_BIN = 20  # a batch of siblings finishes at once: fewer per bin would only show batches


def build_report(records: Sequence[Record], baseline_path: Path | None = None,
                 untrusted: bool = False) -> ReportData:
    """The report of `records`, in order: handed over in memory by the process that
    made them, or read from disk by `harness.results.read`; the same either way.
    `baseline_path` (report --baseline) replaces the baseline a gate judged with.
    `untrusted`: records read from directories a user named (`window-harness
    report`), whose files may be crafted (see `_crafted`)."""
    data = ReportData()
    for record in records:
        with _crafted(record.path) if untrusted else contextlib.nullcontext():
            _load_record(data, record, baseline_path)
    return data


@contextlib.contextmanager
def _crafted(path: Path) -> Iterator[None]:
    """A field of the right shape (`harness.results.jsonfile` checks those) but a
    value no run writes (a key missing deep in a finding line, a string where
    counts belong) is InvalidInput naming the directory: exit 2, no traceback."""
    try:
        yield
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
        raise InvalidInput(f"not a results directory this harness wrote: {type(e).__name__} "
                           f"({e}) while reading it", str(path)) from None


def _load_record(data: ReportData, record: Record, baseline_path: Path | None) -> None:
    from harness.baseline.known import load_baseline

    if isinstance(record, GateRecord):
        gate = record.doc
        explain = _explainer(_gate_baseline(record, baseline_path), gate.get("engines", {}))
        _load_run(data, record.corpus, lambda _, e=explain: e, kind="gate: corpus", gate=gate)
        if record.fuzz is not None:
            _load_fuzz(data, record.fuzz, lambda _, e=explain: e, kind="gate: fuzz", gate=gate)
    else:
        baseline = load_baseline(baseline_path) if baseline_path else load_baseline()
        loader = _load_run if isinstance(record, RunRecord) else _load_fuzz
        loader(data, record, lambda engines, b=baseline: _explainer(b, engines))


def _gate_baseline(record: GateRecord, baseline_path: Path | None) -> Baseline:
    """--baseline, else the gate's own (in memory, or the file gate.json names), else the default."""
    from harness.baseline.known import load_baseline

    if baseline_path is not None:
        return load_baseline(baseline_path)
    if record.baseline is not None:
        return record.baseline
    recorded = record.doc.get("baseline")
    return load_baseline(Path(recorded)) if recorded and Path(recorded).exists() else load_baseline()


def attribute(verdict: str, facts: Facts, rows: CaseRows) -> frozenset[str]:
    """The rows a verdict counts in: an `unsupported` in the rows its feature refuses;
    a wrong value pinned on a column in that expression's rows and the query's;
    anything else in every row the case exercises."""
    if facts.left_out:  # the left-out items were not judged: `left_out_rows` counts them
        gone = {_expr_key(column, rows) for column, _ in facts.left_out}
        rows = CaseRows(rows.case, {k: v for k, v in rows.exprs.items() if k not in gone})
    everything = rows.all()
    if verdict == "match":
        return everything
    if verdict in ("rejected-as-expected", "wrongly-accepted"):
        return everything | invalid_rows(facts.invalid or "")  # the reference's reason
    if verdict in ("unsupported", "wrongly-rejected"):
        patterns = unsupported_rows(facts.feature or facts.message or "")
        refused = {r for r in everything for p in patterns if matches(r, p)}
        return frozenset(refused or {p.replace("/*", "/(any)") for p in patterns})
    pinned = rows.exprs.get(facts.column) if facts.column is not None else None
    return rows.case | pinned if pinned is not None else everything


def left_out_rows(facts: Facts, rows: CaseRows) -> list[frozenset[str]]:
    """For a verdict on a restricted query: the rows each left-out item counts in
    as `unsupported` on that engine (its feature's rows among the item's own);
    none for an item left out because it reads a left-out column (the engine
    did not refuse it)."""
    return [attribute("unsupported", Facts(feature=feature),
                      CaseRows(frozenset(), {column: rows.exprs.get(_expr_key(column, rows), frozenset())}))
            for column, feature in facts.left_out or () if not feature.startswith(READS)]


def _expr_key(column: str, rows: CaseRows) -> str:
    """The window expression a left-out item names: its output column, or for an
    item of a derived table or WITH query (`s.d`), the inner column `d`."""
    if column in rows.exprs or "." not in column:
        return column
    inner = column.rsplit(".", 1)[1]
    return inner if inner in rows.exprs else column


# -- the explainer (baseline status) ----------------------------------------------------


def _explainer(baseline, engines: dict[str, str]):
    """A function (case id, engine, verdict, detail, case, extra) -> BaselineStatus."""
    from harness.baseline.explainer import Explainer
    from harness.baseline.known import derived_entries

    try:
        explainer = Explainer(baseline, derived_entries(list(engines)), engines)
    except InvalidInput:  # an engine this checkout does not know: judge by the file alone
        explainer = Explainer(baseline, [], engines)

    def status(case_id: str, engine: str, verdict: str, detail: str, case: Case | None,
               extra: frozenset[str] = frozenset(), facts: Facts = NO_FACTS) -> BaselineStatus:
        entry = explainer.explain(explainer.observe(case_id, engine, verdict, detail, case, extra, facts))
        if entry is None:
            return BaselineStatus(None)
        return BaselineStatus(entry.id, entry.kind, entry.link or "", entry.reason or "")
    return status


# -- a run directory ---------------------------------------------------------------------


def _load_run(data: ReportData, record: RunRecord, explainer_for, kind: str = "run",
              gate: dict | None = None) -> None:
    path, doc = record.path, record.doc
    summary = doc.get("summary", {})
    engines = doc.get("engines", {})
    gate = gate or {}
    data.sources.append(Source(
        kind=kind, path=str(path), engines=engines, cases=summary.get("cases", 0),
        verdicts={e: Counter(c) for e, c in summary.get("per_engine", {}).items()},
        wall_seconds=summary.get("wall_seconds"), seed=gate.get("seed"),
        harness_version=doc.get("harness_version", "?"), host=doc.get("host", {}),
        started=doc.get("started", ""), passed=gate.get("passed")))
    cases = {cid: CaseRows.from_json(c.get("rows")) for cid, c in doc.get("cases", {}).items()}
    explain = explainer_for(engines)
    files = {cid: c.get("file") for cid, c in doc.get("cases", {}).items()}
    lines = doc.get("findings", [])
    findings = _group(lines, str(path), lambda line: line["case"])
    for finding in findings:
        saved = record.saved.get(finding.file) if finding.file else None
        finding.doc = saved.doc if saved is not None else {}
        finding.case = saved.case if saved is not None else None
        finding.file = finding.original = path / finding.file if finding.file else None
        first = finding.cases[0]
        corpus_file = Path(files[first]) if files.get(first) else None
        finding.replay = corpus_file if corpus_file and corpus_file.exists() else finding.file
        case = record.case(first) if finding.replay == corpus_file else saved.case if saved else None
        finding.baseline = explain(first, finding.engine, finding.verdict, finding.detail, case,
                                   facts=finding.facts)
    data.findings += findings
    by_key = {f.key: f for f in findings}
    of = {(line["case"], line["engine"]): by_key[line["key"]] for line in lines}
    for rows in cases.values():
        data.exercised.update(rows.all())
    data.source_answers += [{**line, "run": str(path)} for line in doc.get("sources", [])]
    for r in doc.get("results", []):
        if r.get("facts", {}).get("left_out"):
            _restricted(data.sources[-1], r["case"], r["engine"], r["verdict"], (r.get("notes") or [""])[0],
                        r.get("sql") or "")
        rows = cases.get(r["case"], CaseRows(frozenset(), {}))
        _add_verdict(data, r["engine"], r["verdict"], recorded(r), rows, of.get((r["case"], r["engine"])))


def _add_verdict(data: ReportData, engine: str, verdict: str, facts: Facts, rows: CaseRows,
                 finding: Finding | None) -> None:
    """A verdict in the matrix; on a restricted query, each left-out item as `unsupported` too."""
    _add_outcome(data, engine, verdict, attribute(verdict, facts, rows), finding)
    for refused in left_out_rows(facts, rows):
        data.add_outcome(engine, "unsupported", refused, None)


MAX_RESTRICTED_EXAMPLES = 20  # per results directory: the count says how many in all


def _restricted(source: Source, case: str, engine: str, verdict: str, note: str, sql: str) -> None:
    source.restricted[engine] += 1
    if len(source.restricted_examples) < MAX_RESTRICTED_EXAMPLES:
        source.restricted_examples.append((case, engine, verdict, note, sql))


def _add_outcome(data: ReportData, engine: str, verdict: str, rows: frozenset[str],
                 finding: Finding | None) -> None:
    data.add_outcome(engine, verdict, rows, finding)
    if finding is not None:
        finding.rows |= rows


def _group(lines: Iterable[dict], source: str, occurrence) -> list[Finding]:
    """Finding lines (one per occurrence) grouped by signature key, first seen first."""
    groups: dict[str, Finding] = {}
    for line in lines:
        if line.get("event") is not None:
            continue
        finding = groups.get(line["key"])
        if finding is None:
            finding = groups[line["key"]] = Finding(
                line["key"], line["signature"], line["engine"], line["verdict"],
                line.get("classification", ""), source, detail=line.get("detail", ""), facts=recorded(line),
                file=line.get("file"))
        finding.count += 1
        finding.cases.append(str(occurrence(line)))
    return list(groups.values())


# -- a campaign directory ----------------------------------------------------------------


def _load_fuzz(data: ReportData, record: CampaignRecord, explainer_for, kind: str = "fuzz",
               gate: dict | None = None) -> None:
    path, config, summary, versions = record.path, record.config, record.summary, record.versions
    # cases.jsonl is gone through twice rather than held: a long campaign's is large.
    shapes, times, drawn = {}, [], []
    for line in record.case_lines():
        if "expr_rows" in line:
            shapes[line["shape"]] = line["expr_rows"]
        if "at" in line:
            times.append(line["at"])
            drawn.append((line["at"], line.get("shape", line.get("seed")), line.get("cells", ())))
    occurrences = record.occurrences
    engines = {name: versions.get(name, "?") for name in config.get("engines", [])}
    source = Source(
        kind=kind, path=str(path), engines=engines, cases=0, verdicts={},
        wall_seconds=summary.get("wall_seconds"), seed=config.get("seed"),
        harness_version=config.get("harness_version", "?"), host=config.get("host", {}),
        started=config.get("started", ""), passed=(gate or {}).get("passed"),
        throughput=throughput(times), diversity=diversity(drawn))
    data.sources.append(source)
    explain = explainer_for(engines)
    reduced = {line["key"]: line["file"] for line in occurrences if line.get("event") == "reduced"}
    seed = config.get("seed")
    findings = _group(occurrences, str(path), lambda line: line.get("seed", line.get("case")))
    originals: dict[str, Case | None] = {}
    for finding in findings:
        shown = reduced.get(finding.key, finding.file)
        original = record.saved.get(finding.file) if finding.file else None
        finding.doc = record.saved[shown].doc if shown in record.saved else {}
        finding.case = record.saved[shown].case if shown in record.saved else None
        originals[finding.key] = original.case if original is not None else None
        finding.original = path / finding.file if finding.file else None
        finding.file = path / reduced[finding.key] if finding.key in reduced else finding.original
        finding.replay = finding.file
        metamorphic = finding.verdict.startswith("metamorphic") and original is not None
        made = (getattr(originals[finding.key], "finding", None) or {}) if metamorphic else {}
        extra = frozenset({f"metamorphic.{made['relation']}"}) if made.get("relation") else frozenset()
        finding.baseline = explain(f"fuzz/{seed}/{finding.cases[0]}", finding.engine, finding.verdict,
                                   finding.detail, originals[finding.key], extra, finding.facts)
    data.findings += findings
    _fuzz_outcomes(data, source, record.case_lines(), shapes, occurrences, {f.key: f for f in findings})
    for finding in findings:
        if not finding.rows:  # a finding no verdict of cases.jsonl names (metamorphic, profiles)
            finding.rows = _finding_rows(finding, originals[finding.key])


def _fuzz_outcomes(data: ReportData, source: Source, lines: Iterable[dict], shapes: dict,
                   occurrences: list[dict], findings: dict[str, Finding]) -> None:
    seen = {(o.get("case"), o.get("engine")): o for o in occurrences if o.get("event") is None}
    described: dict[tuple, CaseRows] = {}  # siblings share their rows: one object each
    unrecorded = 0
    for line in lines:
        source.cases += 1
        unrecorded += "rows" not in line
        key = (tuple(line.get("rows", ())), line.get("shape"))
        rows = described.get(key)
        if rows is None:
            rows = described[key] = CaseRows.from_json({"case": key[0], "exprs": shapes.get(key[1], {})})
        data.exercised.update(rows.all())
        for engine, ran in (line.get("restricted") or {}).items():
            if (line.get("facts", {}).get(engine) or {}).get("left_out"):
                _restricted(source, f"fuzz/{line.get('seed')}", engine, line["verdicts"].get(engine, "?"),
                            ran.get("note", ""), ran.get("sql") or "")
        for engine, verdict in line.get("verdicts", {}).items():
            source.verdicts.setdefault(engine, Counter())[verdict] += 1
            occurrence = seen.get((line["index"], engine), {})
            facts = line.get("facts", {}).get(engine) or occurrence.get("facts") or {}
            _add_verdict(data, engine, verdict, Facts.from_json(facts), rows, findings.get(occurrence.get("key")))
    if unrecorded:
        source.notes.append(f"{unrecorded:,} cases were recorded without feature rows (by a harness "
                            "older than the report): they are in the summary and plots, not the matrix")


def _finding_rows(finding: Finding, case: Case | None) -> frozenset[str]:
    from harness.cases.axes import case_rows

    if case is None:
        return frozenset()
    try:
        return attribute(finding.verdict, finding.facts, case_rows(case))
    except HarnessError:  # a finding whose case the harness cannot describe is still shown
        return frozenset()


def diversity(cases: Iterable[tuple[float, object, Iterable[str]]]) -> dict[str, list[tuple[float, float]]]:
    """New query shapes and new grid cells covered per minute, in the bins of
    `throughput` (`cases`: when each case was recorded, its shape, its cells). Only
    the first case of a shape or a cell counts, so each series adds up to the
    campaign's distinct shapes and defined grid cells covered."""
    from harness.cases.coverage import defined_cells

    cases = sorted(cases, key=lambda c: c[0])
    bins = throughput([at for at, _, _ in cases])
    if not bins:
        return {}
    start, width = cases[0][0], 2 * bins[0][0]
    defined = defined_cells()
    seen_shapes: set = set()
    seen_cells: set = set()
    new_shapes, new_cells = Counter(), Counter()
    for at, shape, cells in cases:
        i = min(max(math.ceil((at - start) / width) - 1, 0), len(bins) - 1)
        if shape not in seen_shapes:
            seen_shapes.add(shape)
            new_shapes[i] += 1
        for cell in cells:
            key = tuple(cell.split("|"))
            if key in defined and key not in seen_cells:
                seen_cells.add(key)
                new_cells[i] += 1
    minutes = width / 60
    return {name: [(x, round(counts.get(i, 0) / minutes, 2)) for i, (x, _) in enumerate(bins)]
            for name, counts in (("shapes/min", new_shapes), ("cells/min", new_cells))}


def throughput(times: Iterable[float]) -> list[tuple[float, float]]:
    """Cases per second over the campaign, in up to THROUGHPUT_BINS bins of its
    recorded wall time (`times`: when each case was recorded), at least
    CASES_PER_BIN cases to a bin on average."""
    times = sorted(times)
    if len(times) < 2 or times[-1] <= times[0]:
        return []
    start, span = times[0], times[-1] - times[0]
    bins = min(THROUGHPUT_BINS, max(1, (len(times) - 1) // CASES_PER_BIN))
    width = span / bins
    # A case counts in the bin that ends at or after it: (start, start + width], ...
    counts = Counter(min(max(math.ceil((t - start) / width) - 1, 0), bins - 1) for t in times[1:])
    return [(round((i + 0.5) * width, 2), round(counts.get(i, 0) / width, 2)) for i in range(bins)]
