"""The test-file formats an export can write, as data (`FORMATS`), and how
each one prints a value.

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
"""

from __future__ import annotations

import datetime as dt
import math
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, localcontext

import pyarrow as pa

from harness.cases.case import Case
from harness.core.text import printable

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
    # The format's runner compares numeric cells approximately (DuckDB's casts both
    # sides and allows a few units in the last place); DataFusion's compares text.
    approximate_numbers: bool = False


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


def comment(text: str, limit: int = 300) -> str:
    """One comment line, whatever the record holds: a line break is a space,
    and every other character a reader could split a line at (a form feed, a
    LINE SEPARATOR: Python's `splitlines` does) or not see is a visible escape."""
    text = printable(re.sub(r"[ \t]*[\r\n]+[ \t]*", " ", text.rstrip()), keep="")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _slt_opening(case: Case, file_name: str) -> list[str]:
    # Every file under datafusion/sqllogictest/test_files carries the ASF header.
    return [*_ASF_HEADER.splitlines(), ""]


def _duckdb_opening(case: Case, file_name: str) -> list[str]:
    return [comment(f"# name: test/sql/window/{file_name}"), comment(f"# description: {case.description}"),
            "# group: [window]", ""]


FORMATS: dict[str, TestFormat] = {
    "slt": TestFormat("slt", "datafusion", ".slt", " ", "\n\r", slt_cell, slt_letter, _slt_opening, (),
                      insert_rows=False, drop_tables=True),
    "duckdb-test": TestFormat("duckdb-test", "duckdb", ".test", "\t", "\n\r\t", duckdb_cell, lambda t: "I",
                              _duckdb_opening, ("PRAGMA enable_verification",),
                              insert_rows=True, drop_tables=False, approximate_numbers=True),
}
