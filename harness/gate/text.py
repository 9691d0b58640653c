"""The gate's result for people: what failed (with the diff), what the baseline
explained, stale entries, A/B differences."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import TextIO

from harness.core.text import first_line, indented
from harness.gate.judge import CONFORMING_VALUES, ABDifference, Item
from harness.gate.run import GateConfig, GateResult

AB_SHOWN = 20


def write_text(result: GateResult, out: TextIO) -> None:
    config = result.config
    failures, regressions = result.failures, result.regressions
    out.write("engines: " + ", ".join(f"{e} {v}" for e, v in result.versions.items()) + "\n")
    out.write(f"baseline: {config.baseline.path} ({len(config.baseline.entries)} reviewed entries)\n")
    _write_counts(result, out)
    if failures:
        out.write(f"\nFAILURES: {len(failures)} verdict(s) no baseline entry explains\n")
        for item in failures:
            _write_failure(item, config, out)
    if regressions:
        out.write(f"\nA/B REGRESSIONS: {len(regressions)} case(s) where the other build fails and "
                  "the released one matched\n")
        shown: dict[str, str] = {}  # finding file -> the first regression shown with it
        for d in regressions[:AB_SHOWN]:
            _write_regression(d, config, out, shown)
        if len(regressions) > AB_SHOWN:
            out.write(f"... {len(regressions) - AB_SHOWN} more in gate.json\n")
    _write_explained(result, out)
    if result.ab:
        _write_ab(result, out)
    if result.stale:
        flag = "FAIL (--strict-baseline)" if config.strict_baseline else "not failing; --strict-baseline fails"
        out.write(f"\nSTALE baseline entries: {len(result.stale)} explained nothing in this run ({flag}):\n")
        if not config.whole_corpus:
            out.write("  (with --corpus, only entries naming a case that ran are checked)\n")
        for entry in result.stale:
            out.write(f"- {entry.label} at {entry.where}\n    {_short(entry.reason, 200)}\n")
    unranged = config.baseline.unranged if config.strict_baseline else []
    if unranged:
        out.write(f"\nWARNING: {len(unranged)} upstream-bug entr{'y' if len(unranged) == 1 else 'ies'} "
                  "say no `versions:` (they explain the difference in every release; give the range "
                  "each was observed on):\n")
        for entry in unranged:
            out.write(f"- {entry.label} at {entry.where}\n")
    out.write(f"\nresults: {config.out} (gate.json, corpus/, fuzz/)\n")
    out.write(f"wall time {result.wall_seconds:.1f} s\n")
    verdict = "PASS" if result.exit_code == 0 else "FAIL"
    reasons = []
    if failures:
        reasons.append(f"{len(failures)} unexplained")
    if regressions:
        reasons.append(f"{len(regressions)} A/B regression(s)")
    if config.strict_baseline and result.stale:
        reasons.append(f"{len(result.stale)} stale baseline entr{'y' if len(result.stale) == 1 else 'ies'}")
    out.write(f"gate: {verdict}" + (f" ({', '.join(reasons)})" if reasons else
                                    ": every verdict is a match or explained by the baseline") + "\n")


def _write_counts(result: GateResult, out: TextIO) -> None:
    corpus_items = [i for i in result.items if i.source == "corpus"]
    n_cases = len({r.case for r in result.corpus.results})
    matches = sum(1 for r in result.corpus.results if r.verdict.value in CONFORMING_VALUES)
    out.write(f"corpus: {n_cases} cases x {len(result.versions)} engines: {matches} conform "
              f"(match or rejected as expected), "
              f"{_explained_counts(corpus_items)}, "
              f"{sum(i.failed for i in corpus_items)} unexplained\n")
    if not result.fuzz:
        out.write("fuzz: no budget (--budget-seconds 0)\n")
        return
    fuzz_items = [i for i in result.items if i.source == "fuzz"]
    f = result.fuzz
    out.write(f"fuzz: seed {result.config.seed}, {f['cases']} cases in {f['wall_seconds']} s: "
              f"{len(fuzz_items)} finding signature(s) ({f.get('finding_occurrences', 0)} occurrences), "
              f"{sum(not i.failed for i in fuzz_items)} explained, "
              f"{sum(i.failed for i in fuzz_items)} unexplained\n")


def _explained_counts(items: list[Item]) -> str:
    derived = sum(1 for i in items if i.entry is not None and i.entry.derived)
    reviewed = sum(1 for i in items if i.entry is not None and not i.entry.derived)
    return f"{reviewed} known differences, {derived} unsupported as declared"


def _write_regression(d: ABDifference, config: GateConfig, out: TextIO, shown: dict[str, str]) -> None:
    out.write(f"- {d.source} {d.case_id}: {d.a} {d.a_verdict}, {d.b} {d.b_verdict}: {_short(first_line(d.detail))}\n")
    if d.file and d.file in shown:
        out.write(f"    the same finding as {shown[d.file]} (its file and commands above)\n")
        return
    if d.file:
        shown[d.file] = d.case_id
        out.write(f"    replay: {config.replay_command(d.file, d.b)}\n")
    if d.reduced:
        out.write(f"    reduced: {d.reduced} ({d.reduction})\n")
        out.write(f"    replay reduced: {config.replay_command(d.reduced, d.b)}\n")
    elif d.file:
        out.write(f"    reduce: {config.reduce_command(d.file, d.b, _reduced_out(d.file, d.source, config))}\n")


def _reduced_out(file: str, source: str, config: GateConfig) -> Path | None:
    """Where a printed reduce command writes: beside a fuzz finding's file (its
    default), under the gate's directory for a corpus case (never into the corpus)."""
    if source != "corpus":
        return None
    return config.out / "reduced" / Path(file).name


