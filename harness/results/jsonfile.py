"""The state files of a results directory, read as untrusted input.

`run.json`, `gate.json`, `campaign.json`, `summary.json`, `versions.json` and
the JSONL lines are the harness's own output, but whoever points `report`,
`fuzz --resume` or `fuzz --report` at a directory may have emptied, truncated
or crafted them. Each is read here: a file that is not JSON, not an object, or
whose fields the readers use have the wrong type is InvalidInput naming the
file (and the field, or the line), never a traceback. What the fields mean
stays with their readers; this says only what shape they must have.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from harness.core.errors import InvalidInput

# A field's expected type: a JSON type, or a tuple of them; None may stand in
# for an optional field's absence.
Shape = type | tuple[type, ...]

_NAMES = {dict: "an object", list: "a list", str: "a string", int: "an integer", float: "a number",
          bool: "true or false", type(None): "null"}


def read_object(path: Path, fields: Mapping[str, Shape] | None = None, required: tuple[str, ...] = ()) -> dict:
    """The JSON object in `path`, each of `fields` present in it of its shape."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise InvalidInput(f"cannot read it: {e.strerror}", str(path)) from None
    return checked(parse(data, str(path)), str(path), fields or {}, required)


def parse(data: bytes | str, where: str) -> object:
    """A JSON document; InvalidInput naming `where` when it is none (empty, torn,
    not UTF-8, nested or numbered beyond what Python reads)."""
    try:
        return json.loads(data)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:  # JSONDecodeError is a ValueError
        reason = "it is empty" if not data.strip() else f"it is not JSON ({_short(e)})"
        raise InvalidInput(f"not a results file this harness wrote: {reason}", where) from None


def checked(doc: object, where: str, fields: Mapping[str, Shape], required: tuple[str, ...] = ()) -> dict:
    """`doc` as an object holding `required`, whose `fields`, where present, have their shapes."""
    if not isinstance(doc, dict):
        raise InvalidInput(f"not a results file this harness wrote: {_name(doc)} where an object "
                           "belongs", where)
    for name in required:
        if name not in doc:
            raise InvalidInput(f"field {name!r} is missing", where)
    for name, shape in fields.items():
        if name in doc and not _is(doc[name], shape):
            raise InvalidInput(f"field {name!r} is {_name(doc[name])}, not {_names(shape)}", where)
    return doc


def check_each(items: list | dict, where: str, fields: Mapping[str, Shape], required: tuple[str, ...] = ()) -> None:
    """Each element of the list `items` (or value of the object), as `checked`."""
    pairs = items.items() if isinstance(items, dict) else enumerate(items)
    for key, item in pairs:
        checked(item, f"{where}[{key!r}]", fields, required)


def _is(value: object, shape: Shape) -> bool:
    shapes = shape if isinstance(shape, tuple) else (shape,)
    if isinstance(value, bool) and bool not in shapes:  # JSON true is no number
        return False
    return isinstance(value, shapes)


def _name(value: object) -> str:
    return next((n for t, n in _NAMES.items() if type(value) is t), type(value).__name__)


def _names(shape: Shape) -> str:
    shapes = shape if isinstance(shape, tuple) else (shape,)
    return " or ".join(_NAMES.get(s, s.__name__) for s in shapes)


def _short(error: BaseException) -> str:
    return str(error).splitlines()[0][:200] if str(error) else type(error).__name__
