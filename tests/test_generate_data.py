"""The schema and data generators: seeded and replayable, Hypothesis-drivable,
their ranges and knobs, values that fit their types, awkward names that every
engine loads, and tables that survive a case file and every engine unchanged."""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from random import Random

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from harness.cases.case import Case, load_case
from harness.cases.casefile import save_case
from harness.core.errors import Unsupported
from harness.core.model import (
    Column,
    ColumnDef,
    FuncCall,
    IsNull,
    NullsOrder,
    Select,
    SelectItem,
    SortKey,
    Star,
    TableRef,
    TableSchema,
    WindowExpr,
    WindowSpec,
)
from harness.core.types import SqlType, TypeKind, to_arrow
from harness.generate.data import (
    MAX_ROWS,
    DataKnobs,
    data_knobs,
    random_knobs,
    random_table,
    random_value,
    tables,
    tie_heavy_knobs,
    values,
)
from harness.generate.names import AWKWARD_NAMES, clashes, fold
from harness.generate.schemas import COLUMN_TYPES, ID, random_schema, schemas, value_columns
from harness.sql import parse, write

TYPES = sorted({t for t, _, _ in COLUMN_TYPES}, key=str)
# Every knob on at once: each value generator takes all of its branches.
WILD = DataKnobs(rows=200, null_rate=0.2, duplicate_rate=0.2, domain=100,
                 special_floats=True, extremes=True, skew=0.3)


def generated(seed: int) -> tuple[TableSchema, DataKnobs, pa.Table]:
    """A schema, knobs and table the way `generate_case` draws them."""
    schema = random_schema(Random(f"{seed}/schema"))
    knobs = random_knobs(Random(f"{seed}/knobs"))
    return schema, knobs, random_table(Random(f"{seed}/data"), schema, knobs)


def digest(seeds: range) -> str:
    """A fingerprint of the generated schemas and tables (repr is exact)."""
    h = hashlib.sha256()
    for seed in seeds:
        schema, knobs, table = generated(seed)
        h.update(repr((schema, knobs, table.schema, table.to_pylist())).encode())
    return h.hexdigest()


