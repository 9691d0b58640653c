"""Run cases on engines and collect one verdict per (case, engine).

The path of every case: instrument the query, evaluate it on the reference
(the oracle), judge the reference against the case's expected rows, then
render and run it on each engine and judge each answer against the reference.
"""

from __future__ import annotations

import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa

from harness.cases.case import Case
from harness.core.errors import (
    EngineCrash,
    EngineError,
    EngineTimeout,
    EvaluationError,
    InvalidQuery,
    ReferenceGap,
    ReferenceTimeout,
    Unsupported,
)
from harness.core.model import (
    COMPARISONS,
    BinaryOp,
    BinaryOperator,
    Cast,
    FuncCall,
    Literal,
    Query,
    SortKey,
    walk,
)
from harness.core.semantics import STANDARD, SemanticsProfile
from harness.core.stages import stage
from harness.core.types import TypeKind
from harness.engines.base import Engine
from harness.judge.bare import bare_comparator
from harness.judge.columnar import same_values
from harness.judge.compare import (
    PASSING,
    Comparator,
    Judgement,
    Outcome,
    Verdict,
    compare,
    compare_expected,
)
from harness.judge.facts import Facts
from harness.judge.instrument import (
    Plan,
    bare_plan,
    has_unordered_sensitive_window,
    instrument,
    with_rowid,
)
from harness.judge.oracle import Oracle, search_limit
from harness.judge.restrict import Restriction, restrict
from harness.judge.source import ReferenceSide, SourceResult, judge_source


@dataclass
class Result:
    case: str
    engine: str
    verdict: Verdict
    detail: str = ""  # for people only, built from `facts`: programs read `facts`
    notes: tuple[str, ...] = ()
    sql: str | None = None
    seconds: float = 0.0
    facts: Facts = field(default_factory=Facts)
    # Of `seconds`, judging the answer (the comparator and its notes; the
    # reference's evaluations under other orders of tied rows among them).
    judge_seconds: float = field(default=0.0, compare=False)
    # The engine's raw answer (hidden witness columns included), kept for
    # findings and replay; never part of the JSON verdict.
    answer: pa.Table | None = field(default=None, repr=False, compare=False)
    # For a nondeterministic verdict: each distinct answer of the identical runs.
    distinct_answers: tuple[pa.Table | None, ...] = field(default=(), repr=False, compare=False)
    # The reference's answer this result was judged against (under the engine's
    # semantics profile, hidden columns included, before any LIMIT), so findings
    # show it without evaluating the reference again; None where it has none.
    reference_answer: pa.Table | None = field(default=None, repr=False, compare=False)
    # The same engine's verdict on the bare query (`harness.judge.bare`), where it ran.
    bare: Result | None = field(default=None, repr=False, compare=False)
    # The query the engine ran instead of the case's (before instrumenting), where
    # it ran a restricted or respelled one (see `facts.left_out`); None: the case's.
    ran_query: Query | None = field(default=None, repr=False, compare=False)

    def named(self, engine: str) -> Result:
        return replace(self, engine=engine)

    def as_json(self) -> dict:
        doc = {
            "case": self.case,
            "engine": self.engine,
            "verdict": self.verdict.value,
            "detail": self.detail,
            "notes": list(self.notes),
            "sql": self.sql,
            "seconds": round(self.seconds, 4),
            "facts": self.facts.as_json(),
        }
        if self.bare is not None:
            doc["bare"] = self.bare.as_json()
        return doc

    def said(self, verdict: Verdict, detail: str, **facts: object) -> None:
        """Set the verdict, its facts and the detail that shows them."""
        self.verdict, self.detail = verdict, detail
        self.facts = replace(self.facts, **facts)


