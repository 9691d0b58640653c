"""Case files: load, validate and represent a conformance case.

The format is documented in cases/README.md. Every error names the file and
the field, so a user can fix a malformed case without reading this code.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Context, Decimal, InvalidOperation, localcontext
from pathlib import Path

import pyarrow as pa
import yaml

from harness.core.errors import InvalidCase, InvalidInput
from harness.core.model import ColumnDef, Query, TableSchema
from harness.core.types import SqlType, TypeKind, parse_type_name, to_arrow

CASE_SUFFIXES = (".yaml", ".yml")
_KNOWN_FIELDS = {
    "description", "tags", "tables", "sql", "expected", "error", "profile", "id", "finding",
}


@dataclass(frozen=True)
class Expected:
    columns: tuple[str, ...]
    rows: tuple[tuple[object, ...], ...]


@dataclass(frozen=True, eq=False)
class Case:
    id: str
    description: str
    tags: tuple[str, ...]
    schemas: tuple[TableSchema, ...]
    tables: dict[str, pa.Table]
    sql: str
    query: Query
    expected: Expected | None = None
    # Why the query is invalid by definition (under the case's profile), for
    # cases that expect an error instead of rows.
    error: str | None = None
    profile: str | None = None
    path: Path | None = field(default=None, compare=False)
    # Where a generated case came from (seeds, versions, each engine's SQL and
    # answer): a record for people, never read by a verdict. A case with one
    # may omit `expected`: the reference is then the oracle.
    finding: dict | None = field(default=None, compare=False)


def discover(paths: Iterable[str | Path]) -> list[Path]:
    """Case files under the given files and directories, sorted, without duplicates."""
    found: set[Path] = set()
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found.update(f for f in p.rglob("*") if f.suffix in CASE_SUFFIXES and f.is_file())
        elif p.is_file():
            found.add(p)
        else:
            raise InvalidInput(f"no such case file or directory: {p}")
    return sorted(found)


def case_id(path: Path, roots: Iterable[Path]) -> str:
    """The path under the nearest enclosing `cases` folder, else under the given
    root, without its suffix: the same case has the same id however it is run."""
    resolved = path.resolve()
    corpus = next((p for p in resolved.parents if p.name == "cases"), None)
    if corpus is not None:
        return resolved.relative_to(corpus).with_suffix("").as_posix()
    for root in roots:
        root = root.resolve()
        base = root if root.is_dir() else root.parent
        if resolved.is_relative_to(base):
            return resolved.relative_to(base).with_suffix("").as_posix()
    return path.stem


# libyaml's safe loader when PyYAML was built with it (the same tags, ten times faster):
# a finding's case file can hold thousands of rows.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_case(path: Path, case_id_: str | None = None) -> Case:
    """Read and validate one case file."""
    where = str(path)
    try:
        doc = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    except yaml.YAMLError as e:
        raise InvalidCase(f"not valid YAML: {e}", where) from None
    except OSError as e:
        raise InvalidCase(f"cannot read: {e.strerror}", where) from None
    return case_from_doc(doc, path, case_id_)


def case_from_doc(doc: object, path: Path, case_id_: str | None = None) -> Case:
    """Validate a case file's document, already read from `path`, into a Case."""
    where = str(path)
    if not isinstance(doc, dict):
        raise InvalidCase("a case file must be a YAML mapping", where)
    unknown = set(doc) - _KNOWN_FIELDS
    if unknown:
        raise InvalidCase(f"unknown field(s) {sorted(unknown)}", where)
    return _build_case(doc, where, path, case_id_ or str(doc.get("id") or path.stem))


