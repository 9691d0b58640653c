"""A case's `source_answer`: the answer an engine's own test suite recorded.

The mapping is stored raw on the case (`Case.source_answer`), as read, and
checked here for its shape only; what it says is judged in `run` beside the
engines' verdicts (`harness.judge.source`), never as the expected rows.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.core.errors import InvalidCase

FORMATS = ("slt", "pg-regress", "spark-golden")
SORTS = ("nosort", "rowsort", "valuesort")
SLT_TYPES = ("I", "R", "T")
_FIELDS = {"engine", "origin", "format", "sort", "columns", "types", "rows", "error"}


def check_source_answer(raw: object, where: str) -> dict | None:
    """`raw` when it is a well-formed `source_answer` (None when absent); else
    InvalidCase naming the file and the field (`case.yaml: source_answer.rows[3]`)."""
    if raw is None:
        return None
    at = f"{where}: source_answer"
    if not isinstance(raw, dict):
        raise InvalidCase("must be a mapping (engine, format, sort, and rows or error)", at)
    unknown = set(raw) - _FIELDS
    if unknown:
        raise InvalidCase(f"unknown field(s) {sorted(unknown, key=str)}", at)
    _check_engine(raw.get("engine"), f"{at}.engine")
    _one_of(raw, "format", FORMATS, at)
    _one_of(raw, "sort", SORTS, at)
    if raw.get("origin") is not None and not isinstance(raw["origin"], str):
        raise InvalidCase("must be a string (file:line)", f"{at}.origin")
    _strings(raw, "columns", at)
    _strings(raw, "types", at)
    if any(t not in SLT_TYPES for t in raw.get("types") or ()):
        raise InvalidCase(f"must be slt type letters ({', '.join(SLT_TYPES)})", f"{at}.types")
    _check_answer(raw, at)
    return raw


def _check_engine(name: object, at: str) -> None:
    from harness.engines.registry import engine_names

    known = engine_names()
    if name not in known:
        raise InvalidCase(f"must be a registered engine ({', '.join(known)}), not {name!r}", at)


def _one_of(raw: Mapping, key: str, allowed: tuple[str, ...], at: str) -> None:
    if raw.get(key) not in allowed:
        raise InvalidCase(f"must be one of {', '.join(allowed)}, not {raw.get(key)!r}", f"{at}.{key}")


def _strings(raw: Mapping, key: str, at: str) -> None:
    value = raw.get(key)
    if value is not None and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
        raise InvalidCase("must be a list of strings", f"{at}.{key}")


def _check_answer(raw: Mapping, at: str) -> None:
    if ("rows" in raw) == ("error" in raw):
        raise InvalidCase("must give either `rows` or `error`", at)
    if "error" in raw:
        if not isinstance(raw["error"], str):
            raise InvalidCase("must be a string (the message or pattern recorded; may be empty)", f"{at}.error")
        return
    rows = raw["rows"]
    if not isinstance(rows, list):
        raise InvalidCase("must be a list of rows", f"{at}.rows")
    for i, row in enumerate(rows):
        if not isinstance(row, list) or not all(v is None or isinstance(v, str) for v in row):
            raise InvalidCase("must be a list of values as the source printed them (strings, or null)",
                              f"{at}.rows[{i}]")