@dataclass
class RunResults:
    engines: dict[str, str]  # name -> version
    results: list[Result] = field(default_factory=list)
    startup_seconds: dict[str, float] = field(default_factory=dict)
    query_seconds: Counter = field(default_factory=Counter)
    # The reference's evaluations of the cases (under every profile judged), and
    # per engine the time spent judging its answers (`Result.judge_seconds`).
    reference_seconds: float = 0.0
    judge_seconds: Counter = field(default_factory=Counter)
    wall_seconds: float = 0.0
    # Each case's `source_answer` judged against the reference (`harness.judge.source`):
    # shown beside the verdicts, never one of them.
    sources: list[SourceResult] = field(default_factory=list)

    def add_times(self, prepared: PreparedCase, results: Sequence[Result]) -> None:
        """One case's reference evaluations and the judging of its answers."""
        self.reference_seconds += prepared.reference_seconds()
        for r in results:
            if r.judge_seconds:  # the engines whose answers were judged
                self.judge_seconds[r.engine] += r.judge_seconds

    def source_counts(self) -> dict[str, int]:
        return dict(Counter(s.verdict.value for s in self.sources))

    def counts(self) -> dict[str, dict[str, int]]:
        out: dict[str, Counter] = {name: Counter() for name in self.engines}
        for r in self.results:
            out[r.engine][r.verdict.value] += 1
        return {name: dict(c) for name, c in out.items()}

    def restricted_counts(self) -> dict[str, int]:
        """Per engine, its verdicts on a query restricted to the items it writes."""
        out = Counter(r.engine for r in self.results if r.facts.restricted)
        return {name: out[name] for name in self.engines if out[name]}

    @property
    def passed(self) -> bool:
        return all(r.verdict in PASSING and (r.bare is None or r.bare.verdict in PASSING) for r in self.results)


Progress = Callable[[int, int, str], None]

# How the oracle's own verdict is labelled when no reference engine was asked for.
_REFERENCE = "reference"


@dataclass
class _Judged:
    """The reference under one semantics profile: its oracle, or why it has none."""

    oracle: Oracle
    invalid: EvaluationError | None = None
    gap: ReferenceGap | None = None


@dataclass
class _Prepared:
    case: Case
    plan: Plan
    tables: dict
    profile: SemanticsProfile  # the one the case's expected rows follow
    # What the engine runs instead of the case's query (items left out, or a
    # spelling that means the same), this being the restricted case; None: the case's.
    restriction: Restriction | None = None
    by_profile: dict[SemanticsProfile, _Judged] = field(default_factory=dict)
    by_knobs: dict[tuple, _Judged] = field(default_factory=dict)  # see `under`
    seconds: float = 0.0  # the reference's own evaluation time
    comparator: Comparator = compare  # the bare query's own (`harness.judge.bare`)
    # The reference's rows of this case under a profile, from one evaluation of
    # its whole sibling batch (None where the batch gives none): see `Batched`.
    batched: Batched | None = None

    def under(self, profile: SemanticsProfile) -> _Judged:
        """The reference evaluated under `profile`: once per profile, and once for
        profiles that differ only in knobs this query never touches."""
        judged = self.by_profile.get(profile)
        if judged is None:
            key = effective_knobs(profile, self.plan.query)
            judged = self.by_knobs.get(key)
            if judged is None:
                judged = self.by_knobs[key] = self._evaluate(profile)
            self.by_profile[profile] = judged
        return judged

    def _evaluate(self, profile: SemanticsProfile) -> _Judged:
        answer = self.batched(self.plan, profile) if self.batched is not None else None
        if answer is not None:  # the batch answered: this case is valid, its rows known
            return _Judged(Oracle(self.plan.unlimited, self.tables, profile, answer=answer))
        t0 = time.perf_counter()
        judged = _Judged(Oracle(self.plan.unlimited, self.tables, profile))
        try:
            with stage("reference"):
                judged.oracle.evaluate()
        except EvaluationError as e:
            judged.invalid = e
        except ReferenceGap as e:
            judged.gap = e
        self.seconds += time.perf_counter() - t0
        return judged


# The reference's answer to one case of a sibling batch, from one evaluation of
# the batch (`harness.campaign.reference_batch`): given the case's instrumented
# plan and a profile, its rows, or None where the batch cannot give them (it does
# not batch, or some case of it is invalid: each is then evaluated alone).
Batched = Callable[[Plan, SemanticsProfile], "pa.Table | None"]


def _uses_function(*names: str) -> Callable[[list], bool]:
    return lambda nodes: any(isinstance(n, FuncCall) and n.name in names for n in nodes)


