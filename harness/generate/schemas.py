"""Random table schemas for generated, runnable cases.

Plain functions over `Draws` (see `harness.generate.draws`): a seeded
`random.Random` that the caller creates (the same seed gives the same schema
in any process, so a case is replayed from its seed alone), or a Hypothesis
draw (`schemas()`, which shrinks).

Every schema has a unique, non-NULL BIGINT `id` (the top-level ORDER BY key,
so the row order of every answer is fixed) and 1-7 value columns of the types
the fuzzing targets. A readable column name says its type (`k` BIGINT, `i`
INTEGER, `si` SMALLINT, `ti` TINYINT, `f` DOUBLE, `r` REAL, `d` DECIMAL, `s`
VARCHAR, `b` BOOLEAN, `dt` DATE, `ts` TIMESTAMP, then the column's position),
which keeps failing queries readable; some schemas (a swarm knob) use awkward
names instead (see `harness.generate.names`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from harness.core import types as T
from harness.core.model import ColumnDef, TableSchema
from harness.core.types import SqlType, TypeKind
from harness.generate.draws import Draws, as_strategy, chance, weighted
from harness.generate.names import AWKWARD_NAMES, clashes, fold

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

TABLE = "t"
ID = "id"

# The value column types, with their name prefix and weight, simplest first.
# Integers come most often: small-domain integer keys make ties and NULL
# peers, the heart of window semantics. DECIMAL comes in several shapes,
# up to the widest precision, 38, and scale = precision (|x| < 1).
COLUMN_TYPES: tuple[tuple[SqlType, str, int], ...] = (
    (T.INT64, "k", 8),
    (T.FLOAT64, "f", 5),
    (T.STRING, "s", 4),
    (T.decimal(10, 2), "d", 3),
    (T.INT32, "i", 2),
    (T.INT16, "si", 1),
    (T.INT8, "ti", 2),
    (T.FLOAT32, "r", 2),
    (T.BOOL, "b", 2),
    (T.DATE, "dt", 2),
    (T.TIMESTAMP, "ts", 2),
    (T.decimal(5, 0), "d", 1),
    (T.decimal(18, 4), "d", 1),
    (T.decimal(38, 0), "d", 1),
    (T.decimal(38, 10), "d", 1),
    (T.decimal(38, 38), "d", 1),
    (T.decimal(3, 3), "d", 1),
)
MAX_VALUE_COLUMNS = 7
# How many value columns, by weight: most schemas are narrow.
_WIDTHS = ((1, 10), (2, 10), (3, 8), (4, 5), (5, 3), (6, 2), (7, 2))
# The share of schemas with awkward names, and of their columns that get one.
AWKWARD_SCHEMAS = 0.15
AWKWARD_COLUMNS = 0.6
# The share of value columns declared NOT NULL.
NOT_NULL_COLUMNS = 0.2


def random_schema(
    rng: Draws,
    name: str = TABLE,
    *,
    kinds: Collection[TypeKind] | None = None,
    awkward: bool | None = None,
) -> TableSchema:
    """`id BIGINT NOT NULL` and 1-7 value columns of random types.

    `kinds` restricts the value types (e.g. to what a dialect can hold);
    `awkward` forces awkward names on or off (None: on in AWKWARD_SCHEMAS of
    schemas). Simpler means fewer value columns, BIGINT before the other
    types, nullable columns, and readable names.
    """
    options = _type_options(kinds)
    if awkward is None:
        awkward = chance(rng, AWKWARD_SCHEMAS)
    columns = [ColumnDef(ID, T.INT64, nullable=False)]
    taken = {fold(ID)}
    for position in range(1, weighted(rng, _WIDTHS) + 1):
        t, prefix = weighted(rng, options)
        column_name = _column_name(rng, f"{prefix}{position}", awkward, taken)
        taken.add(fold(column_name))
        columns.append(ColumnDef(column_name, t, nullable=not chance(rng, NOT_NULL_COLUMNS)))
    return TableSchema(name, tuple(columns))


def _type_options(kinds: Collection[TypeKind] | None) -> list[tuple[tuple[SqlType, str], int]]:
    options = [((t, prefix), w) for t, prefix, w in COLUMN_TYPES
               if kinds is None or t.kind in kinds]
    if not options:
        raise ValueError(f"no column type of the kinds {sorted(k.value for k in kinds or ())}")
    return options


def _column_name(rng: Draws, readable: str, awkward: bool, taken: set[str]) -> str:
    """The readable name, or (in an awkward schema, often) an awkward one that
    folds unlike every name taken."""
    if not (awkward and chance(rng, AWKWARD_COLUMNS)):
        return readable
    return rng.choice([n for n in AWKWARD_NAMES if not clashes(n, taken)])


def schemas(
    name: str = TABLE,
    *,
    kinds: Collection[TypeKind] | None = None,
    awkward: bool | None = None,
) -> SearchStrategy[TableSchema]:
    """`random_schema` as a Hypothesis strategy; shrinks as `random_schema` says."""
    return as_strategy(random_schema, name, kinds=kinds, awkward=awkward)


def value_columns(schema: TableSchema) -> tuple[ColumnDef, ...]:
    """The columns other than `id`."""
    return tuple(c for c in schema.columns if c.name != ID)
