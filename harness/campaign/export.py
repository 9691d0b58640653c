"""`window-harness export CASE --to FORMAT`: a case as a regression test in an
engine's own test format, ready to hand upstream.

The expected rows are the reference's answer (the oracle), never the engine's,
computed under the engine's semantics profile: the documented by-design
choices (default null order, integer division, ...) that the engine's verdict
is judged under too. A header comment says where the case came from, how to
reproduce it, and what the finding record says the engine returned.

Values are printed the way each engine's test runner prints them:

- DataFusion sqllogictest (`slt`; datafusion/sqllogictest/src/engines/
  conversion.rs and datafusion_engine/normalize.rs): NULL; true/false; an
  empty string as (empty); floats and decimals through BigDecimal, rounded to
  12 decimal places, trailing zeros dropped, never in E notation (so 1.50 ->
  1.5, 2.0 -> 2, -0.0 -> 0), NaN, Infinity, -Infinity; dates and timestamps
  as Arrow displays them (2024-01-31, 2024-01-31T12:00:00.500). Cells are
  joined by one space; type letters are checked (B, I, R, T, D, P, ?).
- DuckDB `.test` (test/sqlite/result_helper.cpp; duckdb.org/docs/dev/
  sqllogictest/result_verification): NULL; (empty); otherwise the value cast
  to VARCHAR (1.0, 1e+20, -0.0, nan, inf, 1.50, 2024-01-31 12:00:00.5, [a, b]);
  cells joined by a tab. DuckDB has deprecated type letters: every column is
  `I`. Booleans are written true/false, which the runner accepts for a BOOLEAN
  column (it prints 1/0 itself).

Rows are in the reference's order when the query's ORDER BY fixes the order
of every row; otherwise the block says `rowsort` and the rows are sorted as
both runners sort them (row by row, cell strings compared bytewise). An answer
that another order of tied rows would change (a LIMIT cutting through tied
rows, an order-sensitive window function over peers) is refused unless asked
for, since the test could then fail on a correct engine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import struct
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from pathlib import Path
from typing import TextIO

import pyarrow as pa

from harness.campaign.replay import load_one, show
from harness.cases import Case
from harness.cells import hashable, rows_of
from harness.dialects.base import Dialect
from harness.errors import EvaluationError, InvalidInput, ReferenceGap, Unsupported
from harness.instrument import Plan, instrument, with_rowid
from harness.model import Literal
from harness.oracle import Oracle
from harness.semantics import SemanticsProfile
from harness.sql import write, write_expr

EXIT_PASS, EXIT_BAD_INPUT = 0, 2

# ---------------------------------------------------------------------------
# Values as each runner prints them


def shortest_float32(v: float) -> str:
    """The shortest decimal text that reads back as the same float32."""
    for digits in range(1, 10):
        text = f"{v:.{digits}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == v:
            return text
    return repr(v)


def plain_decimal(d: Decimal, places: int = 12) -> str:
    """BigDecimal's round(12).normalized().to_plain_string(): at most 12 places,
    no trailing zeros, no exponent, no negative zero."""
    with localcontext() as ctx:
        ctx.prec = 1000
        if d.as_tuple().exponent < -places:  # type: ignore[operator]
            d = d.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN)
        return "0" if d.is_zero() else format(d.normalize(), "f")


def slt_cell(v: object, t: pa.DataType) -> str:
    if v is None:
        return "NULL"
    if pa.types.is_boolean(t):
        return "true" if v else "false"
    if pa.types.is_floating(t):
        assert isinstance(v, float)
        if math.isnan(v) or math.isinf(v):
            return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
        return plain_decimal(Decimal(repr(v) if pa.types.is_float64(t) else shortest_float32(v)))
    if pa.types.is_decimal(t):
        return plain_decimal(Decimal(v))  # type: ignore[arg-type]
    if isinstance(v, str):
        return v.rstrip("\n") or "(empty)"
    if isinstance(v, dt.datetime):
        return _chrono_timestamp(v)
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, list):
        return "[" + ", ".join(slt_cell(x, t.value_type) for x in v) + "]"
    return str(v)


def _chrono_timestamp(v: dt.datetime) -> str:
    # Arrow displays a naive timestamp as chrono does: a T, and the fraction
    # in groups of 3 digits (milli, micro).
    text = v.replace(microsecond=0).isoformat(sep="T")
    us = v.microsecond
    if us == 0:
        return text
    return text + (f".{us // 1000:03d}" if us % 1000 == 0 else f".{us:06d}")


def slt_letter(t: pa.DataType) -> str:
    checks = [
        (pa.types.is_boolean, "B"),
        (pa.types.is_integer, "I"),
        (pa.types.is_floating, "R"),
        (pa.types.is_decimal, "R"),
        (lambda x: pa.types.is_string(x) or pa.types.is_large_string(x)
         or pa.types.is_string_view(x), "T"),
        (pa.types.is_date, "D"),
        (pa.types.is_timestamp, "P"),
    ]
    return next((letter for check, letter in checks if check(t)), "?")


def duckdb_cell(v: object, t: pa.DataType) -> str:
    if v is None:
        return "NULL"
    text = _duckdb_varchar(v, t)
    return text or "(empty)"


def _duckdb_varchar(v: object, t: pa.DataType) -> str:
    """CAST(v AS VARCHAR) in DuckDB."""
    if v is None:
        return "NULL"
    if pa.types.is_boolean(t):
        return "true" if v else "false"
    if pa.types.is_floating(t):
        assert isinstance(v, float)
        if math.isnan(v) or math.isinf(v):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        return repr(v if pa.types.is_float64(t) else float(shortest_float32(v)))
    if pa.types.is_decimal(t):
        return format(v, "f")
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ").rstrip("0").rstrip(".") if v.microsecond else v.isoformat(sep=" ")
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, list):
        return "[" + ", ".join(_duckdb_element(x, t.value_type) for x in v) + "]"
    return str(v)


_QUOTED_IN_LISTS = set(",[]{}'\"\\:")


def _duckdb_element(v: object, t: pa.DataType) -> str:
    # Inside a list DuckDB quotes a string that could not be read back plainly.
    if isinstance(v, str):
        needs = not v or v != v.strip() or v.upper() == "NULL" or any(c in _QUOTED_IN_LISTS for c in v)
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'" if needs else v
    return _duckdb_varchar(v, t)


# ---------------------------------------------------------------------------
# The formats


@dataclass(frozen=True)
class TestFormat:
    """One engine's test-file format: the engine whose SQL and profile it uses,
    how a cell and a column type are written, and the file's fixed parts."""

    name: str
    engine: str
    suffix: str
    separator: str
    forbidden: str  # characters a cell cannot hold (they would split a row or a record)
    cell: Callable[[object, pa.DataType], str]
    letter: Callable[[pa.DataType], str]
    opening: Callable[[Case, str], list[str]]  # lines before the harness's header
    preamble: tuple[str, ...]  # statements before the tables are made
    insert_rows: bool  # CREATE TABLE + INSERT, else CREATE TABLE ... AS VALUES
    drop_tables: bool


