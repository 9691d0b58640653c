"""HTML built so that escaping cannot be forgotten.

Every plain `str` that reaches a page goes through `html.escape`; only
`Markup` (HTML this package made itself: tags from `h`, the inline SVG of
`plots`, the static CSS and JS) passes as it is. A value from data, SQL or an
engine's message is a plain str, so `<script>alert(1)</script>` in a table
cell or an error renders as text.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping

Child = "str | int | float | Markup | None | Iterable[Child]"
VOID = frozenset({"br", "hr", "img", "meta", "link", "input", "col"})


class Markup(str):
    """Trusted HTML: made by this package, never from outside data."""


def escape(value: object) -> Markup:
    if isinstance(value, Markup):
        return value
    return Markup(html.escape("" if value is None else str(value), quote=True))


def h(tag: str, attrs: Mapping[str, object] | None = None, *children: object) -> Markup:
    """`<tag attrs>children</tag>`; attribute values and str children are escaped.
    An attribute whose value is None or False is left out; True writes it bare."""
    parts = [f"<{tag}"]
    for name, value in (attrs or {}).items():
        if value is None or value is False:
            continue
        name = name.rstrip("_").replace("_", "-")  # class_ -> class, data_key -> data-key
        parts.append(f" {name}" if value is True else f' {name}="{escape(value)}"')
    parts.append(">")
    if tag in VOID:
        return Markup("".join(parts))
    return Markup("".join(parts) + render(children) + f"</{tag}>")


def render(children: object) -> Markup:
    """Children as HTML: strings escaped, Markup kept, iterables flattened, None dropped."""
    if children is None:
        return Markup("")
    if isinstance(children, str):
        return escape(children)
    if isinstance(children, int | float):
        return escape(children)
    if isinstance(children, Iterable):
        return Markup("".join(render(c) for c in children))
    return escape(children)


def slug(text: str) -> str:
    """An id made of safe characters, stable for the same text."""
    import hashlib
    import re

    base = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:48]
    return f"{base}-{hashlib.sha1(text.encode()).hexdigest()[:6]}"
