"""Random rows for a generated schema (see `schemas`).

Plain functions over `Draws` (see `harness.generate.draws`): a seeded
`random.Random` that the caller creates (a table is replayed from its seed),
or a Hypothesis draw (`data_knobs()`, `tables()`, `values()`, which shrink).
`DataKnobs` say what the rows look like; they are drawn per table
(`random_knobs`) so that one run covers empty tables, tables of NULLs, of
ties, of one dominant value, of distinct values, and (rarely) of extremes.

Values are kept small unless the `extremes` knob is on: integers in a small
domain (ties), doubles with at most two decimals and |x| <= 100 (so a sliding
sum that subtracts, as SQLite's does, stays within the comparator's
tolerance; catastrophic cancellation is a by-design difference, not what
these tables hunt), REALs that are exact in 32 bits, decimals with at most two
decimals in the integer digits their type has, strings from a small pool that
still tells binary collation from others ('B' < 'a' < 'b' < 'é'), dates and
timestamps near 2000-01-01 (within 1900-2100).
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, replace
from decimal import Context, Decimal
from typing import TYPE_CHECKING

import pyarrow as pa

from harness.core.model import ColumnDef, TableSchema
from harness.core.types import SqlType, TypeKind, to_arrow
from harness.generate.draws import Draws, as_strategy, chance, exponential, weighted
from harness.generate.schemas import ID

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

MAX_ROWS = 3000
# Rows of the tables a Hypothesis strategy draws, unless told otherwise:
# every cell is a few draws, and Hypothesis caps the draws of one example.
HYPOTHESIS_MAX_ROWS = 20

STRINGS = ("", "a", "b", "B", "ab", "a b", "ba", "é", "z")
# Letters of the strings drawn beyond the pool, when the domain is large.
STRING_LETTERS = "abAB é日'_"
SPECIAL_FLOATS = (math.nan, math.inf, -math.inf, -0.0, 0.0)
# The chance that a cell is special (or extreme) when its knob is on.
SPECIAL_CELLS = 0.25

BASE_DATE = dt.date(2000, 1, 1)
MIN_DATE, MAX_DATE = dt.date(1900, 1, 1), dt.date(2100, 12, 31)
BASE_TIMESTAMP = dt.datetime(2000, 1, 1)
MIN_TIMESTAMP = dt.datetime(1900, 1, 1)
MAX_TIMESTAMP = dt.datetime(2100, 12, 31, 23, 59, 59, 999_999)
_DAY_MICROSECONDS = 86_400 * 10**6
# Days from BASE_DATE past either end of the range (the clamp catches the rest).
_MAX_DAYS = 40_000
# Wide enough for any DECIMAL(38, s) without rounding.
_EXACT = Context(prec=80)


@dataclass(frozen=True)
class DataKnobs:
    """How a table's rows are drawn.

    - `rows`: 0..MAX_ROWS;
    - `null_rate`: the chance that a cell of a nullable column is NULL;
    - `duplicate_rate`: the chance that a cell repeats a value already drawn
      in its column (ties beyond what the small domains give);
    - `domain`: fresh integers come from [-domain, domain] (and the other
      types from a domain of about that size);
    - `special_floats`: NaN, +-inf, -0.0 and 0.0 among the floats;
    - `extremes`: the edges of each type among the values: integer min/max of
      each width, huge and tiny floats, max-precision decimals, the first and
      last dates and timestamps (noisy: engines overflow differently by design);
    - `skew`: the chance that a cell takes its column's dominant value (one
      huge partition beside many tiny ones).

    Simpler means fewer rows, no NULLs, no duplicates, a smaller domain, no
    special floats, no extremes and no skew.
    """

    rows: int
    null_rate: float = 0.0
    duplicate_rate: float = 0.0
    domain: int = 3
    special_floats: bool = False
    extremes: bool = False
    skew: float = 0.0


def random_rows(rng: Draws, max_rows: int = MAX_ROWS) -> int:
    """A row count skewed small: 95% of tables from an exponential of mean 10
    (capped at 40, so ~90% of all tables have < 30 rows), 4% 40-300 rows, 1%
    300-3000 (the reference costs ~0.2 ms per row and window expression).
    Simpler means fewer rows."""
    tier = weighted(rng, (("small", 95), ("medium", 4), ("large", 1)))
    if tier == "small":
        rows = min(40, int(exponential(rng, 10)))
    elif tier == "medium":
        rows = rng.randint(40, 300)
    else:
        rows = rng.randint(300, MAX_ROWS)
    return min(rows, max_rows)


def random_knobs(rng: Draws, *, max_rows: int = MAX_ROWS) -> DataKnobs:
    """Knobs for one table: row counts skewed small (most bugs need few rows);
    NULLs in 2/3 of tables, duplicates in half, special floats in 30%, skew in
    20%, extremes in 10%. Simpler: see DataKnobs."""
    return DataKnobs(
        rows=random_rows(rng, max_rows),
        null_rate=weighted(rng, ((0.0, 4), (0.1, 3), (0.3, 3), (0.6, 2), (1.0, 1))),
        duplicate_rate=weighted(rng, ((0.0, 4), (0.3, 2), (0.6, 2), (0.9, 1))),
        domain=weighted(rng, ((1, 2), (2, 2), (3, 2), (5, 2), (10, 2), (100, 2), (10_000, 1))),
        special_floats=chance(rng, 0.3),
        extremes=chance(rng, 0.1),
        skew=weighted(rng, ((0.0, 8), (0.5, 1), (0.9, 1))),
    )


# Batch-scale tables (`large_knobs`): enough rows to span engine batches
# (DataFusion's 8,192-row batches, several of DuckDB's 2,048-row vectors).
# (What counts as a long partition and a multi-batch input: harness.cases.features.)
LARGE_MIN_ROWS, LARGE_MAX_ROWS = 5_000, 50_000


def large_knobs(rng: Draws, knobs: DataKnobs) -> DataKnobs:
    """`knobs` at batch scale: LARGE_MIN_ROWS..LARGE_MAX_ROWS rows, log-uniform
    (half the tables under ~16,000 rows: the reference's cost grows with the
    rows), and a small domain or a dominant value, so that a few partitions
    are long (hundreds to thousands of rows: a domain of 3 to 30 gives 7 to 61
    values per column; a skew of 0.5 puts half the rows in one). NULLs and
    duplicates as drawn; never extremes (an overflow would end the case)."""
    rows = int(LARGE_MIN_ROWS * (LARGE_MAX_ROWS / LARGE_MIN_ROWS) ** rng.random())
    return replace(knobs, rows=rows, extremes=False,
                   domain=weighted(rng, ((3, 1), (10, 2), (30, 2))),
                   skew=weighted(rng, ((0.0, 2), (0.5, 1))))


def tie_heavy_knobs(rng: Draws, *, max_rows: int = 30) -> DataKnobs:
    """Knobs for tables of ties: 1..max_rows rows, tiny domains, many repeats
    and NULLs (NULL peers), NaN and -0.0 beside 0.0 sometimes, one dominant
    value sometimes; never extremes. Simpler: see DataKnobs."""
    return DataKnobs(
        rows=rng.randint(1, max_rows),
        null_rate=rng.choice((0.1, 0.3, 0.5)),
        duplicate_rate=rng.choice((0.5, 0.7, 0.9)),
        domain=rng.choice((1, 2, 3)),
        special_floats=chance(rng, 0.3),
        skew=weighted(rng, ((0.0, 2), (0.5, 1), (0.9, 1))),
    )


def random_table(rng: Draws, schema: TableSchema, knobs: DataKnobs) -> pa.Table:
    """`knobs.rows` rows for `schema`: ids unique and shuffled (input order is not
    id order), other columns drawn cell by cell. Simpler: see DataKnobs; ids
    shrink towards 1, 2, 3, ... in order."""
    ids = rng.sample(range(1, 3 * knobs.rows + 2), knobs.rows)
    arrays = []
    for column in schema.columns:
        values = ids if column.name == ID else random_column(rng, column, knobs)
        arrays.append(pa.array(values, type=to_arrow(column.type)))
    return pa.Table.from_arrays(arrays, names=[c.name for c in schema.columns])


def random_column(rng: Draws, column: ColumnDef, knobs: DataKnobs) -> list[object]:
    """One column's cells: NULL, the column's dominant value, a repeat, or a
    fresh value, by the knobs. Simpler: see DataKnobs."""
    dominant = random_value(rng, column.type, knobs) if knobs.skew else None
    values: list[object] = []
    drawn: list[object] = []
    for _ in range(knobs.rows):
        if column.nullable and chance(rng, knobs.null_rate):
            values.append(None)
        elif dominant is not None and chance(rng, knobs.skew):
            values.append(dominant)
        elif drawn and chance(rng, knobs.duplicate_rate):
            values.append(rng.choice(drawn))
        else:
            drawn.append(random_value(rng, column.type, knobs))
            values.append(drawn[-1])
    return values


def random_value(rng: Draws, t: SqlType, knobs: DataKnobs) -> object:
    """A fresh non-NULL value of type `t` (the Python value a case holds: see
    `harness.core.model.Literal`); an extreme one sometimes when the knob is on.
    Simpler means closer to zero, the empty string, False or 2000-01-01."""
    if knobs.extremes and chance(rng, SPECIAL_CELLS) and t.kind in _EXTREMES:
        return rng.choice(_EXTREMES[t.kind](t))
    if t.kind not in _FRESH:
        raise ValueError(f"no generator for values of type {t}")
    return _FRESH[t.kind](rng, t, knobs)


# -- fresh values, by type --------------------------------------------------------


def _integer(rng: Draws, t: SqlType, knobs: DataKnobs) -> int:
    bound = min(knobs.domain, integer_range(t)[1])
    return rng.randint(-bound, bound)


def integer_range(t: SqlType) -> tuple[int, int]:
    """The least and greatest values of an integer type."""
    bits = {TypeKind.INT8: 8, TypeKind.INT16: 16, TypeKind.INT32: 32, TypeKind.INT64: 64}
    half = 2 ** (bits[t.kind] - 1)
    return -half, half - 1


def _double(rng: Draws, t: SqlType, knobs: DataKnobs) -> float:
    """A whole number, a half, or a two-decimal value, all with |x| <= 100."""
    if knobs.special_floats and chance(rng, SPECIAL_CELLS):
        return rng.choice(SPECIAL_FLOATS)
    bound = min(knobs.domain, 100)
    scale = rng.choice((1, 2, 100))
    return rng.randint(-bound * scale, bound * scale) / scale


def _real(rng: Draws, t: SqlType, knobs: DataKnobs) -> float:
    """A whole number, a half or a quarter with |x| <= 100: exact in 32 bits."""
    if knobs.special_floats and chance(rng, SPECIAL_CELLS):
        return rng.choice(SPECIAL_FLOATS)
    bound = min(knobs.domain, 100)
    scale = rng.choice((1, 2, 4))
    return rng.randint(-bound * scale, bound * scale) / scale


def _decimal(rng: Draws, t: SqlType, knobs: DataKnobs) -> Decimal:
    """At most two decimals, and an integer part within the domain and the type."""
    assert t.precision is not None and t.scale is not None
    places = min(t.scale, 2)
    whole = min(knobs.domain, 10 ** (t.precision - t.scale) - 1)
    bound = whole * 10**places or 10**places - 1
    units = rng.randint(-bound, bound) * 10 ** (t.scale - places)
    return Decimal(units).scaleb(-t.scale, _EXACT)


def _string(rng: Draws, t: SqlType, knobs: DataKnobs) -> str:
    """From a pool that grows with the domain; beyond it, for large domains,
    short strings of mixed letters."""
    if knobs.domain >= 100 and chance(rng, 0.5):
        return "".join(rng.choice(STRING_LETTERS) for _ in range(rng.randint(1, 6)))
    return rng.choice(STRINGS[: knobs.domain + 1])


def _bool(rng: Draws, t: SqlType, knobs: DataKnobs) -> bool:
    return rng.choice((False, True))


def _date(rng: Draws, t: SqlType, knobs: DataKnobs) -> dt.date:
    """2000-01-01 plus or minus up to `domain` days."""
    bound = min(knobs.domain, _MAX_DAYS)
    days = rng.randint(-bound, bound)
    return min(MAX_DATE, max(MIN_DATE, BASE_DATE + dt.timedelta(days=days)))


def _timestamp(rng: Draws, t: SqlType, knobs: DataKnobs) -> dt.datetime:
    """2000-01-01 plus or minus up to `domain` days, hours or seconds, or days
    and a random time of day to the microsecond."""
    bound = min(knobs.domain, _MAX_DAYS)
    n = rng.randint(-bound, bound)
    unit = rng.choice(("days", "hours", "seconds", "microseconds"))
    if unit == "microseconds":
        step = dt.timedelta(days=n, microseconds=rng.randint(0, _DAY_MICROSECONDS - 1))
    else:
        step = dt.timedelta(**{unit: n})
    return min(MAX_TIMESTAMP, max(MIN_TIMESTAMP, BASE_TIMESTAMP + step))


def _interval(rng: Draws, t: SqlType, knobs: DataKnobs) -> dt.timedelta:
    """A day-time interval: plus or minus up to `domain` days, hours, minutes or
    seconds, or hours and a random number of microseconds below an hour (1 day
    and 24 hours are one value; a small domain gives peers). Simpler means 0."""
    bound = min(knobs.domain, _MAX_DAYS)
    n = rng.randint(-bound, bound)
    unit = rng.choice(("days", "hours", "hours", "minutes", "seconds", "microseconds"))
    if unit == "microseconds":
        return dt.timedelta(hours=n, microseconds=rng.randint(0, 3_600_000_000 - 1))
    return dt.timedelta(**{unit: n})


_FRESH = {
    TypeKind.INT8: _integer,
    TypeKind.INT16: _integer,
    TypeKind.INT32: _integer,
    TypeKind.INT64: _integer,
    TypeKind.FLOAT64: _double,
    TypeKind.FLOAT32: _real,
    TypeKind.DECIMAL: _decimal,
    TypeKind.STRING: _string,
    TypeKind.BOOL: _bool,
    TypeKind.DATE: _date,
    TypeKind.TIMESTAMP: _timestamp,
    TypeKind.INTERVAL: _interval,
}

# -- extreme values, by type ----------------------------------------------------------

DOUBLE_EXTREMES = (
    math.inf, -math.inf, math.nan, -0.0, 1e300, -1e300, 1.7976931348623157e308,
    -1.7976931348623157e308, 5e-324, -5e-324, 1e-300, 2.2250738585072014e-308,
)
# Each exact in 32 bits: the largest REAL, the least normal and subnormal
# ones, and 2^24, above which REALs skip odd integers.
REAL_EXTREMES = (
    math.inf, -math.inf, math.nan, -0.0, 3.4028234663852886e38, -3.4028234663852886e38,
    1.1754943508222875e-38, 1.401298464324817e-45, 16777216.0, -16777216.0,
)
STRING_EXTREMES = ("z" * 300, "\U0001f600", "\ufffd", " ", "a\nb")
DATE_EXTREMES = (MIN_DATE, MAX_DATE, dt.date(2000, 2, 29), dt.date(1970, 1, 1),
                 dt.date(1969, 12, 31))
TIMESTAMP_EXTREMES = (
    MIN_TIMESTAMP, MAX_TIMESTAMP, dt.datetime(1970, 1, 1),
    dt.datetime(1969, 12, 31, 23, 59, 59, 999_999), dt.datetime(2000, 2, 29, 12, 0, 0, 1),
)


def integer_extremes(t: SqlType) -> tuple[int, ...]:
    lo, hi = integer_range(t)
    return lo, hi, lo + 1, hi - 1


def decimal_extremes(t: SqlType) -> tuple[Decimal, ...]:
    """The largest and least values of the type, at full precision, and its
    smallest step."""
    assert t.precision is not None and t.scale is not None
    top = Decimal(10**t.precision - 1).scaleb(-t.scale, _EXACT)
    step = Decimal(1).scaleb(-t.scale, _EXACT)
    # copy_negate, since unary minus rounds to the context's 28 digits.
    return top, top.copy_negate(), step, step.copy_negate()


_EXTREMES = {
    TypeKind.INT8: integer_extremes,
    TypeKind.INT16: integer_extremes,
    TypeKind.INT32: integer_extremes,
    TypeKind.INT64: integer_extremes,
    TypeKind.FLOAT64: lambda t: DOUBLE_EXTREMES,
    TypeKind.FLOAT32: lambda t: REAL_EXTREMES,
    TypeKind.DECIMAL: decimal_extremes,
    TypeKind.STRING: lambda t: STRING_EXTREMES,
    TypeKind.DATE: lambda t: DATE_EXTREMES,
    TypeKind.TIMESTAMP: lambda t: TIMESTAMP_EXTREMES,
}

# -- Hypothesis strategies -------------------------------------------------------------


def data_knobs(*, max_rows: int = HYPOTHESIS_MAX_ROWS) -> SearchStrategy[DataKnobs]:
    """`random_knobs` as a strategy; shrinks as DataKnobs says."""
    return as_strategy(random_knobs, max_rows=max_rows)


def tie_heavy_data_knobs(*, max_rows: int = HYPOTHESIS_MAX_ROWS) -> SearchStrategy[DataKnobs]:
    """`tie_heavy_knobs` as a strategy; shrinks as DataKnobs says."""
    return as_strategy(tie_heavy_knobs, max_rows=max_rows)


def tables(
    schema: TableSchema, knobs: DataKnobs | None = None, *, max_rows: int = HYPOTHESIS_MAX_ROWS
) -> SearchStrategy[pa.Table]:
    """Tables of `schema` drawn under `knobs` (else under drawn knobs of at most
    `max_rows` rows); shrinks as `random_table` says."""
    if knobs is not None:
        return as_strategy(random_table, schema, knobs)
    return as_strategy(_knobs_then_table, schema, max_rows)


def _knobs_then_table(rng: Draws, schema: TableSchema, max_rows: int) -> pa.Table:
    return random_table(rng, schema, random_knobs(rng, max_rows=max_rows))


def values(t: SqlType, knobs: DataKnobs) -> SearchStrategy[object]:
    """`random_value` as a strategy; shrinks as it says."""
    return as_strategy(random_value, t, knobs)