def _write_failure(item: Item, config: GateConfig, out: TextIO) -> None:
    baseline = config.baseline.path
    where = f"{item.source} {item.case_id}"
    out.write(f"\n- {where} on {item.engine}: {item.verdict}\n")
    out.write(f"    detail: {indented(item.detail, ' ' * 12)}\n")
    if item.signature:
        out.write(f"    signature: {item.signature} (seen {item.count}x)\n")
    if item.sql:
        out.write("    SQL:\n" + "".join(f"      {line}\n" for line in item.sql.strip().splitlines()))
    if item.diff:
        out.write("".join(f"  {line}\n" for line in item.diff.rstrip().splitlines()))
    if item.file:
        out.write(f"    replay: {config.replay_command(item.file, item.engine)}\n")
        out.write(f"    reduce: {config.reduce_command(item.file, item.engine, _reduced_out(item.file, item.source, config))}\n")
    case = f"case: {item.case_id}, " if item.source == "corpus" else ""
    out.write(f"    if this difference is expected, add an entry to {baseline} with "
              f"engine: {item.engine.partition('@')[0]} and match: {{{case}verdict: {item.verdict}, ...}}\n")


def _write_explained(result: GateResult, out: TextIO) -> None:
    by_entry: dict[str, Counter] = defaultdict(Counter)
    entries = {}
    for item in result.items:
        if item.entry is not None and not item.entry.derived:
            by_entry[item.entry.id][item.source] += 1
            entries[item.entry.id] = item.entry
    derived = Counter(item.engine for item in result.items if item.entry is not None and item.entry.derived)
    if not by_entry and not derived:
        return
    out.write("\nexplained by the baseline:\n")
    for entry_id, counts in sorted(by_entry.items()):
        entry = entries[entry_id]
        seen = ", ".join(f"{n} {source}" for source, n in sorted(counts.items()))
        link = f" {entry.link}" if entry.link else ""
        out.write(f"  {entry_id} ({entry.kind}{link}): {seen}\n")
    if derived:
        out.write("  unsupported, as the dialects declare: "
                  + ", ".join(f"{e} {n}" for e, n in sorted(derived.items())) + "\n")


def _write_ab(result: GateResult, out: TextIO) -> None:
    pairs = Counter((d.a, d.b) for d in result.ab)
    out.write("\nA/B differences (verdicts of the released engine and the other build):\n")
    for (a, b), n in pairs.items():
        out.write(f"  {a} {result.versions.get(a, '?')} vs {b} {result.versions.get(b, '?')}: "
                  f"{n} case(s)\n")
    for d in result.ab[:AB_SHOWN]:
        mark = " REGRESSION" if d.regression else ""
        out.write(f"  - {d.source} {d.case_id}: {d.a_verdict} -> {d.b_verdict}{mark}"
                  + (f": {_short(first_line(d.detail))}" if d.detail else "") + "\n")
    if len(result.ab) > AB_SHOWN:
        out.write(f"  ... {len(result.ab) - AB_SHOWN} more in gate.json\n")


def _short(text: str, limit: int = 160) -> str:
    line = " ".join((text or "").split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
