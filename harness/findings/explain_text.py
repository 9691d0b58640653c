"""`window-harness explain` printed: words and small tables (text), or the same as data (JSON)."""

from __future__ import annotations

import dataclasses
import io
from typing import TextIO

from harness.findings.explain import Explanation
from harness.findings.show import show
from reference_impl.explain_steps import SmallTable, Step


def to_json(e: Explanation) -> dict:
    doc = {
        "case": e.case,
        "profile": e.profile,
        "derivation": dataclasses.asdict(e.derivation),
    }
    if e.engine is not None:
        view = e.engine
        doc["engine"] = {
            "name": view.engine,
            "value": view.value,
            "error": view.error,
            "paired_by": view.paired_by,
            "reference_agrees": view.reference_agrees,
            "differs_at": None if view.first is None else _variation(view.first),
            "also_matching": [_variation(v) for v in view.matches[1:]],
            "peer_orders_tried": view.peer_orders_tried,
        }
        doc["variations_tried"] = list(e.tried)
    return doc


def _variation(v: object) -> dict:
    return {"name": v.name, "step": v.step, "sentence": v.sentence}  # type: ignore[attr-defined]


def write_text(e: Explanation, out: TextIO) -> None:
    d = e.derivation
    where = f"row {d.answer_row} of the answer" if d.answer_row is not None else "a row QUALIFY or LIMIT leaves out"
    out.write(f"{e.case}: column {d.column}, {where} (input row #{d.input_row}), under the {e.profile} profile\n")
    out.write(f"  {d.expression}\n")
    out.write(f"  the reference's value: {_cell(d.value)} ({d.result_type})\n\n")
    for n, step in enumerate(d.steps, 1):
        _write_step(n, step, out)
    if e.engine is not None:
        _write_engine(e, out)


def _write_step(n: int, step: Step, out: TextIO) -> None:
    out.write(f"{n}. [{step.kind}] {step.text}\n")
    if step.table is not None and step.table.rows:
        for line in _table_lines(step.table):
            out.write(f"     {line}\n")
    out.write("\n")


def _table_lines(table: SmallTable) -> list[str]:
    cells = [list(table.columns)] + [[_cell(v) for v in row] for row in table.rows]
    widths = [max(len(row[c]) for row in cells) for c in range(len(table.columns))]
    lines = [" | ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return lines


def _cell(value: object) -> str:
    marker = isinstance(value, str) and (value == "" or value.startswith("<-"))  # the sort table's marker column
    return value if marker else show(value)  # type: ignore[return-value]


def _write_engine(e: Explanation, out: TextIO) -> None:
    out.writelines(f"{line}\n" for line in engine_lines(e))


def engine_lines(e: Explanation) -> list[str]:
    """What the engine answered and the first step at which the reference, varied, gives it."""
    view = e.engine
    assert view is not None
    if view.error is not None:
        return [f"{view.engine}: no value for this cell ({view.error})"]
    lines = [f"{view.engine} answered {_cell(view.value)} (paired with the reference's row by {view.paired_by})"]
    if view.reference_agrees:
        return [*lines, "  the same value as the reference: nothing differs."]
    if view.first is None and view.peer_orders_tried:
        return [*lines, f"  first differing step: [compute] none of the {len(e.tried)} variations, and no order "
                        f"of the current row's tied rows ({view.peer_orders_tried} other orders tried), gives "
                        "the engine's value: the engine computes another value over the same frame."]
    if view.first is None:
        return [*lines, f"  none of the {len(e.tried)} variations tried gives the engine's value: no single "
                        "step of the derivation explains it."]
    lines.append(f"  first differing step: [{view.first.step}] the engine's value equals {view.first.sentence}.")
    return lines + [f"  also equal to: [{v.step}] {v.sentence}" for v in view.matches[1:]]


def compact_lines(e: Explanation) -> list[str]:
    """The explanation in a few lines (`replay`): the cell, each step's sentence
    without its table, and the engine's line."""
    d = e.derivation
    lines = [f"column {d.column}, input row #{d.input_row}: {d.expression}",
             f"the reference's value: {_cell(d.value)} ({d.result_type})"]
    lines += [f"{n}. [{step.kind}] {step.text}" for n, step in enumerate(d.steps, 1)]
    return lines + (engine_lines(e) if e.engine is not None else [])


def full_text(e: Explanation) -> str:
    """`write_text` as a string (the report shows it inline)."""
    out = io.StringIO()
    write_text(e, out)
    return out.getvalue()
