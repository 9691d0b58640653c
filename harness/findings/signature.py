"""What makes two findings "the same bug": their signature.

A campaign meets one engine bug many times; it keeps the first case and
counts the rest. The signature (DESIGN.md, "Findings") is made of the
engine, the verdict class, and

- for a wrong answer, the features of the window expression that went
  wrong: its function, frame mode and bound kinds, exclusion, the data types
  of its argument and ORDER BY keys. When the comparator names the column
  that differed, only that expression counts; otherwise (a row count, an
  order) every window expression of the query does;
- for an error, crash or timeout, the engine's message with numbers, names
  and quoted values taken out (the query around it would make every
  occurrence look new).

A verdict on the bare query (`facts.bare`, `harness.judge.bare`) is its own
kind: its verdict reads `bare-mismatch` (`bare-error`...), so it is never
counted as, nor reduced into, a finding of the instrumented query.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace

from harness.cases.case import Case
from harness.cases.coverage import expr_type
from harness.cases.features import window_expressions
from harness.core.model import (
    BoundKind,
    FuncCall,
    NullTreatment,
    TableSchema,
    WindowExpr,
    WindowSpec,
)
from harness.core.types import canonical_type_name
from harness.judge.facts import Facts

_FAILED = ("error", "crash", "timeout")
_BOUND = {
    BoundKind.UNBOUNDED_PRECEDING: "unbounded-preceding",
    BoundKind.PRECEDING: "preceding",
    BoundKind.CURRENT_ROW: "current-row",
    BoundKind.FOLLOWING: "following",
    BoundKind.UNBOUNDED_FOLLOWING: "unbounded-following",
}


@dataclass(frozen=True)
class Signature:
    engine: str
    verdict: str
    features: tuple[str, ...]  # one entry per window expression that counts
    error: str = ""

    @property
    def text(self) -> str:
        parts = [self.engine, self.verdict, *self.features]
        if self.error:
            parts.append(f"error: {self.error}")
        return " | ".join(parts)

    @property
    def key(self) -> str:
        """A short stable name for files: engine, verdict and a hash of the rest."""
        digest = hashlib.sha1(self.text.encode()).hexdigest()[:10]
        return f"{_slug(self.engine)}-{self.verdict}-{digest}"


def signature(case: Case, engine: str, verdict: str, facts: Facts) -> Signature:
    if facts.bare:  # the bare query failed where the instrumented one passed: its own kind
        return _bare(signature(case, engine, verdict, replace(facts, bare=None)))
    if verdict in _FAILED:
        # The engine's own words name the problem; the window expressions of
        # the query around it would make every occurrence look new.
        return Signature(engine, verdict, (), normalise_error(facts.message or ""))
    exprs = _window_expressions(case)
    column = facts.column if facts.column in exprs else None
    chosen = [exprs[column]] if column is not None else list(exprs.values())
    features = tuple(sorted({describe(e, s, case.schemas) for e, s in chosen})) or ("no window",)
    return Signature(engine, verdict, features)


def _bare(sig: Signature) -> Signature:
    return replace(sig, verdict=f"bare-{sig.verdict}")


def describe(expr: WindowExpr, spec: WindowSpec, schemas: tuple[TableSchema, ...]) -> str:
    """One window expression's features, e.g. `sum(double) ROWS preceding..current-row
    excl=ties keys=[bigint]`."""
    func = expr.func
    args = ",".join(_type_of(a, schemas) for a in func.args) if isinstance(func, FuncCall) else ""
    flags = [flag for flag, on in (
        ("distinct", func.distinct),
        ("filter", func.filter is not None),
        ("ignore-nulls", func.null_treatment is NullTreatment.IGNORE),
        ("from-last", func.from_last is True),
    ) if on]
    frame = spec.frame
    if frame is None:
        shape = "default-frame"
    else:
        shape = f"{frame.mode.value} {_BOUND[frame.start.kind]}..{_BOUND[frame.end.kind]}"
        if frame.exclusion is not None:
            shape += f" excl={frame.exclusion.value.lower().replace(' ', '-')}"
    keys = ",".join(_type_of(k.expr, schemas) for k in spec.order_by)
    parts = [f"{func.name}({args})", shape, f"keys=[{keys}]"]
    if spec.partition_by:
        parts.append("partitioned")
    return " ".join(parts + flags)


def normalise_error(message: str) -> str:
    """An error message without what varies between occurrences of one bug."""
    text = message.splitlines()[0] if message else ""
    # An error class (Spark's "[DATATYPE_MISMATCH.RANGE_FRAME_WITHOUT_ORDER]")
    # names the problem; what follows quotes the query and its plan.
    error_class = re.match(r"\s*(\[[A-Z][A-Z0-9_.]*\])", text)
    if error_class:
        return error_class.group(1)
    text = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "?", text)
    text = re.sub(r"0x[0-9a-f]+|\d+(\.\d+)?", "N", text)
    return re.sub(r"\s+", " ", text).strip()[:160]


def _window_expressions(case: Case) -> dict[str, tuple[WindowExpr, WindowSpec]]:
    """Window expressions by output name (the alias, else its position)."""
    return window_expressions(case.query)


def _type_of(expr: object, schemas: tuple[TableSchema, ...]) -> str:
    t = expr_type(expr, schemas)  # type: ignore[arg-type]
    return canonical_type_name(t).lower() if t is not None else "expr"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)