_ASF_HEADER = """\
# Licensed to the Apache Software Foundation (ASF) under one
# or more contributor license agreements.  See the NOTICE file
# distributed with this work for additional information
# regarding copyright ownership.  The ASF licenses this file
# to you under the Apache License, Version 2.0 (the
# "License"); you may not use this file except in compliance
# with the License.  You may obtain a copy of the License at

#   http://www.apache.org/licenses/LICENSE-2.0

# Unless required by applicable law or agreed to in writing,
# software distributed under the License is distributed on an
# "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
# KIND, either express or implied.  See the License for the
# specific language governing permissions and limitations
# under the License.
"""


def _slt_opening(case: Case, file_name: str) -> list[str]:
    # Every file under datafusion/sqllogictest/test_files carries the ASF header.
    return [*_ASF_HEADER.splitlines(), ""]


def _duckdb_opening(case: Case, file_name: str) -> list[str]:
    return [f"# name: test/sql/window/{file_name}", _comment(f"# description: {case.description}"),
            "# group: [window]", ""]


FORMATS: dict[str, TestFormat] = {
    "slt": TestFormat("slt", "datafusion", ".slt", " ", "\n\r", slt_cell, slt_letter, _slt_opening, (),
                      insert_rows=False, drop_tables=True),
    "duckdb-test": TestFormat("duckdb-test", "duckdb", ".test", "\t", "\n\r\t", duckdb_cell, lambda t: "I",
                              _duckdb_opening, ("PRAGMA enable_verification",),
                              insert_rows=True, drop_tables=False),
}