def same_cell(a: object, b: object) -> bool:
    """Equal and of the same type; NaN equals NaN; -0.0 is not 0.0."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return type(a) is type(b) and a == b


def same_rows(a: list[dict], b: list[dict]) -> bool:
    return len(a) == len(b) and all(
        list(x) == list(y) and all(same_cell(x[k], y[k]) for k in x) for x, y in zip(a, b, strict=True))


def one_type_schema(t: SqlType, name: str = "v") -> TableSchema:
    return TableSchema("t", (ColumnDef(ID, SqlType(TypeKind.INT64), nullable=False), ColumnDef(name, t)))


# -- determinism ----------------------------------------------------------------------


def test_same_seed_gives_the_same_schema_knobs_and_table() -> None:
    for seed in range(50):
        assert repr(generated(seed)[:2]) == repr(generated(seed)[:2])
        assert same_rows(generated(seed)[2].to_pylist(), generated(seed)[2].to_pylist())
    assert digest(range(50)) == digest(range(50))
    assert digest(range(50)) != digest(range(1, 51))


def test_same_seed_gives_the_same_table_in_a_fresh_process() -> None:
    """String seeds are hashed with SHA-512, not Python's salted hash, and no
    generator iterates a set: another process, another hash seed, same tables."""
    code = "from tests.test_generate_data import digest; print(digest(range(200)))"
    # tests/ on the path too: the test module imports its sibling `hypothesis_profiles`.
    tests = str(Path(__file__).parent)
    env = {**os.environ, "PYTHONHASHSEED": "12345",
           "PYTHONPATH": os.pathsep.join(filter(None, [tests, os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=env, cwd=Path(__file__).parent.parent)
    assert out.stdout.strip() == digest(range(200))


# -- ranges -------------------------------------------------------------------------------


def test_schemas_have_an_id_and_one_to_seven_value_columns_of_every_type() -> None:
    widths: Counter[int] = Counter()
    types: set[SqlType] = set()
    nullable: set[bool] = set()
    awkward = 0
    for seed in range(3000):
        schema = random_schema(Random(seed))
        assert schema.columns[0] == ColumnDef(ID, SqlType(TypeKind.INT64), nullable=False)
        widths[len(schema.columns)] += 1
        types |= {c.type for c in value_columns(schema)}
        nullable |= {c.nullable for c in value_columns(schema)}
        awkward += any(c.name in AWKWARD_NAMES for c in schema.columns)
    assert set(widths) == set(range(2, 9))
    assert widths[2] > widths[8]
    assert types == set(TYPES)
    assert nullable == {True, False}
    assert 0.03 < awkward / 3000 < 0.2


def test_kinds_restrict_the_value_types() -> None:
    allowed = {TypeKind.INT64, TypeKind.STRING}
    for seed in range(200):
        assert {c.type.kind for c in random_schema(Random(seed), kinds=allowed).columns} <= allowed
    with pytest.raises(ValueError, match="no column type"):
        random_schema(Random(1), kinds={TypeKind.INTERVAL})


def test_row_counts_are_skewed_small_with_a_few_large_tables() -> None:
    counts = [random_knobs(Random(f"{seed}/knobs")).rows for seed in range(5000)]
    small = sum(n < 30 for n in counts) / len(counts)
    large = sum(n >= 300 for n in counts) / len(counts)
    assert 0.85 < small < 0.95, small
    assert 0.003 < large < 0.03, large
    assert min(counts) == 0 and 2000 <= max(counts) <= MAX_ROWS
    assert max(random_knobs(Random(s), max_rows=25).rows for s in range(2000)) == 25


# -- knobs ----------------------------------------------------------------------------------


def cells(knobs: DataKnobs, t: SqlType, nullable: bool = True, seeds: int = 20) -> list[list[object]]:
    """The value columns of type `t` drawn under `knobs`, one per seed."""
    schema = TableSchema("t", (ColumnDef(ID, SqlType(TypeKind.INT64), nullable=False),
                               ColumnDef("v", t, nullable)))
    return [random_table(Random(s), schema, knobs).column("v").to_pylist() for s in range(seeds)]


def null_share(columns: list[list[object]]) -> float:
    flat = [v for c in columns for v in c]
    return sum(v is None for v in flat) / len(flat)


def repeat_share(columns: list[list[object]]) -> float:
    """The share of non-NULL cells that repeat an earlier cell of their column."""
    repeats = total = 0
    for column in columns:
        present = [v for v in column if v is not None]
        repeats += len(present) - len(set(present))
        total += len(present)
    return repeats / total


def top_share(columns: list[list[object]]) -> float:
    """The mean share of its column that the most common value takes."""
    return sum(Counter(c).most_common(1)[0][1] / len(c) for c in columns) / len(columns)


def has(pred: Callable[[object], bool]) -> Callable[[list[list[object]]], bool]:
    return lambda columns: any(v is not None and pred(v) for c in columns for v in c)


BASE = DataKnobs(rows=60, domain=10_000)
INT = SqlType(TypeKind.INT64)
DOUBLE = SqlType(TypeKind.FLOAT64)
# knob: (type, knobs off, knobs on, measure, whether on > off)
KNOB_EFFECTS = {
    "rows": (INT, BASE, dataclasses.replace(BASE, rows=3), lambda cs: len(cs[0]), False),
    "null_rate": (INT, BASE, dataclasses.replace(BASE, null_rate=0.5), null_share, True),
    "duplicate_rate": (INT, BASE, dataclasses.replace(BASE, duplicate_rate=0.6), repeat_share, True),
    "domain": (INT, BASE, dataclasses.replace(BASE, domain=2), repeat_share, True),
    "special_floats": (DOUBLE, BASE, dataclasses.replace(BASE, special_floats=True),
                       has(lambda v: not math.isfinite(v)), True),
    "extremes": (INT, BASE, dataclasses.replace(BASE, extremes=True),
                 has(lambda v: abs(v) > 2**62), True),
    "skew": (INT, BASE, dataclasses.replace(BASE, skew=0.9), top_share, True),
}


def test_every_knob_is_tested() -> None:
    assert set(KNOB_EFFECTS) == {f.name for f in dataclasses.fields(DataKnobs)}


@pytest.mark.parametrize("knob", KNOB_EFFECTS)
def test_every_knob_has_an_effect(knob: str) -> None:
    t, off, on, measure, grows = KNOB_EFFECTS[knob]
    before, after = measure(cells(off, t)), measure(cells(on, t))
    assert (after > before) if grows else (after < before), (before, after)


def test_the_default_knobs_make_ties() -> None:
    assert repeat_share(cells(DataKnobs(rows=30), INT)) > 0.5


def test_skew_makes_one_dominant_value_in_every_type() -> None:
    skewed = dataclasses.replace(BASE, skew=0.9)
    for t in TYPES:
        if t.kind is not TypeKind.BOOL:
            assert top_share(cells(skewed, t, nullable=False)) > 0.8, t


def test_extremes_reach_the_edges_of_every_type() -> None:
    edges = {
        TypeKind.INT8: 127, TypeKind.INT16: -(2**15), TypeKind.INT32: 2**31 - 1,
        TypeKind.INT64: -(2**63), TypeKind.FLOAT64: 5e-324, TypeKind.FLOAT32: 3.4028234663852886e38,
        TypeKind.STRING: "\U0001f600",
    }
    on = dataclasses.replace(BASE, rows=200, extremes=True)
    for t in TYPES:
        flat = {v for c in cells(on, t, seeds=5) for v in c}
        if t.kind in edges:
            assert edges[t.kind] in flat, t
        if t.kind is TypeKind.DECIMAL:
            assert any(v is not None and len(v.as_tuple().digits) == t.precision for v in flat), t


def test_tie_heavy_knobs_make_ties_and_nulls() -> None:
    knobs = [tie_heavy_knobs(Random(seed)) for seed in range(500)]
    assert all(1 <= k.rows <= 30 and k.domain <= 3 and k.null_rate > 0 and not k.extremes
               for k in knobs)
    columns = [random_table(Random(i), one_type_schema(INT), k).column("v").to_pylist()
               for i, k in enumerate(knobs)]
    assert repeat_share(columns) > 0.7 and null_share(columns) > 0.1


# -- values fit their types -----------------------------------------------------------------


@pytest.mark.parametrize("t", TYPES, ids=str)
def test_values_fit_their_types(t: SqlType) -> None:
    """Arrow takes every value as it is: no overflow, no rounding of a REAL or
    a decimal; decimals have exactly their type's scale."""
    for knobs in (WILD, DataKnobs(rows=100), dataclasses.replace(WILD, domain=1)):
        for seed in range(10):
            rng = Random(seed)
            drawn = [random_value(rng, t, knobs) for _ in range(200)]
            back = pa.array(drawn, type=to_arrow(t)).to_pylist()
            assert all(same_cell(a, b) for a, b in zip(drawn, back, strict=True)), t
            if t.kind is TypeKind.DECIMAL:
                for d in drawn:
                    sign, digits, exponent = d.as_tuple()  # type: ignore[union-attr]
                    assert exponent == -t.scale and len(digits) <= t.precision, d


