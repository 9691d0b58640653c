"""No code reads a verdict's prose back.

A verdict's `detail` is text for people; what programs need (the pinned
column, the refused feature, the engine's message, the verdict against the
reference) travels as typed fields (`harness.judge.facts.Facts`). This test
scans the package source (harness/ and reference_impl/) with the `ast`
module and fails on code that takes a detail apart:

- a regular expression (`re.*`, or a compiled pattern's search/match/...)
  applied to a detail;
- `split`, `partition`, `startswith`, `removeprefix`, `find`, ... on a detail;
- `... in detail` (a substring test) or a detail compared with a literal;
- a detail handed to one of the package's text readers (`says_not_implemented`,
  `invalid_kind`, `unsupported_rows`, `normalise_error`, ...);
- the display's own words (`column (`, `against the reference:`) used as a
  pattern or a separator.

Building the display is allowed: an f-string that embeds a detail, a slice
that shortens it (`detail[:500]`), passing it on or storing it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("harness", "reference_impl")

# String methods that take text apart or test what it says.
_READING_METHODS = frozenset({
    "split", "rsplit", "splitlines", "partition", "rpartition", "startswith", "endswith",
    "removeprefix", "removesuffix", "find", "rfind", "index", "rindex", "count",
})
# Regular expression calls: `re.search(p, text)` and `pattern.search(text)`.
_REGEX_FUNCTIONS = frozenset({"search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"})
# The package's own functions that read meaning out of a text.
_TEXT_READERS = frozenset({
    "says_not_implemented", "refused_feature", "invalid_kind", "invalid_rows", "unsupported_rows",
    "normalise_error", "describes",
})
# Words of the display text that only a reader of it would look for.
_DISPLAY_WORDS = ("column (", "against the reference:")


def _mentions_detail(node: ast.AST) -> bool:
    """Whether `node` evaluates to a detail (or holds one): a name or attribute
    called `detail`/`details`, or a lookup of the key "detail". An f-string is
    display text being built: not looked into."""
    if isinstance(node, ast.JoinedStr):
        return False
    if isinstance(node, ast.Name):
        return "detail" in node.id
    if isinstance(node, ast.Attribute):
        return "detail" in node.attr or _mentions_detail(node.value)
    if isinstance(node, ast.Constant):
        return node.value in ("detail", "details")
    if isinstance(node, ast.Subscript):
        return _mentions_detail(node.value) or _mentions_detail(node.slice)
    if isinstance(node, ast.Call):  # line.get("detail"), str(r.detail), (a or b).strip()
        return any(_mentions_detail(n) for n in (node.func, *node.args))
    if isinstance(node, ast.BoolOp):
        return any(_mentions_detail(v) for v in node.values)
    if isinstance(node, ast.IfExp):
        return _mentions_detail(node.body) or _mentions_detail(node.orelse)
    return False


def _says_display_words(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Constant) and isinstance(n.value, str)
               and any(w in n.value for w in _DISPLAY_WORDS)
               for n in ast.walk(node) if not isinstance(n, ast.JoinedStr))


def _function_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _is_regex_call(call: ast.Call) -> bool:
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    on_module = isinstance(func.value, ast.Name) and func.value.id == "re"
    return func.attr in _REGEX_FUNCTIONS | ({"compile"} if on_module else set())


def _call_problem(call: ast.Call) -> str | None:
    name, func = _function_name(call), call.func
    if _is_regex_call(call):
        if any(_mentions_detail(a) for a in call.args):
            return f"a regular expression ({name}) applied to a detail"
        if any(_says_display_words(a) for a in call.args):
            return f"a regular expression ({name}) over the display's words"
    if isinstance(func, ast.Attribute) and name in _READING_METHODS:
        if _mentions_detail(func.value):
            return f".{name}() applied to a detail"
        if any(_says_display_words(a) for a in call.args):
            return f".{name}() looking for the display's words"
    if name in _TEXT_READERS and any(_mentions_detail(a) for a in call.args):
        return f"a detail read by {name}()"
    return None


def _compare_problem(node: ast.Compare) -> str | None:
    operands = [node.left, *node.comparators]
    for op, left, right in zip(node.ops, operands[:-1], operands[1:], strict=True):
        # `x in ("detail", ...)` tests a key against a collection, not a text.
        collection = isinstance(right, ast.List | ast.Tuple | ast.Set)
        if isinstance(op, ast.In | ast.NotIn) and not collection and (
                _mentions_detail(right) or _says_display_words(left)):
            return "a substring test on a detail"
        if isinstance(op, ast.Eq | ast.NotEq) and any(
                _mentions_detail(a) and isinstance(b, ast.Constant) and isinstance(b.value, str)
                for a, b in ((left, right), (right, left))):
            return "a detail compared with a literal"
    return None


def violations(source: str, filename: str = "<source>") -> list[str]:
    """Each place in `source` that reads a verdict's prose back, as `FILE:LINE: why`."""
    out = []
    for node in ast.walk(ast.parse(source, filename)):
        problem = (_call_problem(node) if isinstance(node, ast.Call)
                   else _compare_problem(node) if isinstance(node, ast.Compare) else None)
        if problem is not None:
            out.append(f"{filename}:{node.lineno}: {problem}")
    return out


def _package_files() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def test_the_package_parses_no_prose_back() -> None:
    files = _package_files()
    assert len(files) > 100, "the scan must see the package"
    found = [v for path in files
             for v in violations(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))]
    assert not found, "read the typed fields (harness/judge/facts.py) instead:\n" + "\n".join(found)


# -- the scanner itself -------------------------------------------------------------------------

PARSES = [
    'm = re.search(r"column (\\S+?):", r.detail)',
    '_COLUMN = re.compile(r"column (\\S+?):")',
    '_SUSPECT = re.compile(r"against the reference: ([a-z-]+)")',
    "found = _COLUMN.findall(detail)",
    "named = PATTERN.search(self.detail)",
    'ok = first.detail.startswith("the engine says")',
    'head, _, rest = line["detail"].partition(":")',
    'parts = line.get("detail", "").split("; ")',
    'refused = " " not in self.detail',
    'inner = text.split("against the reference:")[1]',
    "said = message in result.detail",
    'same = r.detail == "frame.groups"',
    "rows = unsupported_rows(detail)",
    "kind = invalid_kind(finding.detail)",
    "words = normalise_error(r.detail or '')",
    "hit = engine.dialect.says_not_implemented(outcome.detail)",
]

BUILDS = [
    'r.detail = f"{reason}; against the reference: {r.verdict.value} {r.detail}".strip()',
    'detail = f"column {name}: engine {av!r}, expected {ev!r}"',
    'line = {"detail": result.detail[:500], "facts": result.facts.as_json()}',
    'out.write(f"- {r.case} on {r.engine}: {r.verdict.value}: {r.detail}\\n")',
    'notes = (f"answer {i + 1}: {r.verdict.value} {r.detail}"[:300],)',
    "key = (result.verdict.value, result.detail)",
    'detail = line.get("detail", "")',
    'if verdict in ("detail", "details"): pass',
    "found = self.error.search(obs.words)",
    'said = any(m in (result.facts.message or "") for m in expected)',
]


@pytest.mark.parametrize("source", PARSES)
def test_a_parse_of_the_prose_is_caught(source: str) -> None:
    assert violations(source), source


@pytest.mark.parametrize("source", BUILDS)
def test_building_the_display_is_not_flagged(source: str) -> None:
    assert violations(source) == [], source
