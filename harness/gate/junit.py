"""The gate's verdicts as JUnit XML: one testcase per case x engine.

The shape CI systems read (GitHub Actions test reporters, GitLab, Jenkins,
Azure DevOps): <testsuites> of <testsuite> elements, one per part of the
gate (corpus, fuzz, baseline), each <testcase> with a classname and a name.

- a match passes;
- a verdict the baseline explains (a known difference, an `unsupported` the
  dialect declares) is <skipped>, its message naming the entry;
- an unexplained verdict, or an A/B regression, is a <failure> whose text
  holds the detail, the SQL and the diff;
- each stale baseline entry is a testcase of the `baseline` suite: a
  failure under --strict-baseline, else skipped;
- each case file the gate could not read is an <error> of the `case files`
  suite (the gate exits 2 for it), so CI shows it where it shows the rest.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from harness.core.errors import InvalidInput
from harness.core.secrets import redact
from harness.core.text import printable
from harness.gate.judge import ABDifference, Item
from harness.gate.run import GateConfig, GateResult


def write_junit(result: GateResult, path: Path, invalid: Sequence[InvalidInput] = ()) -> None:
    """`invalid`: the errors of the case files left out of the gate."""
    root = ET.Element("testsuites", name="window-harness gate")
    if invalid:
        _case_files_suite(root, invalid)
    _corpus_suite(root, result)
    if result.fuzz_cases:
        _fuzz_suite(root, result)
    _baseline_suite(root, result)
    totals = defaultdict(int)
    for suite in root:
        for key in ("tests", "failures", "errors", "skipped"):
            totals[key] += int(suite.get(key, "0"))
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{result.wall_seconds:.1f}")
    _xml_safe(root)
    ET.indent(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def _suite(root: ET.Element, name: str) -> ET.Element:
    return ET.SubElement(root, "testsuite", name=name)


def _close(suite: ET.Element) -> None:
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
    suite.set("skipped", str(sum(1 for c in cases if c.find("skipped") is not None)))
    suite.set("errors", str(sum(1 for c in cases if c.find("error") is not None)))


def _case_files_suite(root: ET.Element, invalid: Sequence[InvalidInput]) -> None:
    suite = _suite(root, "case files")
    for e in invalid:
        file = (e.where or "").split(": ")[0]
        case = ET.SubElement(suite, "testcase", classname="case files", name=file or str(e))
        ET.SubElement(case, "error", message=str(e), type="invalid-case")
    _close(suite)


def _corpus_suite(root: ET.Element, result: GateResult) -> None:
    suite = _suite(root, "corpus")
    items = {(i.case_id, i.engine): i for i in result.items if i.source == "corpus"}
    regressions = _regressions(result, "corpus")
    for r in result.corpus.results:
        group, _, name = r.case.rpartition("/")
        case = ET.SubElement(suite, "testcase", classname=f"corpus.{group or 'cases'}",
                             name=f"{name} [{r.engine}]", time=f"{r.seconds:.3f}")
        _outcome(case, items.get((r.case, r.engine)), regressions.get((r.case, r.engine)), result.config)
    _close(suite)


def _fuzz_suite(root: ET.Element, result: GateResult) -> None:
    """One testcase per fuzz case x engine; a case fails on an engine when one of its
    finding occurrences there belongs to an unexplained signature."""
    suite = _suite(root, "fuzz")
    seed = result.config.seed
    by_key = {i.key: i for i in result.items if i.source == "fuzz"}
    occurrences: dict[tuple[int, str], Item] = {}
    for line in result.fuzz_occurrences:
        item = by_key.get(line.get("key"))
        if item is not None and "case" in line:
            key = (line["case"], line["engine"])
            if key not in occurrences or item.failed:  # a failure outranks an explained one
                occurrences[key] = item
    regressions = _regressions(result, "fuzz")
    for line in sorted(result.fuzz_cases, key=lambda c: c["index"]):
        seconds = line.get("seconds", {})
        for engine in line["verdicts"]:
            case = ET.SubElement(suite, "testcase", classname=f"fuzz.seed{seed}",
                                 name=f"case {line['index']} [{engine}]",
                                 time=f"{seconds.get(engine, 0.0):.3f}")
            _outcome(case, occurrences.get((line["index"], engine)),
                     regressions.get((f"fuzz/{seed}/{line['index']}", engine)), result.config)
    _close(suite)


def _baseline_suite(root: ET.Element, result: GateResult) -> None:
    suite = _suite(root, "baseline")
    for entry in result.stale:
        case = ET.SubElement(suite, "testcase", classname="baseline", name=entry.id, time="0")
        message = f"stale: {entry.label} explained nothing in this run ({entry.where})"
        if result.config.strict_baseline:
            ET.SubElement(case, "failure", message=message, type="stale-baseline-entry").text = entry.reason
        else:
            ET.SubElement(case, "skipped", message=message)
    _close(suite)


def _regressions(result: GateResult, source: str) -> dict[tuple[str, str], ABDifference]:
    return {(d.case_id, d.b): d for d in result.regressions if d.source == source}


def _outcome(case: ET.Element, item: Item | None, regression: ABDifference | None,
             config: GateConfig) -> None:
    if item is not None and item.failed:
        failure = ET.SubElement(case, "failure", message=_one_line(f"{item.verdict}: {item.detail}"),
                                type=item.verdict)
        failure.text = _failure_text(item, config)
    elif regression is not None:
        failure = ET.SubElement(case, "failure", type="ab-regression", message=_one_line(
            f"{regression.b} {regression.b_verdict} where {regression.a} matched: {regression.detail}"))
        failure.text = _regression_text(regression, config)
    elif item is not None:
        entry = item.entry
        assert entry is not None
        ET.SubElement(case, "skipped", message=_one_line(
            f"{item.verdict}, explained by {entry.id} ({entry.kind}): {entry.reason}"))


def _failure_text(item: Item, config: GateConfig) -> str:
    parts = [f"{item.verdict} on {item.engine}: {item.detail}"]
    if item.signature:
        parts.append(f"signature: {item.signature} (x{item.count})")
    if item.sql:
        parts.append(f"SQL ({item.engine}):\n{item.sql.strip()}")
    if item.diff:
        parts.append(item.diff.rstrip())
    if item.file:
        parts.append(f"replay: {config.replay_command(item.file, item.engine)}")
    return "\n\n".join(parts)


def _regression_text(d: ABDifference, config: GateConfig) -> str:
    parts = [f"{d.b} {d.b_verdict} where {d.a} matched: {d.detail}"]
    if d.file:
        parts.append(f"replay: {config.replay_command(d.file, d.b)}")
    if d.reduced:
        parts.append(f"reduced: {d.reduced} ({d.reduction})\nreplay: {config.replay_command(d.reduced, d.b)}")
    return "\n\n".join(parts)


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _xml_safe(root: ET.Element) -> None:
    """Every text and attribute of the tree made valid XML 1.0, which cannot hold most
    control characters; case ids, file names, engine messages and data can
    (`core.text.printable` writes them as visible escapes such as \\x1b); and no
    password or token in it (`core.secrets.redact`, a last guard like stdout's)."""
    for element in root.iter():
        if element.text:
            element.text = printable(redact(element.text), _XML_KEEP)
        element.attrib = {key: printable(redact(value), _XML_KEEP) for key, value in element.attrib.items()}


_XML_KEEP = "\t\n\r"  # the only control characters XML 1.0 allows
