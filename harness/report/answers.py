"""An engine's recorded answer beside the reference's, row against row.

The answers in a finding file are bags of rows without the harness's row id,
so rows are paired here for people, not judged (the verdict was the
comparator's): equal rows first, then each remaining reference row with the
engine row that agrees with it on the most cells. The cells that still
differ are the ones the report highlights.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

CLOSEST_LIMIT = 200  # beyond this many unpaired rows, pair them in order
FLOAT_TOLERANCE = 1e-9  # for highlighting only: 0.1 + 0.2 is not shown as a difference


@dataclass(frozen=True)
class PairedRow:
    reference: tuple | None  # None: a row only the engine returned
    engine: tuple | None  # None: a row the engine is missing
    differs: tuple[bool, ...]  # per column


def same_value(a: object, b: object) -> bool:
    if a is None or b is None:
        return a is None and b is None
    fa, fb = _number(a), _number(b)
    if fa is not None and fb is not None:
        if math.isnan(fa) or math.isnan(fb):
            return math.isnan(fa) and math.isnan(fb)
        return fa == fb or math.isclose(fa, fb, rel_tol=FLOAT_TOLERANCE, abs_tol=1e-12)
    return str(a) == str(b)


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)  # decimals are recorded as strings
        except ValueError:
            return None
    return None


def pair_rows(reference: list[tuple], engine: list[tuple]) -> list[PairedRow]:
    """Every row of both answers, paired; in the reference's order, the engine's
    extra rows last."""
    width = max((len(r) for r in [*reference, *engine]), default=0)
    unmatched: dict[tuple, list[int]] = {}
    for j, row in enumerate(engine):
        unmatched.setdefault(_key(row), []).append(j)
    paired: list[tuple[tuple, int | None]] = []
    for row in reference:
        same = unmatched.get(_key(row))
        paired.append((row, same.pop(0) if same else None))
    left = sorted(j for js in unmatched.values() for j in js)
    for i, (row, j) in enumerate(paired):  # the closest remaining engine row
        if j is None and left:
            best = left[0] if len(left) > CLOSEST_LIMIT else max(
                left, key=lambda k: sum(same_value(a, b) for a, b in zip(row, engine[k], strict=False)))
            left.remove(best)
            paired[i] = (row, best)
    out = [PairedRow(r, engine[j] if j is not None else None,
                     _differs(r, engine[j] if j is not None else None, width)) for r, j in paired]
    out += [PairedRow(None, engine[j], (True,) * width) for j in left]
    return out


def _key(row: tuple) -> tuple:
    """Rows with the same key hold the same values (floats to 12 significant digits)."""
    out = []
    for value in row:
        number = _number(value)
        if number is None:
            out.append(value if value is None else str(value))
        else:
            out.append("nan" if math.isnan(number) else float(f"{number:.12g}") + 0.0)
    return tuple(out)


def _differs(ref: tuple | None, eng: tuple | None, width: int) -> tuple[bool, ...]:
    if ref is None or eng is None:
        return (True,) * width
    return tuple(i >= len(ref) or i >= len(eng) or not same_value(ref[i], eng[i]) for i in range(width))


def answer_rows(answer: dict | None) -> tuple[list[str], list[tuple]] | None:
    """A recorded answer (`{"columns": [...], "rows": [[...]]}`) as columns and rows."""
    if not answer:
        return None
    return list(answer.get("columns", [])), [tuple(r) for r in answer.get("rows", [])]
