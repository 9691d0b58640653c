"""Replay one case: rerun it and show each answer (the command `window-harness
replay CASE` is harness/cli/replay.py).

For every engine: its verdict (the comparator's own, from `run_case`), the SQL
it ran, its answer as a small table (the user's columns only; the hidden
`__wh_` columns are dropped) and a diff against the reference (see
`replay_diff`: a human aid that never decides anything; differing cells show
`reference → engine`). `replay_text` prints the result as text or JSON.

An engine is diffed against the reference under the engine's own semantics
profile (its documented by-design choices), the answer its verdict was judged
against. Where the verdict accepts a difference (another order of tied rows,
a float within the tolerance), the verdict's notes say so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.cases.case import Case, case_id, load_case
from harness.core.errors import EvaluationError, InvalidInput, ReferenceGap
from harness.core.model import Select
from harness.core.secrets import redact_words
from harness.core.semantics import SemanticsProfile
from harness.core.text import shell_command
from harness.engines.base import Engine
from harness.findings.replay_diff import Answer, Changed, Diff, diff, user_answer
from harness.findings.replay_explain import CellExplanation, first_explained
from harness.judge.cells import hashable
from harness.judge.compare import PASSING
from harness.judge.instrument import Plan, bare_plan, instrument, with_rowid
from harness.judge.oracle import Oracle
from harness.judge.runner import Result, RunResults, profile_named, run_case, start_engines

__all__ = ["Answer", "Changed", "Diff", "EngineReplay", "Replay", "diff", "finding_engines",
           "engine_arguments", "load_one", "reduce_command", "replay", "replay_command",
           "user_answer"]

_REFERENCE = "reference"


def replay_command(path: str | Path, engines: Sequence[str], pythons: Mapping[str, str] | None = None,
                   server: Sequence[str] = ()) -> str:
    """The `window-harness replay` command of the case file `path` on the reference
    and `engines`, as one line to paste into a shell: a file name such as
    `a$(touch x).yaml` is quoted, never run (`core.text.shell_command`).

    `pythons`: the interpreter of each ENGINE@LABEL that ran (--engine-python), of
    which those among `engines` are passed; `server`: the PostgreSQL options the run
    had (`--postgres-local`, or `--postgres-dsn DSN`), passed when a postgres engine
    is among `engines`. So the command works as printed."""
    names = list(dict.fromkeys([_REFERENCE, *engines]))
    return shell_command(["window-harness", "replay", str(path), *engine_arguments(names, pythons, server)])


def reduce_command(path: str | Path, engines: Sequence[str], pythons: Mapping[str, str] | None = None,
                   server: Sequence[str] = (), out: str | Path | None = None) -> str:
    """The `window-harness reduce` command of the case file `path` on `engines`
    (as `replay_command`), writing to `out` when given."""
    names = list(dict.fromkeys(engines))
    where = ["--out", str(out)] if out is not None else []
    return shell_command(["window-harness", "reduce", str(path), *engine_arguments(names, pythons, server),
                          *where])


def engine_arguments(names: Sequence[str], pythons: Mapping[str, str] | None = None,
                     server: Sequence[str] = ()) -> list[str]:
    """`--engines NAMES`, then `--engine-python NAME=PATH` for each of `names` in
    `pythons`, then `server` when one of `names` is a postgres engine, its
    password hidden (`core.secrets.redact`: a printed command is never a place for
    one; put it back, or give it by PGPASSWORD or ~/.pgpass)."""
    from harness.engines.registry import engine_class

    words = ["--engines", ",".join(names)]
    for name in names:
        if name in (pythons or {}):
            words += ["--engine-python", f"{name}={pythons[name]}"]  # type: ignore[index]
    if server and any(_needs_server(engine_class, n) for n in names):
        words += redact_words(server)
    return words


def _needs_server(engine_class, name: str) -> bool:
    try:
        return engine_class(name).needs_server
    except InvalidInput:
        return False


# ---------------------------------------------------------------------------
# The reference, under each engine's profile


@dataclass
class _References:
    """The reference's answer under each semantics profile, LIMIT applied."""

    case: Case
    plan: Plan
    tables: dict
    by_profile: dict[SemanticsProfile, Answer | None] = field(default_factory=dict)

    @classmethod
    def of(cls, case: Case) -> _References:
        plan = instrument(case.query, case.schemas)
        tables = with_rowid(case.tables) if plan.rowid_column is not None else dict(case.tables)
        return cls(case, plan, tables)

    def under(self, profile: SemanticsProfile) -> Answer | None:
        if profile not in self.by_profile:
            self.by_profile[profile] = self._evaluate(profile)
        return self.by_profile[profile]

    def _evaluate(self, profile: SemanticsProfile) -> Answer | None:
        try:
            evaluation = Oracle(self.plan.unlimited, self.tables, profile).evaluate()
        except (EvaluationError, ReferenceGap):
            return None
        table, magnitudes = evaluation.table, dict(evaluation.magnitudes)
        if isinstance(self.plan.query, Select) and (self.plan.limit is not None or self.plan.offset):
            # The oracle ran without LIMIT/OFFSET (its rows come in ORDER BY
            # order); the cut gives one answer the standard allows.
            start = self.plan.offset or 0
            stop = None if self.plan.limit is None else start + self.plan.limit
            table = table.slice(start, None if stop is None else max(stop - start, 0))
            magnitudes = {k: v[start:stop] for k, v in magnitudes.items()}
        return user_answer(table, self.plan, magnitudes)