# ---------------------------------------------------------------------------
# What the reference expects


@dataclass(frozen=True)
class Expectation:
    table: pa.Table | None  # the answer to the user's query (LIMIT applied)
    error: str | None = None  # why the query is invalid by definition
    ordered: bool = False  # a total ORDER BY fixes the order of every row
    ambiguous: str | None = None  # why another answer would be as valid


def expectation(case: Case, profile: SemanticsProfile) -> Expectation:
    try:
        table = Oracle(case.query, case.tables, profile).evaluate().table
    except EvaluationError as e:
        return Expectation(None, error=str(e))
    except ReferenceGap as e:
        raise InvalidInput(f"the reference cannot evaluate this query: {e}", _where(case)) from None
    plan = instrument(case.query, case.schemas)
    tables = with_rowid(case.tables) if plan.rowid_column is not None else dict(case.tables)
    oracle = Oracle(plan.unlimited, tables, profile)
    full = oracle.evaluate()
    return Expectation(table, ordered=_total_order(full.table, plan),
                       ambiguous=_peer_dependence(oracle, plan) or _limit_cut(full.table, plan))


def _where(case: Case) -> str:
    return str(case.path) if case.path else case.id


def _order_tokens(table: pa.Table, plan: Plan) -> list[tuple] | None:
    if not plan.order_keys:
        return None
    return [tuple(hashable(row[k.column]) for k in plan.order_keys) for row in rows_of(table).rows]


def _total_order(table: pa.Table, plan: Plan) -> bool:
    tokens = _order_tokens(table, plan)
    return tokens is not None and len(set(tokens)) == len(tokens)


def _peer_dependence(oracle: Oracle, plan: Plan) -> str | None:
    """A cheap test, not a proof: does reversing or rotating every group of tied
    rows change an order-sensitive window function's answer?"""
    base = oracle.evaluate()
    if not base.peer_groups:
        return None
    for hook in (lambda key, group: range(len(group))[::-1],
                 lambda key, group: [*range(1, len(group)), 0]):
        if _bag(oracle.evaluate(hook).table, plan) != _bag(base.table, plan):
            return ("the answer depends on the order of tied rows (peers) in a window "
                    "with an order-sensitive function")
    return None


def _bag(table: pa.Table, plan: Plan) -> Counter:
    width = plan.visible if plan.visible >= 0 else table.num_columns
    keep = [*range(width), *([plan.rowid_column] if plan.rowid_column is not None else [])]
    return Counter(tuple(_loose(row[c]) for c in keep) for row in rows_of(table).rows)


def _loose(v: object) -> object:
    # Floats that differ only in the last bits (summation order) count as equal.
    if isinstance(v, float) and math.isfinite(v):
        return float(f"{v:.12g}")
    return hashable(v)


def _limit_cut(table: pa.Table, plan: Plan) -> str | None:
    if plan.limit is None and not plan.offset:
        return None
    lo = plan.offset or 0
    hi = table.num_rows if plan.limit is None else min(lo + plan.limit, table.num_rows)
    if lo == 0 and hi == table.num_rows:
        return None
    tokens = _order_tokens(table, plan)
    if tokens is None:
        return "LIMIT/OFFSET without an ORDER BY that fixes which rows it keeps"
    for cut in (lo, hi):
        if 0 < cut < len(tokens) and tokens[cut - 1] == tokens[cut]:
            return "the LIMIT/OFFSET cut falls between rows tied on the ORDER BY keys"
    return None


# ---------------------------------------------------------------------------
# Writing the file


