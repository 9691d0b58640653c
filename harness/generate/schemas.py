"""Random table schemas for generated, runnable cases.

Plain functions over a `random.Random` that the caller creates and seeds: the
same seed gives the same schema, in any process, so a case is replayed from
its seed alone. (Hypothesis strategies drawn with `.example()` cannot be
replayed that way; `model_strategies` is for SQL-level property tests.)

Every schema has a unique, non-NULL BIGINT `id` (the top-level ORDER BY key,
so the row order of every answer is fixed) and 1-4 value columns of the types
the fuzzing targets. A column's name says its type (`k` integer key, `f`
double, `d` decimal, `s` string), which keeps failing queries readable.
"""

from __future__ import annotations

from random import Random

from harness import types as T
from harness.model import ColumnDef, TableSchema
from harness.types import SqlType

TABLE = "t"
ID = "id"

# The value column types, with their name prefix and how often each is drawn.
# Integers come most often: small-domain integer keys make ties and NULL
# peers, the heart of window semantics.
COLUMN_TYPES: tuple[tuple[SqlType, str, int], ...] = (
    (T.INT64, "k", 4),
    (T.FLOAT64, "f", 3),
    (T.STRING, "s", 2),
    (T.decimal(10, 2), "d", 2),
)
MAX_VALUE_COLUMNS = 4


def random_schema(rng: Random, name: str = TABLE) -> TableSchema:
    """`id BIGINT NOT NULL` and 1-4 nullable value columns of random types.

    Simpler means fewer value columns, and integer columns rather than others.
    """
    columns = [ColumnDef(ID, T.INT64, nullable=False)]
    weights = [w for _, _, w in COLUMN_TYPES]
    for i in range(1, rng.randint(1, MAX_VALUE_COLUMNS) + 1):
        t, prefix, _ = rng.choices(COLUMN_TYPES, weights)[0]
        columns.append(ColumnDef(f"{prefix}{i}", t))
    return TableSchema(name, tuple(columns))


def value_columns(schema: TableSchema) -> tuple[ColumnDef, ...]:
    """The columns other than `id`."""
    return tuple(c for c in schema.columns if c.name != ID)