# When a profile knob can change a query's answer. A knob not listed here
# always counts (a new knob is never silently ignored).
_KNOB_TOUCHED_BY: dict[str, Callable[[list], bool]] = {
    "null_ordering": lambda nodes: any(isinstance(n, SortKey) and n.nulls is None for n in nodes),
    "integer_division": lambda nodes: any(isinstance(n, BinaryOp) and n.op is BinaryOperator.DIV
                                          for n in nodes),
    "sum_overflow": _uses_function("sum"),
    "avg_of_integers": _uses_function("avg"),
    "avg_of_decimals": _uses_function("avg"),
    "decimal_sum_overflow": _uses_function("sum"),
    "variance_of_exact": _uses_function("var_samp", "var_pop", "stddev_samp", "stddev_pop"),
    "array_agg": _uses_function("array_agg"),
    "nth_value_below_one": _uses_function("nth_value"),
    # A CAST (to DATE, or through one), or a string literal a comparison may cast.
    "date_from_string": lambda nodes: any(isinstance(n, Cast) or _is_string_literal(n) for n in nodes),
    "datetime_vs_string": lambda nodes: any(isinstance(n, BinaryOp) and n.op in COMPARISONS
                                            and (_is_string_literal(n.left) or _is_string_literal(n.right))
                                            for n in nodes),
    "string_agg_argument": _uses_function("string_agg"),
    "invalid_string_cast": lambda nodes: any(isinstance(n, Cast) or _is_string_literal(n) for n in nodes),
    "division_by_zero": lambda nodes: any(isinstance(n, BinaryOp) and n.op in (BinaryOperator.DIV, BinaryOperator.MOD)
                                          for n in nodes),
}


def _is_string_literal(node: object) -> bool:
    return isinstance(node, Literal) and node.type is not None and node.type.kind is TypeKind.STRING


def _touched_knobs(query: Query) -> frozenset[str]:
    return _by_identity(_TOUCHED, query, _knobs_touched)


def _knobs_touched(query: Query) -> frozenset[str]:
    nodes = list(walk(query))
    return frozenset(knob for knob in SemanticsProfile.__dataclass_fields__
                     if knob != "name" and _KNOB_TOUCHED_BY.get(knob, lambda _: True)(nodes))


# Memos keyed by the very objects they were computed for. Sibling cases share
# their shape's query object, and a query tree's hash is computed anew at each
# call (it walks the whole tree): per sibling that cost more than the rest of
# its preparation. Each entry keeps its objects, so an id is never reused
# while it is a key.
_TOUCHED: OrderedDict[tuple[int, ...], tuple] = OrderedDict()
_PLANS: OrderedDict[tuple[int, ...], tuple] = OrderedDict()
_MEMO_SIZE = 64


def _by_identity(memo: OrderedDict, key: object, compute: Callable, *more: object) -> Any:
    ident = (id(key), *map(id, more))
    found = memo.get(ident)
    if found is not None and found[0] is key and all(a is b for a, b in zip(found[1], more, strict=True)):
        memo.move_to_end(ident)
        return found[2]
    value = compute(key, *more)
    memo[ident] = (key, more, value)
    while len(memo) > _MEMO_SIZE:
        memo.popitem(last=False)
    return value


def effective_knobs(profile: SemanticsProfile, query: Query) -> tuple:
    """The profile's values of the knobs that can change `query`'s answer."""
    return tuple((knob, getattr(profile, knob)) for knob in sorted(_touched_knobs(query)))


def start_engines(engines: Sequence[Engine], into: RunResults) -> None:
    for engine in engines:
        t0 = time.perf_counter()
        engine.start()
        into.engines[engine.name] = engine.version()
        into.startup_seconds[engine.name] = time.perf_counter() - t0


def run_cases(
    cases: Sequence[Case], engines: Sequence[Engine], progress: Progress | None = None, bare: bool = False
) -> RunResults:
    """Every case on every engine; `bare`: each case's bare query too (`run_bare`)."""
    t0 = time.perf_counter()
    run = RunResults(engines={})
    start_engines(engines, run)
    for i, case in enumerate(cases):
        if progress:
            progress(i, len(cases), case.id)
        run.results.extend(run_case(case, engines, run.query_seconds, bare=bare, sources=run.sources, timing=run))
    run.wall_seconds = time.perf_counter() - t0
    return run


def run_case(case: Case, engines: Sequence[Engine], clock: Counter | None = None,
             flag: bool = True, bare: bool = False, sources: list[SourceResult] | None = None,
             timing: RunResults | None = None) -> list[Result]:
    """One verdict per engine. The reference is always judged against the case's
    rows (it is the oracle), and listed only when it is among `engines`.
    `flag=False` leaves the suspect-reference check to a caller that has more
    engines' verdicts to add (`flag_suspect_reference`). `bare`: each engine's
    verdict on the bare query too, kept as its result's `bare` (`run_bare`).
    `sources`: where the case's `source_answer`, judged, goes (`judge_source_answer`);
    `timing`: the run whose reference and judging times it adds to."""
    prepared = PreparedCase(case)
    results = []
    for engine in engines:
        t0 = time.perf_counter()
        if engine.is_reference:
            result = prepared.reference.named(engine.name)
        else:
            result = _judge_engine(prepared.for_engine(engine), engine)
        result.seconds = time.perf_counter() - t0 + (prepared.plain.seconds if engine.is_reference else 0)
        if clock is not None:
            clock[engine.name] += result.seconds
        results.append(result)
    if timing is not None:
        timing.add_times(prepared, results)
    if flag:
        prepared.flag_suspect_reference(results, engines)
    if bare:
        run_bare(case, results, engines, clock, prepared.reference, flag=flag)
    if sources is not None and (judged := judge_source_answer(prepared)) is not None:
        sources.append(judged)
    return results


