"""What each verdict means for the gate.

Every verdict that is not a match becomes an `Item`: explained by a baseline
entry (reviewed, or derived from a dialect's declarations), or a failure.
Corpus verdicts are judged one by one; fuzz findings once per signature,
on the first case that showed it (the signature is what makes two findings
the same difference). Engines run as an A/B pair (`duckdb` and
`duckdb@candidate`) are also compared with each other, case by case.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.baseline.explainer import Explainer
from harness.baseline.known import Entry, Observation, engine_parts
from harness.cases.case import Case
from harness.cases.casefile import SavedCase
from harness.core.versions import parse_version
from harness.judge.compare import CONFORMING, Verdict
from harness.judge.facts import recorded
from harness.judge.runner import Result
from harness.results.rundir import shown_path

# Verdict values that conform: a match, or a refusal of a query invalid by definition.
CONFORMING_VALUES = frozenset(v.value for v in CONFORMING)


@dataclass
class Item:
    """A verdict that is not a match, on one case and engine (or one fuzz signature)."""

    source: str  # "corpus" or "fuzz"
    case_id: str  # the corpus case id; for fuzz, the first case's seed (`fuzz/0/17`)
    engine: str
    verdict: str
    detail: str
    entry: Entry | None  # what explains it; None: a failure
    sql: str | None = None
    file: str | None = None  # the corpus case file, or the finding's case file
    signature: str | None = None  # fuzz findings
    key: str | None = None
    count: int = 1  # fuzz: occurrences of the signature
    diff: str = ""  # for failures: the engine's answer against the reference's

    @property
    def failed(self) -> bool:
        return self.entry is None

    def as_json(self) -> dict:
        return {
            "source": self.source, "case": self.case_id, "engine": self.engine,
            "verdict": self.verdict, "detail": self.detail, "sql": self.sql,
            "file": shown_path(Path(self.file)) if self.file else None,
            "signature": self.signature, "count": self.count,
            "explained_by": self.entry.id if self.entry is not None else None,
            "kind": self.entry.kind if self.entry is not None else None,
            "diff": self.diff or None,
        }


def corpus_items(results: Iterable[Result], cases: Mapping[str, Case], explainer: Explainer) -> list[Item]:
    items = []
    for r in results:
        if r.verdict in CONFORMING:
            continue
        case = cases.get(r.case)
        obs = explainer.observe(r.case, r.engine, r.verdict.value, r.detail, case, facts=r.facts)
        path = str(case.path) if case is not None and case.path else None
        items.append(Item("corpus", r.case, r.engine, r.verdict.value, r.detail,
                          explainer.explain(obs), r.sql, path))
    return items


def fuzz_items(findings: Sequence[dict], out: Path, seed: int, explainer: Explainer,
               saved: Mapping[str, SavedCase]) -> list[Item]:
    """One item per finding signature (`findings`: the campaign's tallies; `saved`:
    the case files it wrote, by their path under `out`)."""
    items = []
    for f in findings:
        file = saved.get(f.get("file") or "")
        case, record = (file.case, file.record) if file is not None else (None, {})
        extra = frozenset({f"metamorphic.{record['relation']}"}) if record.get("relation") else frozenset()
        obs = explainer.observe(f"fuzz/{seed}/{f['first_case']}", f["engine"], f["verdict"],
                                f.get("detail", ""), case, extra, recorded(f))
        entry = explainer.explain(obs)  # a reviewed reference entry (every engine's known overflow)
        if entry is None and f["engine"] == "reference" and f["verdict"] == Verdict.SUSPECT_REFERENCE.value:
            entry = _every_engine_explained(obs, record, explainer)
        sql = ((record.get("engines") or {}).get(f["engine"]) or {}).get("sql") or record.get("left_sql")
        items.append(Item("fuzz", obs.case_id, f["engine"], f["verdict"], f.get("detail", ""),
                          entry, sql, str(out / f["file"]) if f.get("file") else None,
                          f["signature"], f["key"], f.get("count", 1)))
    return items


def _every_engine_explained(obs: Observation, record: dict, explainer: Explainer) -> Entry | None:
    """A reference that disagrees with every engine that answered is explained when
    each engine's own difference is (engines that share a known bug outvote it)."""
    suspects = [(name, e) for name, e in (record.get("engines") or {}).items()
                if e.get("verdict") == Verdict.SUSPECT_REFERENCE.value]
    entries = [explainer.explain(explainer.observe(obs.case_id, name, e["verdict"], e.get("detail") or "",
                                                   obs.case, facts=recorded(e)))
               for name, e in suspects]
    if not entries or any(entry is None for entry in entries):
        return None
    return entries[0]