def _build_case(doc: dict, where: str, path: Path, cid: str) -> Case:
    from harness.sql import parse

    schemas, tables = _load_tables(_require(doc, "tables", dict, where), where)
    sql = _require(doc, "sql", str, where)
    try:
        # A case that expects an error may hold a frame the syntax rules forbid.
        query = parse(sql, keep_invalid=doc.get("error") is not None)
    except InvalidInput as e:
        raise InvalidCase(str(e), f"{where}: sql") from None
    expected = _load_expected(doc.get("expected"), where)
    error = doc.get("error")
    if error is not None and (not isinstance(error, str) or expected is not None):
        raise InvalidCase("must be a string saying why the query fails, without `expected`", f"{where}: error")
    finding = doc.get("finding")
    if finding is not None and not isinstance(finding, dict):
        raise InvalidCase("must be a mapping (the record of a generated case)", f"{where}: finding")
    if error is None and expected is None and finding is None:
        raise InvalidCase("missing (or give `error` for a query that must fail)", f"{where}: expected")
    tags = doc.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise InvalidCase("must be a list of strings", f"{where}: tags")
    return Case(
        id=cid,
        description=_require(doc, "description", str, where),
        tags=tuple(tags),
        schemas=schemas,
        tables=tables,
        sql=sql,
        query=query,
        expected=expected,
        error=error,
        profile=_profile_name(doc.get("profile"), where),
        path=path,
        finding=finding,
    )


def _profile_name(raw: object, where: str) -> str | None:
    if raw is None:
        return None
    from harness.engines.registry import engine_names

    known = ["standard", *engine_names()]
    if raw not in known:
        raise InvalidCase(f"unknown profile {raw!r} (known: {', '.join(known)})", f"{where}: profile")
    return str(raw)


def _require(doc: dict, key: str, kind: type, where: str):
    if key not in doc:
        raise InvalidCase("missing", f"{where}: {key}")
    value = doc[key]
    if not isinstance(value, kind):
        raise InvalidCase(f"must be a {kind.__name__}", f"{where}: {key}")
    return value


def _load_tables(raw: dict, where: str) -> tuple[tuple[TableSchema, ...], dict[str, pa.Table]]:
    schemas, tables = [], {}
    for name, spec in raw.items():
        at = f"{where}: tables.{name}"
        if not isinstance(spec, dict):
            raise InvalidCase("must be a mapping with columns and rows", at)
        schema = _load_schema(str(name), _require(spec, "columns", dict, at), at)
        rows = _require(spec, "rows", list, at)
        schemas.append(schema)
        tables[schema.name] = _to_arrow_table(schema, rows, at)
    return tuple(schemas), tables


def _load_schema(name: str, columns: dict, where: str) -> TableSchema:
    defs = []
    for col, type_text in columns.items():
        if not isinstance(type_text, str):
            raise InvalidCase("a column's type must be a string", f"{where}.columns.{col}")
        defs.append(ColumnDef(str(col), parse_type_name(type_text, f"{where}.columns.{col}")))
    if not defs:
        raise InvalidCase("a table needs at least one column", f"{where}.columns")
    return TableSchema(name, tuple(defs))


def _to_arrow_table(schema: TableSchema, rows: list, where: str) -> pa.Table:
    width = len(schema.columns)
    columns: list[list[object]] = [[] for _ in range(width)]
    for i, row in enumerate(rows):
        at = f"{where}.rows[{i}]"
        if not isinstance(row, list) or len(row) != width:
            raise InvalidCase(f"must be a list of {width} values", at)
        for j, (value, col) in enumerate(zip(row, schema.columns, strict=True)):
            columns[j].append(coerce_value(value, col.type, f"{at}[{j}] ({col.name})"))
    arrays = [pa.array(vals, type=to_arrow(c.type)) for vals, c in zip(columns, schema.columns, strict=True)]
    return pa.Table.from_arrays(arrays, names=[c.name for c in schema.columns])


def coerce_value(value: object, t: SqlType, where: str) -> object:
    """A YAML value as the Python value of SQL type `t` (None stays None)."""
    if value is None:
        return None
    try:
        return _COERCE[t.kind](value, t)
    except (TypeError, ValueError, InvalidOperation, OverflowError):
        raise InvalidCase(f"{value!r} is not a valid {t}", where) from None