def export_case(case: Case, fmt: TestFormat, source: str | None = None, file_name: str | None = None,
                allow_ambiguous: bool = False) -> str:
    """The test file's text; InvalidInput when the case cannot become a sound test."""
    from harness.engines.registry import get_dialect

    dialect = get_dialect(fmt.engine)
    try:
        sql = _one_record(write(case.query, dialect))
    except Unsupported as e:
        raise InvalidInput(f"{fmt.engine} cannot express this query ({e.feature})", _where(case)) from None
    expected = expectation(case, dialect.semantics)
    if expected.ambiguous and not allow_ambiguous:
        raise InvalidInput(f"no single expected answer: {expected.ambiguous} "
                           "(reduce the case, or pass --allow-ambiguous)", _where(case))
    name = file_name or "test_wh_" + case.id.replace("/", "_") + fmt.suffix
    lines = [*fmt.opening(case, name), *_header(case, fmt, dialect, expected, source), ""]
    for statement in (*fmt.preamble, *_table_statements(case, dialect, fmt)):
        lines += ["statement ok", statement + ";", ""]
    lines += _query_record(sql, expected, fmt)
    if fmt.drop_tables:
        for schema in case.schemas:
            lines += ["", "statement ok", f"DROP TABLE {dialect.quote(schema.name)};"]
    return "\n".join(lines).rstrip("\n") + "\n"


def _one_record(sql: str) -> str:
    # A blank line ends a record in both formats.
    return "\n".join(line.rstrip() for line in sql.strip().splitlines() if line.strip())


def _header(case: Case, fmt: TestFormat, dialect: Dialect, expected: Expectation,
            source: str | None) -> list[str]:
    from harness.runner import profile_named

    source = source or (str(case.path) if case.path else case.id)
    lines = [f"# Exported by window-harness from case {case.id} ({source}).",
             _comment(f"# {case.description}"),
             f"# Reproduce: window-harness replay {source} --engines reference,{fmt.engine}"]
    if expected.error is not None:
        lines.append(_comment(f"# The query must fail, being invalid by definition: {expected.error}"))
    else:
        lines.append("# Expected rows: the window-harness reference implementation's answer, "
                     "derived from the SQL standard's definitions")
        standard = expectation(case, profile_named(case.profile))
        if _values(standard) != _values(expected):
            lines.append(f"#   under {fmt.engine}'s documented by-design choices (the "
                         f"{dialect.semantics.name} semantics profile); the standard's defaults "
                         "give another answer here")
        if not expected.ordered:
            lines.append("#   (rowsort: the query's ORDER BY does not fix the order of every row)")
    if expected.ambiguous:
        lines.append(f"# WARNING: {expected.ambiguous}; a correct engine may give another answer")
    return lines + _finding_lines(case.finding, fmt.engine)


def _values(e: Expectation) -> object:
    return e.error if e.table is None else [[_loose(v) for v in r] for r in rows_of(e.table).rows]


def _finding_lines(finding: dict | None, engine: str) -> list[str]:
    """What the finding record says: the engine at fault, and this engine's answer."""
    if not finding:
        return []
    lines = []
    at_fault = finding.get("engine")
    if isinstance(at_fault, str) and at_fault != engine:
        lines.append(_comment(f"# The finding is about {at_fault}: {finding.get('verdict', '?')}"
                              + (f": {finding['detail']}" if finding.get("detail") else "")))
    record = finding_record(finding, engine)
    if record is None:
        return lines
    version = f" {record['version']}" if record.get("version") else ""
    detail = f": {record['detail']}" if record.get("detail") else ""
    lines.append(_comment(f"# In the finding, {engine}{version} gave {record.get('verdict', '?')}{detail}"))
    answer = record.get("answer", record.get("rows"))
    rows = answer.get("rows") if isinstance(answer, dict) else answer
    if isinstance(rows, list) and rows:
        lines.append(f"#   {engine} returned:")
        lines += [_comment(f"#     {' '.join(show(v) for v in row)}") for row in rows[:20]
                  if isinstance(row, list)]
        if len(rows) > 20:
            lines.append(f"#     ... ({len(rows)} rows)")
    return lines


