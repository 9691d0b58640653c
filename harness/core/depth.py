"""How deeply a query may nest: the one limit, checked where text becomes a model.

Everything downstream of the parser (the writer, the reference, the
instrumenter, `*` expansion, the canonicaliser, the reducer) recurses over the
model, a few Python frames per level. A query nested deeper than these limits
is refused as input (`NestedTooDeeply`) before any of them sees it, so none can
overflow Python's default recursion limit (1,000 frames; the harness never
raises it):

- `MAX_DEPTH`: SQL text (a `.sql` file, a case file's `sql`, an imported
  query). Checked by the parser on its own nesting (parentheses, subqueries,
  calls in calls, CASE in CASE, NOT NOT ...), which keeps the parser itself
  within the stack, and on the depth of the model it built (a long left-deep
  chain `1 + 1 + ... + 1` is read without recursion but is as deep as it is
  long). The deepest query of the corpus, the realistic suites and 3,000
  generated cases is 13 levels deep.
- `MAX_MODEL_DEPTH`: a model the writer or the reference is given, built by
  the parser or in code; the harness's own rewrites of a query (instrumenting,
  batching, metamorphic variants) may wrap it in a few levels more, so the
  limit leaves them room.

The frames each level costs were measured (tests/test_depth.py holds the
parser, writer and reference to them at the limits).
"""

from __future__ import annotations

from harness.core.errors import NestedTooDeeply

MAX_DEPTH = 32
MAX_MODEL_DEPTH = 2 * MAX_DEPTH


def model_depth(node: object, stop: int | None = None) -> int:
    """The number of model nodes on the longest path down from `node` (the nodes
    `harness.core.model.children` gives), counted without recursion; the count
    stops growing past `stop` (the caller's limit)."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if stop is not None and deepest > stop:
                return deepest
        below = depth + 1
        for name in getattr(current, "__dataclass_fields__", ()):
            value = getattr(current, name)
            if isinstance(value, tuple):
                # A tuple is no level (CASE's (when, then) pairs are flat too).
                stack.extend((v, below) for v in _flat(value) if hasattr(v, "__dataclass_fields__"))
            elif hasattr(value, "__dataclass_fields__"):
                stack.append((value, below))
    return deepest


def _flat(items: tuple) -> list[object]:
    return [x for item in items for x in (item if isinstance(item, tuple) else (item,))]


def check_depth(node: object, limit: int = MAX_MODEL_DEPTH, where: str | None = None) -> None:
    """NestedTooDeeply (naming `limit` and `where`) when `node` is deeper than `limit`."""
    if model_depth(node, stop=limit) > limit:
        raise NestedTooDeeply(limit, where)
