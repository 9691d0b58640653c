"""Known differences: reviewed explanations of verdicts that do not pass.

The baseline (`baseline/known-differences.yaml`) is a list of entries. Each
says which engine (with optional profiles and a version range) it is about,
a matcher over what was observed (the case, the function and frame mode of
the window expression a difference is pinned on, the features the case
exercises, the verdict class, a pattern over the engine's message), a kind
(unsupported, by-design, upstream-bug with its link) and the reason.

What an engine's dialect already declares missing (its feature table,
missing functions, per-function limits, its own "not implemented" words,
values it cannot hold) is not written again: `derived_entries` turns the
dialect tables into entries, and a reviewed entry that repeats one is
refused when the file is loaded.

An observation is explained by the first entry that matches it; an entry
that explains nothing in a run where it applies is stale (`stale`).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from harness.baseline.breadth import refuse_broad
from harness.cases.case import Case
from harness.cases.features import FEATURES, ExprFeatures, expression_features
from harness.cases.yamldoc import read_yaml
from harness.core.dialect import Feature
from harness.core.errors import InvalidInput
from harness.core.versions import VersionRange, in_range, version_range
from harness.judge.compare import Verdict
from harness.judge.facts import NO_FACTS, Facts

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "baseline" / "known-differences.yaml"
KINDS = ("unsupported", "by-design", "upstream-bug")
FRAMES = ("rows", "range", "groups", "default")
# Verdict classes: the runner's verdicts, and what only campaigns observe.
VERDICT_CLASSES = (*(v.value for v in Verdict), "metamorphic-violated", "metamorphic-error",
                   "metamorphic-both-error", "profiles-disagree", "batched-only")
PASSING_CLASSES = frozenset({Verdict.MATCH.value, Verdict.REJECTED_AS_EXPECTED.value})
# Verdict classes only a campaign observes: no corpus case can show them.
CAMPAIGN_CLASSES = frozenset({"metamorphic-violated", "metamorphic-error", "metamorphic-both-error",
                              "profiles-disagree", "batched-only"})
_ENTRY_FIELDS = {"id", "engine", "versions", "match", "kind", "link", "reason"}
_MATCH_FIELDS = {"case", "function", "frame", "feature", "verdict", "error"}
_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


# -- what was observed -----------------------------------------------------------


@dataclass(frozen=True)
class Observation:
    """One verdict of one engine on one case, as the baseline sees it."""

    case_id: str
    engine: str  # as it ran: `duckdb`, `duckdb[threads=1]`, `duckdb@candidate`
    verdict: str  # a verdict class (VERDICT_CLASSES)
    detail: str = ""  # as shown to people; nothing here reads it (an `error` pattern reads `words`)
    version: str = ""
    case: Case | None = field(default=None, compare=False, repr=False)
    # Extra features the finding itself names (a metamorphic relation).
    extra: frozenset[str] = frozenset()
    facts: Facts = Facts()

    @property
    def verdict_classes(self) -> frozenset[str]:
        """Its verdict class; for an engine's verdict made suspect-reference (every
        engine disagreed with the reference), also the verdict it had against it."""
        out = {verdict_class(self.verdict)}
        under = self.facts.against_reference
        if under is not None and self.verdict == Verdict.SUSPECT_REFERENCE.value:
            out.add(under.value)
        return frozenset(out)

    @property
    def words(self) -> str:
        """What an entry's `error` pattern is searched in, from the typed facts (never
        the detail, where a column's name could match): the engine's message; for a
        query invalid by definition the reference's reason; for a wrong value the
        difference alone, which reviewed patterns such as `engine nan, expected -?\\d`
        are written against; else nothing."""
        facts = self.facts
        return next((w for w in (facts.message, facts.invalid, facts.difference) if w is not None), "")

    @property
    def base(self) -> str:
        return engine_parts(self.engine)[0]

    @property
    def profiles(self) -> tuple[str, ...]:
        return engine_parts(self.engine)[1]

    @cached_property
    def expressions(self) -> tuple[ExprFeatures, ...]:
        """The window expressions a difference is pinned on: the column the
        comparator named, else every window expression of the query."""
        if self.case is None:
            return ()
        found = expression_features(self.case.query)
        named = self.facts.column
        return (found[named],) if named in found else tuple(found.values())

    @cached_property
    def features(self) -> frozenset[str]:
        """What the case exercises: outside its window expressions, and in the
        expressions the difference is pinned on."""
        from harness.cases.features import query_features

        out = set(self.extra)
        if self.case is not None:
            out |= query_features(self.case)
            for expr in self.expressions:
                out |= expr.features
        if self.facts.feature is not None:
            out.add(self.facts.feature)  # the feature the dialect (or engine) refused
        return frozenset(out)


def engine_parts(spec: str) -> tuple[str, tuple[str, ...], str | None]:
    """`duckdb[threads=1]@candidate` -> ("duckdb", ("threads=1",), "candidate")."""
    from harness.engines.profiles import parse_spec

    try:
        parsed = parse_spec(spec)
    except InvalidInput:  # not an engine spec (a finding against the harness itself)
        return spec, (), None
    return parsed.base, parsed.profiles, parsed.label


def verdict_class(verdict: str) -> str:
    """A finding's verdict as a class: `profiles-disagree-values` -> `profiles-disagree`."""
    for prefix in ("profiles-disagree", "batched-only"):
        if verdict.startswith(prefix):
            return prefix
    return verdict