def test_dates_and_timestamps_stay_within_1900_and_2100() -> None:
    for t in TYPES:
        if t.kind in (TypeKind.DATE, TypeKind.TIMESTAMP):
            flat = [v for c in cells(dataclasses.replace(WILD, domain=10**6), t) for v in c if v]
            assert all(1900 <= v.year <= 2100 for v in flat)
            if t.kind is TypeKind.TIMESTAMP:
                assert any(v.microsecond % 1000 for v in flat)


# -- names ------------------------------------------------------------------------------------


def test_awkward_names_are_distinct_however_case_is_folded() -> None:
    for key in (fold, str.lower, str.upper):
        keys = [key(n) for n in AWKWARD_NAMES]
        assert len(set(keys)) == len(keys)
    assert not any(clashes(n, set()) for n in AWKWARD_NAMES)
    assert clashes("ID", set()) and clashes("W12", set()) and clashes("Mixed", {"mixed"})


def test_awkward_schemas_have_names_distinct_case_insensitively() -> None:
    seen: set[str] = set()
    for seed in range(500):
        names = [c.name for c in random_schema(Random(seed), awkward=True).columns]
        assert len({fold(n) for n in names}) == len(names)
        seen |= set(names)
    assert set(AWKWARD_NAMES) <= seen
    assert not any(n in AWKWARD_NAMES for seed in range(300)
                   for n in (c.name for c in random_schema(Random(seed), awkward=False).columns))