# ---------------------------------------------------------------------------
# Replaying a case


@dataclass
class EngineReplay:
    result: Result
    version: str
    answer: Answer | None
    diff: Diff | None
    profile: str
    is_reference: bool = False
    # The engine's run of the bare query (`harness.judge.bare`), where instrumenting
    # the query added something: its own verdict, SQL, answer and diff.
    bare: EngineReplay | None = None
    # `explain`'s derivation of the first differing cell (`replay_explain`).
    explained: CellExplanation | None = None


@dataclass
class Replay:
    case: Case
    engines: list[EngineReplay]

    @property
    def passed(self) -> bool:
        return all(e.result.verdict in PASSING and (e.bare is None or e.bare.result.verdict in PASSING)
                   for e in self.engines)


def replay(case: Case, engines: Sequence[Engine]) -> Replay:
    """Run `case` on `engines` (started here, closed by the caller)."""
    run = RunResults(engines={})
    start_engines(engines, run)
    results = run_case(case, engines, bare=True)
    references = _References.of(case)
    bare = bare_plan(case.query, case.schemas)
    out = []
    for engine, result in zip(engines, results, strict=True):
        profile = profile_named(case.profile) if engine.is_reference else engine.dialect.semantics
        if engine.is_reference:
            # Its own evaluation, with LIMIT applied (the runner keeps the unlimited one).
            out.append(EngineReplay(result, run.engines[engine.name], references.under(profile), None,
                                    profile.name, True))
            continue
        shown = _shown(references, profile, result, references.plan, run.engines[engine.name])
        reference = references.under(profile)
        if shown.diff is not None and reference is not None:
            shown.explained = first_explained(case, shown.diff, reference, engine.name, profile)
        if result.bare is not None:
            shown.bare = _shown(references, profile, result.bare, bare, run.engines[engine.name])
            if shown.explained is None and shown.bare.diff is not None and reference is not None:
                # Only the bare query differs: explain its first differing cell instead.
                shown.bare.explained = first_explained(case, shown.bare.diff, reference, engine.name, profile)
        out.append(shown)
    return Replay(case, out)


def _shown(references: _References, profile: SemanticsProfile, result: Result, plan: Plan,
           version: str) -> EngineReplay:
    """An engine's answer (to the query of `plan`) and its diff against the reference."""
    answer = user_answer(result.answer, plan) if result.answer is not None else None
    reference = references.under(profile)
    found = None if answer is None or reference is None else diff(
        reference, answer, _against(references, profile))
    return EngineReplay(result, version, answer, found, profile.name)


def _against(references: _References, profile: SemanticsProfile) -> str:
    """Name the profile only where its answer is not the case profile's."""
    own, base = references.under(profile), references.under(profile_named(references.case.profile))
    if own is None or base is None or _values(own) == _values(base):
        return _REFERENCE
    return f"{_REFERENCE} under the {profile.name} profile (its by-design choices)"


def _values(answer: Answer) -> list[tuple]:
    return [tuple(hashable(v) for v in row) for row in answer.rows]


# ---------------------------------------------------------------------------
# What the command reads (the command itself: harness/cli/replay.py)


def load_one(text: str) -> Case:
    """One case file, with the id the corpus gives it."""
    path = Path(text)
    if path.is_dir():
        raise InvalidInput("a directory: give one case file", str(path))
    return load_case(path, case_id(path, [path]))


def finding_engines(finding: dict | None) -> list[str]:
    """The engines a finding record names: `engine: NAME`, or `engines:` as a
    mapping (name -> that engine's record) or a list of names."""
    if not finding:
        return []
    names: list[str] = []
    if isinstance(finding.get("engine"), str):
        names.append(finding["engine"])
    engines = finding.get("engines")
    if isinstance(engines, dict):
        names.extend(str(k) for k in engines)
    elif isinstance(engines, list):
        names.extend(str(n) for n in engines if isinstance(n, str))
    return list(dict.fromkeys(names))
