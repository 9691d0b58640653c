"""Known differences: reviewed explanations of verdicts that do not pass.

A first cut keyed by (case, engine); the CI gate will grow it into matchers
over features, functions and error patterns. Every entry says why, and the
tests fail when an entry no longer matches what is observed, so the file
cannot go stale.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from harness.compare import Verdict
from harness.errors import InvalidInput

DEFAULT_PATH = Path(__file__).resolve().parent.parent / "baseline" / "known-differences.yaml"
KINDS = ("unsupported", "by-design", "upstream-bug")
_FIELDS = {"engine", "case", "verdict", "kind", "reason", "link"}


@dataclass(frozen=True)
class KnownDifference:
    engine: str
    case: str
    verdict: Verdict
    kind: str
    reason: str
    link: str | None = None


def load_baseline(path: Path = DEFAULT_PATH) -> dict[tuple[str, str], KnownDifference]:
    """(case, engine) -> entry. Errors name the file, the entry and the field."""
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as e:
        raise InvalidInput(f"cannot read the baseline: {e}", str(path)) from None
    entries = doc.get("entries", []) if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        raise InvalidInput("must be a mapping with a list under 'entries'", str(path))
    out: dict[tuple[str, str], KnownDifference] = {}
    for i, raw in enumerate(entries):
        entry = _entry(raw, f"{path}: entries[{i}]")
        if (entry.case, entry.engine) in out:
            raise InvalidInput(f"duplicate entry for {entry.case} on {entry.engine}", f"{path}: entries[{i}]")
        out[(entry.case, entry.engine)] = entry
    return out


def _entry(raw: object, where: str) -> KnownDifference:
    if not isinstance(raw, dict):
        raise InvalidInput("must be a mapping", where)
    unknown = set(raw) - _FIELDS
    if unknown:
        raise InvalidInput(f"unknown field(s) {sorted(unknown)}", where)
    for key in ("engine", "case", "verdict", "kind", "reason"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise InvalidInput("missing or not a string", f"{where}.{key}")
    if raw["kind"] not in KINDS:
        raise InvalidInput(f"must be one of {', '.join(KINDS)}", f"{where}.kind")
    try:
        verdict = Verdict(raw["verdict"])
    except ValueError:
        known = ", ".join(v.value for v in Verdict)
        raise InvalidInput(f"unknown verdict (known: {known})", f"{where}.verdict") from None
    return KnownDifference(raw["engine"], raw["case"], verdict, raw["kind"], raw["reason"], raw.get("link"))