def judge_source_answer(prepared: PreparedCase) -> SourceResult | None:
    """The case's `source_answer` against the reference under the source engine's
    semantics profile (None: the case has none). Verdicts are untouched."""
    answer = prepared.case.source_answer
    if answer is None:
        return None
    p = prepared.plain
    profile = profile_named(answer["engine"])
    judged = p.under(profile)
    side = ReferenceSide(p.plan, judged.oracle, profile, judged.invalid, judged.gap)
    return judge_source(prepared.case.id, answer, side)


class PreparedCase:
    """A case instrumented and evaluated on the reference, ready for engines.

    Engines that accept an unordered row_number get a witness for windows
    without ORDER BY too (a second instrumented query, judged on its own).
    """

    def __init__(self, case: Case, batched: Batched | None = None,
                 restrictions: dict[str, Restriction | None] | None = None) -> None:
        """`batched`: the case's rows from its sibling batch (see `Batched`);
        `restrictions`: what each engine runs of the query, shared by siblings
        (their query is one)."""
        self.case = case
        self.batched = batched
        self.plain = _prepare(case, batched=batched)
        self.reference = _judge_reference(self.plain)
        self.witnessed = (_prepare(case, unordered_witness=True, batched=batched)
                          if has_unordered_sensitive_window(case.query) else self.plain)
        # Per engine, what it runs of a query it cannot write as it is; and per
        # distinct restricted query, its instrumented forms (engines with the
        # same restriction share the reference's evaluations).
        self._restrictions: dict[str, Restriction | None] = {} if restrictions is None else restrictions
        self._restricted: dict[Query, tuple[_Prepared, _Prepared]] = {}

    def for_engine(self, engine: Engine) -> _Prepared:
        """The prepared case this engine runs: the case's, or restricted to what
        its dialect writes (`harness.judge.restrict`), instrumented after."""
        accepts = "row_number" not in engine.dialect.needs_order_by
        restriction = self.restriction(engine)
        if restriction is None:
            return self.witnessed if accepts else self.plain
        plain, witnessed = self._restricted_case(restriction)
        return witnessed if accepts else plain

    def restriction(self, engine: Engine) -> Restriction | None:
        if engine.name not in self._restrictions:
            self._restrictions[engine.name] = restrict(self.case.query, engine.render)
        return self._restrictions[engine.name]

    def _restricted_case(self, restriction: Restriction) -> tuple[_Prepared, _Prepared]:
        found = self._restricted.get(restriction.query)
        if found is None:
            from harness.sql.writer import write

            # The case's expected rows (or error) are for its own query: the
            # restricted one is judged against the reference alone.
            case = replace(self.case, query=restriction.query, sql=write(restriction.query),
                           expected=None, error=None)
            plain = _prepare(case, restriction=restriction, batched=self.batched)
            witnessed = (_prepare(case, unordered_witness=True, restriction=restriction, batched=self.batched)
                         if has_unordered_sensitive_window(case.query) else plain)
            found = self._restricted[restriction.query] = (plain, witnessed)
        return found

    def reference_seconds(self) -> float:
        """The reference's evaluations of this case, under every profile asked for
        (each instrumented form's, a restricted query's too)."""
        forms = {id(p): p for p in (self.plain, self.witnessed, *(f for pair in self._restricted.values() for f in pair))}
        return sum(p.seconds for p in forms.values())

    def flag_suspect_reference(self, results: list[Result], engines: Sequence[Engine]) -> None:
        flag_suspect_reference(self.case, self.reference, results, engines)


# -- the bare query (harness.judge.bare) ----------------------------------------------


