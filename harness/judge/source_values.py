"""A source's printed rows read as values of the reference's column types.

What the comparator's search over orders of tied rows needs
(`compare_expected`): the same reading as `harness.judge.source_cells`, as
Python values, with floats at the value printed (the search compares them
within its own float tolerance).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation

import pyarrow as pa

from harness.judge.cells import TypeClass, type_class
from harness.judge.source_cells import NULL_SPELLINGS


def typed_rows(answer: Mapping, table: pa.Table, width: int) -> tuple[tuple[object, ...], ...] | None:
    """The printed rows as values (None: a value no type rule reads)."""
    classes = [type_class(table.schema.field(c).type) for c in range(width)]
    nulls = NULL_SPELLINGS.get(answer["format"], ())
    try:
        return tuple(tuple(_value(v, classes[c], nulls, answer["format"]) for c, v in enumerate(row))
                     for row in answer["rows"])
    except (ValueError, InvalidOperation, KeyError):
        return None


def _value(printed: str | None, cls: TypeClass, nulls: tuple[str, ...], fmt: str) -> object:
    if printed is None or (printed in nulls and cls is not TypeClass.STRING):
        return None
    if fmt == "slt" and printed == "(empty)":
        printed = ""
    return _READ[cls](printed.strip() if cls is not TypeClass.STRING else printed)


def _float(text: str) -> float:
    word = text.lower().lstrip("+")
    if word in ("nan", "-nan"):
        return math.nan
    return float(word)


def _exact(text: str) -> object:
    d = Decimal(text)
    return int(d) if d == d.to_integral_value() and "." not in text else d


def _bool(text: str) -> bool:
    word = text.lower()
    if word not in ("true", "t", "1", "false", "f", "0"):
        raise ValueError(text)
    return word in ("true", "t", "1")


_READ: dict[TypeClass, Callable[[str], object]] = {
    TypeClass.FLOAT: _float,
    TypeClass.EXACT: _exact,
    TypeClass.BOOL: _bool,
    TypeClass.DATE: dt.date.fromisoformat,
    TypeClass.TIMESTAMP: dt.datetime.fromisoformat,
    TypeClass.STRING: str,
}
