"""Read the output directories of `run --out`, `fuzz --out` and `gate --out` into
a `ReportData`: sources, one outcome per verdict with the matrix rows it
counts in, and the findings grouped by signature with their baseline status.

Nothing is re-run: a report is made from what was recorded, so it can be made
on another machine, or long after the engines are gone.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from harness.cases.axes import CaseRows, invalid_rows, matches, unsupported_rows
from harness.core.errors import HarnessError, InvalidInput
from harness.report.model import BaselineStatus, Finding, ReportData, Source

_COLUMN = re.compile(r"column (\S+?):")
THROUGHPUT_BINS = 40
CASES_PER_BIN = 20  # a batch of siblings finishes at once: fewer per bin would only show batches


def load_results(paths: Sequence[Path], baseline_path: Path | None = None) -> ReportData:
    """Every results directory of `paths`, in order. Raises InvalidInput naming a
    path that is not one."""
    from harness.baseline.known import load_baseline

    data = ReportData()
    for path in paths:
        kind = results_kind(path)
        if kind == "gate":
            gate = _json(path / "gate.json")
            recorded = gate.get("baseline")
            base = baseline_path or (Path(recorded) if recorded and Path(recorded).exists() else None)
            explain = _explainer(load_baseline(base) if base else load_baseline(), gate.get("engines", {}))
            _load_run(data, path / "corpus", lambda _, e=explain: e, kind="gate: corpus", gate=gate)
            if (path / "fuzz" / "campaign.json").exists():
                _load_fuzz(data, path / "fuzz", lambda _, e=explain: e, kind="gate: fuzz", gate=gate)
        else:
            baseline = load_baseline(baseline_path) if baseline_path else load_baseline()
            loader = _load_run if kind == "run" else _load_fuzz
            loader(data, path, lambda engines, b=baseline: _explainer(b, engines))
    return data


def results_kind(path: Path) -> str:
    for marker, kind in (("gate.json", "gate"), ("run.json", "run"), ("campaign.json", "fuzz")):
        if (path / marker).is_file():
            return kind
    raise InvalidInput(f"{path} is not the output directory of run --out, fuzz or gate "
                       "(it holds no run.json, campaign.json or gate.json)", str(path))


def _json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise InvalidInput(f"cannot read {path}: {e}", str(path)) from None


def attribute(verdict: str, detail: str, rows: CaseRows) -> frozenset[str]:
    """The rows a verdict counts in: an `unsupported` in the rows its feature refuses;
    a wrong value pinned on a column in that expression's rows and the query's;
    anything else in every row the case exercises."""
    everything = rows.all()
    if verdict == "match":
        return everything
    if verdict in ("rejected-as-expected", "wrongly-accepted"):
        return everything | invalid_rows(detail)  # the detail says why the query is invalid
    if verdict in ("unsupported", "wrongly-rejected"):
        patterns = unsupported_rows(detail)
        refused = {r for r in everything for p in patterns if matches(r, p)}
        return frozenset(refused or {p.replace("/*", "/(any)") for p in patterns})
    pinned = [rows.exprs[c] for c in _COLUMN.findall(detail) if c in rows.exprs]
    return rows.case.union(*pinned) if pinned else everything


# -- the explainer (baseline status) ----------------------------------------------------


def _explainer(baseline, engines: dict[str, str]):
    """A function (case id, engine, verdict, detail, case file, extra) -> BaselineStatus."""
    from harness.baseline.explainer import Explainer
    from harness.baseline.known import derived_entries

    try:
        explainer = Explainer(baseline, derived_entries(list(engines)), engines)
    except InvalidInput:  # an engine this checkout does not know: judge by the file alone
        explainer = Explainer(baseline, [], engines)

    def status(case_id: str, engine: str, verdict: str, detail: str, file: Path | None,
               extra: frozenset[str] = frozenset()) -> BaselineStatus:
        case = _case_or_none(file)
        entry = explainer.explain(explainer.observe(case_id, engine, verdict, detail, case, extra))
        if entry is None:
            return BaselineStatus(None)
        return BaselineStatus(entry.id, entry.kind, entry.link or "", entry.reason or "")
    return status


@functools.lru_cache(maxsize=256)  # a finding's case is read for its status and its rows
def _case_or_none(file: Path | None):
    from harness.cases.case import load_case

    if file is None or not file.exists():
        return None
    try:
        return load_case(file)
    except (OSError, InvalidInput):
        return None


# -- a run directory ---------------------------------------------------------------------


def _load_run(data: ReportData, path: Path, explainer_for, kind: str = "run", gate: dict | None = None) -> None:
    from harness.results.rundir import load_run_dir

    doc = load_run_dir(path)
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
        finding.file = finding.original = path / finding.file if finding.file else None
        first = finding.cases[0]
        corpus_file = Path(files[first]) if files.get(first) else None
        finding.replay = corpus_file if corpus_file and corpus_file.exists() else finding.file
        finding.baseline = explain(first, finding.engine, finding.verdict, finding.detail, finding.replay)
    data.findings += findings
    by_key = {f.key: f for f in findings}
    of = {(line["case"], line["engine"]): by_key[line["key"]] for line in lines}
    for rows in cases.values():
        data.exercised.update(rows.all())
    for r in doc.get("results", []):
        rows = cases.get(r["case"], CaseRows(frozenset(), {}))
        _add_outcome(data, r["engine"], r["verdict"], attribute(r["verdict"], r["detail"], rows),
                     of.get((r["case"], r["engine"])))


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
                line.get("classification", ""), source, detail=line.get("detail", ""),
                file=line.get("file"))
        finding.count += 1
        finding.cases.append(str(occurrence(line)))
    return list(groups.values())


# -- a campaign directory ----------------------------------------------------------------


def _load_fuzz(data: ReportData, path: Path, explainer_for, kind: str = "fuzz",
               gate: dict | None = None) -> None:
    config = _json(path / "campaign.json")
    summary = _json(path / "summary.json") if (path / "summary.json").exists() else {}
    versions = _json(path / "versions.json") if (path / "versions.json").exists() else {}
    # cases.jsonl is read twice, line by line, rather than held: a long campaign's is large.
    cases = path / "cases.jsonl"
    shapes, times = {}, []
    for line in _stream(cases):
        if "expr_rows" in line:
            shapes[line["shape"]] = line["expr_rows"]
        if "at" in line:
            times.append(line["at"])
    occurrences = list(_stream(path / "findings.jsonl"))
    engines = {name: versions.get(name, "?") for name in config.get("engines", [])}
    source = Source(
        kind=kind, path=str(path), engines=engines, cases=0, verdicts={},
        wall_seconds=summary.get("wall_seconds"), seed=config.get("seed"),
        harness_version=config.get("harness_version", "?"), host=config.get("host", {}),
        started=config.get("started", ""), passed=(gate or {}).get("passed"),
        throughput=throughput(times))
    data.sources.append(source)
    explain = explainer_for(engines)
    reduced = {line["key"]: line["file"] for line in occurrences if line.get("event") == "reduced"}
    seed = config.get("seed")
    findings = _group(occurrences, str(path), lambda line: line.get("seed", line.get("case")))
    for finding in findings:
        finding.original = path / finding.file if finding.file else None
        finding.file = path / reduced[finding.key] if finding.key in reduced else finding.original
        finding.replay = finding.file
        metamorphic = finding.verdict.startswith("metamorphic") and finding.original
        record = (getattr(_case_or_none(finding.original), "finding", None) or {}) if metamorphic else {}
        extra = frozenset({f"metamorphic.{record['relation']}"}) if record.get("relation") else frozenset()
        finding.baseline = explain(f"fuzz/{seed}/{finding.cases[0]}", finding.engine, finding.verdict,
                                   finding.detail, finding.original, extra)
    data.findings += findings
    _fuzz_outcomes(data, source, _stream(cases), shapes, occurrences, {f.key: f for f in findings})
    for finding in findings:
        if not finding.rows:  # a finding no verdict of cases.jsonl names (metamorphic, profiles)
            finding.rows = _finding_rows(finding)


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
        for engine, verdict in line.get("verdicts", {}).items():
            source.verdicts.setdefault(engine, Counter())[verdict] += 1
            occurrence = seen.get((line["index"], engine), {})
            detail = line.get("details", {}).get(engine) or occurrence.get("detail", "")
            _add_outcome(data, engine, verdict, attribute(verdict, detail, rows),
                         findings.get(occurrence.get("key")))
    if unrecorded:
        source.notes.append(f"{unrecorded:,} cases were recorded without feature rows (by a harness "
                            "older than the report): they are in the summary and plots, not the matrix")


def _finding_rows(finding: Finding) -> frozenset[str]:
    from harness.cases.axes import case_rows

    case = _case_or_none(finding.original)
    if case is None:
        return frozenset()
    try:
        return attribute(finding.verdict, finding.detail, case_rows(case))
    except HarnessError:  # a finding whose case the harness cannot describe is still shown
        return frozenset()


def _stream(path: Path) -> Iterator[dict]:
    """The complete lines of a JSONL file, one at a time (a torn last line is skipped)."""
    if not path.exists():
        return
    with path.open(encoding="utf-8") as lines:
        for text in lines:
            try:
                yield json.loads(text)
            except json.JSONDecodeError:
                continue


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