def run_bare(case: Case, results: list[Result], engines: Sequence[Engine], clock: Counter | None = None,
             reference: Result | None = None, flag: bool = True) -> None:
    """Judge each engine's answer to the bare query and keep it as its result's
    `bare` (`facts.bare` set). Nothing runs where the instrumenter added nothing
    to the query: there the instrumented verdict is the bare one. `reference`:
    the reference's own verdict (made again when the case has expected rows)."""
    by_name = {e.name: e for e in engines if not e.is_reference}
    # An engine that ran a restricted query runs that query bare, too (with the
    # same restriction said in its facts); engines that ran the same query share it.
    bare: dict[Query, _Prepared | None] = {}
    twins = []
    for result in results:
        engine = by_name.get(result.engine)
        if engine is None or result.bare is not None:
            continue
        query = result.ran_query or case.query
        if query not in bare:
            bare[query] = prepare_bare(case if query == case.query else
                                       replace(case, query=query, expected=None, error=None))
        prepared = bare[query]
        if prepared is None:
            continue
        t0 = time.perf_counter()
        result.bare = judge_bare(prepared, engine)
        if result.ran_query is not None:
            result.bare.facts = replace(result.bare.facts, left_out=result.facts.left_out,
                                        order_keys_left_out=result.facts.order_keys_left_out,
                                        respelled=result.facts.respelled)
            result.bare.ran_query, result.bare.notes = result.ran_query, (result.notes[0], *result.bare.notes)
        result.bare.seconds = time.perf_counter() - t0
        if clock is not None:
            clock[engine.name] += result.bare.seconds
        twins.append(result.bare)
    if flag and twins:
        if reference is None:
            reference = (_judge_reference(_prepare(case)) if case.expected is not None or case.error is not None
                         else Result(case.id, _REFERENCE, Verdict.MATCH))
        flag_suspect_reference(case, reference, twins, engines)


def prepare_bare(case: Case) -> _Prepared | None:
    """The bare query with its own reference (evaluated when an engine's answer is
    judged), or None when instrumenting it adds nothing."""
    instrumented = instrument(case.query, case.schemas)
    if instrumented.query == case.query and instrumented.rowid_column is None \
            and not has_unordered_sensitive_window(case.query):
        return None
    return _Prepared(case, bare_plan(case.query, case.schemas), dict(case.tables), profile_named(case.profile),
                     comparator=bare_comparator(row_level=instrumented.rowid_column is not None))


def judge_bare(prepared: _Prepared, engine: Engine) -> Result:
    """The engine's verdict on the bare query (`prepare_bare`)."""
    result = _judge_engine(prepared, engine)
    result.facts = replace(result.facts, bare=True)
    return result


def flag_suspect_reference(case: Case, reference: Result, results: list[Result],
                           engines: Sequence[Engine]) -> None:
    """See `_flag_suspect_reference`; `reference` is the reference's own verdict."""
    implementations = {e.name: e.implementation for e in engines if not e.is_reference}
    judged = [r for r in results if r.engine in implementations]
    _flag_suspect_reference(case, reference, judged, implementations)


def _prepare(case: Case, unordered_witness: bool = False, restriction: Restriction | None = None,
             batched: Batched | None = None) -> _Prepared:
    with stage("instrument"):
        # One plan for a query: siblings share it (and what is keyed by it).
        plan = _by_identity(_PLANS, case.query, lambda q, s, w: instrument(q, s, w), case.schemas,
                            unordered_witness)
        tables = with_rowid(case.tables) if plan.rowid_column is not None else dict(case.tables)
    prepared = _Prepared(case, plan, tables, profile_named(case.profile), restriction, batched=batched)
    prepared.under(prepared.profile)
    return prepared


def profile_named(name: str | None) -> SemanticsProfile:
    """A case's `profile`: "standard" (the default) or an engine's, by engine name."""
    if name in (None, STANDARD.name):
        return STANDARD
    from harness.engines.registry import get_dialect

    return get_dialect(name).semantics


def _judge_reference(p: _Prepared) -> Result:
    result = Result(p.case.id, _REFERENCE, Verdict.MATCH)
    ref = p.under(p.profile)
    if ref.gap is not None:
        verdict = Verdict.TIMEOUT if isinstance(ref.gap, ReferenceTimeout) else Verdict.ERROR
        _harness_failed(result, verdict, f"reference cannot evaluate: {ref.gap}")
    elif ref.invalid is not None:
        expects_rows = p.case.expected is not None
        result.said(Verdict.MISMATCH if expects_rows else Verdict.MATCH,
                    f"invalid by definition: {ref.invalid}" + ("; but the case expects rows" if expects_rows else ""),
                    invalid=str(ref.invalid))
    elif p.case.error is not None:
        result.said(Verdict.MISMATCH, f"the case expects an error ({p.case.error}), the reference returned rows")
    else:
        result.answer = result.reference_answer = ref.oracle.answer()
    if result.verdict is Verdict.MATCH and ref.gap is None and ref.invalid is None \
            and p.case.error is None and p.case.expected is not None:
        judgement = Judgement(p.plan, p.profile.null_ordering)
        _fill(result, compare_expected(p.case.expected, judgement, ref.oracle))
    if p.case.expected is not None or p.case.error is not None:
        result.facts = replace(result.facts, against_case=result.verdict)
    return result


