"""`window-harness replay CASE`: rerun one case file and show each answer.

For every engine: its verdict (the comparator's own, from `run_case`), the SQL
it ran, its answer as a small table (the user's columns only; the hidden
`__wh_` columns are dropped) and a diff against the reference. The diff is a
human aid and never decides anything: rows are paired by the hidden input
row id when both answers carry it, otherwise equal rows are paired first and
the rest by position after sorting; differing cells show `reference → engine`.

An engine is diffed against the reference under the engine's own semantics
profile (its documented by-design choices), the answer its verdict was judged
against. Where the verdict accepts a difference (another order of tied rows,
a float within the tolerance), the verdict's notes say so.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TextIO

import pyarrow as pa

from harness.cases import Case, case_id, load_case
from harness.cells import cell_tolerance, cells_equal, float_tolerance, hashable, rows_of
from harness.compare import PASSING
from harness.engines.base import Engine
from harness.errors import EngineUnavailable, EvaluationError, InvalidInput, ReferenceGap
from harness.instrument import Plan, instrument, with_rowid
from harness.model import Select
from harness.oracle import Oracle
from harness.runner import Result, RunResults, profile_named, run_case, start_engines
from harness.semantics import SemanticsProfile

EXIT_PASS, EXIT_FAIL, EXIT_BAD_INPUT = 0, 1, 2
_REFERENCE = "reference"


# ---------------------------------------------------------------------------
# Answers and diffs


@dataclass
class Answer:
    """The user's columns of an answer; `rowids` when the query carries them."""

    columns: list[str]
    rows: list[tuple]
    rowids: list[object] | None = None
    # Per row and column, how far a float may be from this (reference) value.
    tolerances: list[tuple[float, ...]] | None = None

    def tolerance(self, row: int, col: int) -> float:
        if self.tolerances is not None:
            return self.tolerances[row][col]
        value = self.rows[row][col]
        return float_tolerance(value, None, False) if isinstance(value, float) else 0.0


@dataclass
class Changed:
    label: str  # "#3" (input row 3) or "row 3" (position in the engine's answer)
    reference: tuple
    engine: tuple
    columns: list[int]  # the differing columns


@dataclass
class Diff:
    against: str
    aligned_by: str
    changed: list[Changed] = field(default_factory=list)
    missing: list[tuple] = field(default_factory=list)  # in the reference only
    extra: list[tuple] = field(default_factory=list)  # in the engine's answer only
    problem: str = ""  # when the answers cannot be aligned at all

    @property
    def empty(self) -> bool:
        return not (self.changed or self.missing or self.extra or self.problem)


def user_answer(table: pa.Table, plan: Plan, magnitudes: dict | None = None) -> Answer:
    """An instrumented answer without its hidden columns (kept: the row ids)."""
    width = plan.visible if plan.visible >= 0 else table.num_columns
    width = min(width, table.num_columns)
    full = rows_of(table, magnitudes)
    rows = [tuple(r[:width]) for r in full.rows]
    rowids = None
    if plan.rowid_column is not None and plan.rowid_column < table.num_columns:
        rowids = [r[plan.rowid_column] for r in full.rows]
    tolerances = None
    if magnitudes is not None:
        tolerances = [
            tuple(cell_tolerance(full, c, i, full.single[c]) for c in range(width))
            for i in range(len(rows))
        ]
    return Answer(full.names[:width], rows, rowids, tolerances)


def diff(reference: Answer, engine: Answer, against: str) -> Diff:
    if len(reference.columns) != len(engine.columns):
        return Diff(against, "-", problem=f"the engine returned {len(engine.columns)} columns, "
                                          f"the reference {len(reference.columns)}")
    if reference.rowids is not None and engine.rowids is not None:
        return _diff_by_rowid(reference, engine, Diff(against, "input row id"))
    return _diff_as_bag(reference, engine, Diff(against, "equal rows, then position after sorting"))


def _differing(reference: Answer, r: int, engine: Answer, e: int) -> list[int]:
    return [
        c for c, (ev, rv) in enumerate(zip(engine.rows[e], reference.rows[r], strict=True))
        if not cells_equal(ev, rv, reference.tolerance(r, c))
    ]


