"""How a replay reads: cells and tables for people, the text report and the JSON.

In the text report differing cells show `reference → engine`; in the JSON,
values JSON cannot hold (NaN, decimals, dates) are strings.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, TextIO

from harness.cases.case import Case

if TYPE_CHECKING:  # the records this module prints; replay.py imports this module
    from harness.findings.replay import EngineReplay, Replay
    from harness.findings.replay_diff import Changed, Diff

# ---------------------------------------------------------------------------
# Showing values


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


# ---------------------------------------------------------------------------
# Writing a replay


def write_text(rep: Replay, out: TextIO) -> None:
    case = rep.case
    out.write(f"case {case.id}" + (f" ({case.path})" if case.path else "") + "\n")
    out.write(f"  {case.description}\n")
    for e in rep.engines:
        out.write("\n")
        _write_engine(e, case, out)
    out.write("\n")
    out.write("PASS: every verdict is match or unsupported\n" if rep.passed else
              "FAIL: some verdicts are neither a match, a rejection the definition requires, nor unsupported\n")


def _write_engine(e: EngineReplay, case: Case, out: TextIO) -> None:
    r = e.result
    out.write(f"== {r.engine} {e.version}: {r.verdict.value}\n")
    if r.detail:
        out.write(f"  detail: {r.detail}\n")
    for note in r.notes:
        out.write(f"  note: {note}\n")
    if e.is_reference:
        sql, label = case.sql, "SQL (canonical; the reference evaluates its model)"
    else:
        sql, label = r.sql, f"SQL ({r.engine}, as run; __wh_ columns are the harness's)"
    if sql is None:
        out.write(f"  SQL: none ({r.engine}'s dialect cannot express the query)\n")
    else:
        out.write(f"  {label}:\n")
        out.writelines(f"    {line}\n" for line in sql.strip().splitlines())
    if e.answer is None:
        out.write("  output: none\n")
        return
    out.write(f"  output ({_count(len(e.answer.rows))}):\n")
    shown = [[show(v) for v in row] for row in e.answer.rows]
    out.writelines(f"{line}\n" for line in text_table(e.answer.columns, shown, "    "))
    if e.diff is not None:
        write_diff(e.diff, e.answer.columns, out)


def write_diff(d: Diff, columns: list[str], out: TextIO) -> None:
    if d.problem:
        out.write(f"  diff against the {d.against}: {d.problem}\n")
        return
    if d.empty:
        out.write(f"  diff against the {d.against}: no differences\n")
        return
    out.write(f"  diff against the {d.against} (rows paired by {d.aligned_by}; "
              "cells as reference → engine, * marks a differing row):\n")
    if d.changed:
        rows = [["*", c.label, *(_cell(c, i) for i in range(len(columns)))] for c in d.changed]
        out.writelines(f"{line}\n" for line in text_table(["", "row", *columns], rows, "    "))
    for title, rows_ in (("missing (in the reference only)", d.missing),
                         ("extra (in the engine's answer only)", d.extra)):
        if rows_:
            out.write(f"    {title}:\n")
            shown = [[show(v) for v in row] for row in rows_]
            out.writelines(f"{line}\n" for line in text_table(columns, shown, "      "))


def _cell(c: Changed, i: int) -> str:
    if i in c.columns:
        return f"{show(c.reference[i])} → {show(c.engine[i])}"
    return show(c.engine[i])


def _count(n: int) -> str:
    return f"{n} row" + ("" if n == 1 else "s")


def to_json(rep: Replay) -> dict:
    case = rep.case
    return {
        "case": case.id,
        "path": str(case.path) if case.path else None,
        "description": case.description,
        "passed": rep.passed,
        "engines": [_engine_json(e) for e in rep.engines],
    }


def _engine_json(e: EngineReplay) -> dict:
    r = e.result
    doc = {
        "engine": r.engine,
        "version": e.version,
        "profile": e.profile,
        "verdict": r.verdict.value,
        "detail": r.detail,
        "notes": list(r.notes),
        "sql": r.sql,
        "columns": e.answer.columns if e.answer else None,
        "rows": [[json_value(v) for v in row] for row in e.answer.rows] if e.answer else None,
        "diff": None,
    }
    d = e.diff
    if d is not None:
        doc["diff"] = {
            "against": d.against,
            "aligned_by": d.aligned_by,
            "problem": d.problem or None,
            "changed": [{"row": c.label, "columns": [e.answer.columns[i] for i in c.columns],
                         "reference": [json_value(v) for v in c.reference],
                         "engine": [json_value(v) for v in c.engine]} for c in d.changed],
            "missing": [[json_value(v) for v in row] for row in d.missing],
            "extra": [[json_value(v) for v in row] for row in d.extra],
        }
    return doc