def _judge_engine(p: _Prepared, engine: Engine) -> Result:
    """Judge the engine under its own semantics profile (its by-design choices)."""
    result = Result(p.case.id, engine.name, Verdict.ERROR)
    ref = p.under(engine.dialect.semantics)
    result.reference_answer = reference_table(ref)
    try:
        with stage(f"engine {engine.name}"):
            engine.check_tables(p.tables)
            result.sql = engine.render(p.plan.query)
            answer = engine.run(p.tables, result.sql)
    except InvalidQuery as e:  # the writer could not spell the model: a harness bug
        _harness_failed(result, Verdict.ERROR, f"the harness cannot render this query: {e}")
        return said_restricted(result, p)
    except (Unsupported, EngineCrash, EngineTimeout, EngineError) as e:
        return said_restricted(_failed(result, e, ref, engine), p)
    return judge_answer(p, engine, result, answer)


def said_restricted(result: Result, p: _Prepared) -> Result:
    """Say in the facts and the notes what the engine ran instead of the case's
    query, when it ran a restricted or respelled one (nothing left out silently)."""
    r = p.restriction
    if r is None or result.facts.left_out is not None or result.facts.respelled is not None:
        return result
    result.facts = replace(result.facts, left_out=r.left_out or None,
                           order_keys_left_out=r.order_keys_left_out or None, respelled=r.respelled or None)
    result.notes = (r.note, *result.notes)
    result.ran_query = r.query
    return result


def reference_table(ref: _Judged) -> pa.Table | None:
    """The reference's answer (evaluated once, kept by its oracle), or None when it has none."""
    if ref.invalid is not None or ref.gap is not None:
        return None
    return ref.oracle.answer()


def _harness_failed(result: Result, verdict: Verdict, message: str) -> None:
    """The harness (or the reference) could not judge: its words are the message."""
    result.said(verdict, message, message=message)


def _failed(result: Result, error: Exception, ref: _Judged, engine: Engine) -> Result:
    """The verdict of an engine that gave no answer."""
    if isinstance(error, Unsupported):
        result.said(Verdict.UNSUPPORTED, error.feature, feature=error.feature)
    elif isinstance(error, EngineCrash):
        result.said(Verdict.CRASH, error.message, message=error.message)
    elif isinstance(error, EngineTimeout):
        result.said(Verdict.TIMEOUT, error.message, message=error.message)
    elif isinstance(error, EngineError):
        if ref.invalid is not None:
            result.said(Verdict.REJECTED_AS_EXPECTED, str(ref.invalid), invalid=str(ref.invalid),
                        message=error.message)
            result.notes = (f"the engine says: {error.message}",)
        elif (refused := engine.dialect.refused_feature(error.message)) is not None:
            # Detail shows the feature, as for `unsupported`; the engine's words go in the notes.
            result.said(Verdict.WRONGLY_REJECTED, refused.value, feature=refused.value, message=error.message)
            result.notes = (f"the standard allows this query; the engine says: {error.message}",)
        elif engine.dialect.says_not_implemented(error.message):
            result.said(Verdict.UNSUPPORTED, f"the engine says: {error.message}", message=error.message)
        else:
            result.said(Verdict.ERROR, error.message, message=error.message)
    return result


def judge_answer(p: _Prepared, engine: Engine, result: Result, answer: pa.Table) -> Result:
    """Judge an engine's answer to the prepared case against the reference."""
    ref = p.under(engine.dialect.semantics)
    result.answer = answer
    result.reference_answer = reference_table(ref)
    if ref.invalid is not None:
        result.said(Verdict.WRONGLY_ACCEPTED,
                    f"the query is invalid by definition ({ref.invalid}) but the engine returned rows",
                    invalid=str(ref.invalid))
    elif ref.gap is not None:
        _harness_failed(result, Verdict.INCONCLUSIVE, f"reference cannot evaluate: {ref.gap}")
    else:
        t0 = time.perf_counter()
        try:
            _judge_against(p, engine, result, answer, ref)
        finally:
            result.judge_seconds = time.perf_counter() - t0
    return said_restricted(result, p)