# -- A/B ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ABDifference:
    """Released engine `a` and its other build `b` judged one case differently."""

    source: str
    case_id: str
    a: str
    b: str
    a_verdict: str
    b_verdict: str
    detail: str = ""  # b's detail (a's when b matched)
    # `b` is an older release than `a` (by their versions): what it lacks is its
    # age, not a change that broke it.
    b_older: bool = False
    file: str | None = None  # the case file to replay: the corpus case, or b's finding file
    reduced: str | None = None  # the reduced case file the gate wrote, when it reduced this one
    reduction: str = ""  # how the reduction went (`rows 40 -> 3, 812 attempts, 4.9 s, confirmed`)

    @property
    def regression(self) -> bool:
        """`b` fails where `a` matched: what an engine change must not do. An
        older release's `unsupported` (a feature its version's dialect declares
        missing, or its own words for "not implemented") is no regression: it
        is listed as a difference. A newer build's is: it lost a feature."""
        if self.b_verdict == Verdict.UNSUPPORTED.value and self.b_older:
            return False
        return self.a_verdict in CONFORMING_VALUES and self.b_verdict not in CONFORMING_VALUES

    def as_json(self) -> dict:
        return {"source": self.source, "case": self.case_id, "a": self.a, "b": self.b,
                "a_verdict": self.a_verdict, "b_verdict": self.b_verdict,
                "regression": self.regression, "b_older": self.b_older, "detail": self.detail,
                "file": shown_path(Path(self.file)) if self.file else None,
                "reduced": shown_path(Path(self.reduced)) if self.reduced else None,
                "reduction": self.reduction or None}


def ab_pairs(engines: Sequence[str]) -> list[tuple[str, str]]:
    """(released, other build) for each labelled engine whose unlabelled twin also runs:
    `duckdb@candidate` pairs with `duckdb`, `duckdb[threads=1]@x` with `duckdb[threads=1]`."""
    pairs = []
    for name in engines:
        base, profiles, label = engine_parts(name)
        if label is None:
            continue
        twin = next((e for e in engines if engine_parts(e) == (base, profiles, None)), None)
        if twin is not None:
            pairs.append((twin, name))
    return pairs


def ab_differences(source: str, verdicts: Iterable[tuple[str, Mapping[str, tuple[str, str]]]],
                   pairs: Sequence[tuple[str, str]], versions: Mapping[str, str] | None = None,
                   ) -> list[ABDifference]:
    """`verdicts`: (case id, engine -> (verdict, detail)) for each case; `versions`:
    engine -> its version string (which build of a pair is the older)."""
    versions = versions or {}
    older = {(a, b): _older(versions.get(b, ""), versions.get(a, "")) for a, b in pairs}
    out = []
    for case_id, by_engine in verdicts:
        for a, b in pairs:
            if a not in by_engine or b not in by_engine:
                continue
            (va, da), (vb, db) = by_engine[a], by_engine[b]
            if va != vb:
                out.append(ABDifference(source, case_id, a, b, va, vb, db if vb not in CONFORMING_VALUES else da,
                                        older[a, b]))
    return out


def _older(b: str, a: str) -> bool:
    vb, va = parse_version(b), parse_version(a)
    return vb is not None and va is not None and vb < va