def _to_int(value: object, t: SqlType) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(value)
    bits = {TypeKind.INT8: 8, TypeKind.INT16: 16, TypeKind.INT32: 32, TypeKind.INT64: 64,
            TypeKind.INT128: 128}[t.kind]
    if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        raise OverflowError(value)
    return value


def _to_float(value: object, t: SqlType) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(value)
    # YAML's .nan has its sign bit set (PyYAML computes it as -inf/inf), and
    # some engines order NaNs by that bit. A case's `.nan` means plain NaN.
    return math.nan if math.isnan(value) else float(value)


def _to_decimal(value: object, t: SqlType) -> Decimal:
    if isinstance(value, bool) or isinstance(value, float) and not math.isfinite(value):
        raise TypeError(value)
    d = Decimal(str(value))
    quantum = Decimal(1).scaleb(-(t.scale or 0))
    # The default context keeps 28 digits; DECIMAL(38, s) needs 38 and more.
    with localcontext(Context(prec=80)):
        q = d.quantize(quantum)
    if d != q or len(q.as_tuple().digits) > t.precision:
        raise ValueError(value)
    return q


def _to_string(value: object, t: SqlType) -> str:
    if not isinstance(value, str):
        raise TypeError(value)
    return value


def _to_bool(value: object, t: SqlType) -> bool:
    if not isinstance(value, bool):
        raise TypeError(value)
    return value


def _to_date(value: object, t: SqlType) -> dt.date:
    if isinstance(value, dt.datetime):
        raise TypeError(value)
    if isinstance(value, dt.date):
        return value
    return dt.date.fromisoformat(str(value))


def _to_timestamp(value: object, t: SqlType) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None) if value.tzinfo is None else _naive_utc(value)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    return dt.datetime.fromisoformat(str(value))


def _naive_utc(value: dt.datetime) -> dt.datetime:
    return value.astimezone(dt.UTC).replace(tzinfo=None)


def _to_list(value: object, t: SqlType) -> list:
    if not isinstance(value, list):
        raise TypeError(value)
    return [coerce_value(v, t.element, "list element") for v in value]


_COERCE = {
    TypeKind.LIST: _to_list,
    TypeKind.INT8: _to_int,
    TypeKind.INT16: _to_int,
    TypeKind.INT32: _to_int,
    TypeKind.INT64: _to_int,
    TypeKind.INT128: _to_int,
    TypeKind.FLOAT32: _to_float,
    TypeKind.FLOAT64: _to_float,
    TypeKind.DECIMAL: _to_decimal,
    TypeKind.STRING: _to_string,
    TypeKind.BOOL: _to_bool,
    TypeKind.DATE: _to_date,
    TypeKind.TIMESTAMP: _to_timestamp,
}


def _load_expected(raw: object, where: str) -> Expected | None:
    if raw is None:
        return None
    at = f"{where}: expected"
    if not isinstance(raw, dict):
        raise InvalidCase("must be a mapping with columns and rows", at)
    columns = _require(raw, "columns", list, at)
    rows = _require(raw, "rows", list, at)
    for i, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != len(columns):
            raise InvalidCase(f"must be a list of {len(columns)} values", f"{at}.rows[{i}]")
    return Expected(tuple(str(c) for c in columns), tuple(tuple(r) for r in rows))


def load_cases(paths: Iterable[str | Path]) -> tuple[list[Case], list[InvalidInput]]:
    """Load every case under `paths`; malformed files are returned as errors, not raised."""
    roots = [Path(p) for p in paths]
    cases, errors = [], []
    for path in discover(roots):
        try:
            cases.append(load_case(path, case_id(path, roots)))
        except InvalidInput as e:
            errors.append(e)
    seen: dict[str, Path | None] = {}
    for c in cases:
        if c.id in seen:
            errors.append(InvalidCase(f"duplicate case id {c.id!r} (also {seen[c.id]})", str(c.path)))
        seen[c.id] = c.path
    return cases, errors