def _judge_against(p: _Prepared, engine: Engine, result: Result, answer: pa.Table, ref: _Judged) -> None:
    judgement = Judgement(p.plan, engine.dialect.semantics.null_ordering)
    try:
        with search_limit(), stage("judging"):
            _fill(result, p.comparator(answer, judgement, ref.oracle))
    except ReferenceTimeout as e:  # searching orders of tied rows evaluates it again and again
        _harness_failed(result, Verdict.INCONCLUSIVE, f"reference cannot evaluate: {e}")
        return
    if p.batched is None or result.verdict is not Verdict.MATCH:
        # Not on a batch sibling's match: said nowhere (a campaign shows what
        # does not pass), and re-evaluating each knob on each sibling costs more
        # than the rest of its judging.
        result.notes += _by_design_note(p, engine.dialect.semantics)


def _by_design_note(p: _Prepared, profile: SemanticsProfile) -> tuple[str, ...]:
    """Say so when the engine's profile gives another answer than the case's profile,
    naming the knobs that make the difference."""
    if p.under(profile) is p.under(p.profile) or _same_answer(p, profile, p.profile):
        return ()  # one evaluation serves both: the knobs that differ do not touch this query
    knobs = [
        knob for knob in profile.differences(p.profile)
        if not _same_answer(p, replace(p.profile, **{knob: getattr(profile, knob)}), p.profile)
    ]
    named = ', '.join(knobs) or 'several knobs together'
    refused = p.under(p.profile).invalid
    if refused is not None:  # an answer where the case's profile has none: say so, loud
        return (f"by design: the {p.profile.name} profile refuses this query ({refused}); "
                f"the {profile.name} profile answers it ({named})",)
    return (f"by design: the {profile.name} profile's answer differs from the "
            f"{p.profile.name} one ({named})",)


def _same_answer(p: _Prepared, profile: SemanticsProfile, other: SemanticsProfile) -> bool:
    """Whether the reference's rows under two profiles hold the same values:
    by row id in Arrow where the answer has row ids and no order of its own
    (a million rows as Python values took longer than judging them), else as
    Python values (`_answer`)."""
    mine, theirs = p.under(profile), p.under(other)
    rowid = p.plan.rowid_column
    plain = all(j.invalid is None and j.gap is None for j in (mine, theirs))
    if plain and rowid is not None and not _ordered(p.plan.query):
        same = same_values(mine.oracle.answer(), theirs.oracle.answer(), rowid)
        if same is not None:
            return same
    return _answer(p, profile) == _answer(p, other)


def _answer(p: _Prepared, profile: SemanticsProfile) -> object:
    """The reference's rows under a profile (values, not types), or why there are
    none: in order where the query orders them, else as a bag."""
    judged = p.under(profile)
    if judged.invalid is not None or judged.gap is not None:
        return ("no rows", str(judged.invalid or judged.gap))
    rows = judged.oracle.answer().to_pylist()
    return rows if _ordered(p.plan.query) else sorted(map(repr, rows))


def _fill(result: Result, outcome: Outcome) -> None:
    result.said(outcome.verdict, outcome.detail, column=outcome.column, difference=outcome.difference)
    result.notes = outcome.notes


_JUDGED = (Verdict.MATCH, Verdict.MISMATCH, Verdict.TYPE_MISMATCH,
           Verdict.REJECTED_AS_EXPECTED, Verdict.WRONGLY_ACCEPTED)
_DISAGREE = (Verdict.MISMATCH, Verdict.WRONGLY_ACCEPTED)


def _flag_suspect_reference(
    case: Case, reference: Result, results: list[Result], implementations: dict[str, str]
) -> None:
    """The reference is the oracle, not the judge of last resort.

    With a case's hand-derived rows, a reference that fails them makes every
    engine verdict against it suspect. Without them, a reference that
    disagrees with every engine that answered (two implementations at least)
    is suspect.
    """
    engines = [r for r in results if r.verdict in _JUDGED]
    if case.expected is not None or case.error is not None:
        if reference.verdict is Verdict.MATCH:
            return
        reason = "the reference fails this case's expected outcome, so engines were not judged"
    elif len({implementations.get(r.engine, r.engine) for r in engines}) >= 2 and all(
        r.verdict in _DISAGREE for r in engines
    ):
        reason = "the reference disagrees with every engine that answered"
    else:
        return
    against_case = reference.facts.against_case if case.expected is not None or case.error is not None else None
    for r in engines:
        r.said(Verdict.SUSPECT_REFERENCE, f"{reason}; against the reference: {r.verdict.value} {r.detail}".strip(),
               against_reference=r.verdict, against_case=against_case)


