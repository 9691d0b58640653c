"""Values and tables as people read them (replays, exported tests), and values as
JSON can hold them (NaN, decimals and dates become strings).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from decimal import Decimal


def show(v: object) -> str:
    """A cell for people: NULL, NaN, -0.0 and Infinity spelled out; strings
    quoted when they are empty, hold spaces or could be read as something else."""
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        return ("Infinity" if v > 0 else "-Infinity") if math.isinf(v) else repr(v)
    if isinstance(v, Decimal):
        return format(v, "f")
    if isinstance(v, str):
        plain = v and not any(c.isspace() for c in v) and v.upper() not in ("NULL", "NAN")
        return v if plain and not v.startswith("'") else "'" + v.replace("'", "''") + "'"
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(show(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {show(x)}" for k, x in v.items()) + "}"
    return v.hex() if isinstance(v, bytes) else str(v)


def json_value(v: object) -> object:
    """A cell for JSON: NaN and the infinities as the strings "NaN", "Infinity",
    "-Infinity" (JSON has no such numbers); decimals as strings; dates in ISO form."""
    if isinstance(v, float) and not math.isfinite(v):
        return show(v)
    if isinstance(v, Decimal):
        return format(v, "f")
    if isinstance(v, (dt.date, dt.datetime)):
        return show(v)
    if isinstance(v, (list, tuple)):
        return [json_value(x) for x in v]
    if isinstance(v, dict):
        return {str(k): json_value(x) for k, x in v.items()}
    return v.hex() if isinstance(v, bytes) else v


def text_table(columns: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    """Aligned columns of already-shown cells; numbers right-aligned."""
    widths = [max([len(c), *(len(r[i]) for r in rows)]) for i, c in enumerate(columns)]
    numeric = [bool(rows) and all(_numeric(r[i]) for r in rows) for i in range(len(columns))]

    def line(cells: Sequence[str]) -> str:
        parts = [c.rjust(w) if n else c.ljust(w) for c, w, n in zip(cells, widths, numeric, strict=True)]
        return (indent + "  ".join(parts)).rstrip()

    return [line(columns), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def _numeric(text: str) -> bool:
    if text in ("NULL", "NaN", "Infinity", "-Infinity"):
        return True
    try:
        float(text)
    except ValueError:
        return False
    return True
