"""Whole generated cases: tables and a window query, from one seed string.

    generate_case("1234/17")                  # campaign seed 1234, case 17
    generate_case("1234/17", steer=my_steer)  # steered to least-covered cells
    generate_case(g.seed, picks=g.picks)      # replays a steered case exactly

A seed is any string; the campaign uses "<campaign seed>/<case index>". Four
streams are derived from it, `Random(f"{seed}/schema")`, `/knobs`, `/data`
and `/query`, so the tables never depend on the query, and nothing depends
on an engine: every engine is given the same case, and one that cannot
render it is judged `unsupported`.

Outside pytest, draw a case from a seed with `generate_case(seed)`. Inside
property tests, two Hypothesis strategies: `generated_cases()` draws a seed
string (replayable by the seed the failure prints, but it does not shrink
the case), `drawn_cases()` drives every generator through Hypothesis draws
(`harness.generate.draws`), so a failing case shrinks towards a simpler one
(every generator's docstring says what simpler means; the swarm shrinks
towards every construct on, each construct towards not being used).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from random import Random
from typing import TYPE_CHECKING

import pyarrow as pa

from harness.cases.case import Case
from harness.core import types as T
from harness.core.errors import InvalidInput
from harness.core.functions import is_aggregate
from harness.core.model import (
    SUBQUERY_EXPRS,
    BoundKind,
    Column,
    Exclusion,
    Join,
    Query,
    Select,
    TableSchema,
    WindowSpec,
    resolve_window,
    walk,
    window_exprs,
)
from harness.core.types import TypeKind
from harness.generate.data import (
    HYPOTHESIS_MAX_ROWS,
    DataKnobs,
    large_knobs,
    random_knobs,
    random_table,
    tie_heavy_knobs,
)
from harness.generate.draws import Draws, as_strategy
from harness.generate.invalid import INVALID_SHARE, invalid_kind_of, maybe_invalid, still_invalid
from harness.generate.names import clashes, fold
from harness.generate.queries import GeneratedQuery, random_query
from harness.generate.schemas import ID, random_schema
from harness.generate.swarm import Swarm
from harness.generate.windows import Chooser, Steer
from harness.sql.writer import write

if TYPE_CHECKING:  # Hypothesis is imported only when a strategy is asked for
    from hypothesis.strategies import SearchStrategy

TABLE, JOINED = "t", "u"
# A join stays small even on a small-domain key: the joined table has at most
# JOINED_MAX_ROWS rows, and t at most JOIN_MAX_ROWS when it is joined.
JOINED_MAX_ROWS = 8
JOIN_MAX_ROWS = 300
# The rows a table keeps under a query the reference evaluates in quadratic time
# (`cheap_at_scale` says no), unless `Limits.rows` fixes them: one of a hundred tables draws 300-3,000 rows, and a
# 2,400-row table under aggregates over RANGE ... EXCLUDE GROUP frames cost the
# reference over 30 s, and a campaign three minutes of one shape's siblings (at 200
# rows, about a second).
COSTLY_MAX_ROWS = 200
# Data presets: how each table's knobs are drawn.
# A share of cases keeps to the column types every engine can load (SQLite
# stores no DECIMAL, DATE, TIMESTAMP or BOOLEAN): drawn from the seed alone
# (its own stream), never from the engines a campaign runs.
PORTABLE_SHARE = 0.3
PORTABLE_KINDS = frozenset({TypeKind.INT8, TypeKind.INT16, TypeKind.INT32, TypeKind.INT64,
                            TypeKind.FLOAT32, TypeKind.FLOAT64, TypeKind.STRING})

DATA_PRESETS: dict[str, Callable[[Draws], DataKnobs]] = {
    "default": random_knobs,
    "tie-heavy": tie_heavy_knobs,
}
# A share of cases get batch-scale tables (`harness.generate.data.large_knobs`):
# drawn from the seed alone (its own stream, so no other draw shifts), and
# recorded (`GeneratedCase.large`, the description, the campaign's case line).
# About half the draws are declined (a join, or a query the reference cannot
# evaluate at scale: `cheap_at_scale`), so about 3% of cases are batch-scale.
LARGE_SHARE = 0.06
# A sibling (a case that shares its shape's query: `generate_sibling`) draws
# batch-scale rows with a fiftieth of that share. A shape gets up to hundreds
# of siblings, whose rows cost milliseconds; one batch-scale case costs the
# reference seconds, and runs alone. So a shape's siblings together draw about
# as many batch-scale cases as a shape's few siblings did before they were
# that many, and they do not set the pace of a campaign.
SIBLING_LARGE_RATIO = 50
# A share of cases (not the portable ones) get an INTERVAL column in t: one of
# its drawn value columns retyped (`with_interval_column`). Drawn from the seed
# alone (its own stream, `/interval`), so a case without one draws every other
# stream as before; a case with one draws its data and query over that column.
INTERVAL_SHARE = 0.05


# Window aggregates the reference computes for all frames of a partition at
# once (`reference_impl.frame_aggregates.frames_at_once`); any other aggregate
# over a frame that moves with the row costs the frame's size per row.
_LINEAR_AGGREGATES = frozenset({"count", "sum", "avg", "min", "max"})


def is_large(seed: str, share: float = LARGE_SHARE) -> bool:
    """Whether the case of `seed` gets batch-scale tables."""
    return Random(f"{seed}/large").random() < share


def cheap_at_scale(query: Query) -> bool:
    """Whether the reference evaluates `query` over batch-scale tables in about
    linear time: no window aggregate outside its fast path (count, sum, avg,
    min, max, without an aggregate ORDER BY, nor DISTINCT but for min and max)
    over a frame that moves with the row (such a one is quadratic in the
    partition's length: minutes for one partition of 10,000 rows); no join of any
    kind (a VALUES table or a range joined to t multiplies its rows: one cross join
    with four rows made 180,000 of 45,000); no subquery in an expression (a
    correlated one is evaluated per row)."""
    if any(isinstance(n, (Join, *SUBQUERY_EXPRS)) for n in walk(query)):
        return False
    for select in (n for n in walk(query) if isinstance(n, Select)):
        for expr in window_exprs(select):
            call = expr.func
            if not is_aggregate(call.name) or _whole_partition(
                    resolve_window(expr.window, select.windows, lenient=True)):
                continue
            linear = (call.name in _LINEAR_AGGREGATES and not call.order_by and not call.within_group
                      and (not call.distinct or call.name in ("min", "max")))
            if not linear:
                return False
    return True


def _whole_partition(spec: WindowSpec) -> bool:
    """Every row's frame is its whole partition (one computation per partition)."""
    frame = spec.frame
    if frame is None:
        return not spec.order_by
    return (frame.start.kind is BoundKind.UNBOUNDED_PRECEDING and frame.end.kind is BoundKind.UNBOUNDED_FOLLOWING
            and frame.exclusion in (None, Exclusion.NO_OTHERS))


@dataclass(frozen=True)
class Limits:
    """Fixed sizes instead of drawn ones (benchmarks want like-for-like cases):
    `rows` rows in every table (a joined table keeps its cap), `windows`
    window expressions in the outer select list; and the share of seeds drawn
    for batch-scale tables (none with `rows`)."""

    rows: int | None = None
    windows: int | None = None
    large_share: float = LARGE_SHARE


NO_LIMITS = Limits()


@dataclass(frozen=True, eq=False)
class GeneratedCase:
    """A case and how it was drawn: its seed, the data knobs of each table, the
    swarm flags that were on, the candidate picked in each window slot, and
    the shape of its FROM side."""

    seed: str
    case: Case
    knobs: Mapping[str, DataKnobs]
    swarm: frozenset[Swarm]
    picks: tuple[int, ...]
    shape: str
    large: bool = False  # batch-scale tables (LARGE_SHARE)


@dataclass(frozen=True)
class Streams:
    """The four random streams a case is drawn from."""

    schema: Draws
    knobs: Draws
    data: Draws
    query: Draws

    @classmethod
    def from_seed(cls, seed: str) -> Streams:
        return cls(*(Random(f"{seed}/{part}") for part in ("schema", "knobs", "data", "query")))


def generate_case(seed: str, steer: Steer | None = None, picks: Sequence[int] | None = None,
                  data: str = "default", limits: Limits = NO_LIMITS,
                  invalid_share: float = INVALID_SHARE) -> GeneratedCase:
    """The case for `seed` (see the module doc). `picks` replays the choices
    of an earlier (steered) run; past its end, `steer` chooses, else the
    first candidate. `data` names the preset of DATA_PRESETS the knobs are
    drawn by. An out-of-range pick or an unknown preset raises InvalidInput.
    `invalid_share` of the seeds give a query made invalid on purpose
    (`harness.generate.invalid`), which every engine must refuse."""
    seed = str(seed)
    portable = Random(f"{seed}/types").random() < PORTABLE_SHARE
    generated = draw_case(seed, Streams.from_seed(seed), steer, picks, data,
                          kinds=PORTABLE_KINDS if portable else None, limits=limits,
                          large=_large(seed, limits),
                          interval=None if portable else interval_stream(seed))
    broken = maybe_invalid(seed, generated.case, invalid_share)
    if broken is None:
        return generated
    kind, query = broken
    case = replace(generated.case, query=query, sql=write(query),
                   error=f"invalid by definition: {kind.label}",
                   tags=(*generated.case.tags, "invalid", f"invalid.{kind.name}"),
                   description=f"{generated.case.description}; made invalid on purpose: {kind.label}")
    return replace(generated, case=case)


def generate_sibling(shape: GeneratedCase, seed: str, data: str = "default",
                     limits: Limits = NO_LIMITS) -> GeneratedCase:
    """A case with `shape`'s query and schemas but rows of its own, drawn from
    the knobs and data streams of `seed` (campaigns batch such siblings into
    one query: `harness.campaign.batching`). The shape's literals were drawn against
    its own knobs; the sibling's rows need not fit them, which is fine."""
    seed = str(seed)
    streams = Streams.from_seed(seed)
    large = (_large(seed, replace(limits, large_share=limits.large_share / SIBLING_LARGE_RATIO))
             and len(shape.case.schemas) == 1 and cheap_at_scale(shape.case.query))
    knobs = _sized(streams, data, limits, joined=len(shape.case.schemas) > 1, large=large)
    if not large and limits.rows is None and not cheap_at_scale(shape.case.query):
        knobs = {name: _at_most(k, COSTLY_MAX_ROWS) for name, k in knobs.items()}
    tables = {s.name: random_table(streams.data, s, knobs[s.name]) for s in shape.case.schemas}
    description = shape.case.description.replace(repr(shape.seed), repr(seed), 1)
    description = description.replace(_SCALE_NOTE, "", 1) + (_SCALE_NOTE if large else "")
    case = replace(shape.case, id=f"generated/{seed}", tables=tables, description=description)
    kind = invalid_kind_of(case)
    if kind is not None and not still_invalid(kind, case.query, case):
        # A data exception (ntile(0)) needs rows, and these tables give the windows none.
        case = replace(case, error=None, tags=tuple(t for t in case.tags if not t.startswith("invalid")),
                       description=f"{case.description} (valid over these rows: no row reaches the windows)")
    return GeneratedCase(seed, case, {s.name: knobs[s.name] for s in shape.case.schemas},
                         shape.swarm, shape.picks, shape.shape, large)


# How a case's description says that its tables are batch-scale.
_SCALE_NOTE = "; batch-scale tables"
_INTERVAL_NOTE = "; an INTERVAL column"


def interval_stream(seed: str, share: float = INTERVAL_SHARE) -> Random | None:
    """The stream that retypes a column of the case of `seed` as INTERVAL, or None
    when its draw says the case has no interval column."""
    rng = Random(f"{seed}/interval")
    return rng if rng.random() < share else None


def with_interval_column(rng: Draws, schema: TableSchema) -> TableSchema:
    """`schema` with one of its value columns (drawn) retyped INTERVAL, renamed
    `iv<position>` when its name was the readable one (an awkward name stays).
    Simpler means the first value column."""
    positions = [i for i, c in enumerate(schema.columns) if c.name != ID]
    i = rng.choice(positions)
    column = schema.columns[i]
    name = column.name
    readable = re.fullmatch(r"[a-z]+([0-9]+)", name)
    if readable and not clashes(f"iv{readable[1]}", {fold(c.name) for c in schema.columns}):
        name = f"iv{readable[1]}"
    retyped = replace(column, name=name, type=T.INTERVAL)
    return replace(schema, columns=(*schema.columns[:i], retyped, *schema.columns[i + 1:]))


def _large(seed: str, limits: Limits) -> bool:
    """The batch-scale draw, unless the table sizes are fixed (benchmarks)."""
    return limits.rows is None and is_large(seed, limits.large_share)


def _sized(streams: Streams, data: str, limits: Limits, joined: bool,
           large: bool = False) -> dict[str, DataKnobs]:
    """The knobs of both tables, drawn in a fixed order, then capped. `large`
    makes the first table batch-scale (from the knobs stream, after the
    others' draws, so a case's other knobs stay as they were); a joined
    table, and a first table that is joined, keep their caps (a batch-scale
    case is never a join: see `generate_sibling` and `draw_case`)."""
    if data not in DATA_PRESETS:
        raise InvalidInput(f"unknown data preset {data!r} (known: {', '.join(DATA_PRESETS)})", "data")
    knobs = {name: DATA_PRESETS[data](streams.knobs) for name in (TABLE, JOINED)}
    if large:
        knobs[TABLE] = large_knobs(streams.knobs, knobs[TABLE])
    if limits.rows is not None:
        knobs = {name: replace(k, rows=limits.rows) for name, k in knobs.items()}
    if joined:
        knobs = {TABLE: _at_most(knobs[TABLE], JOIN_MAX_ROWS), JOINED: _at_most(knobs[JOINED], JOINED_MAX_ROWS)}
    return knobs


def draw_case(seed: str, streams: Streams, steer: Steer | None = None,
              picks: Sequence[int] | None = None, data: str = "default",
              max_rows: int | None = None,
              kinds: Collection[TypeKind] | None = None, limits: Limits = NO_LIMITS,
              large: bool = False, interval: Draws | None = None) -> GeneratedCase:
    """A case drawn from explicit streams (`seed` only names it); `max_rows`
    caps the tables (Hypothesis draws every cell); `kinds` limits the column
    types; `large` makes the first table batch-scale (`_sized`); `interval`
    (a stream of its own) retypes a column of the first table as INTERVAL."""
    schemas = (random_schema(streams.schema, TABLE, kinds=kinds),
               random_schema(streams.schema, JOINED, kinds=kinds))
    if interval is not None:
        schemas = (with_interval_column(interval, schemas[0]), schemas[1])
    knobs = _sized(streams, data, limits, joined=False)
    unscaled_rows = knobs[TABLE].rows
    if large:
        knobs[TABLE] = large_knobs(streams.knobs, knobs[TABLE])
    if max_rows is not None:
        knobs = {name: _at_most(k, max_rows) for name, k in knobs.items()}
    chooser = Chooser(steer, tuple(picks or ()))
    generated = random_query(streams.query, schemas, knobs[TABLE], chooser, window_count=limits.windows)
    if large and not cheap_at_scale(generated.query):
        # Too costly for the reference at scale: the table keeps the row count
        # the knobs had before (its small domain and skew stay, drawn already).
        large = False
        knobs[TABLE] = replace(knobs[TABLE], rows=unscaled_rows)
    if not large and limits.rows is None and not cheap_at_scale(generated.query):
        knobs = {name: _at_most(k, COSTLY_MAX_ROWS) for name, k in knobs.items()}
    if JOINED in generated.tables:
        large = False  # a joined table keeps its cap (`_sized`)
        knobs = {TABLE: _at_most(knobs[TABLE], JOIN_MAX_ROWS), JOINED: _at_most(knobs[JOINED], JOINED_MAX_ROWS)}
    read = tuple(s for s in schemas if s.name in generated.tables)
    tables = {s.name: random_table(streams.data, s, knobs[s.name]) for s in read}
    used = tuple(_referenced_columns(s, generated.query) for s in read)
    tables = {s.name: tables[s.name].select([c.name for c in s.columns]) for s in used}
    case = _case(seed, data, generated, used, tables)
    if interval is not None:
        case = replace(case, description=case.description + _INTERVAL_NOTE)
    if large:
        case = replace(case, description=case.description + _SCALE_NOTE)
    return GeneratedCase(seed, case, {s.name: knobs[s.name] for s in used}, generated.swarm,
                         tuple(chooser.made), generated.shape.value, large)


def _case(seed: str, data: str, generated: GeneratedQuery, schemas: tuple[TableSchema, ...],
          tables: dict[str, pa.Table]) -> Case:
    off = sorted(s.value for s in set(Swarm) - generated.swarm)
    return Case(
        id=f"generated/{seed}",
        description=f"generated from seed {seed!r} ({data} data): {generated.shape.value}; "
                    f"swarm off: {', '.join(off) or 'nothing'}",
        tags=("generated", generated.shape.value),
        schemas=schemas,
        tables=tables,
        sql=write(generated.query),
        query=generated.query,
    )


def _referenced_columns(schema: TableSchema, query: Query) -> TableSchema:
    """The schema without the columns the query never names: a column of a type
    an engine cannot load should not keep it from a query that does not read
    it. (By name, whatever the qualifier: a spare column is harmless.)"""
    names = {node.name for node in walk(query) if isinstance(node, Column)}
    return TableSchema(schema.name, tuple(c for c in schema.columns if c.name == ID or c.name in names))


def _at_most(knobs: DataKnobs, rows: int) -> DataKnobs:
    return replace(knobs, rows=min(knobs.rows, rows))


def generate_cases(campaign_seed: int | str, count: int, start: int = 0,
                   steer: Steer | None = None) -> list[GeneratedCase]:
    """Cases `start`..`start + count - 1` of a campaign seed."""
    return [generate_case(f"{campaign_seed}/{i}", steer) for i in range(start, start + count)]


# -- Hypothesis --------------------------------------------------------------------------


def seeds() -> SearchStrategy[str]:
    """Seed strings "<campaign>/<case>"; shrinks towards "0/0" (a different case,
    not a simpler one)."""
    from hypothesis import strategies as st

    return st.builds("{}/{}".format, st.integers(0, 2**32 - 1), st.integers(0, 10**6))


def generated_cases(steer: Steer | None = None) -> SearchStrategy[GeneratedCase]:
    """`generate_case(seed)` for drawn seeds: replayable by the seed alone."""
    return seeds().map(lambda seed: generate_case(seed, steer))


def drawn_cases(data: str = "default") -> SearchStrategy[GeneratedCase]:
    """Cases that Hypothesis draws through `HypothesisDraws` (one driver for
    all four streams), so a failure shrinks to a simpler case (see each
    generator's "simpler"). Replay by the case itself (its SQL and tables),
    not by a seed."""
    return as_strategy(_drawn_case, data)


def _drawn_case(draws: Draws, data: str) -> GeneratedCase:
    return draw_case("hypothesis", Streams(draws, draws, draws, draws), data=data,
                     max_rows=HYPOTHESIS_MAX_ROWS)
