"""Random rows for a generated schema (see `schemas`).

Plain functions over a `random.Random` that the caller creates and seeds, so a
table is replayed from its seed. `DataKnobs` say what the rows look like; they
are drawn per table (`random_knobs`) so that one run covers empty tables,
tables of NULLs, tables of ties and tables of distinct values.

Values are kept small: integers in a small domain (ties), doubles with at most
two decimals and |x| <= 100 (so a sliding sum that subtracts, as SQLite's
does, stays within the comparator's tolerance; catastrophic cancellation is a
known by-design difference, not what these tables hunt), decimals of
DECIMAL(10,2), strings from a small pool that still tells binary collation
from others ('B' < 'a' < 'b' < 'é').
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from random import Random

import pyarrow as pa

from harness.generate.schemas import ID
from harness.model import ColumnDef, TableSchema
from harness.types import SqlType, TypeKind, to_arrow

MAX_ROWS = 40
STRINGS = ("", "a", "b", "B", "ab", "a b", "ba", "é", "z")
SPECIAL_FLOATS = (math.nan, math.inf, -math.inf, -0.0, 0.0)


@dataclass(frozen=True)
class DataKnobs:
    """How a table's rows are drawn.

    - `rows`: 0..MAX_ROWS;
    - `null_rate`: the chance that a cell of a nullable column is NULL;
    - `duplicate_rate`: the chance that a cell repeats a value already drawn
      in its column (ties beyond what the small domains give);
    - `domain`: fresh integers come from [-domain, domain] (decimals and
      doubles from a domain of the same size);
    - `special_floats`: NaN, +-inf, -0.0 and 0.0 among the doubles.

    Simpler means fewer rows, no NULLs, no duplicates, a smaller domain and no
    special floats.
    """

    rows: int
    null_rate: float = 0.0
    duplicate_rate: float = 0.0
    domain: int = 3
    special_floats: bool = False


def random_knobs(rng: Random) -> DataKnobs:
    """Knobs for one table: row counts are skewed small (most bugs need few
    rows), and each of NULLs, duplicates and special floats is on about half the
    time. Simpler: see DataKnobs."""
    return DataKnobs(
        rows=min(MAX_ROWS, int(rng.expovariate(1 / 10))),
        null_rate=rng.choice((0.0, 0.1, 0.3, 0.6)),
        duplicate_rate=rng.choice((0.0, 0.0, 0.3, 0.6)),
        domain=rng.choice((1, 2, 3, 5, 10, 100)),
        special_floats=rng.random() < 0.3,
    )


def random_table(rng: Random, schema: TableSchema, knobs: DataKnobs) -> pa.Table:
    """`knobs.rows` rows for `schema`: ids unique and shuffled (input order is not
    id order), other columns drawn cell by cell. Simpler: see DataKnobs."""
    ids = rng.sample(range(1, 3 * knobs.rows + 2), knobs.rows)
    arrays = []
    for column in schema.columns:
        values = ids if column.name == ID else random_column(rng, column, knobs)
        arrays.append(pa.array(values, type=to_arrow(column.type)))
    return pa.Table.from_arrays(arrays, names=[c.name for c in schema.columns])


def random_column(rng: Random, column: ColumnDef, knobs: DataKnobs) -> list[object]:
    """One column's cells; NULL and repeats by the knobs, else a fresh value.
    Simpler: see DataKnobs."""
    values: list[object] = []
    for _ in range(knobs.rows):
        if column.nullable and rng.random() < knobs.null_rate:
            values.append(None)
        elif values and rng.random() < knobs.duplicate_rate:
            values.append(rng.choice(values))
        else:
            values.append(random_value(rng, column.type, knobs))
    return values


def random_value(rng: Random, t: SqlType, knobs: DataKnobs) -> object:
    """A fresh non-NULL value of type `t`; simpler means closer to zero (or to
    the empty string)."""
    if t.is_integer:
        return rng.randint(-knobs.domain, knobs.domain)
    if t.kind is TypeKind.DECIMAL:
        return Decimal(rng.randint(-100 * knobs.domain, 100 * knobs.domain)).scaleb(-2)
    if t.is_float:
        return random_float(rng, knobs)
    if t.kind is TypeKind.STRING:
        return rng.choice(STRINGS)
    raise ValueError(f"no generator for values of type {t}")


def random_float(rng: Random, knobs: DataKnobs) -> float:
    """A whole number, a half, or a two-decimal value, all with |x| <= 100; a
    special float sometimes when the knob is on."""
    if knobs.special_floats and rng.random() < 0.25:
        return rng.choice(SPECIAL_FLOATS)
    bound = min(knobs.domain, 100)
    shape = rng.randrange(3)
    if shape == 0:
        return float(rng.randint(-bound, bound))
    if shape == 1:
        return rng.randint(-2 * bound, 2 * bound) / 2
    return rng.randint(-100 * bound, 100 * bound) / 100
