"""Write a case back out as a case file (the format of cases/README.md).

Generated and reduced cases are saved this way, so a finding reproduces on a
later commit without the generator: the file holds the tables, the canonical
SQL and a `finding` record (seeds, versions, each engine's SQL and answer).
`load_case(dump_case(c))` gives back the same tables and query.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import yaml

from harness.cases.case import Case
from harness.core.day_time import format_day_time
from harness.core.types import canonical_type_name, from_arrow


def yaml_value(value: object) -> object:
    """A cell as the YAML value the case loader reads back to the same cell."""
    if isinstance(value, float):
        # Keep NaN unsigned (the loader reads `.nan` as plain NaN anyway).
        return math.nan if math.isnan(value) else value
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.timedelta):  # a day-time interval
        return format_day_time(value)
    if isinstance(value, (list, tuple)):
        return [yaml_value(v) for v in value]
    if isinstance(value, dict):  # an Arrow struct: not in the model, kept readable
        return {str(k): yaml_value(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return value.hex()
    return value


def table_doc(table: pa.Table) -> dict:
    """`columns` (name: type) and `rows` of an Arrow table, as a case file writes them."""
    columns = {f.name: canonical_type_name(from_arrow(f.type)).lower() for f in table.schema}
    rows = [[yaml_value(v) for v in row.values()] for row in table.to_pylist()]
    return {"columns": columns, "rows": rows}


def rows_doc(table: pa.Table) -> dict:
    """An answer as `columns` (names) and `rows`, the shape of a case's `expected`."""
    return {"columns": list(table.column_names),
            "rows": [[yaml_value(v) for v in row.values()] for row in table.to_pylist()]}


def case_doc(case: Case, finding: Mapping | None = None) -> dict:
    doc: dict = {"description": case.description, "tags": list(case.tags)}
    if case.profile is not None:
        doc["profile"] = case.profile
    doc["tables"] = {name: table_doc(case.tables[name]) for name in _table_order(case)}
    doc["sql"] = case.sql if case.sql.endswith("\n") else case.sql + "\n"
    if case.expected is not None:
        doc["expected"] = {"columns": list(case.expected.columns),
                           "rows": [[yaml_value(v) for v in r] for r in case.expected.rows]}
    if case.error is not None:
        doc["error"] = case.error
    if case.source_answer is not None:
        doc["source_answer"] = case.source_answer
    record = finding if finding is not None else case.finding
    if record is not None:
        doc["finding"] = dict(record)
    return doc


def _table_order(case: Case) -> Sequence[str]:
    names = [s.name for s in case.schemas]
    return names + [n for n in case.tables if n not in names]


def dump_case(case: Case, finding: Mapping | None = None) -> str:
    """The case file's text; `finding` replaces the case's own record when given."""
    return dump_doc(case_doc(case, finding))


def dump_doc(doc: Mapping) -> str:
    """A case file's text from its document (as `case_doc` builds it, or an importer)."""
    return yaml.dump(dict(doc), Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     default_flow_style=None, width=100)


@dataclass(frozen=True)
class SavedCase:
    """A case file as written, kept in memory so the process that wrote it never
    reads it back: its document (what the file holds) and the case with its record."""

    doc: dict
    case: Case | None  # None: a file this harness cannot read as a case

    @classmethod
    def of(cls, case: Case, finding: Mapping | None = None) -> SavedCase:
        record = dict(finding) if finding is not None else case.finding
        return cls(case_doc(case, finding), replace(case, finding=record))

    @property
    def record(self) -> dict:
        """The file's `finding` record ({} when it has none)."""
        return self.doc.get("finding") or {}


def save_case(case: Case, path: Path, finding: Mapping | None = None) -> Path:
    """Write the case file atomically (a crash never leaves half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(dump_case(case, finding), encoding="utf-8")
    tmp.replace(path)
    return path


# libyaml's emitter where PyYAML was built with it: a finding at batch scale holds
# tens of thousands of rows, which the pure-Python emitter takes seconds to write.
_SafeDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_SafeDumper):  # type: ignore[misc,valid-type]
    """Multi-line strings (SQL) as literal blocks; everything else as safe YAML."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value and _block_safe(value) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _block_safe(value: str) -> bool:
    # A literal block cannot hold trailing spaces on a line or control characters.
    return all(line == line.rstrip() for line in value.split("\n")) and all(
        c == "\n" or c.isprintable() for c in value)


def _date(dumper: yaml.SafeDumper, value: dt.date) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:timestamp", value.isoformat())


_Dumper.add_representer(str, _str)
_Dumper.add_representer(dt.date, _date)