def _diff_by_rowid(reference: Answer, engine: Answer, out: Diff) -> Diff:
    assert reference.rowids is not None and engine.rowids is not None
    where = {rid: i for i, rid in enumerate(reference.rowids)}
    seen: set[object] = set()
    for e, rid in enumerate(engine.rowids):
        r = where.get(rid)
        if r is None or rid in seen:
            out.extra.append(engine.rows[e])
            continue
        seen.add(rid)
        columns = _differing(reference, r, engine, e)
        if columns:
            label = f"#{rid + 1}" if isinstance(rid, int) else str(rid)
            out.changed.append(Changed(label, reference.rows[r], engine.rows[e], columns))
    out.missing = [reference.rows[i] for i, rid in enumerate(reference.rowids) if rid not in seen]
    return out


def _diff_as_bag(reference: Answer, engine: Answer, out: Diff) -> Diff:
    left = list(range(len(reference.rows)))
    unmatched = []
    for e in range(len(engine.rows)):
        hit = next((r for r in left if not _differing(reference, r, engine, e)), None)
        if hit is None:
            unmatched.append(e)
        else:
            left.remove(hit)
    left.sort(key=lambda r: _row_token(reference.rows[r]))
    unmatched.sort(key=lambda e: _row_token(engine.rows[e]))
    for r, e in zip(left, unmatched, strict=False):
        columns = _differing(reference, r, engine, e)
        out.changed.append(Changed(f"row {e + 1}", reference.rows[r], engine.rows[e], columns))
    out.missing = [reference.rows[r] for r in left[len(unmatched):]]
    out.extra = [engine.rows[e] for e in unmatched[len(left):]]
    return out


def _row_token(row: tuple) -> tuple:
    return tuple(_value_token(v) for v in row)


def _value_token(v: object) -> tuple:
    """A sort key for any cell: NULL first, then numbers (NaN last), then the rest as text."""
    if v is None:
        return (0, 0, 0.0, "")
    if isinstance(v, (bool, int, float, Decimal)):
        f = float(v)
        return (1, 1, 0.0, "") if math.isnan(f) else (1, 0, f, "")
    return (2, 0, 0.0, show(v))


# ---------------------------------------------------------------------------
# The reference, under each engine's profile


@dataclass
class _References:
    """The reference's answer under each semantics profile, LIMIT applied."""

    case: Case
    plan: Plan
    tables: dict
    by_profile: dict[SemanticsProfile, Answer | None] = field(default_factory=dict)

    @classmethod
    def of(cls, case: Case) -> _References:
        plan = instrument(case.query, case.schemas)
        tables = with_rowid(case.tables) if plan.rowid_column is not None else dict(case.tables)
        return cls(case, plan, tables)

    def under(self, profile: SemanticsProfile) -> Answer | None:
        if profile not in self.by_profile:
            self.by_profile[profile] = self._evaluate(profile)
        return self.by_profile[profile]

    def _evaluate(self, profile: SemanticsProfile) -> Answer | None:
        try:
            evaluation = Oracle(self.plan.unlimited, self.tables, profile).evaluate()
        except (EvaluationError, ReferenceGap):
            return None
        table, magnitudes = evaluation.table, dict(evaluation.magnitudes)
        if isinstance(self.plan.query, Select) and (self.plan.limit is not None or self.plan.offset):
            # The oracle ran without LIMIT/OFFSET (its rows come in ORDER BY
            # order); the cut gives one answer the standard allows.
            start = self.plan.offset or 0
            stop = None if self.plan.limit is None else start + self.plan.limit
            table = table.slice(start, None if stop is None else max(stop - start, 0))
            magnitudes = {k: v[start:stop] for k, v in magnitudes.items()}
        return user_answer(table, self.plan, magnitudes)


# ---------------------------------------------------------------------------
# Replaying a case


@dataclass
class EngineReplay:
    result: Result
    version: str
    answer: Answer | None
    diff: Diff | None
    profile: str
    is_reference: bool = False


@dataclass
class Replay:
    case: Case
    engines: list[EngineReplay]

    @property
    def passed(self) -> bool:
        return all(e.result.verdict in PASSING for e in self.engines)