def _comment(text: str, limit: int = 300) -> str:
    """One comment line, whatever the record holds."""
    text = text.replace("\r", " ").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def finding_record(finding: dict | None, engine: str) -> dict | None:
    """The part of a finding record about `engine`: `engines: {NAME: {...}}`,
    or the record itself when it says `engine: NAME`."""
    if not finding:
        return None
    engines = finding.get("engines")
    if isinstance(engines, dict) and isinstance(engines.get(engine), dict):
        return engines[engine]
    return finding if finding.get("engine") == engine else None


def _table_statements(case: Case, dialect: Dialect, fmt: TestFormat) -> list[str]:
    out = []
    for schema in case.schemas:
        name = dialect.quote(schema.name)
        columns = ", ".join(f"{dialect.quote(c.name)} {dialect.type_name(c.type)}" for c in schema.columns)
        rows = [
            "  (" + ", ".join(_literal(v, c.type, dialect, case) for v, c in
                              zip(row.values(), schema.columns, strict=True)) + ")"
            for row in case.tables[schema.name].to_pylist()
        ]
        create = f"CREATE TABLE {name} ({columns})"
        if not rows:
            out.append(create)
        elif fmt.insert_rows:
            out += [create, f"INSERT INTO {name} VALUES\n" + ",\n".join(rows)]
        else:
            out.append(f"{create} AS VALUES\n" + ",\n".join(rows))
    return out


def _literal(v: object, t, dialect: Dialect, case: Case) -> str:
    if isinstance(v, str) and ("\n" in v or "\r" in v):
        raise InvalidInput("a string holding a line break cannot go into a test file", _where(case))
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)  # the declared column type does the cast
    try:
        return write_expr(Literal(v, t), dialect)
    except (InvalidInput, Unsupported) as e:
        raise InvalidInput(f"cannot write the value {v!r} as a literal: {e}", _where(case)) from None


def _query_record(sql: str, expected: Expectation, fmt: TestFormat) -> list[str]:
    if expected.table is None:
        return ["statement error", sql + ";"]
    table = expected.table
    types = [f.type for f in table.schema]
    rows = [[fmt.cell(v, t) for v, t in zip(row.values(), types, strict=True)] for row in table.to_pylist()]
    if any(c in fmt.forbidden for row in rows for cell in row for c in cell):
        raise InvalidInput(f"an expected value holds one of {fmt.forbidden!r}, "
                           f"which the {fmt.name} format cannot carry in a cell")
    if not expected.ordered:
        rows.sort(key=lambda r: [c.encode() for c in r])
    letters = "".join(fmt.letter(t) for t in types)
    head = f"query {letters}" + ("" if expected.ordered else " rowsort")
    return [head, sql + ";", "----", *(fmt.separator.join(r) for r in rows)]


# ---------------------------------------------------------------------------
# The command


def add_export_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "export",
        help="write a case or finding as a regression test in an engine's own format",
        description="Write the case as a test file for an engine's own suite: DataFusion's "
        "sqllogictest (slt) or DuckDB's .test. The expected rows are the reference's answer. "
        "Exit 0 when written, 2 on bad input or a case that cannot become a sound test.",
    )
    p.add_argument("case", metavar="CASE", help="a case file")
    p.add_argument("--to", required=True, choices=sorted(FORMATS), help="the test format")
    p.add_argument("--out", default=None, metavar="FILE", help="write here (default: stdout)")
    p.add_argument("--allow-ambiguous", action="store_true",
                   help="export even when another order of tied rows gives another valid answer")
    p.set_defaults(command=cmd_export)
    return p


def cmd_export(args: argparse.Namespace, out: TextIO | None = None) -> int:
    fmt = FORMATS[args.to]
    try:
        case = load_one(args.case)
        file_name = Path(args.out).name if args.out else None
        text = export_case(case, fmt, source=args.case, file_name=file_name,
                           allow_ambiguous=args.allow_ambiguous)
    except InvalidInput as e:
        print(f"window-harness: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as e:
            print(f"window-harness: error: --out {args.out}: {e.strerror}", file=sys.stderr)
            return EXIT_BAD_INPUT
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        (out or sys.stdout).write(text)
    return EXIT_PASS
