"""The typed steps of a cell's derivation (`explain.py`), and those of the
partition, the sort and the function; the frame's are in `explain_frame.py`.

Positions are 1-based places in the sorted partition; rows are 1-based input
rows. Values stay Python values (the sentences spell them with `show`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from harness.core.model import FuncCall, NullTreatment
from harness.core.types import SqlType
from reference_impl.ordering import SortedPartition
from reference_impl.relation import Relation
from reference_impl.values import row_key


@dataclass(frozen=True)
class SmallTable:
    columns: tuple[str, ...]
    rows: tuple[tuple[object, ...], ...]


@dataclass(frozen=True, kw_only=True)
class Step:
    kind: str  # partition, sort, frame, exclude, filter, nulls, distinct, compute, result
    text: str
    table: SmallTable | None = None


@dataclass(frozen=True, kw_only=True)
class PartitionStep(Step):
    keys: tuple[str, ...]
    key_values: tuple[object, ...]
    rows: tuple[int, ...]  # input rows, in input order


@dataclass(frozen=True, kw_only=True)
class SortStep(Step):
    keys: tuple[str, ...]
    order: tuple[int, ...]  # input rows in window order
    peer_groups: tuple[tuple[int, int], ...]  # first and last position of each
    position: int  # the current row's


@dataclass(frozen=True, kw_only=True)
class FrameStep(Step):
    mode: str
    start: int  # first position
    end: int  # last position (end < start: the frame is empty)
    arithmetic: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class RemovedStep(Step):
    """Rows left out (EXCLUDE, FILTER, NULLs): their positions and input rows."""

    positions: tuple[int, ...]
    rows: tuple[int, ...]


@dataclass(frozen=True, kw_only=True)
class DistinctStep(Step):
    values: tuple[object, ...]


@dataclass(frozen=True, kw_only=True)
class ComputeStep(Step):
    inputs: tuple[object, ...]
    exact: object  # the exact value before the result type (a Fraction for a mean)


@dataclass(frozen=True, kw_only=True)
class ResultStep(Step):
    result_type: str
    value: object


def show(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, Fraction):
        return _fraction_text(value)
    return str(value)


def _fraction_text(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    decimal = Decimal(value.numerator) / Decimal(value.denominator)
    exact = (value.denominator & (value.denominator - 1)) == 0 or all(
        value.denominator % p != 0 for p in (3, 7, 11, 13))
    return f"{value.numerator}/{value.denominator} = {decimal:.20g}{'' if exact else '...'}"


def _positions(values: Sequence[int]) -> str:
    return ", ".join(map(str, values)) if values else "none"


# -- partition and sort ---------------------------------------------------------------


def partition_step(keys: list[str], key_values: list[object], rel: Relation, names: tuple[str, ...],
                   shown: list[int], part: SortedPartition, inputs: list[int]) -> PartitionStep:
    by_input = sorted(zip(inputs, part.rows, strict=True))
    rows = tuple((n, *(rel.rows[r][j] for j in shown)) for n, r in by_input)
    if keys:
        where = ", ".join(f"{key} = {show(v)}" for key, v in zip(keys, key_values, strict=True))
        text = f"The partition of PARTITION BY {', '.join(keys)}: {len(rows)} rows"
        text += f" (the current row's: {where})." if where else "."
    else:
        text = f"No PARTITION BY: the partition is all {len(rows)} rows."
    return PartitionStep(kind="partition", text=text, table=SmallTable(("input row", *names), rows),
                         keys=tuple(keys), key_values=tuple(key_values), rows=tuple(n for n, _ in by_input))


def sort_step(keys: list[str], part: SortedPartition, inputs: list[int], i: int) -> SortStep:
    groups = tuple((start + 1, end) for start, end in part.groups)
    table_rows = tuple(
        (p + 1, inputs[p], *part.keys[p], part.group_of[p] + 1, "<- current row" if p == i else "")
        for p in range(part.size))
    g = part.group_of[i]
    start, end = part.groups[g]
    if keys:
        text = (f"Sorted by {', '.join(keys)}: {len(groups)} peer groups. The current row "
                f"(input row {inputs[i]}) is at position {i + 1}, in peer group {g + 1} "
                f"(positions {start + 1}..{end}).")
    else:
        text = (f"No ORDER BY: every row is a peer of every other (one peer group); the "
                f"current row is at position {i + 1}.")
    columns = ("position", "input row", *keys, "peer group", "")
    return SortStep(kind="sort", text=text, table=SmallTable(columns, table_rows), keys=tuple(keys),
                    order=tuple(inputs), peer_groups=groups, position=i + 1)


# -- the function ---------------------------------------------------------------------


def function_steps(func: FuncCall, spell: Callable[[object], str], args: list[list[object] | None],
                   filt: list[object] | None, frame: list[int] | None, part: SortedPartition, i: int,
                   inputs: list[int], value: object, result_type: SqlType | None) -> list[Step]:
    """FILTER, NULLs, DISTINCT, then the computation and the result."""
    steps: list[Step] = []
    kept = list(frame) if frame is not None else list(range(part.size))
    if frame is not None and func.filter is not None and filt is not None:
        removed = [p for p in kept if filt[p] is not True]
        kept = [p for p in kept if filt[p] is True]
        steps.append(_removed("filter", f"FILTER (WHERE {spell(func.filter)}) removes the rows where "
                              "it is not TRUE", removed, inputs))
    values = args[0] if args else None
    skips = _skips_nulls(func, frame is not None)
    if skips and values is not None:
        removed = [p for p in kept if values[p] is None]
        kept = [p for p in kept if values[p] is not None]
        why = "IGNORE NULLS skips" if func.null_treatment is NullTreatment.IGNORE else \
            f"{func.name}() skips"
        steps.append(_removed("nulls", f"{why} the NULL values of {spell(func.args[0])}", removed, inputs))
    fed = [values[p] for p in kept] if values is not None else [None] * len(kept)
    if func.distinct and values is not None:
        fed = _distinct(fed)
        steps.append(DistinctStep(kind="distinct", text=f"DISTINCT keeps {len(fed)} distinct values: "
                                  f"{', '.join(map(show, fed)) or 'none'}.", values=tuple(fed)))
    steps.append(_compute(func, spell, fed, kept, frame is not None, part, i, args, value))
    type_text = str(result_type) if result_type is not None else "NULL"
    steps.append(ResultStep(kind="result", text=f"The result, of type {type_text}: {show(value)}.",
                            result_type=type_text, value=value))
    return steps


def _skips_nulls(func: FuncCall, aggregate_over_frame: bool) -> bool:
    if func.null_treatment is NullTreatment.IGNORE:
        return True
    aggregates_skipping = {"sum", "avg", "count", "min", "max", "string_agg", "bool_and", "bool_or",
                           "stddev_pop", "stddev_samp", "var_pop", "var_samp"}
    return aggregate_over_frame and func.name in aggregates_skipping and bool(func.args)


def _distinct(values: list[object]) -> list[object]:
    seen: set = set()
    out = []
    for v in values:
        key = row_key((v,))
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


def _removed(kind: str, sentence: str, removed: list[int], inputs: list[int]) -> RemovedStep:
    rows = [inputs[p] for p in removed]
    text = f"{sentence}: positions {_positions([p + 1 for p in removed])}" + (
        f" (input rows {_positions(rows)})." if rows else ".")
    return RemovedStep(kind=kind, text=text, positions=tuple(p + 1 for p in removed), rows=tuple(rows))


def _compute(func: FuncCall, spell: Callable[[object], str], fed: list[object], kept: list[int],
             over_frame: bool, part: SortedPartition, i: int, args: list[list[object] | None],
             value: object) -> ComputeStep:
    where = "the frame" if over_frame else "the partition"
    call = f"{func.name}({', '.join(spell(a) for a in func.args)})"
    if over_frame:
        text, exact = _aggregate_text(func.name, fed, kept, value)
        table = SmallTable(("position", "value"), tuple((p + 1, v) for p, v in zip(kept, fed, strict=False)))
        return ComputeStep(kind="compute", text=f"{call} over {len(kept)} rows of {where}: {text}",
                           table=table, inputs=tuple(fed), exact=exact)
    text, exact = _window_text(func.name, part, i, args, value)
    return ComputeStep(kind="compute", text=f"{call}: {text}", inputs=(), exact=exact)


def _exact(v: object) -> Fraction | None:
    if isinstance(v, bool) or not isinstance(v, (int, float, Decimal)):
        return None
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return Fraction(v)


def _aggregate_text(name: str, fed: list[object], kept: list[int], value: object) -> tuple[str, object]:
    exact = [_exact(v) for v in fed]
    numbers = all(e is not None for e in exact)
    if name == "count":
        return f"{len(fed)} rows counted.", len(fed)
    if name in ("sum", "avg") and numbers and fed:
        total = sum(exact, Fraction(0))  # type: ignore[arg-type]
        terms = " + ".join(map(show, fed))
        if name == "sum":
            return f"the exact sum {terms} = {show(total)}.", total
        mean = total / len(fed)
        return f"the exact mean ({terms}) / {len(fed)} = {show(total)} / {len(fed)} = {show(mean)}.", mean
    if name in ("sum", "avg", "min", "max") and not fed:
        return "no value: the result is NULL.", None
    if name in ("first_value", "last_value") and kept:
        p = kept[0] if name == "first_value" else kept[-1]
        return f"the value at position {p + 1}: {show(fed[kept.index(p)])}.", value
    if name in ("min", "max") and fed:
        return f"the {'least' if name == 'min' else 'greatest'} of {', '.join(map(show, fed))}.", value
    return f"over the values {', '.join(map(show, fed)) or '(none)'}.", value


def _window_text(name: str, part: SortedPartition, i: int, args: list[list[object] | None],
                 value: object) -> tuple[str, object]:
    g = part.group_of[i]
    start, _ = part.groups[g]
    if name == "row_number":
        return f"the current row's position, {i + 1}.", value
    if name == "rank":
        return f"1 + the {start} rows before its peer group = {start + 1}.", value
    if name == "dense_rank":
        return f"its peer group's number, {g + 1}.", value
    if name == "ntile":
        return f"the bucket of position {i + 1} among {part.size} rows: {show(value)}.", value
    return f"{show(value)}.", value