# -- entries ----------------------------------------------------------------------


@dataclass(frozen=True)
class Matcher:
    """Every field given must hold; a tuple field holds when any of its values does
    (`feature`: when all of them do)."""

    verdict: tuple[str, ...]
    case: tuple[str, ...] = ()  # globs over case ids
    function: tuple[str, ...] = ()
    frame: tuple[str, ...] = ()
    feature: tuple[str, ...] = ()  # globs, all required
    error: re.Pattern | None = None

    def holds(self, obs: Observation) -> bool:
        if not obs.verdict_classes & set(self.verdict):
            return False
        if self.case and not any(fnmatch.fnmatchcase(obs.case_id, g) for g in self.case):
            return False
        if (self.function or self.frame) and not any(
                (not self.function or e.function in self.function)
                and (not self.frame or e.frame in self.frame) for e in obs.expressions):
            return False
        if self.feature and not all(fnmatch.filter(obs.features, f) for f in self.feature):
            return False
        return self.error is None or self.error.search(obs.words) is not None

    def as_json(self) -> dict:
        out: dict = {"verdict": list(self.verdict)}
        for name in ("case", "function", "frame", "feature"):
            if getattr(self, name):
                out[name] = list(getattr(self, name))
        if self.error is not None:
            out["error"] = self.error.pattern
        return out


@dataclass(frozen=True)
class Entry:
    id: str
    engine: str  # the base engine
    match: Matcher
    kind: str
    reason: str
    profiles: tuple[str, ...] = ()
    versions: VersionRange | None = None
    link: str | None = None
    where: str = ""  # `FILE: entries[3]`, or the dialect table it was derived from
    derived: bool = False

    def applies_to(self, engine: str, version: str) -> bool:
        base, profiles, _ = engine_parts(engine)
        # A deliberately faulty engine (`duckdb~ntile`) is its engine plus one planted
        # bug: the engine's known differences are its own, the planted bug is not.
        if base.partition("~")[0] != self.engine or not set(self.profiles) <= set(profiles):
            return False
        if self.versions is None:
            return True
        return in_range(version, self.versions)

    @property
    def campaign_only(self) -> bool:
        """About verdicts only a campaign observes (never stale: a fuzz budget may
        not meet them). The reference's own suspect-reference is one: it is the
        finding of a case whose every engine disagrees with the reference, and a
        corpus case (with rows derived by hand) flags its engines' verdicts instead."""
        if self.engine == "reference" and set(self.match.verdict) <= {"suspect-reference"}:
            return True
        return set(self.match.verdict) <= CAMPAIGN_CLASSES

    def explains(self, obs: Observation) -> bool:
        return self.applies_to(obs.engine, obs.version) and self.match.holds(obs)

    @property
    def label(self) -> str:
        spec = self.engine + (f"[{','.join(self.profiles)}]" if self.profiles else "")
        versions = f" {self.versions}" if self.versions else ""
        return f"{self.id} ({spec}{versions}, {self.kind})"

    def as_json(self) -> dict:
        return {"id": self.id, "engine": self.engine, "profiles": list(self.profiles),
                "versions": str(self.versions) if self.versions else None,
                "match": self.match.as_json(), "kind": self.kind, "link": self.link,
                "reason": self.reason, "where": self.where, "derived": self.derived}