def awkward_query(names: list[str]) -> Select:
    """Each name as a select item, a PARTITION BY and ORDER BY key, an aggregate
    argument and a WHERE operand."""
    items = [SelectItem(Column(ID))]
    for i, n in enumerate(names):
        spec = WindowSpec(partition_by=(Column(n),), order_by=(SortKey(Column(n), nulls=NullsOrder.LAST),))
        items += [SelectItem(Column(n)), SelectItem(WindowExpr(FuncCall("count", (Column(n),)), spec), f"w{i + 1}")]
    return Select(tuple(items), TableRef("t"), where=IsNull(Column(names[0]), negated=True),
                  order_by=(SortKey(Column(ID)),))


def awkward_table() -> pa.Table:
    data = {ID: pa.array([1, 2, 3], pa.int64())}
    data |= {n: pa.array([5, None, 5], pa.int64()) for n in AWKWARD_NAMES}
    return pa.table(data)


@pytest.mark.parametrize("engine_name", ["reference", "duckdb", "datafusion", "sqlite"])
def test_awkward_names_load_and_answer_on_every_engine(engines, engine_name: str) -> None:
    engine = engines.get(engine_name)
    names = list(AWKWARD_NAMES)
    out = engine.run({"t": awkward_table()}, write(awkward_query(names), engine.dialect))
    assert out.column_names[1::2] == names
    # Rows 1 and 3 pass the WHERE; each value is 5, in a partition of two.
    assert [list(row.values()) for row in out.to_pylist()] == [[i] + [5, 2] * len(names) for i in (1, 3)]


# -- round trips ---------------------------------------------------------------------------


def a_case(table: pa.Table, schema: TableSchema) -> Case:
    sql = "SELECT id FROM t ORDER BY id ASC"
    return Case(id="g", description="generated", tags=("generated",), schemas=(schema,),
                tables={"t": table}, sql=sql, query=parse(sql), finding={"seed": 0})


def round_trips(table: pa.Table, schema: TableSchema, path: Path) -> bool:
    loaded = load_case(save_case(a_case(table, schema), path)).tables["t"]
    return loaded.schema == table.schema and same_rows(loaded.to_pylist(), table.to_pylist())


# Decimals of more significant digits than Python's default context (28) keeps.
NARROW_DECIMALS = [t for t in TYPES if t.kind is TypeKind.DECIMAL and t.precision <= 28]
WIDE_DECIMALS = [t for t in TYPES if t.kind is TypeKind.DECIMAL and t.precision > 28]


