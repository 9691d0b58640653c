"""How a replay reads: cells and tables for people, the text report and the JSON.

In the text report differing cells show `reference → engine`; in the JSON,
values JSON cannot hold (NaN, decimals, dates) are strings.
"""

from __future__ import annotations

from typing import TextIO

from harness.cases.case import Case
from harness.core.text import indented, shell_command
from harness.findings.explain_text import compact_lines
from harness.findings.explain_text import to_json as explanation_json
from harness.findings.replay import EngineReplay, Replay
from harness.findings.replay_diff import Changed, Diff
from harness.findings.replay_explain import CellExplanation
from harness.findings.show import json_value, show, text_table

# ---------------------------------------------------------------------------
# Writing a replay


def write_text(rep: Replay, out: TextIO) -> None:
    case = rep.case
    out.write(f"case {case.id}" + (f" ({case.path})" if case.path else "") + "\n")
    out.write(f"  {case.description}\n")
    for e in rep.engines:
        out.write("\n")
        write_engine(e, case, out)
        if e.bare is not None:
            out.write("\n")
            write_engine(e.bare, case, out, " (bare query: as written, no hidden columns)")
    out.write("\n")
    out.write("PASS: every verdict is match or unsupported\n" if rep.passed else
              "FAIL: some verdicts are neither a match, a rejection the definition requires, nor unsupported\n")


def write_engine(e: EngineReplay, case: Case, out: TextIO, which: str = "") -> None:
    r = e.result
    out.write(f"== {r.engine}{which} {e.version}: {r.verdict.value}\n")
    if r.detail:
        out.write(f"  detail: {indented(r.detail, '          ')}\n")
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
    if e.explained is not None:
        write_explained(e.explained, case, r.engine, out)


def write_explained(c: CellExplanation, case: Case, engine: str, out: TextIO) -> None:
    """`explain`'s text, compact, for the first differing cell."""
    if c.explanation is None:
        out.write(f"  why (row {c.row}, column {c.column}): no explanation ({c.problem})\n")
        return
    out.write(f"  why the reference differs (the first differing cell, row {c.row}, column {c.column}):\n")
    out.writelines(f"    {line}\n" for line in compact_lines(c.explanation))
    if case.path:
        command = shell_command(["window-harness", "explain", str(case.path), "--row", c.row,
                                 "--column", c.column, "--engine", engine])
        out.write(f"    (with its tables: {command})\n")


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
        "engines": [engine_json(e) for e in rep.engines],
    }


def engine_json(e: EngineReplay) -> dict:
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
    if e.bare is not None:
        doc["bare"] = engine_json(e.bare)
    if e.explained is not None:
        c = e.explained
        doc["explanation"] = {"row": c.row, "column": c.column, "problem": c.problem or None,
                              **(explanation_json(c.explanation) if c.explanation is not None else {})}
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
