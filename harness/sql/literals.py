"""How model literals are spelled in canonical SQL, and read back.

The writer and the parser must agree on one spelling per model literal, so
that parse(write(q)) == q. The conventions:

Reading a bare literal token:
- an integer is INTEGER if it fits in 32 bits, else BIGINT, else (like
  PostgreSQL) an exact DECIMAL(p,0);
- a number with a point is DECIMAL(p,s): s is the number of digits after the
  point, p = max(significant integer digits + s, 1); the value keeps the
  written digits (Decimal('1.50'), not Decimal('1.5'));
- a number in E notation (1.5E0) is DOUBLE PRECISION;
- a minus sign directly in front of a number token belongs to the literal (the
  type is chosen after the sign, so -2147483648 is an INTEGER). The writer
  spells the operator UnaryOp(NEG, x) as `-(x)`, which is never folded.

Folding CAST (`fold_cast`): `CAST(<bare> AS <type>)`, where <bare> is written
without parentheses and is one of the shapes below, is read as a typed literal
rather than as a Cast node:
- NULL, any type -> Literal(None, type) (a typed NULL);
- an integer token, integer type, value in range -> Literal(int, type);
- an integer or decimal token, DECIMAL(p,s), value fits -> Literal(Decimal, type);
- an E-notation token, REAL/DOUBLE PRECISION -> Literal(float, type);
- the string 'NaN', 'Infinity' or '-Infinity', REAL/DOUBLE PRECISION -> the
  special float.
Every other CAST stays a Cast node. The writer parenthesises the operand when it
writes a Cast of a Literal (`CAST(('NaN') AS REAL)`), so such a model is not
folded and round-trips too.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

from harness.core.errors import InvalidQuery
from harness.core.model import Literal
from harness.core.types import FLOAT64, INT32, INT64, SqlType, TypeKind, decimal
from harness.sql.lexer import Kind

_INT_BITS = {TypeKind.INT8: 8, TypeKind.INT16: 16, TypeKind.INT32: 32, TypeKind.INT64: 64,
             TypeKind.INT128: 128}

SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def fits_integer(value: int, t: SqlType) -> bool:
    bits = _INT_BITS[t.kind]
    return -(2 ** (bits - 1)) <= value < 2 ** (bits - 1)


def natural_integer_type(value: int) -> SqlType | None:
    """The type a bare integer token with this value is read as (None: a DECIMAL)."""
    return next((t for t in (INT32, INT64) if fits_integer(value, t)), None)


def _digits(text: str) -> tuple[int, int]:
    """(significant integer digits, digits after the point) of a numeric text."""
    whole, _, fraction = text.lstrip("+-").partition(".")
    return len(whole.lstrip("0")), len(fraction)


def natural_decimal_type(text: str) -> SqlType:
    whole, scale = _digits(text)
    precision = max(whole + scale, 1)
    if precision > 38:
        raise InvalidQuery(f"numeric literal {text} has more than 38 digits")
    return decimal(precision, scale)


def fits_decimal(text: str, t: SqlType) -> bool:
    whole, scale = _digits(text)
    assert t.precision is not None and t.scale is not None
    return scale <= t.scale and whole <= t.precision - t.scale


def number_literal(kind: Kind, text: str) -> Literal:
    """The literal a (possibly signed) number token stands for."""
    if kind is Kind.FLOAT:
        value = float(text)
        if math.isinf(value):
            raise InvalidQuery(f"{text} is out of range for DOUBLE PRECISION")
        return Literal(value, FLOAT64)
    if kind is Kind.INTEGER:
        t = natural_integer_type(int(text))
        if t is not None:
            return Literal(int(text), t)
    return Literal(Decimal(text), natural_decimal_type(text))


def fold_cast(kind: Kind, text: str, t: SqlType) -> Literal | None:
    """The typed literal that `CAST(<bare token> AS t)` stands for, if it is one.

    `kind` and `text` describe the bare token (text signed for numbers, the
    string's content for strings); NULL comes as Kind.WORD with text 'null'.
    """
    if kind is Kind.WORD:
        return Literal(None, t)
    if kind is Kind.STRING:
        return Literal(SPECIAL_FLOATS[text], t) if t.is_float and text in SPECIAL_FLOATS else None
    if kind is Kind.INTEGER and t.is_integer and fits_integer(int(text), t):
        return Literal(int(text), t)
    if kind in (Kind.INTEGER, Kind.DECIMAL) and t.kind is TypeKind.DECIMAL:
        return Literal(Decimal(text), t) if fits_decimal(text, t) else None
    if kind is Kind.FLOAT and t.is_float:
        return Literal(number_literal(kind, text).value, t)
    return None


_PYTHON_TYPES: dict[TypeKind, tuple[type, ...]] = {
    TypeKind.BOOL: (bool,),
    TypeKind.FLOAT32: (float,),
    TypeKind.FLOAT64: (float,),
    TypeKind.DECIMAL: (Decimal,),
    TypeKind.STRING: (str,),
    TypeKind.DATE: (dt.date,),
    TypeKind.TIMESTAMP: (dt.datetime,),
}


def literal_problem(lit: Literal) -> str | None:
    """Why the writer cannot spell `lit` faithfully, or None if it can."""
    t, v = lit.type, lit.value
    if t is None or v is None:
        return None if v is None else f"literal {v!r} has no type"
    if t.is_integer:
        ok = type(v) is int and fits_integer(v, t)
    elif t.kind in _PYTHON_TYPES:
        ok = type(v) in _PYTHON_TYPES[t.kind]
        ok = ok and not (isinstance(v, dt.datetime) and v.tzinfo is not None)
    else:
        return f"no literal of type {t} (use Interval)"
    if ok and t.kind is TypeKind.DECIMAL:
        ok = v.is_finite() and v.as_tuple().exponent <= 0 and fits_decimal(format(v, "f"), t)
    return None if ok else f"literal {v!r} does not fit type {t}"