@dataclass
class Baseline:
    """The reviewed entries of one file."""

    entries: list[Entry]
    path: Path | None = None

    @property
    def unranged(self) -> list[Entry]:
        """`upstream-bug` entries that do not say which versions they were observed on:
        they would explain the same difference away in every release, older and
        newer (`gate --strict-baseline` warns of each)."""
        return [e for e in self.entries if e.kind == "upstream-bug" and e.versions is None]

    def explain(self, obs: Observation, derived: Iterable[Entry] = ()) -> Entry | None:
        """The entry that explains `obs` (dialect-derived ones first), or None."""
        for entry in (*derived, *self.entries):
            if entry.explains(obs):
                return entry
        return None

    def for_case(self, case_id: str, engine: str, verdict: str, detail: str = "",
                 case: Case | None = None, version: str = "", facts: Facts = NO_FACTS) -> Entry | None:
        return self.explain(Observation(case_id, engine, verdict, detail, version, case, facts=facts))


# -- loading and validating -------------------------------------------------------


def load_baseline(path: Path = DEFAULT_PATH) -> Baseline:
    """The reviewed entries of `path`. Errors name the file, the entry and the field."""
    try:
        doc = read_yaml(Path(path)) or {}
    except InvalidInput as e:
        raise InvalidInput(f"cannot read the baseline: {str(e).removeprefix(f'{e.where}: ')}",
                           e.where) from None
    raw_entries = doc.get("entries", []) if isinstance(doc, dict) else None
    if not isinstance(raw_entries, list):
        raise InvalidInput("must be a mapping with a list under 'entries'", str(path))
    entries: list[Entry] = []
    seen: dict[str, str] = {}
    for i, raw in enumerate(raw_entries):
        where = f"{path}: entries[{i}]"
        entry = _entry(raw, where)
        if entry.id in seen:
            raise InvalidInput(f"duplicate id {entry.id!r} (also at {seen[entry.id]})", f"{where}.id")
        seen[entry.id] = where
        _not_declared_twice(entry, where)
        entries.append(entry)
    return Baseline(entries, Path(path))