def replay(case: Case, engines: Sequence[Engine]) -> Replay:
    """Run `case` on `engines` (started here, closed by the caller)."""
    run = RunResults(engines={})
    start_engines(engines, run)
    results = run_case(case, engines)
    references = _References.of(case)
    out = []
    for engine, result in zip(engines, results, strict=True):
        profile = profile_named(case.profile) if engine.is_reference else engine.dialect.semantics
        answer = user_answer(result.answer, references.plan) if result.answer is not None else None
        if engine.is_reference:
            # Its own evaluation, with LIMIT applied (the runner keeps the unlimited one).
            answer, found = references.under(profile), None
        else:
            reference = references.under(profile)
            found = None if answer is None or reference is None else diff(
                reference, answer, _against(references, profile))
        out.append(EngineReplay(result, run.engines[engine.name], answer, found, profile.name,
                                engine.is_reference))
    return Replay(case, out)


def _against(references: _References, profile: SemanticsProfile) -> str:
    """Name the profile only where its answer is not the case profile's."""
    own, base = references.under(profile), references.under(profile_named(references.case.profile))
    if own is None or base is None or _values(own) == _values(base):
        return _REFERENCE
    return f"{_REFERENCE} under the {profile.name} profile (its by-design choices)"


def _values(answer: Answer) -> list[tuple]:
    return [tuple(hashable(v) for v in row) for row in answer.rows]


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
              "FAIL: some verdicts are neither match nor unsupported\n")


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
        _write_diff(e.diff, e.answer.columns, out)


def _write_diff(d: Diff, columns: list[str], out: TextIO) -> None:
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


# ---------------------------------------------------------------------------
# The command


def add_replay_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "replay",
        help="rerun one case or finding file and show each engine's SQL, answer and diff",
        description="Rerun a case file (a corpus case or a finding) and print, per engine, "
        "its verdict, the SQL it ran, its answer and a diff against the reference. "
        "Exit 0 when every verdict is match or unsupported, 1 otherwise, 2 on bad input.",
    )
    p.add_argument("case", metavar="CASE", help="a case file")
    p.add_argument("--engines", default=None,
                   help="comma-separated engines (default: the reference and the engines the "
                        "finding record names, else every registered engine)")
    p.add_argument("--format", choices=["table", "json"], default="table", help="output format")
    p.set_defaults(command=cmd_replay)
    return p


def cmd_replay(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from harness.engines.registry import get_engine

    out = out or sys.stdout
    try:
        case = load_one(args.case)
        engines = [get_engine(name) for name in engine_list(args.engines, case)]
    except (InvalidInput, EngineUnavailable) as e:
        print(f"window-harness: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        rep = replay(case, engines)
    finally:
        for engine in engines:
            engine.close()
    if args.format == "json":
        json.dump(to_json(rep), out, indent=2, default=str)
        out.write("\n")
    else:
        write_text(rep, out)
    return EXIT_PASS if rep.passed else EXIT_FAIL


def load_one(text: str) -> Case:
    """One case file, with the id the corpus gives it."""
    path = Path(text)
    if path.is_dir():
        raise InvalidInput("a directory: give one case file", str(path))
    return load_case(path, case_id(path, [path]))


def engine_list(text: str | None, case: Case) -> list[str]:
    """`--engines`, else the reference and the finding's engines, else every engine."""
    from harness.engines.registry import engine_names

    if text is not None:
        names = [n.strip() for n in text.split(",") if n.strip()]
        if not names:
            raise InvalidInput("no engine given", "--engines")
        if len(set(names)) != len(names):
            raise InvalidInput(f"an engine is listed twice: {text}", "--engines")
        return names
    known = engine_names()
    named = [n for n in finding_engines(case.finding) if n in known]
    return list(dict.fromkeys([_REFERENCE, *named])) if named else known


def finding_engines(finding: dict | None) -> list[str]:
    """The engines a finding record names: `engine: NAME`, or `engines:` as a
    mapping (name -> that engine's record) or a list of names."""
    if not finding:
        return []
    names: list[str] = []
    if isinstance(finding.get("engine"), str):
        names.append(finding["engine"])
    engines = finding.get("engines")
    if isinstance(engines, dict):
        names.extend(str(k) for k in engines)
    elif isinstance(engines, list):
        names.extend(str(n) for n in engines if isinstance(n, str))
    return list(dict.fromkeys(names))