# -- non-determinism ----------------------------------------------------------------


def run_prepared(prepared: PreparedCase, engine: Engine) -> Result:
    """`run_case`'s verdict of one engine (not the reference) on a case prepared
    already: the reference is not evaluated again."""
    t0 = time.perf_counter()
    result = _judge_engine(prepared.for_engine(engine), engine)
    result.seconds = time.perf_counter() - t0
    return result


def rerun(case: Case, engine: Engine, first: Result, times: int, answers: bool = False,
          prepared: PreparedCase | None = None) -> Result:
    """`first` if `times` more identical runs of the case on the engine are judged
    the same; else a `nondeterministic` result that keeps each distinct answer.

    Verdicts are compared: two runs may order tied rows differently and both
    be right, which the comparator already accepts. With `answers`, failing
    runs (every one judged the same, none a pass) are compared by their
    answers too, as bags of rows, and in order where the query has an ORDER
    BY: a wrong answer that changes from run to run is nondeterministic too.
    Passing answers that differ are what ties allow, never a finding.
    `prepared`: the case prepared already (the reference is not evaluated again).
    """
    if first.facts.bare:
        # The bare twin of the query the engine ran (a restricted one, where it ran that).
        ran = case if first.ran_query is None else replace(case, query=first.ran_query, expected=None, error=None)
        bare = prepare_bare(ran)
        assert bare is not None  # a bare verdict was made of it
        runs = [first] + [judge_bare(bare, engine) for _ in range(times)]
    else:
        ready = (prepared or PreparedCase(case)).for_engine(engine)
        runs = [first] + [_judge_engine(ready, engine) for _ in range(times)]
    return settle(runs, answers, _ordered(case.query))


def settle(runs: list[Result], answers: bool, ordered: bool) -> Result:
    """`rerun`'s judgement of identical runs (the first is the one settled).

    A run the tie search gave up on (`inconclusive`) says nothing either way:
    beside runs that all pass, or alone, it is no evidence of nondeterminism
    (answers that ties allow to differ; the first run's verdict stands, with a
    note, and an undecided first run stays undecided: never a pass unchecked).
    Beside a failing run it counts as a changed verdict, as any other."""
    first = runs[0]
    decided = [r for r in runs if r.verdict is not Verdict.INCONCLUSIVE]
    if len(decided) < len(runs) and len({r.verdict for r in decided}) <= 1 \
            and all(r.verdict in PASSING for r in decided):
        if first.verdict is Verdict.INCONCLUSIVE:
            return first
        return replace(first, notes=(*first.notes, f"{len(runs) - len(decided)} of {len(runs)} identical "
                                                   "runs were inconclusive (the tie search gave up)"))
    verdicts = Counter(r.verdict.value for r in runs)
    distinct: list[Result] = []
    for r in runs:
        if all(_answer_key(r, ordered) != _answer_key(d, ordered) for d in distinct):
            distinct.append(r)
    if len(verdicts) == 1 and (not answers or first.verdict in PASSING or len(distinct) == 1):
        return first
    seen = ", ".join(f"{v} x{n}" for v, n in verdicts.most_common())
    how = "judged" if len(verdicts) > 1 else "answered differently, each judged"
    detail = (f"{len(runs)} identical runs were {how} {seen}; {len(distinct)} distinct answers; "
              f"first {first.verdict.value}: {first.detail}")
    return replace(first, verdict=Verdict.NONDETERMINISTIC, detail=detail,
                   notes=(*first.notes, *(f"answer {i + 1}: {r.verdict.value} {r.detail}"[:300]
                                          for i, r in enumerate(distinct))),
                   distinct_answers=tuple(r.answer for r in distinct))


def _answer_key(result: Result, ordered: bool = False) -> object:
    """An answer as a bag of rows (in its order too, when `ordered`), or its error.
    The hidden columns (row id, witnesses) are left out: with ties, their
    numbering may differ run to run whatever the answer."""
    if result.answer is None:
        return (result.verdict.value, result.detail)
    answer = result.answer
    hidden = [n for n in answer.column_names if n.startswith("__wh_")]
    rows = list(map(repr, answer.drop_columns(hidden).to_pylist() if hidden else answer.to_pylist()))
    return rows if ordered else sorted(rows)


def _ordered(query: Query) -> bool:
    """Whether the query's answer has an order of its own (a top-level ORDER BY)."""
    return bool(getattr(query, "order_by", ()))