def test_a_case_file_keeps_a_generated_table_exactly(tmp_path: Path) -> None:
    """Findings are stored as case files: every type, extremes and awkward names
    must come back cell for cell (NaN, -0.0, infinities, microseconds)."""
    kinds = {t.kind for t in TYPES} - {TypeKind.DECIMAL}
    for seed in range(60):
        rng = Random(seed)
        schema = random_schema(rng, kinds=kinds, awkward=seed % 2 == 0)
        table = random_table(rng, schema, dataclasses.replace(WILD, rows=30))
        assert round_trips(table, schema, tmp_path / f"{seed}.yaml")
    for t in [t for t in TYPES if t.kind is not TypeKind.DECIMAL] + NARROW_DECIMALS:
        schema = one_type_schema(t)
        assert round_trips(random_table(Random(1), schema, WILD), schema, tmp_path / "one.yaml"), t


@pytest.mark.parametrize("t", WIDE_DECIMALS, ids=str)
def test_a_case_file_keeps_38_digit_decimals(tmp_path: Path, t: SqlType) -> None:
    schema = one_type_schema(t)
    assert round_trips(random_table(Random(1), schema, WILD), schema, tmp_path / "one.yaml")


SELECT_ALL = Select((SelectItem(Star()),), TableRef("t"), order_by=(SortKey(Column(ID)),))


@pytest.mark.parametrize("engine_name", ["reference", "duckdb", "datafusion", "sqlite"])
@pytest.mark.parametrize("t", TYPES, ids=str)
def test_a_table_of_each_type_answers_select_star_unchanged(engines, engine_name: str, t: SqlType) -> None:
    """Every engine loads a generated column of each type, extremes included,
    and gives it back unchanged; SQLite refuses what it cannot hold."""
    engine = engines.get(engine_name)
    for knobs in (WILD, dataclasses.replace(WILD, special_floats=False, extremes=False)):
        table = random_table(Random(7), one_type_schema(t), knobs)
        expected = sorted(table.to_pylist(), key=lambda r: r[ID])
        try:
            out = engine.run({"t": table}, write(SELECT_ALL, engine.dialect))
        except Unsupported:
            assert engine_name == "sqlite"
            continue
        assert same_rows(out.to_pylist(), expected), (engine_name, t, knobs)


# -- Hypothesis strategies --------------------------------------------------------------------

FAST = settings(max_examples=examples(60), deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FAST
@given(schemas())
def test_schema_strategy_draws_valid_schemas(schema: TableSchema) -> None:
    assert schema.columns[0].name == ID and 2 <= len(schema.columns) <= 8
    assert len({fold(c.name) for c in schema.columns}) == len(schema.columns)


@FAST
@given(st.data())
def test_table_strategy_draws_tables_of_the_schema(data: st.DataObject) -> None:
    schema = data.draw(schemas(awkward=True))
    knobs = data.draw(data_knobs(max_rows=15))
    table = data.draw(tables(schema, knobs))
    assert table.num_rows == knobs.rows <= 15
    assert table.schema == pa.schema([(c.name, to_arrow(c.type)) for c in schema.columns])
    ids = table.column(ID).to_pylist()
    assert len(set(ids)) == len(ids) and None not in ids
    assert data.draw(tables(schema)).num_rows <= 20


@FAST
@given(st.data())
def test_value_strategy_draws_values_of_the_type(data: st.DataObject) -> None:
    t = data.draw(st.sampled_from(TYPES))
    value = data.draw(values(t, WILD))
    assert pa.array([value], type=to_arrow(t)).to_pylist()[0] is not None


def test_strategies_shrink_to_the_simplest_form() -> None:
    quiet = settings(database=None, max_examples=300)
    wide = find(schemas(), lambda s: len(s.columns) >= 4, settings=quiet)
    assert [c.name for c in wide.columns] == ["id", "k1", "k2", "k3"]
    assert all(c.nullable for c in value_columns(wide))
    knobs = find(data_knobs(), lambda k: k.rows >= 3, settings=quiet)
    assert knobs == DataKnobs(rows=3, domain=1)
    table = find(tables(one_type_schema(INT), DataKnobs(rows=3)), lambda t: True, settings=quiet)
    assert table.to_pylist() == [{ID: 1, "v": 0}, {ID: 2, "v": 0}, {ID: 3, "v": 0}]