def _entry(raw: object, where: str) -> Entry:
    if not isinstance(raw, dict):
        raise InvalidInput("must be a mapping", where)
    unknown = set(raw) - _ENTRY_FIELDS
    if unknown:
        raise InvalidInput(f"unknown field(s) {sorted(unknown, key=str)} (known: {sorted(_ENTRY_FIELDS)})", where)
    for key in ("id", "engine", "kind", "reason"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise InvalidInput("missing, or not a non-empty string", f"{where}.{key}")
    if not _ID.match(raw["id"]):
        raise InvalidInput("must be lower case letters, digits, '.', '_' and '-'", f"{where}.id")
    if raw["kind"] not in KINDS:
        raise InvalidInput(f"{raw['kind']!r} is not one of {', '.join(KINDS)}", f"{where}.kind")
    link = raw.get("link")
    if link is not None and (not isinstance(link, str) or not re.match(r"https?://", link)):
        raise InvalidInput("must be an http(s) URL", f"{where}.link")
    engine, profiles = _engine(raw["engine"], f"{where}.engine")
    versions = None
    if raw.get("versions") is not None:
        try:
            versions = version_range(str(raw["versions"]))
        except ValueError as e:
            raise InvalidInput(str(e), f"{where}.versions") from None
    return Entry(raw["id"], engine, _matcher(raw.get("match"), f"{where}.match"), raw["kind"],
                 " ".join(raw["reason"].split()), profiles, versions, link, where)


def _engine(text: str, where: str) -> tuple[str, tuple[str, ...]]:
    from harness.engines.registry import engine_class, engine_names

    base, profiles, label = engine_parts(text)
    if label is not None:
        raise InvalidInput("an entry names an engine, not a label (@...): its version range "
                           "says which builds it is about", where)
    if base not in engine_names():
        raise InvalidInput(f"unknown engine {base!r} (known: {', '.join(engine_names())})", where)
    if profiles:
        try:
            engine_class(text)
        except InvalidInput as e:  # an unknown profile, said where it is
            raise InvalidInput(str(e).removeprefix(f"{e.where}: "), where) from None
    return base, profiles


def _matcher(raw: object, where: str) -> Matcher:
    if not isinstance(raw, dict):
        raise InvalidInput("must be a mapping (verdict, and case, function, frame, feature or "
                           "error)", where)
    unknown = set(raw) - _MATCH_FIELDS
    if unknown:
        raise InvalidInput(f"unknown field(s) {sorted(unknown, key=str)} (known: {sorted(_MATCH_FIELDS)})", where)
    values = {name: _strings(raw.get(name), f"{where}.{name}") for name in _MATCH_FIELDS - {"error"}}
    if not values["verdict"]:
        raise InvalidInput("missing: the verdict class(es) the entry explains", f"{where}.verdict")
    for verdict in values["verdict"]:
        if verdict not in VERDICT_CLASSES:
            raise InvalidInput(f"unknown verdict class {verdict!r} (known: {', '.join(VERDICT_CLASSES)})",
                               f"{where}.verdict")
        if verdict in PASSING_CLASSES:
            raise InvalidInput(f"{verdict!r} needs no explanation", f"{where}.verdict")
    for frame in values["frame"]:
        if frame not in FRAMES:
            raise InvalidInput(f"unknown frame mode {frame!r} (known: {', '.join(FRAMES)})", f"{where}.frame")
    for function in values["function"]:
        _check_function(function, f"{where}.function")
    for feature in values["feature"]:
        if not fnmatch.filter(_known_features(), feature):
            raise InvalidInput(f"unknown feature {feature!r} (known: see harness/cases/features.py, or "
                               "a name a dialect refuses, e.g. function.NAME)", f"{where}.feature")
    error = None
    if raw.get("error") is not None:
        if not isinstance(raw["error"], str):
            raise InvalidInput("must be a regular expression (a string)", f"{where}.error")
        try:
            error = re.compile(raw["error"])
        except re.error as e:
            raise InvalidInput(f"not a regular expression: {e}", f"{where}.error") from None
    refuse_broad(values["case"], values["frame"], values["feature"], error, FRAMES, _known_features(), where)
    matcher = Matcher(values["verdict"], values["case"], values["function"], values["frame"],
                      values["feature"], error)
    if not (matcher.case or matcher.function or matcher.frame or matcher.feature or matcher.error):
        raise InvalidInput("too broad: besides the verdict, give a case, function, frame, feature "
                           "or error, so the entry cannot hide every difference of its engine", where)
    return matcher


def _strings(value: object, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise InvalidInput("must be a string or a list of strings", where)
    return tuple(v.strip() for v in value)


def _check_function(name: str, where: str) -> None:
    from harness.core.functions import FUNCTIONS

    if name not in FUNCTIONS:
        raise InvalidInput(f"unknown function {name!r}", where)


def _known_features() -> frozenset[str]:
    from harness.judge.metamorphic import RELATIONS

    return FEATURES | {f"metamorphic.{r.name}" for r in RELATIONS} | frozenset(
        name for entry in _all_derived() for name in entry.match.feature)


def _not_declared_twice(entry: Entry, where: str) -> None:
    """A reviewed entry may not explain an `unsupported` its dialect already declares."""
    if entry.match.verdict != (Verdict.UNSUPPORTED.value,):
        return
    declared = {f for e in derived_entries([entry.engine]) for f in e.match.feature}
    twice = [f for f in entry.match.feature if f in declared]
    if twice:
        module = _dialect_module(entry.engine)
        raise InvalidInput(f"{', '.join(twice)} is already declared missing by {entry.engine}'s "
                           f"dialect ({module}); remove this entry", where)


# -- derived from the dialect tables ----------------------------------------------


def derived_entries(engines: Sequence[str]) -> list[Entry]:
    """What each engine's dialect declares missing, as `unsupported` entries: its
    current release's tables for every version, and what each older range of
    releases lacks besides (`Dialect.releases`) for those versions only."""
    from harness.engines.registry import get_dialect

    out: list[Entry] = []
    for base in dict.fromkeys(engine_parts(e)[0] for e in engines):
        dialect = get_dialect(base)
        module = _dialect_module(base)
        out += _declared(base, module, dialect.unsupported, dialect.missing_functions, dialect.needs_order_by,
                         dialect.no_moving_frame_start, dialect.unordered_window_only,
                         dialect.unrepresentable, dialect.not_implemented)
        for release in dialect.releases:
            out += _declared(base, module, release.lacks, release.missing_functions, frozenset(),
                             release.no_moving_frame_start, frozenset(), frozenset(), release.not_implemented,
                             version_range(release.versions))
    return out


def _declared(base: str, module: str, features: Iterable[Feature], functions: Iterable[str],
              ordered: Iterable[str], moving: Iterable[str], unordered: Iterable[str],
              unrepresentable: Iterable[str], words: Sequence[str],
              versions: VersionRange | None = None) -> list[Entry]:
    suffix, scope = (f"@{versions}", f" {versions}") if versions is not None else ("", "")
    names = [
        *((f.value, "its feature table") for f in sorted(features, key=lambda f: f.value)),
        *((f"function.{n}", "its missing functions") for n in sorted(functions)),
        *((f"window.{n}-without-order-by", "its functions that need an ORDER BY") for n in sorted(ordered)),
        *((f"window.{n}-moving-frame", "its aggregates without a moving frame start") for n in sorted(moving)),
        *((f"window.{n}-with-order-by", "its aggregates over a whole partition only") for n in sorted(unordered)),
        *((n, "the types and values it cannot hold") for n in sorted(unrepresentable)),
    ]
    table = "its releases" + scope if versions is not None else ""
    out = [Entry(f"{base}:{name}{suffix}", base, Matcher((Verdict.UNSUPPORTED.value,), feature=(name,)),
                 "unsupported", f"{base}{scope} lacks {name} ({module}, {table or where})",
                 versions=versions, where=module, derived=True)
           for name, where in names]
    for i, pattern in enumerate(words):
        out.append(Entry(f"{base}:not-implemented-{i + 1}{suffix}", base,
                         Matcher((Verdict.UNSUPPORTED.value,), error=re.compile(pattern)),
                         "unsupported", f"{base}{scope} says it does not implement this "
                         f"(its words, {pattern!r}, in {module})", versions=versions, where=module,
                         derived=True))
    return out


def _all_derived() -> list[Entry]:
    from harness.engines.registry import engine_names

    return derived_entries(engine_names())


def _dialect_module(base: str) -> str:
    from harness.engines.registry import get_dialect

    module = type(get_dialect(base)).__module__
    if module == "harness.core.dialect":  # a plain Dialect instance: where it is defined
        from harness.engines.registry import engine_class

        module = engine_class(base).__module__.rpartition(".")[0] + ".dialect"
    return module.replace(".", "/") + ".py"


# -- staleness --------------------------------------------------------------------


def stale(baseline: Baseline, used: set[str], engines: dict[str, str],
          case_ids: Iterable[str], whole_corpus: bool = True) -> list[Entry]:
    """Reviewed entries that apply to this run and explained nothing.

    An entry applies when an engine of the run (name -> version) is its engine,
    under its profiles and within its version range, and, when it names cases,
    one of them ran. An entry that names no case is shown by some corpus case
    (tests/test_corpus.py holds the baseline to that), so it applies only
    when the `whole_corpus` ran; one about campaign-only verdicts never does."""
    case_ids = list(case_ids)
    out = []
    for entry in baseline.entries:
        if entry.id in used:
            continue
        if not any(entry.applies_to(name, version) for name, version in engines.items()):
            continue
        if (not entry.match.case and not whole_corpus) or entry.campaign_only:
            continue
        if entry.match.case and not any(fnmatch.fnmatchcase(c, g) for c in case_ids
                                        for g in entry.match.case):
            continue
        out.append(entry)
    return out
