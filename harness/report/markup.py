"""HTML built so that escaping cannot be forgotten.

MarkupSafe (the library Jinja2 escapes with) is the one escaping path of the
report, its HTML and its inline SVG alike: every plain `str` that reaches a page
goes through `markupsafe.escape`; only `Markup` (HTML this package made itself:
elements from `h`, the static CSS and JS) passes as it is. A value from data,
SQL or an engine's message is a plain str, so `<script>alert(1)</script>` in a
table cell, an error or a plot's label renders as text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from markupsafe import Markup, escape

__all__ = ["Markup", "escape", "h", "render", "slug"]

Child = "str | int | float | Markup | None | Iterable[Child]"
VOID = frozenset({"br", "hr", "img", "meta", "link", "input", "col"})


def h(tag: str, attrs: Mapping[str, object] | None = None, *children: object) -> Markup:
    """`<tag attrs>children</tag>`; attribute values and str children are escaped.
    An attribute whose value is None or False is left out; True writes it bare.
    Used for the SVG of `plots` too (its elements are never void, so always closed)."""
    start = Markup("<{}{}>").format(tag, _attributes(attrs or {}))
    if tag in VOID:
        return start
    return start + render(children) + Markup("</{}>").format(tag)


def _attributes(attrs: Mapping[str, object]) -> Markup:
    """` name="value"` for each attribute, the value escaped by Markup.format."""
    out = Markup()
    for name, value in attrs.items():
        if value is None or value is False:
            continue
        name = name.rstrip("_").replace("_", "-")  # class_ -> class, data_key -> data-key
        out += Markup(" {}").format(name) if value is True else Markup(' {}="{}"').format(name, value)
    return out


def render(children: object) -> Markup:
    """Children as HTML: strings escaped, Markup kept, iterables flattened, None dropped."""
    if children is None:
        return Markup()
    if isinstance(children, str) or not isinstance(children, Iterable):
        return escape(children)
    return Markup().join(render(c) for c in children)


def slug(text: str) -> str:
    """An id made of safe characters, stable for the same text."""
    import hashlib
    import re

    base = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:48]
    return f"{base}-{hashlib.sha1(text.encode()).hexdigest()[:6]}"
